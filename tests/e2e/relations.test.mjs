// Relations (Parse's AddRelation / RemoveRelation) and the `$relatedTo` operator of §4.3 (issue 3).
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, stopAll, request, appHeaders, masterHeaders, createRecord } from './lib/harness.mjs';

let server;
let app;
let M;
before(async () => {
  ({ server, app } = await setup());
  M = masterHeaders(app);
});
after(stopAll);

const pointer = (className, objectId) => ({ __type: 'Pointer', className, objectId });
const relatedTo = (className, objectId, key) =>
  `where=${encodeURIComponent(JSON.stringify({ $relatedTo: { object: pointer(className, objectId), key } }))}`;

test('§4.3 $relatedTo finds the records a Relation holds; AddRelation and RemoveRelation change it', async () => {
  const a = await createRecord(server, app, 'Members', { Name: 'a' });
  const b = await createRecord(server, app, 'Members', { Name: 'b' });
  await createRecord(server, app, 'Members', { Name: 'c' });
  const team = await createRecord(server, app, 'Teams', {
    Name: 't', members: { __op: 'AddRelation', objects: [pointer('Members', a), pointer('Members', b)] },
  });

  const got = await request(server, 'GET', `/core/classes/Teams/${team}`, { headers: M });
  assert.deepEqual(got.body.members, { __type: 'Relation', className: 'Members' });

  const both = await request(server, 'GET', `/core/classes/Members?${relatedTo('Teams', team, 'members')}&order=Name`, { headers: M });
  assert.equal(both.status, 200, both.text);
  assert.deepEqual(both.body.results.map((r) => r.Name), ['a', 'b']);

  const removed = await request(server, 'PUT', `/core/classes/Teams/${team}`, {
    headers: M, body: { members: { __op: 'RemoveRelation', objects: [pointer('Members', a)] } },
  });
  assert.equal(removed.status, 200, removed.text);
  const left = await request(server, 'GET', `/core/classes/Members?${relatedTo('Teams', team, 'members')}&count=1`, { headers: M });
  assert.deepEqual(left.body.results.map((r) => r.Name), ['b']);
  assert.equal(left.body.count, 1);
});

test('§4.3 $relatedTo on an unknown owner, key or class matches nothing', async () => {
  await createRecord(server, app, 'Loose', { Name: 'x' });
  for (const q of [relatedTo('Nope', 'abcdefghij', 'members'), relatedTo('Teams', 'abcdefghij', 'nokey')]) {
    const r = await request(server, 'GET', `/core/classes/Loose?${q}`, { headers: M });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, { results: [] });
  }
});

test('§2.2 a Relation field keeps its type: a value or another class is a schema mismatch', async () => {
  const m = await createRecord(server, app, 'Members', { Name: 'd' });
  const team = await createRecord(server, app, 'Teams', { Name: 'u' });
  const plain = await request(server, 'PUT', `/core/classes/Teams/${team}`, { headers: M, body: { members: 'x' } });
  assert.equal(plain.status, 400, plain.text);
  assert.deepEqual(plain.body, { code: 111, error: 'schema mismatch for Teams.members; expected Relation<Members> but got String' });
  const other = await request(server, 'PUT', `/core/classes/Teams/${team}`, {
    headers: M, body: { members: { __op: 'AddRelation', objects: [pointer('Teams', team)] } },
  });
  assert.equal(other.status, 400, other.text);
  assert.equal(other.body.code, 111);
  const mixed = await request(server, 'PUT', `/core/classes/Teams/${team}`, {
    headers: M, body: { members: { __op: 'AddRelation', objects: [pointer('Members', m), pointer('Teams', team)] } },
  });
  assert.equal(mixed.status, 400, mixed.text);
  assert.equal(mixed.body.code, 107);
});

test('§3.4 deleting the owner removes its relation rows', async () => {
  const m = await createRecord(server, app, 'Members', { Name: 'e' });
  const team = await createRecord(server, app, 'Teams', {
    Name: 'gone', members: { __op: 'AddRelation', objects: [pointer('Members', m)] },
  });
  const del = await request(server, 'DELETE', `/core/classes/Teams/${team}`, { headers: M });
  assert.equal(del.status, 200, del.text);
  const r = await request(server, 'GET', `/core/classes/Members?${relatedTo('Teams', team, 'members')}`, { headers: M });
  assert.deepEqual(r.body, { results: [] });
});

// Issue 23: the Parse SDK's `query.equalTo('users', user)` (a user's roles) sends a Pointer as the
// value of a Relation field; Parse Server answers the owners whose relation holds it.
const where = (w) => `where=${encodeURIComponent(JSON.stringify(w))}`;
const names = async (cls, w, headers = M) => {
  const r = await request(server, 'GET', `/core/classes/${cls}?${where(w)}&order=Name`, { headers });
  assert.equal(r.status, 200, r.text);
  return r.body.results.map((o) => o.Name);
};

