// §2.5 timeline, §2.6 _Timeline, §3.4 "Also happens", §6.2 (issue 16): the change history of a
// product-base application, row by row, field by field.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  setup, stopAll, request, masterHeaders, apiKeyHeaders, appHeaders, createRecord, pool, ISO_MS, OBJECT_ID,
} from './lib/harness.mjs';

let server;
let app;
let M;
let K;
let agent;  // a signed-in user with the Agents role: {id, token}
before(async () => {
  ({ server, app } = await setup({}, { productBase: true }));
  M = masterHeaders(app);
  K = apiKeyHeaders(app);
  const signed = await request(server, 'POST', '/core/users', { headers: M, body: { username: 'agent@example.test', password: 'Agent5ecret' } });
  assert.equal(signed.status, 201, signed.text);
  const roles = await request(server, 'GET', `/core/classes/_Role?where=${encodeURIComponent('{"name":"Agents"}')}`, { headers: M });
  const role = roles.body.results[0].objectId;
  const joined = await request(server, 'PUT', `/core/classes/_Role/${role}`, {
    headers: M, body: { users: { __op: 'AddRelation', objects: [ptr('_User', signed.body.objectId)] } },
  });
  assert.equal(joined.status, 200, joined.text);
  const login = await request(server, 'POST', '/core/login', { headers: appHeaders(app), body: { username: 'agent@example.test', password: 'Agent5ecret' } });
  assert.equal(login.status, 200, login.text);
  agent = { id: signed.body.objectId, token: login.body.sessionToken };
});
after(stopAll);

const ptr = (className, objectId) => ({ __type: 'Pointer', className, objectId });
const session = (token, extra = {}) => ({ ...appHeaders(app), 'X-Core-Session-Token': token, ...extra });
const q = (where, extra = '') => `/core/classes/_Timeline?where=${encodeURIComponent(JSON.stringify(where))}&order=createdAt,objectId&limit=1000${extra}`;

// The history rows of one record, oldest first.
async function historyOf(className, objectId) {
  const r = await request(server, 'GET', q({ objectClass: className, objectIdValue: objectId }), { headers: M });
  assert.equal(r.status, 200, r.text);
  return r.body.results;
}

test('§2.6 a create on a timeline table writes one _Timeline row with exactly its fields', async () => {
  const body = { Name: 'Dana', PhoneNumber: '+972500000001', IsAccount: true };
  const created = await request(server, 'POST', '/core/classes/Accounts', { headers: M, body });
  assert.equal(created.status, 201, created.text);
  const id = created.body.objectId;
  const rows = await historyOf('Accounts', id);
  assert.equal(rows.length, 1);
  const row = rows[0];
  assert.match(row.objectId, OBJECT_ID);
  assert.match(row.createdAt, ISO_MS);
  assert.equal(row.createdAt, created.body.createdAt, 'the history row is dated by the write');
  assert.deepEqual(Object.keys(row).sort(), [
    'AccountId', 'Last', 'createdAt', 'createdBy', 'data', 'event', 'objectClass', 'objectId', 'objectIdValue', 'updatedAt', 'updatedBy', 'user',
  ]);
  assert.equal(row.event, 'create');
  assert.equal(row.objectClass, 'Accounts');
  assert.equal(row.objectIdValue, id);
  assert.deepEqual(row.data, body, 'data: exactly the fields the request sent');
  assert.equal(row.user, 'Master');
  assert.equal(row.createdBy, 'Master');
  assert.equal(row.updatedBy, 'Master');
  assert.equal(row.Last, true);
  assert.deepEqual(row.AccountId, ptr('Accounts', id), 'an Account\'s row points at the Account itself');
  assert.equal('Referer' in row, false, 'null for the record API');
});

test('§2.6 an update row holds only what that update sent, in wire form; Last moves to it', async () => {
  const id = await createRecord(server, app, 'Accounts', { Name: 'Eli', Score: 1 });
  const date = { __type: 'Date', iso: '2026-12-01T10:00:00.000Z' };
  const sent = { Score: { __op: 'Increment', amount: 2 }, NextCall: date };
  const updated = await request(server, 'PUT', `/core/classes/Accounts/${id}`, { headers: M, body: sent });
  assert.equal(updated.status, 200, updated.text);
  const rows = await historyOf('Accounts', id);
  assert.deepEqual(rows.map((r) => r.event), ['create', 'update']);
  assert.deepEqual(rows[1].data, sent);
  assert.deepEqual(rows.map((r) => r.Last), [false, true]);
  assert.equal(rows[1].createdAt, updated.body.updatedAt);
});

