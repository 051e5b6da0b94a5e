// Parse.Query through the stock SDK: every constraint the SDK offers that the spec allows (§4.3),
// order, skip, limit (default 100, §4.2), select/exclude, include, count, first, get, each,
// eachBatch, Parse.Query.or/and/nor, fullText with and without a text index. Both gate settings.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Parse, startCompat, stopAll, useApp, rejectsWith, PROFILES } from './lib/compat.mjs';

let ctx;
const apps = {};
const accounts = {};
before(async () => {
  ctx = await startCompat();
  for (const p of PROFILES) {
    apps[p] = await ctx.newApp(p);
    await useApp(ctx.server, apps[p], { apiKey: true });
    accounts[p] = await seed();
  }
});
after(stopAll);

const ROWS = [
  { Name: 'Alpha', Score: 10, City: 'Oslo', Tags: ['vip', 'new'], Note: 'first (one)' },
  { Name: 'Beta', Score: 20, City: 'Paris', Tags: ['new'], Note: 'second' },
  { Name: 'Gamma', Score: 30, City: 'Oslo', Tags: ['vip'], Note: null },
  { Name: 'delta', Score: 40, City: 'Rome', Tags: [] },
  { Name: 'Epsilon', Score: 50, Tags: ['vip', 'old', 'new'] },
];
const ALL = ROWS.map((r) => r.Name).sort();

// Accounts with the rows above, Owners pointing at some of them, and 130 rows in Many.
async function seed() {
  const rows = ROWS.map((r) => new Parse.Object('Accounts', r));
  await Parse.Object.saveAll(rows);
  const owners = [
    new Parse.Object('Deals', { Title: 'd1', AccountId: rows[0], Score: 10 }),
    new Parse.Object('Deals', { Title: 'd2', AccountId: rows[2], Score: 99 }),
    new Parse.Object('Deals', { Title: 'd3', AccountId: rows[3], Score: 40 }),
  ];
  await Parse.Object.saveAll(owners);
  const many = [];
  for (let i = 0; i < 130; i++) many.push(new Parse.Object('Many', { i }));
  await Parse.Object.saveAll(many, { batchSize: 50 });
  return rows;
}

const Q = (cls = 'Accounts') => new Parse.Query(cls);
async function names(query) {
  return (await query.find()).map((r) => r.get('Name')).sort();
}

