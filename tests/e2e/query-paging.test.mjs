// Paging and large results of GET /core/classes/{Table} (spec §4.2 limit/skip/count and the
// pagination rules, §8 limits; issue 3) against the real crmd binary: the default limit of 100, no
// maximum (limit=5000 on 2,101 rows), count-only queries, and the (createdAt, objectId) cursor that
// loses and repeats nothing while rows are inserted between pages.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, stopAll, request, masterHeaders, pool } from './lib/harness.mjs';

let server;
let app;
let M;

const BIG = 2101;
const date = (iso) => ({ __type: 'Date', iso });
const list = (cls, query = '') => request(server, 'GET', `/core/classes/${cls}${query}`, { headers: M, timeoutMs: 20_000 });
const whereQ = (where) => `where=${encodeURIComponent(JSON.stringify(where))}`;


// Creates `bodies` with a few concurrent requests; returns the objectIds in input order.
async function createMany(cls, bodies, width = 8) {
  const ids = new Array(bodies.length);
  await pool(bodies, width, async (body, i) => {
    const r = await request(server, 'POST', `/core/classes/${cls}`, { headers: M, body });
    assert.equal(r.status, 201, `create ${cls} #${i}: ${r.text}`);
    ids[i] = r.body.objectId;
  });
  return ids;
}

let bigIds;

before(async () => {
  ({ server, app } = await setup({ durability: 'normal' }));
  M = masterHeaders(app);
  bigIds = await createMany('QBig', Array.from({ length: BIG }, (_, i) => ({ Seq: i, Even: i % 2 === 0, Name: `row${i}` })));
});
after(stopAll);

test('§8 limit defaults to 100', async () => {
  const r = await list('QBig');
  assert.equal(r.status, 200, r.text.slice(0, 300));
  assert.deepEqual(Object.keys(r.body), ['results']);
  assert.equal(r.body.results.length, 100);
  const w = await list('QBig', `?${whereQ({ Even: true })}`);
  assert.equal(w.status, 200, w.text.slice(0, 300));
  assert.equal(w.body.results.length, 100);
  assert.ok(w.body.results.every((x) => x.Even === true));
});

test('§4.2 no enforced maximum: limit=5000 on 2,101 rows returns all 2,101', async () => {
  const r = await list('QBig', '?limit=5000');
  assert.equal(r.status, 200, r.text.slice(0, 300));
  assert.equal(r.body.results.length, BIG);
  assert.deepEqual(r.body.results.map((x) => x.objectId).sort(), [...bigIds].sort());
  const ordered = await list('QBig', '?limit=5000&order=-Seq&keys=Seq');
  assert.equal(ordered.status, 200, ordered.text.slice(0, 300));
  assert.deepEqual(ordered.body.results.map((x) => x.Seq), Array.from({ length: BIG }, (_, i) => BIG - 1 - i));
  const two = await list('QBig', `?limit=2000&order=Seq&${whereQ({ Seq: { $gte: 50 } })}`);
  assert.equal(two.status, 200, two.text.slice(0, 300));
  assert.equal(two.body.results.length, 2000);
  assert.equal(two.body.results[0].Seq, 50);
  assert.equal(two.body.results[1999].Seq, 2049);
});

test('§4.2 count=1 with limit=0 is a count-only query: {"results":[],"count":N}', async () => {
  const all = await list('QBig', '?count=1&limit=0');
  assert.equal(all.status, 200, all.text);
  assert.deepEqual(all.body, { results: [], count: BIG });
  const even = await list('QBig', `?count=1&limit=0&${whereQ({ Even: true })}`);
  assert.equal(even.status, 200, even.text);
  assert.deepEqual(even.body, { results: [], count: 1051 });
  const none = await list('QBig', `?count=1&limit=0&${whereQ({ Seq: { $lt: 0 } })}`);
  assert.equal(none.status, 200, none.text);
  assert.deepEqual(none.body, { results: [], count: 0 });
  const missing = await list('QNeverCreated', '?count=1&limit=0');
  assert.equal(missing.status, 200, missing.text);
  assert.deepEqual(missing.body, { results: [], count: 0 });
});

test('§4.2 count=1 adds the total; the default limit still applies to results', async () => {
  const r = await list('QBig', '?count=1');
  assert.equal(r.status, 200, r.text.slice(0, 300));
  assert.deepEqual(Object.keys(r.body).sort(), ['count', 'results']);
  assert.equal(r.body.count, BIG);
  assert.equal(r.body.results.length, 100);
  const w = await list('QBig', `?count=1&limit=7&skip=1000&order=Seq&${whereQ({ Seq: { $gte: 1500 } })}`);
  assert.equal(w.status, 200, w.text.slice(0, 300));
  assert.equal(w.body.count, 601);
  assert.deepEqual(w.body.results.map((x) => x.Seq), []);
  const w2 = await list('QBig', `?count=1&limit=7&skip=595&order=Seq&${whereQ({ Seq: { $gte: 1500 } })}`);
  assert.equal(w2.body.count, 601);
  assert.deepEqual(w2.body.results.map((x) => x.Seq), [2095, 2096, 2097, 2098, 2099, 2100]);
});

