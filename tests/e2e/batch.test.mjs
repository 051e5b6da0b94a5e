// §4.4 Batch: every row of the spec's table, to the letter.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, stopAll, request, masterHeaders, appHeaders, createRecord } from './lib/harness.mjs';

let server;
let app;
let M;
before(async () => {
  ({ server, app } = await setup());
  M = masterHeaders(app);
});
after(stopAll);

const batch = (requests, headers = M) => request(server, 'POST', '/core/batch', { headers, body: requests === undefined ? {} : { requests } });

test('§4.4 requests missing or not an array → 400 107 requests must be an array', async () => {
  for (const body of [{}, { requests: 'x' }, { requests: { a: 1 } }]) {
    const r = await request(server, 'POST', '/core/batch', { headers: M, body });
    assert.equal(r.status, 400, r.text);
    assert.deepEqual(r.body, { code: 107, error: 'requests must be an array' });
  }
});

test('§4.4 a path without the prefix → 400 107 cannot route batch path /classes/X; nothing runs', async () => {
  const r = await batch([{ method: 'POST', path: '/core/classes/BatchA', body: { N: 1 } }, { method: 'POST', path: '/classes/X', body: {} }]);
  assert.equal(r.status, 400, r.text);
  assert.deepEqual(r.body, { code: 107, error: 'cannot route batch path /classes/X' });
  const list = await request(server, 'GET', '/core/classes/BatchA', { headers: M });
  assert.deepEqual(list.body, { results: [] });
});

test('§4.4 a PATCH item → 400 107 cannot route PATCH /classes/...', async () => {
  const r = await batch([{ method: 'PATCH', path: '/core/classes/BatchB/abc', body: {} }]);
  assert.equal(r.status, 400, r.text);
  assert.deepEqual(r.body, { code: 107, error: 'cannot route PATCH /classes/BatchB/abc' });
});

test('§4.4 a GET item and a POST without body answer the item error without a code, even for an existing record', async () => {
  const id = await createRecord(server, app, 'BatchC', { N: 1 });
  const r = await batch([
    { method: 'GET', path: `/core/classes/BatchC/${id}` },
    { method: 'POST', path: '/core/classes/BatchC' },
    { method: 'POST', path: '/core/classes/BatchC', body: { N: 2 } },
  ]);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body[0], { error: { error: 'Cannot convert undefined or null to object' } });
  assert.deepEqual(r.body[1], { error: { error: 'Cannot convert undefined or null to object' } });
  assert.ok(r.body[2].success.objectId);
});

test('§4.4 requests: [] → 200 []', async () => {
  const r = await batch([]);
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, []);
});

test('§4.4 items answer in order with the single call content; not a transaction: successes stay', async () => {
  const id = await createRecord(server, app, 'BatchD', { N: 1, Tags: ['a'] });
  const r = await batch([
    { method: 'POST', path: '/core/classes/BatchD', body: { N: 5 } },
    { method: 'PUT', path: `/core/classes/BatchD/${id}`, body: { N: { __op: 'Increment', amount: 2 } } },
    { method: 'POST', path: '/core/classes/BatchD', body: { N: 'not a number' } },
    { method: 'DELETE', path: '/core/classes/BatchD/nosuchid01' },
    { method: 'PUT', path: `/core/classes/BatchD/${id}`, body: { Tags: { __op: 'AddUnique', objects: ['b'] } } },
  ]);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(Object.keys(r.body[0].success).sort(), ['createdAt', 'objectId']);
  assert.equal(r.body[1].success.N, 3);
  assert.deepEqual(r.body[2], { error: { code: 111, error: 'schema mismatch for BatchD.N; expected Number but got String' } });
  assert.deepEqual(r.body[3], { error: { code: 101, error: 'Object not found.' } });
  assert.deepEqual(r.body[4].success.Tags, ['a', 'b']);
  const got = await request(server, 'GET', `/core/classes/BatchD/${id}`, { headers: M });
  assert.equal(got.body.N, 3);
  const list = await request(server, 'GET', '/core/classes/BatchD?count=1&limit=0', { headers: M });
  assert.equal(list.body.count, 2);
});

test('§4.4 skipTriggers and skipTimeline are ignored; credentials are sent once: anonymous items get the CAPTCHA 119', async () => {
  const keyed = await request(server, 'POST', '/core/batch', {
    headers: M, body: { skipTriggers: true, skipTimeline: true, requests: [{ method: 'POST', path: '/core/classes/BatchE', body: { N: 1 } }] },
  });
  assert.ok(keyed.body[0].success, keyed.text);
  const anonymous = await batch([{ method: 'POST', path: '/core/classes/BatchE', body: { N: 1 } }], appHeaders(app));
  assert.equal(anonymous.status, 200);
  assert.deepEqual(anonymous.body[0], { error: { code: 119, error: 'This action is not allowed without a valid CAPTCHA' } });
});

