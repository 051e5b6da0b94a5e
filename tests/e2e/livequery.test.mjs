// Issue 36: Parse's LiveQuery protocol over WebSocket on crmd's own port (docs/LIVEQUERY.md),
// spoken by a raw client (npm `ws`) so every message is visible. Each event is read again under
// the subscriber's rights when it is sent: a subscriber never learns of a record it cannot read.
//
// No test waits for something not to happen: a refusal is shown by a later event that arrives
// while the refused one never did (events of one application go out in commit order).
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import WebSocket from 'ws';

import { LiveClient } from './lib/live.mjs';

import {
  stopAll, request, masterHeaders, appHeaders, createApp, startServer, makeDataDir, cli, cliJson, pollUntil,
} from './lib/harness.mjs';

after(stopAll);

let server, app, dataDir, M;
const hex = (n) => crypto.randomBytes(n).toString('hex');
const Live = LiveClient;
const LIVE = ['Deal', 'Secret', 'Closed', 'Big', 'Door', 'Watched'];

before(async () => {
  dataDir = makeDataDir('crmd-livequery');
  app = createApp(dataDir, { productBase: true });
  cli(['app', 'set', '--data', dataDir, '--app', app.appId, '--live-classes', [...LIVE, 'Tasks'].join(','), '--new-classes', 'open']);
  server = await startServer(dataDir);
  M = masterHeaders(app);
});

// `promise`, or a failure after 15 s.
// The timer is unref'd: a pending one must not hold the file's process after its last test.
const bounded = (promise, what) => Promise.race([promise, new Promise((_, reject) => setTimeout(() => reject(new Error(`no ${what}`)), 15_000).unref())]);

const create = async (cls, body, headers = M) => {
  const r = await request(server, 'POST', `/core/classes/${cls}`, { headers, body });
  assert.equal(r.status, 201, r.text);
  return r.body.objectId;
};
const update = async (cls, id, body, headers = M) => {
  const r = await request(server, 'PUT', `/core/classes/${cls}/${id}`, { headers, body });
  assert.equal(r.status, 200, r.text);
};
const remove = async (cls, id) => assert.equal((await request(server, 'DELETE', `/core/classes/${cls}/${id}`, { headers: M })).status, 200);

async function newUser() {
  const username = `u${hex(4)}@example.test`;
  const r = await request(server, 'POST', '/core/users', { headers: M, body: { username, password: `Pw${hex(6)}Z9`, email: username } });
  assert.equal(r.status, 201, r.text);
  return { id: r.body.objectId, token: r.body.sessionToken };
}

test('issue 36: connect answers connected with a client id; a bad key or an unknown application answers an error', async () => {
  const good = new Live(server, app);
  const connected = await good.connect();
  assert.equal(connected.op, 'connected');
  assert.match(connected.clientId, /^[A-Za-z0-9]{10}$/);
  good.close();
  const bad = new Live(server, app);
  const refused = await bad.connect({ masterKey: 'wrong' });
  assert.equal(refused.op, 'error');
  assert.equal(refused.code, 4);
  bad.close();
  const stranger = new Live(server, app);
  await stranger.opened;
  stranger.send({ op: 'connect', applicationId: 'nosuchapp' });
  assert.equal((await stranger.next((m) => m.op === 'error')).code, 4);
  stranger.send({ op: 'subscribe', requestId: 1, query: { className: 'Deal' } });
  assert.equal((await stranger.next((m) => m.op === 'error' && m.requestId === undefined && m.code === 2)).code, 2);
  stranger.close();
});

test('issue 36: the upgrade is taken on / and on the prefix path; other paths answer as plain requests', async () => {
  for (const p of ['/', '/core', '/core/']) {
    const c = new Live(server, app, p);
    assert.equal((await c.connect()).op, 'connected', p);
    c.close();
  }
  const other = new WebSocket(`ws://127.0.0.1:${server.port}/core/classes/Deal`);
  const status = await new Promise((resolve) => {
    other.on('unexpected-response', (req, res) => resolve(res.statusCode));
    other.on('error', () => resolve('error'));
  });
  assert.notEqual(status, 101);
});

