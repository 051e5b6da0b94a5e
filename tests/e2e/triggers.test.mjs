// §6.1 triggers (automations), §2.5 the schema's `triggers`, §2.6 `_syslogTriggers`, `_Timeline` and
// `updatedByTrigger`, §4.4 batch flags, §4.9 functions' writes, §6.3 `_Notification`; the definition
// format and the runner's contract are docs/TRIGGERS.md.
//
// Actions run after the client's answer, on the server's trigger threads: every wait for them is a
// bounded pollUntil. An assertion that something did NOT happen waits first for a later activation
// to be done and for `_syslogTriggers` to be quiet (settle()).
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  makeDataDir, createApp, createKey, startServer, stopAll, request, masterHeaders, apiKeyHeaders, appHeaders,
  pollUntil, sleep, cli, cliJson, OBJECT_ID, ISO_MS, HOST,
} from './lib/harness.mjs';
import { startWebhookReceiver, startFakeSmtp, closeAll, order, decodeMail } from './lib/receivers.mjs';

// The shared server: product base (so `_Notification`, Accounts and Tasks exist), a loopback webhook
// receiver allowed, two retries 100 ms apart (then 200 ms).
const SHARED_ARGS = ['--allow-private-webhooks', '--trigger-retries', '2', '--trigger-retry-delay', '100'];
// How long an action may take to show its effect (the runner is asynchronous, never slow by design).
const ACTION_MS = 10_000;
const BLOCKED = (id) => `blocked! trigger step is to deep -3. source trigger: ${id}`;

let shared;          // {dataDir, app, server, M}
let rx;              // the shared webhook receiver
const routes = new Map();  // receiver path -> (req, n) => {status, delayMs}

before(async () => {
  rx = await startWebhookReceiver((req, n) => (routes.get(req.path)?.(req, n) ?? { status: 200 }));
  const dataDir = makeDataDir('crmd-triggers');
  const app = createApp(dataDir, { productBase: true });
  const server = await startServer(dataDir, { extraArgs: SHARED_ARGS });
  shared = { dataDir, app, server, M: masterHeaders(app) };
});
after(async () => {
  await stopAll();
  await closeAll();
});

// ---------------------------------------------------------------------------------------------
// Helpers

let seq = 0;
const uniq = (p) => `${p}${(seq++).toString(36)}x${crypto.randomBytes(2).toString('hex')}`;
const ptr = (className, objectId) => ({ __type: 'Pointer', className, objectId });
const enc = (o) => encodeURIComponent(JSON.stringify(o));

const createRecordAction = (table, data, extra = {}) => ({ actionType: 'create-record', actionData: { 'create-record': { table, data } }, ...extra });
const updateRecordAction = (data, extra = {}) => ({ actionType: 'update-record', actionData: { 'update-record': { data } }, ...extra });
const webhookAction = (url, headers) => ({ actionType: 'webhook', actionData: { webhook: headers ? { url, headers } : { url } } });
const codeAction = (functionName, useQueue) => ({ actionType: 'server-side-code', actionData: { 'server-side-code': { functionName, useQueue } } });
const trigger = (event, actions, extra = {}) => ({ name: `${event} trigger`, event, actions, ...extra });

// A class made through the schema API with these fields ({Name: 'String', Ref: ['Pointer', 'X']}).
async function makeClass(cls, fields = {}, c = shared) {
  const f = {};
  for (const [name, type] of Object.entries(fields)) {
    f[name] = Array.isArray(type) ? { type: type[0], targetClass: type[1] } : { type };
  }
  const r = await request(c.server, 'POST', `/core/schemas/${cls}`, { headers: c.M, body: { className: cls, fields: f } });
  assert.equal(r.status, 200, `make class ${cls}: ${r.text}`);
}

function putTriggers(cls, triggers, { c = shared, headers = c.M } = {}) {
  return request(c.server, 'PUT', `/core/schemas/${cls}`, { headers, body: { triggers } });
}

// Sets the class's triggers (200 asserted) and returns them as GET returns them (ids filled).
async function setTriggers(cls, triggers, c = shared) {
  const r = await putTriggers(cls, triggers, { c });
  assert.equal(r.status, 200, `PUT triggers of ${cls}: ${r.text}`);
  return getTriggers(cls, c);
}

async function getTriggers(cls, c = shared) {
  const r = await request(c.server, 'GET', `/core/schemas/${cls}`, { headers: c.M });
  assert.equal(r.status, 200, `GET schema ${cls}: ${r.text}`);
  assert.ok(Array.isArray(r.body.triggers), `schema of ${cls} has a triggers array: ${r.text.slice(0, 300)}`);
  return r.body.triggers;
}

async function create(cls, body, { c = shared, headers = c.M } = {}) {
  const r = await request(c.server, 'POST', `/core/classes/${cls}`, { headers, body });
  assert.equal(r.status, 201, `create ${cls}: ${r.text}`);
  return r.body.objectId;
}

async function update(cls, id, body, c = shared) {
  const r = await request(c.server, 'PUT', `/core/classes/${cls}/${id}`, { headers: c.M, body });
  assert.equal(r.status, 200, `update ${cls}/${id}: ${r.text}`);
  return r.body;
}

async function remove(cls, id, c = shared) {
  const r = await request(c.server, 'DELETE', `/core/classes/${cls}/${id}`, { headers: c.M });
  assert.equal(r.status, 200, `delete ${cls}/${id}: ${r.text}`);
}

async function getRecord(cls, id, c = shared) {
  const r = await request(c.server, 'GET', `/core/classes/${cls}/${id}`, { headers: c.M });
  assert.equal(r.status, 200, `get ${cls}/${id}: ${r.text}`);
  return r.body;
}

// Rows of a class with the master key, oldest first.
async function find(cls, where = {}, c = shared) {
  const r = await request(c.server, 'GET', `/core/classes/${cls}?where=${enc(where)}&order=createdAt,objectId&limit=10000`, { headers: c.M });
  assert.equal(r.status, 200, `find ${cls}: ${r.text}`);
  return r.body.results;
}

// `_syslogTriggers` rows of one trigger: {fired, actions, all}.
async function syslogOf(triggerId, c = shared) {
  const all = await find('_syslogTriggers', { triggerId }, c);
  return { all, fired: all.filter((r) => r.actionId == null), actions: all.filter((r) => r.actionId != null) };
}

// Polls `probe` (returns {done, ...}) until done; fails the test with `what` and the last value.
async function waitFor(what, probe, { timeoutMs = ACTION_MS, intervalMs = 50 } = {}) {
  const p = await pollUntil(probe, { timeoutMs, intervalMs });
  assert.ok(p.ok, `${what}: not within ${timeoutMs} ms; last: ${JSON.stringify(p.last).slice(0, 1500)}`);
  return p.last;
}

// Waits until the number of `_syslogTriggers` rows stays the same over three polls 150 ms apart
// (at most 5 s): the runner has nothing left in flight. Used before asserting that something did
// not happen, after the wait for a later activation that did.
async function settle(c = shared) {
  let last = -1;
  let same = 0;
  for (let i = 0; i < 40 && same < 3; i++) {
    const r = await request(c.server, 'GET', '/core/classes/_syslogTriggers?count=1&limit=0', { headers: c.M });
    const n = r.body?.count;
    same = n === last ? same + 1 : 0;
    last = n;
    await sleep(150);
  }
}

const countBy = (rows, key) => rows.reduce((m, r) => m.set(r[key], (m.get(r[key]) ?? 0) + 1), new Map());