test('§2.5 index pointers: a Task\'s rows carry the Task\'s AccountId, also on updates that do not send it', async () => {
  const account = await createRecord(server, app, 'Accounts', { Name: 'Fay' });
  const task = await createRecord(server, app, 'Tasks', { Name: 'call Fay', AccountId: ptr('Accounts', account) });
  const updated = await request(server, 'PUT', `/core/classes/Tasks/${task}`, { headers: M, body: { Name: 'call Fay again' } });
  assert.equal(updated.status, 200, updated.text);
  const rows = await historyOf('Tasks', task);
  assert.deepEqual(rows.map((r) => r.event), ['create', 'update']);
  for (const r of rows) assert.deepEqual(r.AccountId, ptr('Accounts', account));
  assert.deepEqual(rows[1].data, { Name: 'call Fay again' });
  // The customer's card: every row of the Account and of what points at it.
  const card = await request(server, 'GET', q({ AccountId: ptr('Accounts', account) }), { headers: M });
  assert.deepEqual(card.body.results.map((r) => `${r.objectClass}:${r.event}`), ['Accounts:create', 'Tasks:create', 'Tasks:update']);
  // A Task moved to another Account, and one cleared of it.
  const other = await createRecord(server, app, 'Accounts', { Name: 'Gil' });
  await request(server, 'PUT', `/core/classes/Tasks/${task}`, { headers: M, body: { AccountId: ptr('Accounts', other) } });
  await request(server, 'PUT', `/core/classes/Tasks/${task}`, { headers: M, body: { AccountId: { __op: 'Delete' } } });
  const moved = await historyOf('Tasks', task);
  assert.deepEqual(moved[2].AccountId, ptr('Accounts', other));
  assert.equal('AccountId' in moved[3], false);
});

test('§2.6 rows on several timeline tables, and none for tables without timeline', async () => {
  const account = await createRecord(server, app, 'Accounts', { Name: 'Hana' });
  const made = {};
  for (const cls of ['Contacts', 'Sales', 'Cases', 'Activities', 'Notes', 'PriceQuotes', 'SMS', 'Emails', 'Conversations']) {
    made[cls] = await createRecord(server, app, cls, { AccountId: ptr('Accounts', account) });
  }
  for (const [cls, id] of Object.entries(made)) {
    const rows = await historyOf(cls, id);
    assert.equal(rows.length, 1, `one row for ${cls}`);
    assert.deepEqual(rows[0].AccountId, ptr('Accounts', account));
  }
  // Lookups, Config and a class of the client's own keep no history.
  const status = await createRecord(server, app, 'LeadSource', { Name: 'Fair' });
  const own = await createRecord(server, app, 'Gadgets', { Name: 'x' });
  await request(server, 'PUT', `/core/classes/Gadgets/${own}`, { headers: M, body: { Name: 'y' } });
  for (const [cls, id] of [['LeadSource', status], ['Gadgets', own]]) assert.deepEqual(await historyOf(cls, id), []);
  const none = await request(server, 'GET', q({ objectClass: { $in: ['LeadSource', 'Gadgets', 'Config'] } }, '&count=1&limit=0'), { headers: M });
  assert.equal(none.body.count, 0);
});

test('§2.6 a delete row holds only event, objectClass, objectIdValue, user and timestamps; Last moves to it', async () => {
  const account = await createRecord(server, app, 'Accounts', { Name: 'Ido' });
  const task = await createRecord(server, app, 'Tasks', { Name: 'gone', AccountId: ptr('Accounts', account) });
  const gone = await request(server, 'DELETE', `/core/classes/Tasks/${task}`, { headers: M });
  assert.equal(gone.status, 200, gone.text);
  const rows = await historyOf('Tasks', task);
  assert.deepEqual(rows.map((r) => r.event), ['create', 'delete']);
  const del = rows[1];
  assert.deepEqual(Object.keys(del).sort(), [
    'Last', 'createdAt', 'createdBy', 'event', 'objectClass', 'objectId', 'objectIdValue', 'updatedAt', 'updatedBy', 'user',
  ]);
  assert.equal(del.user, 'Master');
  assert.deepEqual(rows.map((r) => r.Last), [false, true]);
  // Deletions are found by event and class (§2.6); they are on no record's card.
  const deletions = await request(server, 'GET', q({ event: 'delete', objectClass: 'Tasks', objectIdValue: task }), { headers: M });
  assert.equal(deletions.body.results.length, 1);
  const card = await request(server, 'GET', q({ AccountId: ptr('Accounts', account), objectIdValue: task }), { headers: M });
  assert.deepEqual(card.body.results.map((r) => r.event), ['create']);
});