test('issue 36: malformed messages get errors and the connection keeps serving', async () => {
  const c = new Live(server, app);
  await c.connect();
  c.send('not json');
  assert.equal((await c.next((m) => m.op === 'error' && m.code === 1)).code, 1);
  c.send({ op: 'teleport' });
  assert.equal((await c.next((m) => m.op === 'error' && m.code === 3)).code, 3);
  c.send({ op: 'subscribe', requestId: 'one', query: { className: 'Deal' } });
  c.send({ op: 'subscribe', requestId: 7, query: { className: 'Deal', where: [1] } });
  assert.equal((await c.next((m) => m.op === 'error' && m.requestId === 7)).code, 1);
  assert.equal((await c.subscribe(8, { className: 'Deal' })).op, 'subscribed');
  c.close();
});

test('issue 36: create, enter, update, leave and delete with where; keys projects; watch narrows updates', async () => {
  const c = new Live(server, app);
  await c.connect();
  assert.equal((await c.subscribe(1, { className: 'Deal', where: { stage: 'open' }, keys: ['stage', 'amount'] })).op, 'subscribed');
  const id = await create('Deal', { stage: 'open', amount: 5, note: 'hidden by keys' });
  const created = await c.event('create', 1, id);
  assert.equal(created.object.className, 'Deal');
  assert.equal(created.object.amount, 5);
  assert.equal(created.object.note, undefined, 'keys leaves out what it does not name');
  await update('Deal', id, { amount: 6 });
  assert.equal((await c.event('update', 1, id)).object.amount, 6);
  await update('Deal', id, { stage: 'won' });
  assert.equal((await c.event('leave', 1, id)).object.stage, 'won');
  await update('Deal', id, { stage: 'open' });
  await c.event('enter', 1, id);
  await remove('Deal', id);
  await c.event('delete', 1, id);
  // A record that never matched: no event (shown by the next one that does).
  const other = await create('Deal', { stage: 'lost' });
  const marker = await create('Deal', { stage: 'open' });
  await c.event('create', 1, marker);
  assert.ok(!c.messages.some((m) => m.object?.objectId === other));
  // watch: an update that names no watched field is not told.
  assert.equal((await c.subscribe(2, { className: 'Watched', watch: ['status'] })).op, 'subscribed');
  const w = await create('Watched', { status: 'a', other: 1 });
  await c.event('create', 2, w);
  await update('Watched', w, { other: 2 });
  await update('Watched', w, { status: 'b' });
  assert.equal((await c.event('update', 2, w)).object.status, 'b');
  assert.equal(c.messages.filter((m) => m.op === 'update' && m.requestId === 2).length, 1);
  // A record that matched before the subscription: its update is an update, not an enter.
  const before = await create('Deal', { stage: 'open', amount: 1 });
  assert.equal((await c.subscribe(3, { className: 'Deal', where: { stage: 'open' } })).op, 'subscribed');
  await update('Deal', before, { amount: 2 });
  await c.event('update', 3, before);
  // unsubscribe
  c.send({ op: 'unsubscribe', requestId: 3 });
  await c.next((m) => m.op === 'unsubscribed' && m.requestId === 3, 'unsubscribed');
  c.close();
});

test('issue 36 (second read path skips checks): a user never learns of a record its ACL hides; role read access works; losing access is a leave without values', async () => {
  const alice = await newUser();
  const bob = await newUser();
  const role = `Readers_${hex(3)}`;
  const r = await request(server, 'POST', '/core/classes/_Role', { headers: M, body: { name: role, ACL: { '*': { read: true } }, users: { __op: 'AddRelation', objects: [{ __type: 'Pointer', className: '_User', objectId: bob.id }] } } });
  assert.equal(r.status, 201, r.text);
  await request(server, 'POST', '/core/schemas/Secret', { headers: M, body: { classLevelPermissions: { find: { '*': true }, get: { '*': true }, create: { '*': true }, update: { '*': true }, delete: { '*': true }, addField: { '*': true }, count: { '*': true } } } });
  const a = new Live(server, app);
  await a.connect({ sessionToken: alice.token });
  assert.equal((await a.subscribe(1, { className: 'Secret' })).op, 'subscribed');
  const b = new Live(server, app);
  await b.connect({ sessionToken: bob.token });
  assert.equal((await b.subscribe(1, { className: 'Secret' })).op, 'subscribed');

  const hidden = await create('Secret', { v: 'for the role only', ACL: { [`role:${role}`]: { read: true } } });
  const open = await create('Secret', { v: 'for all', ACL: { '*': { read: true } } });
  await a.event('create', 1, open);
  assert.ok(!a.messages.some((m) => m.object?.objectId === hidden), 'alice never hears of the role\'s record');
  await b.event('create', 1, hidden);
  await b.event('create', 1, open);
  // Bob loses access: a leave carrying the id alone (he may no longer read the values).
  await update('Secret', hidden, { v: 'now private', ACL: { [alice.id]: { read: true } } });
  const left = await b.event('leave', 1, hidden);
  assert.deepEqual(Object.keys(left.object).sort(), ['className', 'objectId']);
  assert.ok(!left.original || left.original.v === undefined, 'nor the value before, through original');
  // Alice gains it: an enter.
  assert.equal((await a.event('enter', 1, hidden)).object.v, 'now private');
  a.close();
  b.close();
});