test('§4.4 a batch of 1,000 creates succeeds and every item is readable after; one bad item among 50 fails alone', async () => {
  const requests = Array.from({ length: 1000 }, (_, i) => ({ method: 'POST', path: '/core/classes/BatchF', body: { N: i, Name: `row ${i}` } }));
  const r = await batch(requests);
  assert.equal(r.status, 200, r.text.slice(0, 200));
  assert.equal(r.body.length, 1000);
  assert.ok(r.body.every((item) => item.success && item.success.objectId));
  const ids = new Set(r.body.map((item) => item.success.objectId));
  assert.equal(ids.size, 1000);
  const list = await request(server, 'GET', '/core/classes/BatchF?limit=2000&keys=N', { headers: M });
  assert.equal(list.body.results.length, 1000);
  assert.ok(list.body.results.every((row) => ids.has(row.objectId)));

  const fifty = Array.from({ length: 50 }, (_, i) => ({ method: 'POST', path: '/core/classes/BatchG', body: i === 25 ? { N: 'bad' } : { N: i } }));
  await createRecord(server, app, 'BatchG', { N: -1 });
  const mixed = await batch(fifty);
  assert.equal(mixed.body.filter((item) => item.error).length, 1);
  assert.equal(mixed.body[25].error.code, 111);
  const count = await request(server, 'GET', '/core/classes/BatchG?count=1&limit=0', { headers: M });
  assert.equal(count.body.count, 50);
});

test('§4.4 a batch inside a batch is refused, not deadlocked', async () => {
  const r = await batch([{ method: 'POST', path: '/core/batch', body: { requests: [] } }]);
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.code, 107);
  assert.equal((await request(server, 'GET', '/health')).status, 200);
});

test('§4.4 the batch\'s caller is resolved once, as in Parse: items after a logout in the same batch still run as that user', async () => {
  const username = `batchu${Date.now().toString(36)}@example.test`;
  const signup = await request(server, 'POST', '/core/users', { headers: M, body: { username, password: 'Pw12ab34cdZ9', email: username } });
  assert.equal(signup.status, 201, signup.text);
  // The class exists and is open to users (a class a key's write makes starts closed): no class
  // creation by a user.
  const made = await request(server, 'POST', '/core/schemas/BatchU', { headers: M, body: { classLevelPermissions: { create: { '*': true }, find: { '*': true }, get: { '*': true } } } });
  assert.equal(made.status, 200, made.text);
  await createRecord(server, app, 'BatchU', { N: 0 });
  const S = { ...appHeaders(app), 'X-Core-Session-Token': signup.body.sessionToken };
  const r = await batch([{ method: 'POST', path: '/core/logout', body: {} }, { method: 'POST', path: '/core/classes/BatchU', body: { N: 1 } }], S);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body[0], { success: {} });
  assert.ok(r.body[1].success?.objectId, r.text);
  const row = await request(server, 'GET', `/core/classes/BatchU/${r.body[1].success.objectId}`, { headers: M });
  assert.equal(row.body.createdBy?.objectId, signup.body.objectId, row.text);
  const later = await request(server, 'GET', '/core/users/me', { headers: S });
  assert.equal(later.body.code, 209, 'the logout itself took effect');
});

// Issue 16: each item is a write unit in the batch's write group; an item that grows the schema
// runs alone once the items before it are durable, so every item lands once, with its new fields,
// and a failing item still fails alone.
for (const [label, mixed] of [['on the application write queue', false], ['mixed with a system class, on the writer threads', true]]) {
  test(`§4.4 issue 16: a batch whose items grow the schema, ${label}: each item once, with its fields`, async () => {
    const cls = mixed ? 'BatchGrowMixed' : 'BatchGrowQueued';
    const existing = await createRecord(server, app, cls, { N: 0 });
    const requests = [
      { method: 'POST', path: `/core/classes/${cls}`, body: { N: 1 } },
      { method: 'POST', path: `/core/classes/${cls}`, body: { N: 2, F1: 'a' } },
      { method: 'POST', path: `/core/classes/${cls}`, body: { N: 'not a number' } },
      { method: 'POST', path: `/core/classes/${cls}`, body: { N: 3, F2: true } },
      { method: 'PUT', path: `/core/classes/${cls}/${existing}`, body: { F3: 5 } },
      { method: 'POST', path: `/core/classes/${cls}New`, body: { G: 1 } },
    ];
    if (mixed) requests.push({ method: 'POST', path: '/core/classes/_Role', body: { name: 'BatchGrowRole', ACL: { '*': { read: true } } } });
    const r = await batch(requests);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.length, requests.length);
    assert.ok(r.body[0].success && r.body[1].success && r.body[3].success && r.body[4].success && r.body[5].success, r.text);
    assert.equal(r.body[2].error.code, 111, r.text);
    if (mixed) assert.ok(r.body[6].success, r.text);

    const rows = (await request(server, 'GET', `/core/classes/${cls}?order=N`, { headers: M })).body.results;
    assert.deepEqual(rows.map((x) => x.N), [0, 1, 2, 3], 'each created item once, the failed one not at all');
    assert.equal(rows[2].F1, 'a');
    assert.equal(rows[3].F2, true);
    assert.equal(rows[0].F3, 5);
    assert.deepEqual(rows.map((x) => x.objectId).slice(1).sort(), [r.body[0].success.objectId, r.body[1].success.objectId, r.body[3].success.objectId].sort());
    const schema = (await request(server, 'GET', `/core/schemas/${cls}`, { headers: M })).body;
    for (const f of ['F1', 'F2', 'F3']) assert.ok(schema.fields[f], `${f} in the schema`);
    assert.equal((await request(server, 'GET', `/core/classes/${cls}New`, { headers: M })).body.results.length, 1);
  });
}
