// Issue 36: several servers on one PostgreSQL database: a LiveQuery subscriber on one server hears
// of writes made through another (the store's announcements, LISTEN/NOTIFY). PostgreSQL only:
// SQLite's stores are files of one process.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ON_POSTGRESQL, stopAll, request, masterHeaders, makeDataDir, createApp, startServer, cli } from './lib/harness.mjs';
import { LiveClient } from './lib/live.mjs';

const skip = ON_POSTGRESQL ? false : 'several servers on one database need the PostgreSQL store (CRMD_E2E_STORE=postgresql)';
let app, a, b;

before(async () => {
  if (skip) return;
  const dir = makeDataDir();
  app = createApp(dir);
  cli(['app', 'set', '--data', dir, '--app', app.appId, '--live-classes', '*']);
  [a, b] = await Promise.all([startServer(dir), startServer(dir)]);
});
after(stopAll);

test('issue 36: a subscriber on one server hears of creates, updates and deletes made through the other, once each', { skip }, async () => {
  const onB = new LiveClient(b, app);
  await onB.connect();
  assert.equal((await onB.subscribe(1, { className: 'Shared' })).op, 'subscribed');
  const onA = new LiveClient(a, app);
  await onA.connect();
  assert.equal((await onA.subscribe(1, { className: 'Shared' })).op, 'subscribed');
  const M = masterHeaders(app);
  const made = await request(a, 'POST', '/core/classes/Shared', { headers: M, body: { n: 1 } });
  assert.equal(made.status, 201, made.text);
  const id = made.body.objectId;
  await onB.event('create', 1, id);
  await onA.event('create', 1, id);
  assert.equal((await request(b, 'PUT', `/core/classes/Shared/${id}`, { headers: M, body: { n: 2 } })).status, 200);
  assert.equal((await onA.event('update', 1, id)).object.n, 2);
  assert.equal((await onB.event('update', 1, id)).object.n, 2);
  assert.equal((await request(a, 'DELETE', `/core/classes/Shared/${id}`, { headers: M })).status, 200);
  await onB.event('delete', 1, id);
  await onA.event('delete', 1, id);
  // Once each: the writer's own server hears its write through the database, not twice.
  const marker = await request(b, 'POST', '/core/classes/Shared', { headers: M, body: { n: 3 } });
  await onA.event('create', 1, marker.body.objectId);
  await onB.event('create', 1, marker.body.objectId);
  for (const c of [onA, onB]) assert.equal(c.messages.filter((m) => m.object?.objectId === id).length, 3);
  onA.close();
  onB.close();
});