test('issue 36: a class whose CLP refuses find to the subscriber answers an error to subscribe; a class not opted in answers 119', async () => {
  await request(server, 'POST', '/core/schemas/Closed', { headers: M, body: { classLevelPermissions: { find: {}, get: {}, create: {}, update: {}, delete: {}, addField: {} } } });
  const user = await newUser();
  const c = new Live(server, app);
  await c.connect({ sessionToken: user.token });
  const refused = await c.subscribe(1, { className: 'Closed' });
  assert.equal(refused.op, 'error');
  assert.equal(refused.code, 119);
  const notLive = await c.subscribe(2, { className: 'NotLive' });
  assert.equal(notLive.op, 'error');
  assert.equal(notLive.code, 119);
  assert.match(notLive.error, /not enabled/);
  c.close();
});

test('issue 36 (resource exhaustion): at most 100 subscriptions on one connection; incoming messages are capped', async () => {
  const c = new Live(server, app);
  await c.connect();
  for (let i = 1; i <= 100; i++) c.send({ op: 'subscribe', requestId: i, query: { className: 'Deal' } });
  await c.next((m) => m.op === 'subscribed' && m.requestId === 100, 'the 100th subscribed');
  const over = await c.subscribe(101, { className: 'Deal' });
  assert.equal(over.op, 'error');
  assert.match(over.error, /Too many subscriptions/);
  c.send('x'.repeat(70 * 1024));
  const closed = await bounded(c.closed, 'the close');
  assert.equal(closed.code, 1009);
});

test('issue 36 (resource exhaustion): a consumer that stops reading is dropped, not buffered without limit', async () => {
  const c = new Live(server, app);
  await c.connect();
  assert.equal((await c.subscribe(1, { className: 'Big' })).op, 'subscribed');
  c.ws._socket.pause();  // reads nothing more: the kernel's buffers fill, then the server's queue
  const payload = 'x'.repeat(256 * 1024);
  const writes = 96;  // 24 MiB of events: past the socket buffers and the 1 MiB queue
  for (let i = 0; i < writes; i++) await create('Big', { payload });
  c.ws._socket.resume();
  const closed = await bounded(c.closed, 'the close');
  assert.equal(closed.code, 1008);
  assert.ok(c.messages.filter((m) => m.op === 'create').length < writes);
  // The server goes on serving others.
  const d = new Live(server, app);
  assert.equal((await d.connect()).op, 'connected');
  d.close();
});