// `crmd app webhook-secret`: the bare secret, or a JSON string, or a JSON object holding it
// (`secret`, `webhookSecret`, or its one string field besides `appId`).
function webhookSecret(dataDir, appId) {
  const { stdout } = cli(['app', 'webhook-secret', '--data', dataDir, '--app', appId]);
  const text = stdout.trim();
  let secret = text;
  let parsed;
  try { parsed = JSON.parse(text); } catch { parsed = undefined; /* the bare secret */ }
  if (typeof parsed === 'string') {
    secret = parsed;
  } else if (parsed && typeof parsed === 'object') {
    const others = Object.entries(parsed).filter(([k, v]) => k !== 'appId' && typeof v === 'string');
    secret = [parsed.secret, parsed.webhookSecret, others.length === 1 ? others[0][1] : undefined].find((v) => typeof v === 'string');
  }
  assert.ok(typeof secret === 'string' && secret.length >= 16 && !/[\s{}"]/.test(secret), `webhook secret: ${JSON.stringify(text)}`);
  return secret;
}

// `crmd function deploy`, then a poll until the running server knows the function (a trigger
// naming it is accepted): `accept` makes that PUT and returns its response.
function deploy(dataDir, app, name, code) {
  const file = path.join(dataDir, `${name}.lua`);
  fs.writeFileSync(file, code);
  return cliJson(['function', 'deploy', '--data', dataDir, '--app', app.appId, '--name', name, '--file', file]);
}
async function putOnceKnown(what, put) {
  const last = await waitFor(what, async () => {
    const r = await put();
    return { done: r.status === 200, status: r.status, text: r.text };
  }, { timeoutMs: 5000, intervalMs: 100 });
  return last;
}

// A user signed up with the master key: {id, token}.
async function newUser(c = shared) {
  const username = `${uniq('u')}@example.test`;
  const r = await request(c.server, 'POST', '/core/users', { headers: c.M, body: { username, password: 'Passw0rdA1', email: username } });
  assert.equal(r.status, 201, r.text);
  return { id: r.body.objectId, token: r.body.sessionToken };
}

const parseJson = (s, what) => {
  assert.equal(typeof s, 'string', `${what} is a JSON string: ${JSON.stringify(s)}`);
  try { return JSON.parse(s); } catch { assert.fail(`${what} does not parse as JSON: ${s}`); }
  return undefined;
};

// ---------------------------------------------------------------------------------------------
// 1. Storing and reading definitions

test('§2.5 §6.1 PUT /core/schemas/{T} {"triggers"} stores the list; GET fills 10-character _ids of triggers and actions; _ids sent back are kept; a PUT replaces the list; API key may, a session gets 403', async () => {
  const src = uniq('TrSet');
  const log = uniq('TrSetLog');
  await makeClass(log, { Name: 'String' });
  await makeClass(src, { Name: 'String' });
  const defs = [
    trigger('create', [createRecordAction(log, { Name: 'made {{Name}}' })], { name: 'first' }),
    trigger('save', [createRecordAction(log, { Name: 'b' }), createRecordAction(log, { Name: 'c' })], {
      name: 'second', active: false, conditions: [{ where: { Name: 'x' } }, { changed: ['Name'] }],
    }),
  ];
  const put = await putTriggers(src, defs);
  assert.equal(put.status, 200, put.text);
  const stored = await getTriggers(src);
  assert.equal(stored.length, 2);
  const ids = [];
  for (const [i, t] of stored.entries()) {
    assert.match(t._id, OBJECT_ID, `trigger ${i} _id`);
    ids.push(t._id);
    assert.equal(t.name, defs[i].name);
    assert.equal(t.event, defs[i].event);
    assert.equal(t.actions.length, defs[i].actions.length);
    for (const [j, a] of t.actions.entries()) {
      assert.match(a._id, OBJECT_ID, `trigger ${i} action ${j} _id`);
      ids.push(a._id);
      assert.equal(a.actionType, defs[i].actions[j].actionType);
      assert.deepEqual(a.actionData, defs[i].actions[j].actionData);
    }
  }
  assert.equal(new Set(ids).size, ids.length, 'every _id differs');
  assert.equal(stored[1].active, false);
  assert.deepEqual(stored[1].conditions, defs[1].conditions);
  if (put.body && Array.isArray(put.body.triggers)) assert.deepEqual(put.body.triggers, stored, 'the PUT answers the stored list');

  // Sent back with their _ids (one renamed): the ids stay.
  const back = structuredClone(stored);
  back[0].name = 'first, renamed';
  const again = await setTriggers(src, back);
  assert.deepEqual(again.map((t) => t._id), stored.map((t) => t._id));
  assert.deepEqual(again.map((t) => t.actions.map((a) => a._id)), stored.map((t) => t.actions.map((a) => a._id)));
  assert.equal(again[0].name, 'first, renamed');

  // A PUT replaces the whole list; _ids chosen by the client are kept.
  const replaced = await setTriggers(src, [trigger('update', [createRecordAction(log, { Name: 'u' }, { _id: 'ActKeep001' })], { _id: 'TrgKeep001' })]);
  assert.equal(replaced.length, 1);
  assert.equal(replaced[0]._id, 'TrgKeep001');
  assert.equal(replaced[0].actions[0]._id, 'ActKeep001');

  // An API key may set them.
  const byKey = await putTriggers(src, [trigger('delete', [createRecordAction(log, { Name: 'd' })])], { headers: apiKeyHeaders(shared.app) });
  assert.equal(byKey.status, 200, byKey.text);
  const afterKey = await getTriggers(src);
  assert.deepEqual(afterKey.map((t) => t.event), ['delete']);

  // A session, even a signed-in user's, gets 403 and changes nothing.
  const u = await newUser();
  const bySession = await putTriggers(src, [], { headers: { ...appHeaders(shared.app), 'X-Core-Session-Token': u.token } });
  assert.equal(bySession.status, 403, bySession.text);
  assert.deepEqual(bySession.body, { error: 'unauthorized: master key is required' });
  assert.deepEqual(await getTriggers(src), afterKey);

  // POST /core/schemas takes triggers when it creates a class.
  const made = uniq('TrMade');
  const post = await request(shared.server, 'POST', `/core/schemas/${made}`, {
    headers: shared.M, body: { className: made, fields: { Name: { type: 'String' } }, triggers: [trigger('create', [createRecordAction(log, { Name: 'p' })])] },
  });
  assert.equal(post.status, 200, post.text);
  const madeTriggers = await getTriggers(made);
  assert.equal(madeTriggers.length, 1);
  assert.match(madeTriggers[0]._id, OBJECT_ID);
  assert.match(madeTriggers[0].actions[0]._id, OBJECT_ID);

  // An empty list clears them.
  assert.deepEqual(await setTriggers(src, []), []);
});

test('§6.1 a definition the server cannot run is refused whole with 400 code 107 naming the problem; the stored list is unchanged', async () => {
  const src = uniq('TrBad');
  const log = uniq('TrBadLog');
  await makeClass(log, { Name: 'String' });
  await makeClass(src, { Name: 'String' });
  const good = trigger('create', [createRecordAction(log, { Name: 'ok' })], { name: 'good one' });
  const baseline = await setTriggers(src, [good]);
  const cases = [
    ['unknown event', [trigger('explode', [createRecordAction(log, { Name: 'x' })])], 'explode'],
    ['unknown actionType', [trigger('create', [{ actionType: 'teleport', actionData: { teleport: {} } }])], 'teleport'],
    ['bad where', [trigger('create', [createRecordAction(log, { Name: 'x' })], { conditions: [{ where: { Name: { $foo: 1 } } }] })], '$foo'],
    ['create-record to an unknown table', [trigger('create', [createRecordAction('NoSuchTable42', { Name: 'x' })])], 'NoSuchTable42'],
    ['server-side-code with an unknown function', [trigger('create', [codeAction('noSuchFunction42', false)])], 'noSuchFunction42'],
    ['two triggers with one _id', [
      trigger('create', [createRecordAction(log, { Name: 'x' })], { _id: 'DupTrig001' }),
      trigger('update', [createRecordAction(log, { Name: 'y' })], { _id: 'DupTrig001' })], 'DupTrig001'],
    ['two actions with one _id', [
      trigger('create', [createRecordAction(log, { Name: 'x' }, { _id: 'DupAct0001' })]),
      trigger('update', [createRecordAction(log, { Name: 'y' }, { _id: 'DupAct0001' })])], 'DupAct0001'],
    ['an extra unknown key', [trigger('create', [createRecordAction(log, { Name: 'x' })], { colour: 'blue' })], 'colour'],
    ['an unknown condition', [trigger('create', [createRecordAction(log, { Name: 'x' })], { conditions: [{ whenever: true }] })], 'condition'],
    ['no event', [{ name: 'no event', actions: [createRecordAction(log, { Name: 'x' })] }], 'event'],
    ['no actions', [{ name: 'no actions', event: 'create' }], 'actions'],
    ['an _id that is not 10 alphanumerics', [trigger('create', [createRecordAction(log, { Name: 'x' })], { _id: 'short' })], null],
    ['21 actions', [trigger('create', Array.from({ length: 21 }, (_, i) => createRecordAction(log, { Name: `n${i}` })))], null],
    ['a name of 201 characters', [trigger('create', [createRecordAction(log, { Name: 'x' })], { name: 'n'.repeat(201) })], null],
    ['active not a boolean', [trigger('create', [createRecordAction(log, { Name: 'x' })], { active: 'yes' })], null],
    ['a webhook url that is not http(s)', [trigger('create', [webhookAction('ftp://example.test/x')])], null],
    ['triggers not an array', { create: true }, null],
    ['51 triggers', Array.from({ length: 50 }, () => trigger('create', [createRecordAction(log, { Name: 'x' })])), null],
  ];
  for (const [what, triggers, needle] of cases) {
    // The bad definition comes after a good one: the whole list is refused.
    const list = Array.isArray(triggers) ? [good, ...triggers] : triggers;
    const r = await putTriggers(src, list);
    assert.equal(r.status, 400, `${what}: ${r.status} ${r.text}`);
    assert.equal(r.body.code, 107, `${what}: ${r.text}`);
    assert.equal(typeof r.body.error, 'string', `${what}: ${r.text}`);
    if (needle) assert.ok(r.body.error.includes(needle), `${what}: the message names ${needle}: ${r.body.error}`);
    assert.deepEqual(await getTriggers(src), baseline, `${what}: the stored list is unchanged`);
  }
  // Classes that cannot have triggers.
  for (const cls of ['_Session', '_Timeline', '_RequestLog', '_syslogTriggers']) {
    const r = await putTriggers(cls, [trigger('create', [createRecordAction(log, { Name: 'x' })])]);
    assert.equal(r.status, 400, `${cls}: ${r.text}`);
  }
});

// ---------------------------------------------------------------------------------------------
// 3-5. Events, conditions, active

test('§6.1 events: create, update and delete fire on their write; save fires on create and update, not on delete', async () => {
  const src = uniq('EvSrc');
  const log = uniq('EvLog');
  await makeClass(log, { Kind: 'String', Src: 'String' });
  await makeClass(src, { Name: 'String' });
  const defs = await setTriggers(src, ['create', 'update', 'delete', 'save'].map((ev) => trigger(ev, [createRecordAction(log, { Kind: ev, Src: '{{objectId}}' })])));
  const id = await create(src, { Name: 'one' });
  await update(src, id, { Name: 'two' });
  await remove(src, id);
  await waitFor('five log rows', async () => {
    const rows = await find(log);
    return { done: rows.length >= 5, n: rows.length };
  });
  await settle();
  const rows = await find(log);
  assert.deepEqual(Object.fromEntries(countBy(rows, 'Kind')), { create: 1, update: 1, delete: 1, save: 2 });
  for (const r of rows) assert.equal(r.Src, id, 'each row names the record (the delete one too)');
  const saveTrigger = defs.find((t) => t.event === 'save');
  const { fired } = await syslogOf(saveTrigger._id);
  assert.deepEqual(fired.map((r) => r.event).sort(), ['create', 'update'], 'the fired rows say which write fired the save trigger');
});

test('§6.1 conditions: where matches the record after the write (before it for a delete); changed holds when the write sent the field (a create sends its body)', async () => {
  const src = uniq('CondSrc');
  const log = uniq('CondLog');
  await makeClass(log, { Kind: 'String', Src: 'String' });
  await makeClass(src, { Status: 'String', Note: 'String' });
  const row = (kind) => [createRecordAction(log, { Kind: kind, Src: '{{objectId}}' })];
  await setTriggers(src, [
    trigger('save', row('where'), { conditions: [{ where: { Status: 'won' } }] }),
    trigger('update', row('changed'), { conditions: [{ changed: ['Status'] }] }),
    trigger('delete', row('delwhere'), { conditions: [{ where: { Status: 'won' } }] }),
    trigger('save', row('changedNote'), { conditions: [{ changed: ['Note'] }] }),
    trigger('save', row('both'), { conditions: [{ where: { Status: { $in: ['won', 'lost'] } } }, { changed: ['Status'] }] }),
    trigger('save', row('always'), { conditions: [] }),
  ]);
  const r1 = await create(src, { Status: 'open', Note: 'a' }); // where no, changedNote yes, both no
  await update(src, r1, { Status: 'won' });                     // where yes, changed yes, both yes
  await update(src, r1, { Note: 'b' });                         // where yes (still won), changedNote yes
  const r2 = await create(src, { Status: 'won' });              // where yes, both yes
  await update(src, r2, { Status: 'lost' });                    // changed yes, both yes
  await remove(src, r1);                                        // delwhere yes (won before the delete)
  await remove(src, r2);                                        // delwhere no (lost)
  const expected = {
    where: [r1, r1, r2], changed: [r1, r2], delwhere: [r1], changedNote: [r1, r1], both: [r1, r2, r2], always: [r1, r1, r1, r2, r2],
  };
  const total = Object.values(expected).flat().length;
  await waitFor(`${total} log rows`, async () => {
    const rows = await find(log);
    return { done: rows.length >= total, n: rows.length };
  });
  await settle();
  const rows = await find(log);
  const got = {};
  for (const kind of Object.keys(expected)) got[kind] = rows.filter((r) => r.Kind === kind).map((r) => r.Src).sort();
  for (const kind of Object.keys(expected)) expected[kind].sort();
  assert.deepEqual(got, expected);
});

test('§6.1 a trigger with active:false never fires and writes no _syslogTriggers row', async () => {
  const src = uniq('ActSrc');
  const log = uniq('ActLog');
  await makeClass(log, { Kind: 'String', Src: 'String' });
  await makeClass(src, { Name: 'String' });
  const defs = await setTriggers(src, [
    trigger('save', [createRecordAction(log, { Kind: 'inactive', Src: '{{objectId}}' })], { active: false }),
    trigger('create', [createRecordAction(log, { Kind: 'marker', Src: '{{objectId}}' })]),
  ]);
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push(await create(src, { Name: `n${i}` }));
  await update(src, ids[0], { Name: 'changed' });
  await waitFor('three marker rows', async () => {
    const rows = await find(log, { Kind: 'marker' });
    return { done: rows.length === 3, n: rows.length };
  });
  await settle();
  assert.deepEqual(await find(log, { Kind: 'inactive' }), []);
  assert.deepEqual((await syslogOf(defs[0]._id)).all, [], 'no row for the inactive trigger');
  assert.equal((await syslogOf(defs[1]._id)).fired.length, 3);
});

// ---------------------------------------------------------------------------------------------
// 6. Each action type

test('§6.1 create-record: {{Field}} placeholders (objectId, a String, a Pointer, a Date, createdAt, a missing field, text that is no field name), a Pointer whose objectId is {{objectId}}', async () => {
  const src = uniq('PhSrc');
  const dst = uniq('PhDst');
  await makeClass(src, { Name: 'String', Due: 'Date', AccountId: ['Pointer', 'Accounts'] });
  await makeClass(dst, {
    Name: 'String', SrcRef: ['Pointer', src], SrcId: 'String', AccountRef: 'String', DueText: 'String', Created: 'String', Missing: 'String', Kept: 'String',
  });
  await setTriggers(src, [trigger('create', [createRecordAction(dst, {
    Name: 'Call {{Name}}', SrcRef: ptr(src, '{{objectId}}'), SrcId: '{{objectId}}', AccountRef: '{{AccountId}}', DueText: '{{Due}}',
    Created: '{{createdAt}}', Missing: '[{{Nope}}]', Kept: '{{not a field}}',
  })])]);
  const account = await create('Accounts', { Name: 'Acme' });
  const made = await request(shared.server, 'POST', `/core/classes/${src}`, {
    headers: shared.M, body: { Name: 'Dana', Due: { __type: 'Date', iso: '2026-12-01T10:00:00.000Z' }, AccountId: ptr('Accounts', account) },
  });
  assert.equal(made.status, 201, made.text);
  const id = made.body.objectId;
  const [row] = (await waitFor('the created row', async () => {
    const rows = await find(dst, { SrcId: id });
    return { done: rows.length > 0, rows };
  })).rows;
  assert.equal(row.Name, 'Call Dana');
  assert.deepEqual(row.SrcRef, ptr(src, id));
  assert.equal(row.SrcId, id);
  assert.equal(row.AccountRef, account, 'a Pointer gives its objectId');
  assert.equal(row.DueText, '2026-12-01T10:00:00.000Z', 'a Date gives its ISO time');
  assert.equal(row.Created, made.body.createdAt);
  assert.equal(row.Missing, '[]', 'a field the record lacks gives the empty string');
  assert.equal(row.Kept, '{{not a field}}', 'text that is not a field name is kept');
  await settle();
  assert.equal((await find(dst)).length, 1);
});

test('§6.1 update-record: a field filled right after the write, visible on a later GET', async () => {
  const src = uniq('UpSrc');
  await makeClass(src, { Name: 'String', Stage: 'String', Echo: 'String', Hits: 'Number' });
  const [t] = await setTriggers(src, [trigger('create', [updateRecordAction({ Stage: 'triaged', Echo: 'seen {{Name}}', Hits: { __op: 'Increment', amount: 2 } })])]);
  const made = await request(shared.server, 'POST', `/core/classes/${src}`, { headers: shared.M, body: { Name: 'Lead A', Hits: 1 } });
  assert.equal(made.status, 201, made.text);
  assert.equal(made.body.Stage, undefined, 'the answer does not wait for the action');
  const id = made.body.objectId;
  const got = await waitFor('Stage filled', async () => {
    const r = await getRecord(src, id);
    return { done: r.Stage === 'triaged', r };
  });
  assert.equal(got.r.Echo, 'seen Lead A');
  assert.equal(got.r.Hits, 3);
  assert.equal(got.r.Name, 'Lead A');
  const { actions } = await syslogOf(t._id);
  assert.equal(actions.length, 1);
  assert.equal(actions[0].error ?? null, null);
});

test('§6.1 send-email without --smtp-url: an HTML mail in DATA/apps/<appId>/outbox with the subject and body', async () => {
  const src = uniq('MailSrc');
  await makeClass(src, { Name: 'String', Email: 'String' });
  const [t] = await setTriggers(src, [trigger('create', [{
    actionType: 'send-email', actionData: { 'send-email': { to: '{{Email}}', subject: 'Welcome {{Name}}', html: '<p>Hello <b>{{Name}}</b></p>' } },
  }])]);
  const tag = `Noa${crypto.randomBytes(3).toString('hex')}`;
  await create(src, { Name: tag, Email: `${tag.toLowerCase()}@example.test` });
  const outbox = path.join(shared.dataDir, 'apps', shared.app.appId, 'outbox');
  const found = await waitFor('the mail in the outbox', async () => {
    const names = fs.existsSync(outbox) ? fs.readdirSync(outbox).filter((n) => n.endsWith('.eml') && !n.startsWith('.')) : [];
    const mails = names.map((n) => fs.readFileSync(path.join(outbox, n), 'utf8')).filter((m) => m.includes(`Welcome ${tag}`));
    return { done: mails.length > 0, mails };
  });
  assert.equal(found.mails.length, 1);
  const mail = found.mails[0];
  assert.match(mail, new RegExp(`^Subject: Welcome ${tag}\\r?$`, 'm'));
  assert.match(mail, new RegExp(`^To: ${tag.toLowerCase()}@example\\.test\\r?$`, 'm'));
  assert.match(mail, /^Content-Type: text\/html/im);
  assert.ok(decodeMail(mail).includes(`<p>Hello <b>${tag}</b></p>`), mail);
  const { actions } = await waitFor('the action row', async () => {
    const s = await syslogOf(t._id);
    return { done: s.actions.length === 1, ...s };
  });
  assert.equal(actions[0].error ?? null, null);
});

test('§6.1 send-email with --smtp-url goes to the SMTP server (a fake one on 127.0.0.1), not to the outbox', async () => {
  const smtp = await startFakeSmtp();
  const dataDir = makeDataDir('crmd-triggers-smtp');
  const app = createApp(dataDir);
  const server = await startServer(dataDir, { extraArgs: ['--smtp-url', `smtp://${HOST}:${smtp.port}`, '--mail-from', 'crm@example.test'] });
  const c = { dataDir, app, server, M: masterHeaders(app) };
  const src = uniq('SmtpSrc');
  await makeClass(src, { Name: 'String', Email: 'String' }, c);
  await setTriggers(src, [trigger('save', [{
    actionType: 'send-email', actionData: { 'send-email': { to: '{{Email}}', subject: 'Status of {{Name}}', html: '<h1>{{Name}}</h1><p>updated</p>' } },
  }], { conditions: [{ changed: ['Email'] }] })], c);
  await create(src, { Name: 'Omer', Email: 'omer@example.test' }, { c });
  const got = await waitFor('one SMTP message', async () => ({ done: smtp.messages.length >= 1, n: smtp.messages.length }));
  assert.equal(got.n, 1);
  const [m] = smtp.messages;
  assert.match(m.from, /<crm@example\.test>/);
  assert.match(m.to[0], /<omer@example\.test>/);
  assert.match(m.data, /^Subject: Status of Omer\r?$/m);
  assert.match(m.data, /^Content-Type: text\/html/im);
  assert.ok(decodeMail(m.data).includes('<h1>Omer</h1><p>updated</p>'), m.data);
  assert.equal(fs.existsSync(path.join(dataDir, 'apps', app.appId, 'outbox')), false, 'no outbox when SMTP is set');
});

test('§6.1 §6.3 notification: a _Notification row with User, Content, Date, Icon, objectClass, objectIdValue and updatedByTrigger', async () => {
  const user = await newUser();
  const src = uniq('NoteSrc');
  await makeClass(src, { Name: 'String', OwnerId: ['Pointer', '_User'] });
  const [t] = await setTriggers(src, [trigger('create', [{
    actionType: 'notification', actionData: { notification: { user: '{{OwnerId}}', content: 'New lead {{Name}}', icon: 'bell' } },
  }])]);
  const before = Date.now();
  const id = await create(src, { Name: 'Gal', OwnerId: ptr('_User', user.id) });
  const { rows } = await waitFor('a _Notification row', async () => {
    const r = await find('_Notification', { objectIdValue: id });
    return { done: r.length > 0, rows: r };
  });
  assert.equal(rows.length, 1);
  const n = rows[0];
  assert.deepEqual(n.User, ptr('_User', user.id));
  assert.equal(n.Content, 'New lead Gal');
  assert.equal(n.Icon, 'bell');
  assert.equal(n.objectClass, src);
  assert.equal(n.objectIdValue, id);
  assert.equal(n.updatedByTrigger, t._id);
  assert.equal(n.Date?.__type, 'Date', JSON.stringify(n.Date));
  assert.match(n.Date.iso, ISO_MS);
  const at = Date.parse(n.Date.iso);
  assert.ok(at >= before - 5000 && at <= Date.now() + 5000, `Date is now: ${n.Date.iso}`);
});

test('§6.1 webhook: the record as JSON with X-Crmd-Event, -Class, -Trigger, -Delivery, -Timestamp and a v1 HMAC-SHA256 signature under the CLI\'s secret; the definition\'s headers too', async () => {
  const src = uniq('HookSrc');
  await makeClass(src, { Name: 'String', Amount: 'Number' });
  const [t] = await setTriggers(src, [trigger('save', [webhookAction(`${rx.url}/hook?src={{objectId}}`, { 'X-Tenant': 'acme', 'X-Source-Name': '{{Name}}' })])]);
  const id = await create(src, { Name: 'Hooked', Amount: 12.5 });
  const { reqs } = await waitFor('the webhook request', async () => {
    const r = rx.on('/hook').filter((q) => q.url === `/hook?src=${id}`);
    return { done: r.length > 0 && r[0].answeredAt !== undefined, reqs: r };
  });
  const req = reqs[0];
  const record = await getRecord(src, id);
  assert.equal(req.method, 'POST');
  assert.match(req.headers['content-type'], /^application\/json/);
  assert.deepEqual(req.json, record, 'the body is the record as the record API returns it');
  assert.equal(req.headers['x-crmd-event'], 'create');
  assert.equal(req.headers['x-crmd-class'], src);
  assert.equal(req.headers['x-crmd-trigger'], t._id);
  assert.ok(req.headers['x-crmd-delivery'] && req.headers['x-crmd-delivery'].length >= 8, `X-Crmd-Delivery: ${req.headers['x-crmd-delivery']}`);
  const ts = req.headers['x-crmd-timestamp'];
  assert.match(ts, /^\d+$/);
  assert.ok(Math.abs(Number(ts) - Date.now() / 1000) < 300, `timestamp ${ts} is now`);
  const secret = webhookSecret(shared.dataDir, shared.app.appId);
  const expected = `v1=${crypto.createHmac('sha256', secret).update(`${ts}.${req.rawBody}`).digest('hex')}`;
  assert.equal(req.headers['x-crmd-signature'], expected);
  assert.equal(req.headers['x-tenant'], 'acme');
  assert.equal(req.headers['x-source-name'], 'Hooked');

  // An update sends the record after the write, as a new delivery.
  await update(src, id, { Amount: 13 });
  const second = await waitFor('the update\'s webhook', async () => {
    const r = rx.on('/hook').filter((q) => q.url === `/hook?src=${id}`);
    return { done: r.length >= 2, reqs: r };
  });
  const upd = second.reqs[1];
  assert.equal(upd.headers['x-crmd-event'], 'update');
  assert.equal(upd.json.Amount, 13);
  assert.notEqual(upd.headers['x-crmd-delivery'], req.headers['x-crmd-delivery'], 'another activation is another delivery');
  const sig = `v1=${crypto.createHmac('sha256', secret).update(`${upd.headers['x-crmd-timestamp']}.${upd.rawBody}`).digest('hex')}`;
  assert.equal(upd.headers['x-crmd-signature'], sig);
  await settle();
  assert.equal(rx.on('/hook').filter((q) => q.url === `/hook?src=${id}`).length, 2, 'each delivered once');
});

test('§6.1 §4.9 server-side-code: the deployed function gets request.record and {triggerId, event, className, objectId}, and writes through crm; with useQueue false and true', async () => {
  const fn = uniq('onrecord');
  const log = uniq('CodeLog');
  await makeClass(log, { Src: 'String', Name: 'String', TriggerId: 'String', Event: 'String', Cls: 'String', BodyId: 'String' });
  deploy(shared.dataDir, shared.app, fn, `
local r = request.record
local b = request.body
crm.create("${log}", {Src = r.objectId, Name = r.Name, TriggerId = b.triggerId, Event = b.event, Cls = b.className, BodyId = b.objectId})
return {ok = true}
`);
  const srcA = uniq('CodeA');
  const srcB = uniq('CodeB');
  await makeClass(srcA, { Name: 'String' });
  await makeClass(srcB, { Name: 'String' });
  await putOnceKnown('the function is known to the server', () => putTriggers(srcA, [trigger('create', [codeAction(fn, false)])]));
  await putOnceKnown('the function is known to the server', () => putTriggers(srcB, [trigger('create', [codeAction(fn, true)])]));
  const [tA] = await getTriggers(srcA);
  const [tB] = await getTriggers(srcB);
  const a = await create(srcA, { Name: 'direct' });
  const b = await create(srcB, { Name: 'queued' });
  const { rows } = await waitFor('two rows written by the function', async () => {
    const r = await find(log);
    return { done: r.length >= 2, rows: r };
  });
  const bySrc = new Map(rows.map((r) => [r.Src, r]));
  assert.deepEqual(
    { Name: bySrc.get(a)?.Name, TriggerId: bySrc.get(a)?.TriggerId, Event: bySrc.get(a)?.Event, Cls: bySrc.get(a)?.Cls, BodyId: bySrc.get(a)?.BodyId },
    { Name: 'direct', TriggerId: tA._id, Event: 'create', Cls: srcA, BodyId: a });
  assert.deepEqual(
    { Name: bySrc.get(b)?.Name, TriggerId: bySrc.get(b)?.TriggerId, Event: bySrc.get(b)?.Event, Cls: bySrc.get(b)?.Cls, BodyId: bySrc.get(b)?.BodyId },
    { Name: 'queued', TriggerId: tB._id, Event: 'create', Cls: srcB, BodyId: b });
  await settle();
  assert.equal((await find(log)).length, 2);
  for (const t of [tA, tB]) {
    const { actions } = await syslogOf(t._id);
    assert.equal(actions.length, 1, `${t._id}: one action row`);
    assert.equal(actions[0].error ?? null, null);
  }
});

test('§6.1 webhook secret: crmd app webhook-secret --rotate replaces it and the running server signs with the new one within a second', async () => {
  const src = uniq('RotSrc');
  await makeClass(src, { Name: 'String' });
  await setTriggers(src, [trigger('create', [webhookAction(`${rx.url}/rotate`)])]);
  const old = webhookSecret(shared.dataDir, shared.app.appId);
  cli(['app', 'webhook-secret', '--data', shared.dataDir, '--app', shared.app.appId, '--rotate']);
  const secret = webhookSecret(shared.dataDir, shared.app.appId);
  assert.notEqual(secret, old, 'a new secret');
  const signedWith = (req, key) => req.headers['x-crmd-signature'] ===
    `v1=${crypto.createHmac('sha256', key).update(`${req.headers['x-crmd-timestamp']}.${req.rawBody}`).digest('hex')}`;
  const seen = await waitFor('a delivery signed with the new secret', async () => {
    const id = await create(src, { Name: 'after rotation' });
    const got = await pollUntil(() => {
      const req = rx.on('/rotate').find((r) => r.json?.objectId === id);
      return { done: !!req, req };
    }, { timeoutMs: ACTION_MS, intervalMs: 25 });
    assert.ok(got.ok, 'the webhook arrived');
    const req = got.last.req;
    assert.ok(signedWith(req, secret) || signedWith(req, old), 'signed with the new secret or, for a moment, the old one');
    return { done: signedWith(req, secret), n: rx.on('/rotate').length };
  }, { timeoutMs: 3000, intervalMs: 200 });
  assert.ok(seen.n <= 15);
});

test('§6.1 SECURITY without --allow-private-webhooks a webhook to a loopback address fails with "webhook destination <address> is not a public address" and sends nothing', async () => {
  const dataDir = makeDataDir('crmd-triggers-public');
  const app = createApp(dataDir);
  const server = await startServer(dataDir, { extraArgs: ['--trigger-retries', '1', '--trigger-retry-delay', '100'] });
  const c = { dataDir, app, server, M: masterHeaders(app) };
  const src = uniq('PubSrc');
  await makeClass(src, { Name: 'String' }, c);
  const [t] = await setTriggers(src, [trigger('create', [
    webhookAction(`${rx.url}/private-ip`), webhookAction(`http://localhost:${rx.port}/private-name`),
  ])], c);
  const made = await request(server, 'POST', `/core/classes/${src}`, { headers: c.M, body: { Name: 'x' } });
  assert.equal(made.status, 201, made.text);
  const s = await waitFor('two failed action rows', async () => {
    const x = await syslogOf(t._id, c);
    return { done: x.actions.length >= 2, actions: x.actions };
  });
  for (const a of s.actions) {
    assert.match(a.error ?? '', /webhook destination (127\.0\.0\.1|::1|\[::1\])\S* is not a public address/, a.error);
  }
  assert.equal(rx.on('/private-ip').length + rx.on('/private-name').length, 0, 'nothing reached the receiver');
  assert.equal((await request(server, 'GET', `/core/classes/${src}/${made.body.objectId}`, { headers: c.M })).status, 200);
});

// ---------------------------------------------------------------------------------------------
// 7. Webhook retries

test('§6.1 webhook retries: 500 twice then 200 is delivered with one X-Crmd-Delivery; always 500 with --trigger-retries 2 is 3 attempts then an error row; a 404 is not retried; the client\'s write stands', async () => {
  routes.set('/flaky', (req, n) => ({ status: n < 2 ? 500 : 200 }));
  routes.set('/down', () => ({ status: 500 }));
  routes.set('/gone', () => ({ status: 404 }));
  routes.set('/busy', (req, n) => ({ status: n < 1 ? 429 : 200 }));
  const src = uniq('RetrySrc');
  await makeClass(src, { Name: 'String' });
  const [t] = await setTriggers(src, [trigger('create', [
    webhookAction(`${rx.url}/flaky`), webhookAction(`${rx.url}/down`), webhookAction(`${rx.url}/gone`), webhookAction(`${rx.url}/busy`),
  ])]);
  const [flakyAction, downAction, goneAction, busyAction] = t.actions.map((a) => a._id);
  const made = await request(shared.server, 'POST', `/core/classes/${src}`, { headers: shared.M, body: { Name: 'retry me' } });
  assert.equal(made.status, 201, made.text);
  const id = made.body.objectId;

  const done = await waitFor('four action rows (after the retries)', async () => {
    const s = await syslogOf(t._id);
    return { done: s.actions.length >= 4, actions: s.actions };
  });
  const row = (actionId) => done.actions.find((r) => r.actionId === actionId);
  assert.equal(row(flakyAction).error ?? null, null, 'delivered on the third attempt');
  assert.notEqual(row(downAction).error ?? null, null, 'the last failure is recorded');
  assert.match(row(downAction).error, /500/);
  parseJson(row(downAction).error, 'the error of the down action');
  assert.notEqual(row(goneAction).error ?? null, null);
  assert.match(row(goneAction).error, /404/);
  assert.equal(row(busyAction).error ?? null, null, 'a 429 is retried');
  for (const r of done.actions) assert.equal(r.objectIdValue, id);

  await settle();
  const flaky = rx.on('/flaky');
  assert.deepEqual(flaky.map((r) => r.status), [500, 500, 200]);
  assert.equal(new Set(flaky.map((r) => r.headers['x-crmd-delivery'])).size, 1, 'the same X-Crmd-Delivery on every attempt');
  assert.ok(flaky[1].receivedMs - flaky[0].receivedMs >= 90, 'the first retry waits --trigger-retry-delay');
  assert.ok(flaky[2].receivedMs - flaky[1].receivedMs >= 180, 'the second waits twice as long');
  for (const r of flaky) assert.deepEqual(r.json, flaky[0].json, 'the same body every time');
  assert.equal(rx.on('/down').length, 3, 'one attempt and two retries');
  assert.equal(rx.on('/gone').length, 1, 'a 404 is not retried');
  assert.deepEqual(rx.on('/busy').map((r) => r.status), [429, 200]);
  assert.equal((await getRecord(src, id)).Name, 'retry me', 'the client\'s write stands');
});

// ---------------------------------------------------------------------------------------------
// 8-9. _syslogTriggers rows; a failing action

test('§2.6 _syslogTriggers: a "fired" row (actionId null, data = the record) and an "action ran" row (actionId, data = the create\'s answer, error null) per activation; no credential changes them', async () => {
  const src = uniq('SysSrc');
  const dst = uniq('SysDst');
  await makeClass(dst, { Src: 'String' });
  await makeClass(src, { Name: 'String' });
  const [t] = await setTriggers(src, [trigger('create', [createRecordAction(dst, { Src: '{{objectId}}' })])]);
  const id = await create(src, { Name: 'logged' });
  const s = await waitFor('the two rows', async () => {
    const x = await syslogOf(t._id);
    return { done: x.fired.length >= 1 && x.actions.length >= 1, ...x };
  });
  await settle();
  const { fired, actions, all } = await syslogOf(t._id);
  assert.equal(all.length, 2, JSON.stringify(s.all));
  assert.equal(fired.length, 1);
  assert.equal(actions.length, 1);
  const f = fired[0];
  assert.equal(f.triggerId, t._id);
  assert.equal(f.event, 'create');
  assert.equal(f.objectIdValue, id);
  assert.equal(f.error ?? null, null);
  const firedData = parseJson(f.data, 'the fired row\'s data');
  assert.deepEqual(firedData, await getRecord(src, id), 'the fired row\'s data is the record');
  const a = actions[0];
  assert.equal(a.actionId, t.actions[0]._id);
  assert.match(a.actionId, OBJECT_ID);
  assert.equal(a.triggerId, t._id);
  assert.equal(a.event, 'create');
  assert.equal(a.objectIdValue, id);
  assert.equal(a.error ?? null, null);
  const answer = parseJson(a.data, 'the action row\'s data');
  assert.match(answer.objectId, OBJECT_ID);
  assert.equal((await getRecord(dst, answer.objectId)).Src, id, 'the data is the answer of the create');

  // Rows written by the server: no credential updates or deletes them.
  const put = await request(shared.server, 'PUT', `/core/classes/_syslogTriggers/${a.objectId}`, { headers: shared.M, body: { error: 'edited' } });
  assert.ok(put.status >= 400 && put.status < 500, `update: ${put.status} ${put.text}`);
  const del = await request(shared.server, 'DELETE', `/core/classes/_syslogTriggers/${a.objectId}`, { headers: shared.M });
  assert.ok(del.status >= 400 && del.status < 500, `delete: ${del.status} ${del.text}`);
  const still = await syslogOf(t._id);
  assert.deepEqual(still.all, all, 'the rows are unchanged');
});

test('§6.1 a failing action (a Pointer field given a Boolean) leaves the client\'s write in place and records {"code":111,...}; the next action still runs', async () => {
  const src = uniq('FailSrc');
  const dst = uniq('FailDst');
  await makeClass(dst, { Name: 'String', Ref: ['Pointer', 'Accounts'] });
  await makeClass(src, { Name: 'String' });
  const [t] = await setTriggers(src, [trigger('create', [
    createRecordAction(dst, { Name: 'bad {{Name}}', Ref: true }),
    createRecordAction(dst, { Name: 'good {{Name}}' }),
  ])]);
  const made = await request(shared.server, 'POST', `/core/classes/${src}`, { headers: shared.M, body: { Name: 'F' } });
  assert.equal(made.status, 201, made.text);
  const id = made.body.objectId;
  const s = await waitFor('two action rows', async () => {
    const x = await syslogOf(t._id);
    return { done: x.actions.length >= 2, ...x };
  });
  const bad = s.actions.find((r) => r.actionId === t.actions[0]._id);
  const good = s.actions.find((r) => r.actionId === t.actions[1]._id);
  const err = parseJson(bad.error, 'the failed action\'s error');
  assert.equal(err.code, 111, bad.error);
  assert.match(err.error, new RegExp(`schema mismatch for ${dst}\\.Ref`));
  assert.equal(good.error ?? null, null);
  assert.equal((await getRecord(src, id)).Name, 'F', 'the client\'s write is in place');
  await settle();
  assert.deepEqual((await find(dst)).map((r) => r.Name), ['good F'], 'the failed create wrote nothing');
});

// ---------------------------------------------------------------------------------------------
// 10. Writes made by actions in _Timeline

test('§2.6 writes made by actions: their _Timeline rows have user Master and "updatedByTrigger":"<triggerId>" in data', async () => {
  const src = uniq('TlSrc');
  await makeClass(src, { Name: 'String', Stage: 'String' });
  const tl = await request(shared.server, 'PUT', `/core/schemas/${src}`, { headers: shared.M, body: { timeline: { displayFields: { Name: true }, index: {} } } });
  assert.equal(tl.status, 200, tl.text);
  const tag = `Follow up ${crypto.randomBytes(3).toString('hex')}`;
  const [t] = await setTriggers(src, [trigger('create', [
    createRecordAction('Tasks', { Name: `${tag} {{Name}}` }),
    updateRecordAction({ Stage: 'auto' }),
  ])]);
  const id = await create(src, { Name: 'Rina' });
  const { task } = await waitFor('the Task', async () => {
    const rows = await find('Tasks', { Name: `${tag} Rina` });
    return { done: rows.length === 1, task: rows[0] };
  });
  const dataOf = (row) => (typeof row.data === 'string' ? JSON.parse(row.data) : row.data);
  const taskRows = await find('_Timeline', { objectClass: 'Tasks', objectIdValue: task.objectId });
  assert.equal(taskRows.length, 1);
  assert.equal(taskRows[0].event, 'create');
  assert.equal(taskRows[0].user, 'Master');
  assert.equal(dataOf(taskRows[0]).updatedByTrigger, t._id);
  assert.equal(dataOf(taskRows[0]).Name, `${tag} Rina`);

  const rows = (await waitFor('the update row', async () => {
    const r = await find('_Timeline', { objectClass: src, objectIdValue: id });
    return { done: r.length >= 2, rows: r };
  })).rows;
  assert.deepEqual(rows.map((r) => r.event), ['create', 'update']);
  assert.equal('updatedByTrigger' in (dataOf(rows[0]) ?? {}), false, 'the client\'s own write is no trigger\'s');
  assert.equal(rows[1].user, 'Master');
  assert.equal(dataOf(rows[1]).updatedByTrigger, t._id);
  assert.equal(dataOf(rows[1]).Stage, 'auto');
});

// ---------------------------------------------------------------------------------------------
// 11-12. Chains

test('§6.1 five-table chain: a create in C1 makes one row in C2, C3 and C4, none in C5; the blocked row says "blocked! trigger step is to deep -3. source trigger: <C1\'s trigger>"', async () => {
  const tables = Array.from({ length: 5 }, (_, i) => uniq(`Chain${i + 1}`));
  for (const cls of tables) await makeClass(cls, { From: 'String', Name: 'String' });
  const triggers = [];
  for (let i = 0; i < 4; i++) {
    const [t] = await setTriggers(tables[i], [trigger('create', [createRecordAction(tables[i + 1], { From: '{{objectId}}', Name: `level ${i + 1}` })])]);
    triggers.push(t);
  }
  const id = await create(tables[0], { Name: 'start' });
  const blocked = await waitFor('the blocked row', async () => {
    const rows = await find('_syslogTriggers', { error: BLOCKED(triggers[0]._id) });
    return { done: rows.length > 0, rows };
  });
  await settle();
  const counts = [];
  for (const cls of tables) counts.push((await find(cls)).length);
  assert.deepEqual(counts, [1, 1, 1, 1, 0], 'C2, C3 and C4 get one row; C5 none');
  const c2 = (await find(tables[1]))[0];
  assert.equal(c2.From, id);
  assert.equal(blocked.rows.length, 1);
  assert.equal(blocked.rows[0].triggerId, triggers[3]._id, 'C4\'s trigger is the one blocked');
  assert.equal(blocked.rows[0].actionId, triggers[3].actions[0]._id);
  for (const t of triggers.slice(0, 3)) {
    const { actions } = await syslogOf(t._id);
    assert.equal(actions.length, 1);
    assert.equal(actions[0].error ?? null, null, `${t._id} ran`);
  }
  const everything = await find('_syslogTriggers');
  assert.ok(!JSON.stringify(everything).includes('Max trigger depth reached'));
  assert.ok(!shared.server.stderr().includes('Max trigger depth reached'));
});

test('§6.1 a trigger that updates its own record stops after 3 levels with the blocked row; the server keeps serving', async () => {
  const src = uniq('Loop');
  await makeClass(src, { Name: 'String', Counter: 'Number', Touched: 'String' });
  const [t] = await setTriggers(src, [trigger('update', [updateRecordAction({ Counter: { __op: 'Increment', amount: 1 }, Touched: 'by trigger' })])]);
  const id = await create(src, { Name: 'self', Counter: 0 });
  await update(src, id, { Name: 'go' });
  await waitFor('the blocked row', async () => {
    const rows = await find('_syslogTriggers', { triggerId: t._id, error: BLOCKED(t._id) });
    return { done: rows.length > 0, n: rows.length };
  });
  await settle();
  const rec = await getRecord(src, id);
  assert.equal(rec.Counter, 3, 'three levels of updates');
  assert.equal(rec.Touched, 'by trigger');
  const { actions } = await syslogOf(t._id);
  assert.equal(actions.filter((r) => r.error == null).length, 3);
  assert.deepEqual(actions.filter((r) => r.error != null).map((r) => r.error), [BLOCKED(t._id)]);
  assert.equal((await request(shared.server, 'GET', '/health')).status, 200);
  await create(src, { Name: 'still serving' });
});

// ---------------------------------------------------------------------------------------------
// 13. Every entry point fires

test('§6.1 §4.4 §4.9 every entry point fires: master key, an API key from the CLI, a session allowed by CLP, batch items despite skipTriggers/skipTimeline, getlead, a Lua function\'s crm write', async () => {
  const src = uniq('EpSrc');
  const log = uniq('EpLog');
  await makeClass(log, { Src: 'String', Via: 'String' });
  await makeClass(src, { Via: 'String' });
  const open = await request(shared.server, 'PUT', `/core/schemas/${src}`, {
    headers: shared.M, body: { classLevelPermissions: Object.fromEntries(['find', 'count', 'get', 'create', 'update', 'delete'].map((op) => [op, { '*': true }])) },
  });
  assert.equal(open.status, 200, open.text);
  await setTriggers(src, [trigger('create', [createRecordAction(log, { Src: '{{objectId}}', Via: '{{Via}}' })])]);
  const fn = uniq('epwriter');
  deploy(shared.dataDir, shared.app, fn, `local r = crm.create("${src}", {Via = "lua"})\nreturn {id = r.objectId}`);

  const expected = new Map();  // source id -> Via
  expected.set(await create(src, { Via: 'master' }), 'master');

  const { apiKey } = createKey(shared.dataDir, shared.app.appId, uniq('trigkey'));
  const keyed = await waitFor('the new API key works', async () => {
    const r = await request(shared.server, 'POST', `/core/classes/${src}`, { headers: apiKeyHeaders(shared.app, apiKey), body: { Via: 'apikey' } });
    return { done: r.status === 201, status: r.status, id: r.body?.objectId };
  }, { timeoutMs: 3000, intervalMs: 100 });
  expected.set(keyed.id, 'apikey');

  const user = await newUser();
  expected.set(await create(src, { Via: 'session' }, { headers: { ...appHeaders(shared.app), 'X-Core-Session-Token': user.token } }), 'session');

  const batch = await request(shared.server, 'POST', '/core/batch', {
    headers: shared.M,
    body: { skipTriggers: true, skipTimeline: true, requests: [1, 2, 3].map(() => ({ method: 'POST', path: `/core/classes/${src}`, body: { Via: 'batch' } })) },
  });
  assert.equal(batch.status, 200, batch.text);
  assert.equal(batch.body.length, 3);
  for (const item of batch.body) {
    assert.ok(item.success?.objectId, JSON.stringify(item));
    expected.set(item.success.objectId, 'batch');
  }

  const called = await waitFor('the Lua function is deployed', async () => {
    const r = await request(shared.server, 'POST', `/functions/${shared.app.appId}/${fn}`, { headers: appHeaders(shared.app), body: {} });
    return { done: r.status === 200, status: r.status, body: r.body };
  }, { timeoutMs: 5000, intervalMs: 100 });
  assert.match(called.body.id, OBJECT_ID);
  expected.set(called.body.id, 'lua');

  // getlead creates an Account: a trigger on Accounts fires for it.
  const [accTrigger] = await setTriggers('Accounts', [trigger('create', [createRecordAction(log, { Src: '{{objectId}}', Via: 'getlead' })])]);
  try {
    const lead = await request(shared.server, 'POST', `/functions/${shared.app.appId}/getlead`, {
      headers: appHeaders(shared.app), body: { Email: `${uniq('lead')}@example.test`, Name: 'Lead by form' },
    });
    assert.equal(lead.status, 200, lead.text);
    expected.set(lead.body.accountId, 'getlead');

    await waitFor(`${expected.size} log rows`, async () => {
      const rows = await find(log);
      return { done: rows.length >= expected.size, n: rows.length };
    });
    await settle();
    const rows = await find(log);
    const got = new Map(rows.map((r) => [r.Src, r.Via]));
    assert.equal(rows.length, expected.size, 'one row per write');
    assert.deepEqual(Object.fromEntries([...got].sort()), Object.fromEntries([...expected].sort()));
    assert.equal((await syslogOf(accTrigger._id)).actions.length, 1);
  } finally {
    await setTriggers('Accounts', []);
  }
});

// ---------------------------------------------------------------------------------------------
// 14. kill -9 between a write and its actions

test('§6.1 kill -9 between writes and their actions (CRMD_TRIGGER_HOLD_MS): after the restart every stored activation runs exactly once', async (t0) => {
  const N = 10;
  const dataDir = makeDataDir('crmd-triggers-kill');
  const app = createApp(dataDir);
  const M = masterHeaders(app);
  let server = await startServer(dataDir, { durability: 'full', env: { CRMD_TRIGGER_HOLD_MS: '3000' } });
  let c = { dataDir, app, server, M };
  const src = 'KillSrc';
  const dst = 'KillDst';
  await makeClass(dst, { Src: 'String' }, c);
  await makeClass(src, { Name: 'String' }, c);
  const [t] = await setTriggers(src, [trigger('create', [createRecordAction(dst, { Src: '{{objectId}}' })])], c);

  const answers = await Promise.all(Array.from({ length: N }, (_, i) => request(server, 'POST', `/core/classes/${src}`, { headers: M, body: { Name: `k${i}` } })));
  for (const r of answers) assert.equal(r.status, 201, r.text);
  const ids = answers.map((r) => r.body.objectId);
  const early = await request(server, 'GET', `/core/classes/${dst}?count=1&limit=0`, { headers: M });
  server.proc.kill('SIGKILL');
  t0.diagnostic(`${early.body.count} of ${N} target rows existed at the kill`);
  await server.exited;
  assert.equal(server.exitSignal, 'SIGKILL');
  assert.ok(early.body.count < N, `the hold kept actions back before the kill (${early.body.count} of ${N} ran)`);

  server = await startServer(dataDir, { durability: 'full' });
  c = { ...c, server };
  await waitFor(`${N} target rows after the restart`, async () => {
    const r = await request(server, 'GET', `/core/classes/${dst}?count=1&limit=0`, { headers: M });
    return { done: r.body.count >= N, n: r.body.count };
  }, { timeoutMs: 20_000, intervalMs: 100 });
  await settle(c);
  const rows = await find(dst, {}, c);
  assert.equal(rows.length, N, 'exactly N target rows');
  assert.deepEqual(rows.map((r) => r.Src).sort(), [...ids].sort(), 'each source record once');
  const { fired, actions } = await syslogOf(t._id, c);
  assert.deepEqual(actions.map((r) => r.objectIdValue).sort(), [...ids].sort(), 'one "action ran" row per activation');
  for (const a of actions) assert.equal(a.error ?? null, null);
  assert.deepEqual(fired.map((r) => r.objectIdValue).sort(), [...ids].sort(), 'one "fired" row per activation');
});

// ---------------------------------------------------------------------------------------------
// 15. A slow webhook does not hold the application's writes

test('§6.1 a slow webhook (3 s) does not hold the application\'s writes: other creates answer while it is pending', async () => {
  routes.set('/slow', () => ({ status: 200, delayMs: 3000 }));
  const src = uniq('SlowSrc');
  const other = uniq('SlowOther');
  await makeClass(src, { Name: 'String' });
  await makeClass(other, { Name: 'String' });
  const [t] = await setTriggers(src, [trigger('create', [webhookAction(`${rx.url}/slow`)])]);
  const first = await create(src, { Name: 'slow one' });
  const { req } = await waitFor('the slow webhook arrives', async () => {
    const r = rx.on('/slow').find((q) => q.json?.objectId === first);
    return { done: !!r, req: r };
  });
  // While the receiver holds the request: a create elsewhere, one that fires the same trigger, an update.
  const a = await request(shared.server, 'POST', `/core/classes/${other}`, { headers: shared.M, body: { Name: 'meanwhile' } });
  const aAt = order();
  const b = await request(shared.server, 'POST', `/core/classes/${src}`, { headers: shared.M, body: { Name: 'second' } });
  const bAt = order();
  const u = await request(shared.server, 'PUT', `/core/classes/${other}/${a.body.objectId}`, { headers: shared.M, body: { Name: 'updated meanwhile' } });
  const uAt = order();
  assert.equal(a.status, 201, a.text);
  assert.equal(b.status, 201, b.text);
  assert.equal(u.status, 200, u.text);
  for (const [what, at] of [['the other create', aAt], ['the triggering create', bAt], ['the update', uAt]]) {
    assert.ok(req.answeredAt === undefined || at < req.answeredAt, `${what} answered before the slow webhook was answered`);
  }
  assert.ok(req.receivedAt < aAt);
  // The slow delivery completes and is recorded as delivered.
  await waitFor('both slow deliveries recorded', async () => {
    const s = await syslogOf(t._id);
    return { done: s.actions.length >= 2, actions: s.actions.map((r) => r.error ?? null) };
  }, { timeoutMs: 20_000, intervalMs: 100 });
  const { actions } = await syslogOf(t._id);
  assert.deepEqual(actions.map((r) => r.error ?? null), [null, null]);
  assert.equal((await getRecord(other, a.body.objectId)).Name, 'updated meanwhile');
});

// 16. One tenant's slow receiver does not hold another tenant's actions (issue 19, DEVELOPERS: no
// request may hold other tenants hostage).

test('§6.1 SECURITY one application\'s slow webhook receiver holds one trigger thread at most: another application\'s actions run meanwhile', async () => {
  routes.set('/tenant-slow', () => ({ status: 200, delayMs: 3000 }));
  const otherApp = createApp(shared.dataDir);
  const o = { ...shared, app: otherApp, M: masterHeaders(otherApp) };
  const known = await pollUntil(async () => ({ done: (await request(o.server, 'GET', '/core/schemas', { headers: o.M })).status === 200 }),
    { timeoutMs: 5000, intervalMs: 100 });
  assert.ok(known.ok, 'the server knows the second application within a second or so');
  const slow = uniq('TenantSlow');
  await makeClass(slow, { Name: 'String' });
  await setTriggers(slow, [trigger('create', [webhookAction(`${rx.url}/tenant-slow`)])]);
  const src = uniq('TenantSrc');
  const dst = uniq('TenantDst');
  await makeClass(src, { Name: 'String' }, o);
  await makeClass(dst, { Name: 'String' }, o);
  await setTriggers(src, [trigger('create', [createRecordAction(dst, { Name: 'after {{Name}}' })])], o);

  // Two deliveries to the slow receiver: with the runner's two threads taken in arrival order, both
  // would be held by them for 3 s.
  await create(slow, { Name: 'slow 1' });
  await create(slow, { Name: 'slow 2' });
  await waitFor('the first slow delivery arrives', async () => ({ done: rx.on('/tenant-slow').length >= 1 }));
  await create(src, { Name: 'other tenant' }, { c: o });
  await waitFor('the other application\'s action ran', async () => ({ done: (await find(dst, {}, o)).length === 1 }));
  const doneAt = order();
  const slowRequests = rx.on('/tenant-slow');
  assert.equal(slowRequests.filter((q) => q.answeredAt !== undefined && q.answeredAt < doneAt).length, 0,
    'the other application\'s action ran before any slow delivery was answered');
  assert.equal(slowRequests.length, 1, 'the slow application\'s second delivery waits for its first, on no other thread');
  assert.equal((await find(dst, {}, o))[0].Name, 'after other tenant');
  await waitFor('both slow deliveries made', async () => ({ done: rx.on('/tenant-slow').length === 2 }), { timeoutMs: 20_000, intervalMs: 100 });
});