test('§3.4 an Account with history can be deleted: history never pins a record', async () => {
  const account = await createRecord(server, app, 'Accounts', { Name: 'Joe' });
  await request(server, 'PUT', `/core/classes/Accounts/${account}`, { headers: M, body: { Name: 'Joe B' } });
  const task = await createRecord(server, app, 'Tasks', { Name: 't', AccountId: ptr('Accounts', account) });
  // A live record pointing at it still blocks the delete (the rule of §3.4 stands).
  const blocked = await request(server, 'DELETE', `/core/classes/Accounts/${account}`, { headers: M });
  assert.equal(blocked.status, 400);
  assert.deepEqual(blocked.body, { code: 119, error: `Pointer to Object ${account} exists in table Tasks in key AccountId. Delete is not allowed.` });
  assert.equal((await request(server, 'DELETE', `/core/classes/Tasks/${task}`, { headers: M })).status, 200);
  const gone = await request(server, 'DELETE', `/core/classes/Accounts/${account}`, { headers: M });
  assert.equal(gone.status, 200, gone.text);
  assert.deepEqual((await historyOf('Accounts', account)).map((r) => r.event), ['create', 'update', 'delete']);
});

test('§2.6 user: Master for the master key and an API key, the objectId for a session; Referer of a session write', async () => {
  const byKey = await request(server, 'POST', '/core/classes/Accounts', { headers: K, body: { Name: 'by key' } });
  assert.equal(byKey.status, 201, byKey.text);
  const bySession = await request(server, 'POST', '/core/classes/Accounts', {
    headers: session(agent.token, { Referer: 'https://crm.example.test/accounts/new' }), body: { Name: 'by agent' },
  });
  assert.equal(bySession.status, 201, bySession.text);
  const plain = await request(server, 'PUT', `/core/classes/Accounts/${bySession.body.objectId}`, { headers: session(agent.token), body: { Name: 'by agent 2' } });
  assert.equal(plain.status, 200, plain.text);
  const masterWithReferer = await request(server, 'PUT', `/core/classes/Accounts/${byKey.body.objectId}`, {
    headers: { ...M, Referer: 'https://crm.example.test/x' }, body: { Name: 'by master' },
  });
  assert.equal(masterWithReferer.status, 200);

  const keyRows = await historyOf('Accounts', byKey.body.objectId);
  assert.deepEqual(keyRows.map((r) => [r.user, r.Referer]), [['Master', undefined], ['Master', undefined]]);
  const agentRows = await historyOf('Accounts', bySession.body.objectId);
  assert.deepEqual(agentRows.map((r) => r.user), [agent.id, agent.id]);
  assert.equal(agentRows[0].Referer, 'https://crm.example.test/accounts/new');
  assert.equal('Referer' in agentRows[1], false);
  for (const r of agentRows) assert.equal(r.createdBy, 'Master', 'createdBy describes who wrote the log row');
});

test('§2.6 Last after sequential updates and after 50 concurrent updates of one record: exactly one row, the newest', async () => {
  const id = await createRecord(server, app, 'Tasks', { Name: 'busy', N: 0 });
  for (let i = 1; i <= 5; i++) await request(server, 'PUT', `/core/classes/Tasks/${id}`, { headers: M, body: { N: i } });
  let rows = await historyOf('Tasks', id);
  assert.equal(rows.length, 6);
  assert.deepEqual(rows.map((r) => r.Last), [false, false, false, false, false, true]);

  const answers = [];
  await pool([...Array(50).keys()], 50, async (i) => {
    answers.push(await request(server, 'PUT', `/core/classes/Tasks/${id}`, { headers: i % 2 ? M : K, body: { Count: { __op: 'Increment', amount: 1 } } }));
  });
  assert.equal(answers.length, 50);
  for (const a of answers) assert.equal(a.status, 200, a.text);
  rows = await historyOf('Tasks', id);
  assert.equal(rows.length, 56);
  const last = rows.filter((r) => r.Last);
  assert.equal(last.length, 1, 'one Last row');
  const newest = rows.reduce((a, b) => (b.createdAt > a.createdAt ? b : a));
  assert.equal(last[0].createdAt, newest.createdAt);
  const lastRows = await request(server, 'GET', q({ objectIdValue: id, Last: true }), { headers: M });
  assert.equal(lastRows.body.results.length, 1);
  const record = await request(server, 'GET', `/core/classes/Tasks/${id}`, { headers: M });
  assert.equal(record.body.Count, 50);
});

