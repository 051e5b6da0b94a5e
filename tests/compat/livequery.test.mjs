// Issue 36: the stock Parse SDK's LiveQuery client (`query.subscribe()`, `Parse.LiveQueryClient`)
// against `crmd serve --prefix parse`, its WebSocket address derived from serverURL as the SDK
// does: subscribe, events, ACL-filtered events, reconnect, the end of the subscriber's session.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Parse, useApp, MASTER, signUpWithKey, openClass, uniq, cliJson, stopAll } from './lib/compat.mjs';
import { makeDataDir, startServer } from '../e2e/lib/harness.mjs';

// How long one expected event may take (delivery is asynchronous, never slow by design).
const EVENT_TIMEOUT_MS = 15_000;

let server, app;
before(async () => {
  const dataDir = makeDataDir('crmd-compat-live');
  app = cliJson(['app', 'create', '--data', dataDir, '--no-product-base', '--profile', 'parse', '--live-classes', '*']);
  server = await startServer(dataDir, { prefix: 'parse' });
  await useApp(server, app);
});
after(async () => {
  await Parse.LiveQuery.close();
  await stopAll();
});

// The next `event` of a subscription or client (its arguments), bounded in time: through the
// SDK's own emitter, as `on` adds to it.
function nextEvent(source, event) {
  const { emitter } = source;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { emitter.removeListener(event, listener); reject(new Error(`no ${event} event`)); }, EVENT_TIMEOUT_MS);
    function listener(...args) {
      clearTimeout(timer);
      emitter.removeListener(event, listener);
      resolve(args);
    }
    emitter.on(event, listener);
  });
}

async function openedClass(prefix) {
  const cls = uniq(prefix);
  const seed = new Parse.Object(cls, { Name: 'seed' });
  await seed.save(null, MASTER);
  await seed.destroy(MASTER);
  await openClass(cls);
  return cls;
}

test('issue 36: query.subscribe() hears create, update, enter, leave and delete of the records its query matches', async () => {
  const cls = await openedClass('Live');
  const query = new Parse.Query(cls).equalTo('stage', 'open');
  const sub = await query.subscribe();
  await nextEvent(sub, 'open');
  const deal = new Parse.Object(cls, { stage: 'open', amount: 1 });
  const created = nextEvent(sub, 'create');
  await deal.save(null, MASTER);
  const [made] = await created;
  assert.equal(made.id, deal.id);
  assert.equal(made.get('amount'), 1);
  const updated = nextEvent(sub, 'update');
  deal.set('amount', 2);
  await deal.save(null, MASTER);
  assert.equal((await updated)[0].get('amount'), 2);
  const left = nextEvent(sub, 'leave');
  deal.set('stage', 'won');
  await deal.save(null, MASTER);
  assert.equal((await left)[0].id, deal.id);
  const entered = nextEvent(sub, 'enter');
  deal.set('stage', 'open');
  await deal.save(null, MASTER);
  assert.equal((await entered)[0].id, deal.id);
  const deleted = nextEvent(sub, 'delete');
  await deal.destroy(MASTER);
  assert.equal((await deleted)[0].id, deal.id);
  await sub.unsubscribe();
});

test('issue 36: events carry the installation id and an update what the record was (original), only the fields the read shows', async () => {
  const cls = await openedClass('LiveOriginal');
  const installationId = await Parse.CoreManager.getInstallationController().currentInstallationId();
  const deal = new Parse.Object(cls, { stage: 'open', amount: 1, secret: 'before' });
  await deal.save(null, MASTER);
  const sub = await new Parse.Query(cls).equalTo('objectId', deal.id).select('stage', 'amount').subscribe();
  const [opened] = await nextEvent(sub, 'open');
  assert.equal(opened.installationId, installationId);
  const updated = nextEvent(sub, 'update');
  deal.set({ amount: 2, secret: 'after' });
  await deal.save(null, MASTER);
  const [now, original, response] = await updated;
  assert.equal(response.installationId, installationId);
  assert.equal(now.get('amount'), 2);
  assert.equal(original.get('amount'), 1, 'original holds the value before the write');
  assert.equal(original.get('stage'), 'open');
  assert.equal(original.get('secret'), undefined, 'a field the subscription does not read is not told, before or after');
  assert.equal(now.get('secret'), undefined);
  await sub.unsubscribe();
});

test('issue 36: an enter carries no original: the same write may have opened the record to the subscriber', async () => {
  const cls = await openedClass('LiveEnter');
  const ann = await signUpWithKey(`${uniq('ann')}@example.com`);
  await useApp(server, app);
  const hidden = new Parse.Object(cls, { amount: 1 });
  hidden.setACL(new Parse.ACL());  // nobody but the master key
  await hidden.save(null, MASTER);
  const client = new Parse.LiveQueryClient({
    applicationId: app.appId, serverURL: `ws://127.0.0.1:${server.port}/parse`, sessionToken: ann.getSessionToken(),
  });
  client.open();
  const sub = client.subscribe(new Parse.Query(cls), ann.getSessionToken());
  await nextEvent(sub, 'open');
  const entered = nextEvent(sub, 'enter');
  const open = new Parse.ACL();
  open.setPublicReadAccess(true);
  hidden.setACL(open);
  hidden.set('amount', 2);
  await hidden.save(null, MASTER);
  const [now, second] = await entered;
  assert.equal(now.get('amount'), 2);
  assert.ok(!(second instanceof Parse.Object), 'no original: the amount before was not ann\'s to read');
  await client.close();
});