for (const profile of PROFILES) {
  describe(`${profile} gates`, () => {
    before(async () => { await useApp(ctx.server, apps[profile], { apiKey: true }); });

    test('§4.3 equalTo, notEqualTo, comparisons', async () => {
      assert.deepEqual(await names(Q().equalTo('City', 'Oslo')), ['Alpha', 'Gamma']);
      assert.deepEqual(await names(Q().notEqualTo('City', 'Oslo')), ['Beta', 'Epsilon', 'delta']);
      assert.deepEqual(await names(Q().greaterThan('Score', 30)), ['Epsilon', 'delta']);
      assert.deepEqual(await names(Q().greaterThanOrEqualTo('Score', 30)), ['Epsilon', 'Gamma', 'delta']);
      assert.deepEqual(await names(Q().lessThan('Score', 20)), ['Alpha']);
      assert.deepEqual(await names(Q().lessThanOrEqualTo('Score', 20).greaterThan('Score', 10)), ['Beta']);
      // A Date constraint: the SDK sends the Date object the spec requires (§2.2).
      const future = new Date(Date.now() + 86_400_000);
      assert.deepEqual(await names(Q().lessThan('createdAt', future)), ALL);
      assert.deepEqual(await names(Q().greaterThan('createdAt', future)), []);
    });

    test('§4.3 containedIn, notContainedIn, containsAll, containedBy; an array equal is "contains"', async () => {
      assert.deepEqual(await names(Q().containedIn('City', ['Rome', 'Paris'])), ['Beta', 'delta']);
      assert.deepEqual(await names(Q().notContainedIn('City', ['Oslo'])), ['Beta', 'Epsilon', 'delta']);
      assert.deepEqual(await names(Q().containsAll('Tags', ['vip', 'new'])), ['Alpha', 'Epsilon']);
      assert.deepEqual(await names(Q().equalTo('Tags', 'old')), ['Epsilon']);
      assert.deepEqual(await names(Q().containedBy('Tags', ['vip', 'new'])), ['Alpha', 'Beta', 'Gamma', 'delta']);
    });

    test('§4.3 exists and doesNotExist: a null value counts as present', async () => {
      assert.deepEqual(await names(Q().exists('City')), ['Alpha', 'Beta', 'Gamma', 'delta']);
      assert.deepEqual(await names(Q().doesNotExist('City')), ['Epsilon']);
      assert.deepEqual(await names(Q().exists('Note')), ['Alpha', 'Beta', 'Gamma']);
      assert.deepEqual(await names(Q().doesNotExist('Note')), ['Epsilon', 'delta']);
    });

    test('§4.3 $regex: matches (with the i flag), startsWith and endsWith quote their text, contains', async () => {
      assert.deepEqual(await names(Q().matches('Name', '^[a-d]')), ['delta']);
      assert.deepEqual(await names(Q().matches('Name', '^[a-d]', 'i')), ['Alpha', 'Beta', 'delta']);
      assert.deepEqual(await names(Q().startsWith('Note', 'first (')), ['Alpha']);
      assert.deepEqual(await names(Q().endsWith('Note', '(one)')), ['Alpha']);
      assert.deepEqual(await names(Q().contains('Name', 'mm')), ['Gamma']);
      // COMPATIBILITY §4.3: $regex runs on RE2; lookaround answers 102.
      await rejectsWith(Q().matches('Name', '(?=A)').find(), Parse.Error.INVALID_QUERY, /bad \$regex/);
      // An unknown $options flag answers 102 (Parse).
      await rejectsWith(Q().matches('Name', 'a', 'q').find(), Parse.Error.INVALID_QUERY, 'Bad $options value for query: q');
    });

    test('§4.3 matchesQuery / doesNotMatchQuery ($inQuery / $notInQuery on a Pointer)', async () => {
      const oslo = Q().equalTo('City', 'Oslo');
      const inOslo = await Q('Deals').matchesQuery('AccountId', oslo).find();
      assert.deepEqual(inOslo.map((d) => d.get('Title')).sort(), ['d1', 'd2']);
      const notOslo = await Q('Deals').doesNotMatchQuery('AccountId', Q().equalTo('City', 'Oslo')).find();
      assert.deepEqual(notOslo.map((d) => d.get('Title')), ['d3']);
      // A Pointer equal needs the full Pointer (the SDK sends one for a Parse.Object).
      const byPointer = await Q('Deals').equalTo('AccountId', accounts[profile][0]).find();
      assert.deepEqual(byPointer.map((d) => d.get('Title')), ['d1']);
    });

    test('§4.3 matchesKeyInQuery / doesNotMatchKeyInQuery ($select / $dontSelect on a scalar)', async () => {
      const fromDeals = Q('Deals');
      assert.deepEqual(await names(Q().matchesKeyInQuery('Score', 'Score', fromDeals)), ['Alpha', 'delta']);
      assert.deepEqual(await names(Q().doesNotMatchKeyInQuery('Score', 'Score', Q('Deals'))), ['Beta', 'Epsilon', 'Gamma']);
    });

    test('§4.3 Parse.Query.or at the top level; and, nor; an $or inside $and (COMPATIBILITY §4.3)', async () => {
      assert.deepEqual(await names(Parse.Query.or(Q().equalTo('City', 'Rome'), Q().greaterThan('Score', 45))), ['Epsilon', 'delta']);
      assert.deepEqual(await names(Parse.Query.and(Q().equalTo('City', 'Oslo'), Q().greaterThan('Score', 15))), ['Gamma']);
      assert.deepEqual(await names(Parse.Query.nor(Q().equalTo('City', 'Oslo'), Q().greaterThan('Score', 45))), ['Beta', 'delta']);
      const nested = Parse.Query.and(Q().lessThan('Score', 45), Parse.Query.or(Q().equalTo('City', 'Rome'), Q().equalTo('Name', 'Alpha')));
      assert.deepEqual(await names(nested), ['Alpha', 'delta']);
    });

    test('§4.2 ascending, descending, addAscending; skip and limit', async () => {
      const byScore = await Q().descending('Score').find();
      assert.deepEqual(byScore.map((r) => r.get('Score')), [50, 40, 30, 20, 10]);
      const byCity = await Q().exists('City').ascending('City').addDescending('Score').find();
      assert.deepEqual(byCity.map((r) => r.get('Name')), ['Gamma', 'Alpha', 'Beta', 'delta']);
      const page = await Q().ascending('Score').skip(1).limit(2).find();
      assert.deepEqual(page.map((r) => r.get('Name')), ['Beta', 'Gamma']);
      assert.deepEqual(await Q().limit(0).find(), []);
    });

    test('§4.2 limit defaults to 100; a larger limit returns all; count and withCount', async () => {
      assert.equal((await Q('Many').find()).length, 100);
      assert.equal((await Q('Many').limit(1000).find()).length, 130);
      assert.equal(await Q('Many').count(), 130);
      assert.equal(await Q('Many').greaterThanOrEqualTo('i', 120).count(), 10);
      const { results, count } = await Q('Many').withCount().limit(3).find();
      assert.equal(results.length, 3);
      assert.equal(count, 130);
    });

    test('§4.2 select (keys) and exclude (excludeKeys) project fields; objectId and dates stay', async () => {
      const selected = await Q().equalTo('Name', 'Alpha').select('Score').first();
      assert.deepEqual(Object.keys(selected.attributes).sort(), ['Score', 'createdAt', 'updatedAt']);
      assert.ok(selected.id);
      const excluded = await Q().equalTo('Name', 'Alpha').exclude('Tags', 'Note', 'City').first();
      assert.deepEqual(Object.keys(excluded.attributes).sort(), ['Name', 'Score', 'createdAt', 'updatedAt']);
    });

    test('§4.2 include expands a Pointer; without it the Pointer has no fields', async () => {
      const deal = await Q('Deals').equalTo('Title', 'd2').include('AccountId').first();
      assert.equal(deal.get('AccountId').get('Name'), 'Gamma');
      const bare = await Q('Deals').equalTo('Title', 'd2').first();
      assert.equal(bare.get('AccountId').get('Name'), undefined);
      const all = await Q('Deals').equalTo('Title', 'd3').includeAll().first();
      assert.equal(all.get('AccountId').get('Name'), 'delta');
    });

    test('§4.1 first and get; get of a missing id answers 101', async () => {
      const first = await Q().ascending('Score').first();
      assert.equal(first.get('Name'), 'Alpha');
      assert.equal(await Q().equalTo('Name', 'nobody').first(), undefined);
      const got = await Q().get(first.id);
      assert.equal(got.get('Score'), 10);
      await rejectsWith(Q().get('zzzzzzzzzz'), Parse.Error.OBJECT_NOT_FOUND, 'Object not found.');
    });

    test('§2.3 a class that does not exist answers an empty list, not an error', async () => {
      assert.deepEqual(await Q('NeverMade').find(), []);
      assert.equal(await Q('NeverMade').count(), 0);
    });

    test('each and eachBatch walk every row once (objectId order, where objectId > last)', async () => {
      const seen = new Set();
      let calls = 0;
      await Q('Many').each((row) => { calls += 1; seen.add(row.get('i')); });
      assert.equal(calls, 130);
      assert.equal(seen.size, 130);
      const sizes = [];
      const ids = new Set();
      await Q('Many').greaterThanOrEqualTo('i', 30).eachBatch((batch) => {
        sizes.push(batch.length);
        for (const r of batch) ids.add(r.id);
      }, { batchSize: 40 });
      assert.deepEqual(sizes, [40, 40, 20]);
      assert.equal(ids.size, 100);
    });

    test('findAll walks every row; containedIn on objectId', async () => {
      const all = await Q('Many').findAll({ batchSize: 50 });
      assert.equal(all.length, 130);
      const picked = all.slice(0, 3).map((r) => r.id);
      const again = await Q('Many').containedIn('objectId', picked).find();
      assert.deepEqual(again.map((r) => r.id).sort(), [...picked].sort());
    });

    test('§4.3 fullText: without a text index 500 code 1 (IndexNotFound); with one declared by Parse.Schema.addIndex, word matches', async () => {
      const cls = `Notes${profile}`;
      await Parse.Object.saveAll([
        new Parse.Object(cls, { Body: 'call the customer today' }),
        new Parse.Object(cls, { Body: 'Customer asked for a quote' }),
        new Parse.Object(cls, { Body: 'nothing here' }),
      ]);
      await rejectsWith(Q(cls).fullText('Body', 'customer').find(), Parse.Error.INTERNAL_SERVER_ERROR, 'Internal server error.');
      // Parse.Schema always sends the master key (the SDK's rule): without the API key header.
      await useApp(ctx.server, apps[profile]);
      const schema = new Parse.Schema(cls);
      schema.addIndex('body_text', { Body: 'text' });
      await schema.update();
      await useApp(ctx.server, apps[profile], { apiKey: true });
      const found = await Q(cls).fullText('Body', 'customer').find();
      assert.deepEqual(found.map((r) => r.get('Body')).sort(), ['Customer asked for a quote', 'call the customer today']);
    });

    test('issue 36 fullText with Parse\'s options ($language, $caseSensitive, $diacriticSensitive) on a text index: words match, never a 500', async () => {
      const cls = `Subjects${profile}`;
      await Parse.Object.saveAll(['coffee', 'Coffee Shopping', 'Café Con Leche', 'Cafe con Leche', 'Baking a cake']
        .map((subject) => new Parse.Object(cls, { subject })));
      await useApp(ctx.server, apps[profile]);
      const schema = new Parse.Schema(cls);
      schema.addIndex('subject_text', { subject: 'text' });
      await schema.update();
      await useApp(ctx.server, apps[profile], { apiKey: true });
      const words = async (term, options) => (await Q(cls).fullText('subject', term, options).find()).map((r) => r.get('subject')).sort();
      assert.deepEqual(await words('leche', { language: 'spanish' }), ['Cafe con Leche', 'Café Con Leche']);
      assert.deepEqual(await words('coffee', { caseSensitive: false }), ['Coffee Shopping', 'coffee']);
      assert.deepEqual(await words('coffee', { caseSensitive: true, diacriticSensitive: false }), ['Coffee Shopping', 'coffee']);
      assert.deepEqual(await words('cake', { language: 'en', caseSensitive: true, diacriticSensitive: true }), ['Baking a cake']);
    });

    test('issue 36 $score of a text search: sorted best first with each result\'s score under the Parse profile (parseNames); 105 with the spec\'s gates', async () => {
      const cls = `Scored${profile}`;
      await Parse.Object.saveAll(['coffee', 'coffee and cream', 'Coffee Shopping coffee', 'tea', 'iced coffee with milk and sugar']
        .map((subject) => new Parse.Object(cls, { subject, n: subject.length })));
      await useApp(ctx.server, apps[profile]);
      const schema = new Parse.Schema(cls);
      schema.addIndex('subject_text', { subject: 'text' });
      await schema.update();
      await useApp(ctx.server, apps[profile], { apiKey: true });
      const q = Q(cls).fullText('subject', 'coffee');
      q.descending('$score');
      q.select('$score');
      if (profile === 'crmd') {
        await rejectsWith(q.find(), Parse.Error.INVALID_KEY_NAME, 'Invalid field name: $score.');
        return;
      }
      const found = await q.find();
      assert.deepEqual(found.map((r) => r.get('score')), [1, 2 / 3, 1 / 3, 1 / 6]);
      assert.equal(found[0].get('subject'), undefined, 'keys=$score projects the score alone');
      const paged = Q(cls).fullText('subject', 'coffee').ascending('$score').skip(1).limit(2);
      paged.select('subject');
      assert.deepEqual((await paged.find()).map((r) => [r.get('subject'), r.get('score')]),
        [['Coffee Shopping coffee', undefined], ['coffee and cream', undefined]]);
    });

    test('issue 36: a geo query on a field that is no GeoPoint is a bad query (102); geo.test.mjs has the rest', async () => {
      await rejectsWith(Q().near('City', new Parse.GeoPoint(1, 1)).find(), Parse.Error.INVALID_QUERY, 'bad $nearSphere: City is not a GeoPoint');
    });

    test('§4.2 query options Parse Server takes but the spec lists as unsupported answer 102 (readPreference, hint, explain)', async () => {
      await rejectsWith(Q().readPreference('PRIMARY').find(), Parse.Error.INVALID_QUERY, 'Invalid parameter for query: readPreference');
      await rejectsWith(Q().hint('x').find(), Parse.Error.INVALID_QUERY, 'Invalid parameter for query: hint');
    });
  });
}