test('issue 23 §4.3 a Pointer on a Relation field matches the owners whose relation holds it ($eq, $in, $all, $ne, $nin)', async () => {
  const [x, y, z] = [await createRecord(server, app, 'Players', { Name: 'x' }),
    await createRecord(server, app, 'Players', { Name: 'y' }),
    await createRecord(server, app, 'Players', { Name: 'z' })];
  const add = (...ids) => ({ __op: 'AddRelation', objects: ids.map((id) => pointer('Players', id)) });
  await createRecord(server, app, 'Squads', { Name: 'xy', players: add(x, y) });
  await createRecord(server, app, 'Squads', { Name: 'y', players: add(y) });
  await createRecord(server, app, 'Squads', { Name: 'none' });

  assert.deepEqual(await names('Squads', { players: pointer('Players', x) }), ['xy']);
  assert.deepEqual(await names('Squads', { players: pointer('Players', y) }), ['xy', 'y']);
  assert.deepEqual(await names('Squads', { players: pointer('Players', z) }), []);
  assert.deepEqual(await names('Squads', { players: { $eq: pointer('Players', x) } }), ['xy']);
  assert.deepEqual(await names('Squads', { players: { $in: [pointer('Players', x), pointer('Players', z)] } }), ['xy']);
  assert.deepEqual(await names('Squads', { players: { $in: [pointer('Players', y)] } }), ['xy', 'y']);
  assert.deepEqual(await names('Squads', { players: { $all: [pointer('Players', x), pointer('Players', y)] } }), ['xy']);
  assert.deepEqual(await names('Squads', { players: { $all: [pointer('Players', y), pointer('Players', y)] } }), ['xy', 'y']);
  assert.deepEqual(await names('Squads', { players: { $all: [pointer('Players', x), pointer('Players', z)] } }), []);
  assert.deepEqual(await names('Squads', { players: { $ne: pointer('Players', x) } }), ['none', 'y']);
  assert.deepEqual(await names('Squads', { players: { $nin: [pointer('Players', x), pointer('Players', y)] } }), ['none']);
  // A Pointer to another class can never be held; combined with other constraints as usual.
  assert.deepEqual(await names('Squads', { players: pointer('Squads', x) }), []);
  assert.deepEqual(await names('Squads', { players: pointer('Players', y), Name: { $ne: 'y' } }), ['xy']);
  assert.deepEqual(await names('Squads', { $or: [{ players: pointer('Players', x) }, { Name: 'none' }] }), ['none', 'xy']);
  const count = await request(server, 'GET', `/core/classes/Squads?${where({ players: pointer('Players', y) })}&count=1&limit=0`, { headers: M });
  assert.deepEqual(count.body, { results: [], count: 2 });
});

test('issue 23 §2.4 relation equality sees only the owners the caller may read', async () => {
  const username = `rel${Date.now()}@example.test`;
  const signup = await request(server, 'POST', '/core/users', { headers: M, body: { username, password: 'Passw0rdX', email: username } });
  assert.equal(signup.status, 201, signup.text);
  const user = signup.body.objectId;
  const open = { '*': true };
  const clp = await request(server, 'POST', '/core/schemas/Crews', {
    headers: M, body: { classLevelPermissions: { find: open, get: open, count: open } },
  });
  assert.equal(clp.status, 200, clp.text);
  const add = { __op: 'AddRelation', objects: [pointer('_User', user)] };
  await createRecord(server, app, 'Crews', { Name: 'public', crew: add });
  await createRecord(server, app, 'Crews', { Name: 'mine', crew: add, ACL: { [user]: { read: true } } });
  await createRecord(server, app, 'Crews', { Name: 'hidden', crew: add, ACL: { someoneElse: { read: true } } });
  const S = { ...appHeaders(app), 'X-Core-Session-Token': signup.body.sessionToken };
  assert.deepEqual(await names('Crews', { crew: pointer('_User', user) }, S), ['mine', 'public']);
  assert.deepEqual(await names('Crews', { crew: pointer('_User', user) }), ['hidden', 'mine', 'public']);
});

test('issue 23 a Batch of AddRelation and RemoveRelation on one field applies them in order', async () => {
  const [p, q, r] = [await createRecord(server, app, 'Guests', { Name: 'p' }),
    await createRecord(server, app, 'Guests', { Name: 'q' }),
    await createRecord(server, app, 'Guests', { Name: 'r' })];
  const party = await createRecord(server, app, 'Parties', {
    Name: 'eve', guests: { __op: 'AddRelation', objects: [pointer('Guests', p), pointer('Guests', q)] },
  });
  const batch = await request(server, 'PUT', `/core/classes/Parties/${party}`, {
    headers: M,
    body: { guests: { __op: 'Batch', ops: [
      { __op: 'AddRelation', objects: [pointer('Guests', r)] },
      { __op: 'RemoveRelation', objects: [pointer('Guests', p)] },
    ] } },
  });
  assert.equal(batch.status, 200, batch.text);
  const held = await request(server, 'GET', `/core/classes/Guests?${relatedTo('Parties', party, 'guests')}&order=Name`, { headers: M });
  assert.deepEqual(held.body.results.map((o) => o.Name), ['q', 'r']);

  // On create too, the field made by the first operation.
  const made = await createRecord(server, app, 'Parties', { Name: 'new', guests: { __op: 'Batch', ops: [
    { __op: 'AddRelation', objects: [pointer('Guests', p), pointer('Guests', q)] },
    { __op: 'RemoveRelation', objects: [pointer('Guests', q)] },
  ] } });
  const held2 = await request(server, 'GET', `/core/classes/Guests?${relatedTo('Parties', made, 'guests')}`, { headers: M });
  assert.deepEqual(held2.body.results.map((o) => o.Name), ['p']);

  // Anything but relation operations in a Batch, or relations of two classes, is refused whole.
  for (const ops of [
    [{ __op: 'Increment', amount: 1 }],
    [{ __op: 'AddRelation', objects: [pointer('Guests', p)] }, { __op: 'RemoveRelation', objects: [pointer('Parties', party)] }],
    [],
    'x',
  ]) {
    const bad = await request(server, 'PUT', `/core/classes/Parties/${party}`, {
      headers: M, body: { Name: 'changed', guests: { __op: 'Batch', ops } },
    });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.code, 107, bad.text);
  }
  const still = await request(server, 'GET', `/core/classes/Parties/${party}`, { headers: M });
  assert.equal(still.body.Name, 'eve');
});