// One test per door: each write reaches subscribers from the write unit's commit.
test('issue 36: every door fires events: record API, batch, Lua function, trigger action, MCP tool', async () => {
  const c = new Live(server, app);
  await c.connect();
  assert.equal((await c.subscribe(1, { className: 'Door' })).op, 'subscribed');
  assert.equal((await c.subscribe(2, { className: 'Tasks' })).op, 'subscribed');
  // record API
  const viaRest = await create('Door', { via: 'rest' });
  await c.event('create', 1, viaRest);
  // batch
  const b = await request(server, 'POST', '/core/batch', { headers: M, body: { requests: [{ method: 'POST', path: '/core/classes/Door', body: { via: 'batch' } }] } });
  assert.equal(b.status, 200, b.text);
  await c.event('create', 1, b.body[0].success.objectId);
  // Lua function
  const file = path.join(dataDir, 'live.lua');
  fs.writeFileSync(file, 'local d = crm.create("Door", {via = "lua"}) return {id = d.objectId}');
  cliJson(['function', 'deploy', '--data', dataDir, '--app', app.appId, '--name', 'live', '--file', file]);
  let fn;
  for (let i = 0; i < 50; i++) {  // the server reads deployed functions from the registry within a second
    fn = await request(server, 'POST', `/functions/${app.appId}/live`, { headers: masterHeaders(app), body: {} });
    if (fn.status === 200) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(fn.status, 200, fn.text);
  await c.event('create', 1, fn.body.id);
  // trigger action: a Door create makes a Tasks record
  const t = await request(server, 'PUT', '/core/schemas/Door', { headers: M, body: { triggers: [{ name: 'task', event: 'create', actions: [{ actionType: 'create-record', actionData: { 'create-record': { table: 'Tasks', data: { Name: 'from trigger' } } } }] }] } });
  assert.equal(t.status, 200, t.text);
  await create('Door', { via: 'rest, firing' });
  const task = await c.next((m) => m.op === 'create' && m.requestId === 2 && m.object.Name === 'from trigger', 'the trigger\'s Tasks create');
  assert.equal(task.object.className, 'Tasks');
  // MCP tool
  const mcp = await fetch(`${server.base}/mcp/${app.appId}`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'X-Core-API-Key': app.apiKey },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'Create-Data', arguments: { table: 'Door', data: { via: 'mcp' } } } }),
  });
  assert.equal(mcp.status, 200);
  await c.next((m) => m.op === 'create' && m.requestId === 1 && m.object.via === 'mcp', 'the MCP create');
  c.close();
});

test('issue 36 (hostage): WebSockets take at most half of --max-connections; beyond, an upgrade answers 503 and requests are still served', async () => {
  const dir = makeDataDir('crmd-livequery-cap');
  const capped = createApp(dir);
  const srv = await startServer(dir, { extraArgs: ['--max-connections', '6'] });
  const held = [new Live(srv, capped), new Live(srv, capped), new Live(srv, capped)];
  for (const c of held) assert.equal((await c.connect()).op, 'connected');
  // Several refused upgrades in a row: each one's answer once freed a string twice (g++ 12, an
  // aggregate temporary inside a co_await), which crashed the server one run in four. Each is read
  // to its end, so its connection is closed before the next (one slot is spare for a slow close).
  for (let i = 0; i < 5; i++) {
    const refused = new WebSocket(`ws://127.0.0.1:${srv.port}/core`);
    const status = await bounded(new Promise((resolve) => {
      refused.on('unexpected-response', (req, res) => { res.resume(); req.socket.on('close', () => resolve(res.statusCode)); });
      refused.on('open', () => resolve(101));
      refused.on('error', () => resolve('error'));
    }), 'a refused upgrade\'s answer');
    assert.equal(status, 503);
  }
  const health = await request(srv, 'GET', '/health');
  assert.equal(health.status, 200, 'a request is served beside the WebSockets');
  assert.equal(srv.proc.exitCode, null, 'the server is still running');
  for (const c of held) c.close();
});

test('issue 36 (hostage): a WebSocket that never connects, or connects and never subscribes, is closed after the idle timeout; one that subscribed stays', async () => {
  const dir = makeDataDir('crmd-livequery-idle');
  const idle = createApp(dir);
  cli(['app', 'set', '--data', dir, '--app', idle.appId, '--live-classes', '*']);
  const srv = await startServer(dir, { extraArgs: ['--idle-timeout', '1'] });
  const silent = new Live(srv, idle);
  await silent.opened;
  const connectedOnly = new Live(srv, idle);
  assert.equal((await connectedOnly.connect()).op, 'connected');
  const subscribed = new Live(srv, idle);
  assert.equal((await subscribed.connect()).op, 'connected');
  assert.equal((await subscribed.subscribe(1, { className: 'Deal', where: {} })).op, 'subscribed');
  for (const c of [silent, connectedOnly]) {
    const closed = await bounded(c.closed, 'the close of an unused socket');
    assert.equal(closed.reason, 'no subscription');
  }
  // Both unused sockets were closed by now; the subscribed one still hears its events.
  const id = (await request(srv, 'POST', '/core/classes/Deal', { headers: masterHeaders(idle), body: { stage: 'x' } })).body.objectId;
  assert.equal((await subscribed.event('create', 1, id)).object.objectId, id);
  subscribed.close();
});