test('§4.2 skip and limit page through a stable order without loss or repetition', async () => {
  const seen = [];
  for (let page = 0; page < 30; page++) {
    const r = await list('QBig', `?order=Seq&limit=100&skip=${page * 100}&keys=Seq`);
    assert.equal(r.status, 200, r.text.slice(0, 300));
    seen.push(...r.body.results.map((x) => x.Seq));
    if (r.body.results.length < 100) break; // §4.2: the last page has fewer rows than limit
  }
  assert.deepEqual(seen, Array.from({ length: BIG }, (_, i) => i));
});

test('§4.2 pagination: order createdAt,objectId with the $or cursor walks the table; rows inserted between pages lose or repeat nothing', async () => {
  const LIMIT = 50;
  // Concurrent creates, so many rows share a createdAt millisecond: the objectId tie-break matters.
  await createMany('QWalk', Array.from({ length: 300 }, (_, i) => ({ Gen: 0, N: i })), 12);
  const start = await list('QWalk', '?limit=1000&order=createdAt,objectId&keys=objectId');
  assert.equal(start.status, 200, start.text.slice(0, 300));
  const initial = start.body.results.map((x) => x.objectId);
  assert.equal(initial.length, 300);

  const walked = [];
  const pairs = [];
  let cursor = null;
  let inserted = 0;
  for (let page = 0; page < 40; page++) {
    const where = cursor === null ? {} : {
      $or: [
        { createdAt: { $gt: date(cursor.createdAt) } },
        { createdAt: date(cursor.createdAt), objectId: { $gt: cursor.objectId } },
      ],
    };
    const r = await list('QWalk', `?${whereQ(where)}&order=createdAt,objectId&limit=${LIMIT}`);
    assert.equal(r.status, 200, `page ${page}: ${r.text.slice(0, 300)}`);
    const rows = r.body.results;
    for (const row of rows) {
      walked.push(row.objectId);
      pairs.push([row.createdAt, row.objectId]);
    }
    if (rows.length < LIMIT) break;
    const last = rows[rows.length - 1];
    cursor = { createdAt: last.createdAt, objectId: last.objectId };
    // Insert between pages (not after the walk has reached the new rows), concurrently.
    if (page < 8) {
      await createMany('QWalk', Array.from({ length: 6 }, (_, i) => ({ Gen: page + 1, N: i })), 6);
      inserted += 6;
    }
  }

  // Strictly increasing (createdAt, objectId): nothing repeated, the cursor order is the sort order.
  for (let i = 1; i < pairs.length; i++) {
    const [a, b] = [pairs[i - 1], pairs[i]];
    assert.ok(a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]), `row ${i} ${JSON.stringify(b)} is after ${JSON.stringify(a)}`);
  }
  assert.equal(new Set(walked).size, walked.length, 'no row repeated');
  const walkedSet = new Set(walked);
  const lost = initial.filter((id) => !walkedSet.has(id));
  assert.deepEqual(lost, [], 'no row that existed at the start is lost');
  // Rows inserted during the walk come after the cursor, so the walk reaches them all.
  assert.equal(walked.length, 300 + inserted);
  // The initial rows come first, in the order of the start listing.
  assert.deepEqual(walked.slice(0, 300), initial);
});

test('§4.2 large results with include, many at once: every request completes with every row expanded', async () => {
  const owners = await createMany('QOwners', Array.from({ length: 5 }, (_, i) => ({ Name: `owner${i}` })), 5);
  await createMany('QOwned', Array.from({ length: 1500 }, (_, i) => ({
    N: i, Owner: { __type: 'Pointer', className: 'QOwners', objectId: owners[i % 5] },
  })), 12);
  // More concurrent streaming reads than worker threads, each needing a second read for include.
  const queries = Array.from({ length: 24 }, (_, i) => (i % 2 === 0
    ? '?limit=5000&include=Owner'
    : `?limit=5000&include=Owner&order=-N&${whereQ({ N: { $gte: 0 } })}`));
  const answers = await Promise.all(queries.map((q) => list('QOwned', q)));
  for (const [i, r] of answers.entries()) {
    assert.equal(r.status, 200, `${queries[i]}: ${r.text.slice(0, 300)}`);
    assert.equal(r.body.results.length, 1500, queries[i]);
    for (const row of r.body.results) {
      assert.equal(row.Owner.__type, 'Object', `${queries[i]}: ${JSON.stringify(row)}`);
      assert.equal(row.Owner.Name, `owner${row.N % 5}`);
    }
  }
});