test('issue 36: with watch, a create is told only when the record has a watched field, an update only when it writes one', async () => {
  const cls = await openedClass('LiveWatch');
  const sub = await new Parse.Query(cls).watch('stage').subscribe();
  await nextEvent(sub, 'open');
  const told = [];
  sub.on('create', (o) => told.push(['create', o.get('Name')]));
  sub.on('update', (o) => told.push(['update', o.get('Name')]));
  const plain = new Parse.Object(cls, { Name: 'no stage' });
  await plain.save(null, MASTER);
  plain.set('amount', 5);
  await plain.save(null, MASTER);  // not told: stage not written
  const staged = new Parse.Object(cls, { Name: 'staged', stage: 'open' });
  const created = nextEvent(sub, 'create');
  await staged.save(null, MASTER);
  await created;
  const updated = nextEvent(sub, 'update');
  plain.set('stage', 'won');
  await plain.save(null, MASTER);
  await updated;
  assert.deepEqual(told, [['create', 'staged'], ['update', 'no stage']]);
  await sub.unsubscribe();
});

test('issue 36: a subscribe with a property the protocol does not have is refused with reconnect, and the client subscribes again', async () => {
  const cls = await openedClass('LiveExtra');
  const client = new Parse.LiveQueryClient({ applicationId: app.appId, serverURL: `ws://127.0.0.1:${server.port}/parse`, masterKey: app.masterKey });
  client.open();
  await client.connectPromise;
  const resubscribed = new Promise((resolve) => {
    const original = client.resubscribe.bind(client);
    client.resubscribe = () => { resolve(true); return original(); };
  });
  const error = nextEvent(client, 'error');
  client.socket.send(JSON.stringify({ op: 'subscribe', requestId: 1, query: { className: cls, where: {}, unknownField: 1 } }));
  assert.deepEqual(await error, ['Additional properties not allowed']);
  assert.equal(await Promise.race([resubscribed, new Promise((resolve) => setTimeout(() => resolve(false), EVENT_TIMEOUT_MS).unref())]), true);
  await client.close();
});

test('issue 36: a LiveQueryClient with a session token hears only of records the user may read', async () => {
  const cls = await openedClass('LiveAcl');
  const ann = await signUpWithKey(`${uniq('ann')}@example.com`);
  const bob = await signUpWithKey(`${uniq('bob')}@example.com`);
  await useApp(server, app);
  const client = new Parse.LiveQueryClient({
    applicationId: app.appId, serverURL: `ws://127.0.0.1:${server.port}/parse`, sessionToken: ann.getSessionToken(),
  });
  client.open();
  const sub = client.subscribe(new Parse.Query(cls), ann.getSessionToken());
  await nextEvent(sub, 'open');
  const seen = [];
  sub.on('create', (o) => seen.push(o.id));
  const hidden = new Parse.Object(cls, { Name: 'bob only' });
  hidden.setACL(new Parse.ACL(bob));
  await hidden.save(null, MASTER);
  const shared = new Parse.Object(cls, { Name: 'everyone' });
  shared.setACL(new Parse.ACL());
  shared.getACL().setPublicReadAccess(true);
  const created = nextEvent(sub, 'create');
  await shared.save(null, MASTER);
  await created;
  assert.deepEqual(seen, [shared.id], 'ann hears of the public record, never of bob\'s');
  await client.close();
});

test('issue 36: after the socket drops, the client reconnects, subscribes again and hears new records', async () => {
  const cls = await openedClass('LiveAgain');
  const client = new Parse.LiveQueryClient({ applicationId: app.appId, serverURL: `ws://127.0.0.1:${server.port}/parse`, masterKey: app.masterKey });
  client.open();
  const sub = client.subscribe(new Parse.Query(cls));
  await nextEvent(sub, 'open');
  const reopened = nextEvent(client, 'open');
  client.socket.close();  // as a dropped network would: the client's reconnect takes over
  await reopened;
  await nextEvent(sub, 'open');
  const created = nextEvent(sub, 'create');
  const row = new Parse.Object(cls, { Name: 'after the reconnect' });
  await row.save(null, MASTER);
  assert.equal((await created)[0].id, row.id);
  await client.close();
});

test('issue 36: when the subscriber\'s session ends (logout), its subscription gets an error at the next event and no record after it', async () => {
  const cls = await openedClass('LiveExpiry');
  const cat = await signUpWithKey(`${uniq('cat')}@example.com`);
  const token = cat.getSessionToken();
  await useApp(server, app);
  const client = new Parse.LiveQueryClient({ applicationId: app.appId, serverURL: `ws://127.0.0.1:${server.port}/parse`, sessionToken: token });
  client.open();
  const sub = client.subscribe(new Parse.Query(cls), token);
  await nextEvent(sub, 'open');
  const seen = [];
  sub.on('create', (o) => seen.push(o.id));
  const first = new Parse.Object(cls, { Name: 'before' });
  const created = nextEvent(sub, 'create');
  await first.save(null, MASTER);
  await created;
  const out = await fetch(`${server.base}/parse/logout`, { method: 'POST', headers: { 'X-Parse-Application-Id': app.appId, 'X-Parse-Session-Token': token } });
  assert.equal(out.status, 200);
  const failed = nextEvent(sub, 'error');
  const second = new Parse.Object(cls, { Name: 'after' });
  await second.save(null, MASTER);
  const [message] = await failed;
  assert.match(String(message), /session/i);
  assert.deepEqual(seen, [first.id]);
  await client.close();
});