test('issue 36 (session fixation and reuse): a subscription whose session was revoked ends with an error at its next event and hears nothing more', async () => {
  const user = await newUser();
  const c = new Live(server, app);
  await c.connect({ sessionToken: user.token });
  assert.equal((await c.subscribe(1, { className: 'Deal' })).op, 'subscribed');
  const before = await create('Deal', { stage: 'seen' });
  await c.event('create', 1, before);
  const out = await request(server, 'POST', '/core/logout', { headers: { ...appHeaders(app), 'X-Core-Session-Token': user.token } });
  assert.equal(out.status, 200, out.text);
  const after = await create('Deal', { stage: 'unseen' });
  const ended = await c.next((m) => m.op === 'error' && m.requestId === 1, 'the subscription\'s error');
  assert.equal(ended.code, 209);
  const marker = new Live(server, app);
  await marker.connect();
  assert.equal((await marker.subscribe(1, { className: 'Deal' })).op, 'subscribed');
  const next = await create('Deal', { stage: 'later' });
  await marker.event('create', 1, next);
  assert.ok(!c.messages.some((m) => m.object?.objectId === after || m.object?.objectId === next), 'nothing after the revocation');
  c.close();
  marker.close();
});

// Server-sent events: `GET /core/live?ticket=…` as a client that sends no headers reads it.
function openStream(ticket, params) {
  const q = new URLSearchParams({ ticket, ...params });
  return new Promise((resolve, reject) => {
    const events = [];
    const waiters = [];
    const req = http.get(`http://127.0.0.1:${server.port}/core/live?${q}`, (res) => {
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        buffer += chunk;
        let at;
        while ((at = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          if (!block.startsWith('data: ')) continue;
          const m = JSON.parse(block.slice(6));
          events.push(m);
          for (const w of [...waiters]) if (w(m)) waiters.splice(waiters.indexOf(w), 1);
        }
      });
      const next = (pred, what) => {
        const seen = events.find(pred);
        if (seen) return Promise.resolve(seen);
        return bounded(new Promise((ok) => waiters.push((m) => (pred(m) ? (ok(m), true) : false))), what);
      };
      resolve({ res, events, next, close: () => req.destroy() });
    });
    req.on('error', reject);
  });
}

const takeTicket = async (headers) => request(server, 'POST', '/core/live/ticket', { headers });

test('issue 36: server-sent events with a single-use ticket taken with the usual headers; the ticket is redacted in the log', async () => {
  const user = await newUser();
  const t = await takeTicket({ ...appHeaders(app), 'X-Core-Session-Token': user.token });
  assert.equal(t.status, 200, t.text);
  assert.match(t.body.ticket, /^[A-Za-z0-9]{40}$/);
  const stream = await openStream(t.body.ticket, { className: 'Deal', where: JSON.stringify({ stage: 'sse' }) });
  assert.equal(stream.res.statusCode, 200);
  assert.match(stream.res.headers['content-type'], /^text\/event-stream/);
  await stream.next((m) => m.op === 'subscribed', 'subscribed');
  const hidden = await create('Deal', { stage: 'sse', ACL: {} });
  const seen = await create('Deal', { stage: 'sse', ACL: { '*': { read: true } } });
  const event = await stream.next((m) => m.op === 'create', 'the create');
  assert.equal(event.object.objectId, seen);
  assert.ok(!stream.events.some((m) => m.object?.objectId === hidden), 'the user never hears of a record it cannot read');
  stream.close();
  // Single use: the same ticket again is refused, and so is one never issued.
  const again = await request(server, 'GET', `/core/live?ticket=${t.body.ticket}&className=Deal`);
  assert.equal(again.status, 403);
  assert.equal((await request(server, 'GET', '/core/live?ticket=nope&className=Deal')).status, 403);
  // A ticket needs good credentials; the class must be opted in.
  assert.equal((await takeTicket({ ...appHeaders(app), 'X-Core-Session-Token': 'r:0000' })).status, 400);
  const t2 = await takeTicket(M);
  assert.equal((await request(server, 'GET', `/core/live?ticket=${t2.body.ticket}&className=NotLive`)).status, 403);
  assert.ok(!server.stderrText.includes(t.body.ticket), 'the ticket never reaches the log');
});