test('§2.5 PUT /schemas with timeline turns the history on (and grows _Timeline by its index), null turns it off', async () => {
  const made = await request(server, 'POST', '/core/schemas/Deals', { headers: M, body: { classLevelPermissions: { create: { '*': true }, update: { '*': true }, find: { '*': true }, get: { '*': true }, delete: { '*': true } } } });
  assert.equal(made.status, 200, made.text);
  const before = await createRecord(server, app, 'Deals', { Name: 'quiet' });
  assert.deepEqual(await historyOf('Deals', before), []);

  const timeline = { displayFields: { Name: true }, index: { DealId: 'Deals', AccountId: 'Accounts' } };
  const on = await request(server, 'PUT', '/core/schemas/Deals', { headers: M, body: { timeline } });
  assert.equal(on.status, 200, on.text);
  assert.deepEqual(on.body.timeline, timeline);
  const schema = await request(server, 'GET', '/core/schemas/_Timeline', { headers: M });
  assert.deepEqual(schema.body.fields.DealId, { type: 'Pointer', targetClass: 'Deals' });
  const account = await createRecord(server, app, 'Accounts', { Name: 'Kim' });
  const deal = await createRecord(server, app, 'Deals', { Name: 'loud', AccountId: ptr('Accounts', account) });
  const rows = await historyOf('Deals', deal);
  assert.equal(rows.length, 1);
  assert.deepEqual(rows[0].DealId, ptr('Deals', deal));
  assert.deepEqual(rows[0].AccountId, ptr('Accounts', account));

  const off = await request(server, 'PUT', '/core/schemas/Deals', { headers: M, body: { timeline: null } });
  assert.equal(off.status, 200, off.text);
  assert.equal('timeline' in off.body, false);
  await request(server, 'PUT', `/core/classes/Deals/${deal}`, { headers: M, body: { Name: 'quiet again' } });
  assert.equal((await historyOf('Deals', deal)).length, 1);

  for (const bad of [{ index: { AccountId: 'Accounts', 'bad-name': 'X' } }, { index: { X: 7 } }, { other: 1 }, 'on']) {
    const refused = await request(server, 'PUT', '/core/schemas/Deals', { headers: M, body: { timeline: bad } });
    assert.equal(refused.status, 400, JSON.stringify(bad));
  }
  const conflict = await request(server, 'PUT', '/core/schemas/Deals', { headers: M, body: { timeline: { index: { AccountId: 'Deals' } } } });
  assert.equal(conflict.status, 400, conflict.text);
});

test('§5.3 _Timeline through the record API: master and API key read and write it; a session user reads rows of records it may read', async () => {
  const made = await request(server, 'POST', '/core/classes/_Timeline', { headers: K, body: { event: 'update', objectClass: 'Accounts', objectIdValue: 'imported01', data: { Name: 'old' } } });
  assert.equal(made.status, 201, made.text);
  const read = await request(server, 'GET', `/core/classes/_Timeline/${made.body.objectId}`, { headers: M });
  assert.equal(read.body.objectIdValue, 'imported01');
  const fixed = await request(server, 'PUT', `/core/classes/_Timeline/${made.body.objectId}`, { headers: M, body: { Last: true } });
  assert.equal(fixed.status, 200, fixed.text);
  const byAgent = await request(server, 'POST', '/core/classes/_Timeline', { headers: session(agent.token), body: { event: 'x' } });
  assert.equal(byAgent.status, 400);
  assert.equal(byAgent.body.code, 119);
  // The history of a record hidden from the agent by its ACL is hidden with it.
  const hidden = await createRecord(server, app, 'Accounts', { Name: 'secret', ACL: {} });
  const seen = await request(server, 'GET', q({ objectIdValue: hidden }), { headers: session(agent.token) });
  assert.equal(seen.status, 200, seen.text);
  assert.deepEqual(seen.body.results, []);
  const mine = await request(server, 'POST', '/core/classes/Accounts', { headers: session(agent.token), body: { Name: 'visible' } });
  const visible = await request(server, 'GET', q({ objectIdValue: mine.body.objectId }), { headers: session(agent.token) });
  assert.equal(visible.body.results.length, 1);
  const gone = await request(server, 'DELETE', `/core/classes/_Timeline/${made.body.objectId}`, { headers: K });
  assert.equal(gone.status, 200, gone.text);
});

test('§6.2 batch items on timeline tables each get their row; a failed item gets none', async () => {
  const count = async () => (await request(server, 'GET', q({ objectClass: 'Notes' }, '&count=1&limit=0'), { headers: M })).body.count;
  const before = await count();
  const r = await request(server, 'POST', '/core/batch', {
    headers: M,
    body: {
      requests: [
        { method: 'POST', path: '/core/classes/Notes', body: { Name: 'n1' } },
        { method: 'POST', path: '/core/classes/Notes', body: { Name: { __type: 'Pointer', className: 'X', objectId: 'y' } } },
        { method: 'POST', path: '/core/classes/Notes', body: { Name: 'n3', BrandNewField: 1 } },
      ],
    },
  });
  assert.equal(r.status, 200, r.text);
  assert.ok(r.body[0].success && r.body[2].success && r.body[1].error, r.text);
  for (const i of [0, 2]) assert.equal((await historyOf('Notes', r.body[i].success.objectId)).length, 1);
  assert.equal(await count(), before + 2);
});
