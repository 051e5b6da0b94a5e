// Parse.Relation through the stock SDK (§2.2, §4.3): add, remove, add and remove in one save (the
// SDK's Batch op), relation.query() ($relatedTo), owners found by a Pointer on the Relation field
// (equalTo, containedIn, containsAll, notEqualTo), include of an Array of Pointers. Both gate settings.
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import { Parse, useApp, rejectsWith, uniq, PROFILES, compatSuite } from './lib/compat.mjs';

// The file's server and its two applications (one per profile), made before the first test.
const ctx = compatSuite();
const { apps } = ctx;

async function members(relation) {
  return (await relation.query().ascending('Name').find()).map((m) => m.get('Name'));
}

for (const profile of PROFILES) {
  describe(`${profile} gates`, () => {
    let people;
    before(async () => {
      await useApp(ctx.server, apps[profile], { apiKey: true });
      people = ['Ann', 'Bob', 'Cid', 'Dee'].map((Name) => new Parse.Object('People', { Name }));
      await Parse.Object.saveAll(people);
    });

    test('§2.2 relation add and remove; relation.query() ($relatedTo) lists the members', async () => {
      await useApp(ctx.server, apps[profile], { apiKey: true });
      const team = new Parse.Object('Teams', { Name: uniq('t') });
      const rel = team.relation('Members');
      rel.add([people[0], people[1]]);
      await team.save();
      assert.deepEqual(await members(rel), ['Ann', 'Bob']);
      rel.add(people[2]);
      await team.save();
      rel.remove(people[0]);
      await team.save();
      assert.deepEqual(await members(rel), ['Bob', 'Cid']);
      // From a fresh copy of the owner: the relation is stored, not the SDK's memory.
      const copy = await new Parse.Query('Teams').get(team.id);
      assert.deepEqual(await members(copy.relation('Members')), ['Bob', 'Cid']);
      assert.equal(await copy.relation('Members').query().count(), 2);
      // The relation's query takes more constraints.
      assert.deepEqual((await copy.relation('Members').query().startsWith('Name', 'C').find()).map((p) => p.get('Name')), ['Cid']);
    });

    test('§2.2 add and remove on one relation in one save (the SDK sends a Batch op)', async () => {
      await useApp(ctx.server, apps[profile], { apiKey: true });
      const team = new Parse.Object('Teams', { Name: uniq('t') });
      team.relation('Members').add([people[0], people[1]]);
      await team.save();
      const rel = team.relation('Members');
      rel.add(people[3]);
      rel.remove(people[0]);
      await team.save();
      assert.deepEqual(await members(rel), ['Bob', 'Dee']);
    });

    test('§2.2 the schema shows the Relation with its target; a relation to another class is 111', async () => {
      await useApp(ctx.server, apps[profile]);
      const schema = await new Parse.Schema('Teams').get();
      assert.deepEqual(schema.fields.Members, { type: 'Relation', targetClass: 'People' });
      await useApp(ctx.server, apps[profile], { apiKey: true });
      const other = new Parse.Object('Elsewhere', { Name: 'x' });
      await other.save();
      const bad = new Parse.Object('Teams', { Name: uniq('t') });
      bad.relation('Members').add(other);
      await rejectsWith(bad.save(), Parse.Error.INCORRECT_TYPE, /schema mismatch for Teams\.Members/);
    });

    test('§4.3 owners by a member: equalTo, containedIn, containsAll, notEqualTo on the Relation field', async () => {
      await useApp(ctx.server, apps[profile], { apiKey: true });
      const tag = uniq('g');
      const t1 = new Parse.Object('Groups', { Name: `${tag}1` });
      t1.relation('Members').add([people[0], people[1]]);
      const t2 = new Parse.Object('Groups', { Name: `${tag}2` });
      t2.relation('Members').add([people[1], people[2]]);
      const t3 = new Parse.Object('Groups', { Name: `${tag}3` });
      await Parse.Object.saveAll([t1, t2, t3]);
      const groups = () => new Parse.Query('Groups').startsWith('Name', tag);
      const names = async (q) => (await q.find()).map((g) => g.get('Name')).sort();
      assert.deepEqual(await names(groups().equalTo('Members', people[0])), [`${tag}1`]);
      assert.deepEqual(await names(groups().equalTo('Members', people[1])), [`${tag}1`, `${tag}2`]);
      assert.deepEqual(await names(groups().containedIn('Members', [people[0], people[2]])), [`${tag}1`, `${tag}2`]);
      assert.deepEqual(await names(groups().containsAll('Members', [people[1], people[2]])), [`${tag}2`]);
      assert.deepEqual(await names(groups().notEqualTo('Members', people[1])), [`${tag}3`]);
      assert.deepEqual(await names(groups().equalTo('Members', people[3])), []);
    });

    test('§4.2 include of an Array of Pointers expands each; includeAll too', async () => {
      await useApp(ctx.server, apps[profile], { apiKey: true });
      const list = new Parse.Object('Shortlists', { Name: uniq('s'), Picks: [people[2], people[0]], Lead: people[3] });
      await list.save();
      const withPicks = await new Parse.Query('Shortlists').include('Picks').get(list.id);
      assert.deepEqual(withPicks.get('Picks').map((p) => p.get('Name')), ['Cid', 'Ann']);
      const bare = await new Parse.Query('Shortlists').get(list.id);
      assert.deepEqual(bare.get('Picks').map((p) => p.get('Name')), [undefined, undefined]);
      const all = await new Parse.Query('Shortlists').includeAll().get(list.id);
      assert.deepEqual(all.get('Picks').map((p) => p.get('Name')), ['Cid', 'Ann']);
      assert.equal(all.get('Lead').get('Name'), 'Dee');
    });

    test('§3.4 destroying the owner removes its relation rows; members stay', async () => {
      await useApp(ctx.server, apps[profile], { apiKey: true });
      const team = new Parse.Object('Teams', { Name: uniq('t') });
      team.relation('Members').add(people[0]);
      await team.save();
      const tag = team.get('Name');
      await team.destroy();
      assert.equal(await new Parse.Query('Teams').equalTo('Name', tag).count(), 0);
      assert.equal(await new Parse.Query('Teams').equalTo('Members', people[0]).equalTo('Name', tag).count(), 0);
      assert.equal((await new Parse.Query('People').get(people[0].id)).get('Name'), 'Ann');
    });
  });
}
