// Issue 35, the application lifecycle on the command line while a server runs: `app list`,
// `app stats`, `app rename`, `key rotate-master`, `app delete --yes`, and `app export` carrying the
// files (0600) with `app import --replace` restoring an application in place.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  stopAll, request, makeDataDir, createApp, startServer, cli, cliJson, masterHeaders, appHeaders, createRecord, pollUntil,
} from './lib/harness.mjs';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1,
  8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89, 0, 0, 0, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0, 1, 0, 0, 5, 0, 1,
  0x0d, 0x0a, 0x2d, 0xb4, 0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82]);

let dir;
let server;
before(async () => {
  dir = makeDataDir('crmd-lifecycle');
  server = await startServer(dir);  // started on an empty --data: every application comes while it runs
});
after(stopAll);

// Polls `probe` (a request's status) until it is `status`, for at most `ms`: the spec's "within a second".
async function statusWithin(probe, status, ms = 1000) {
  const r = await pollUntil(async () => {
    const res = await probe();
    return { done: res.status === status, res };
  }, { timeoutMs: ms, intervalMs: 20 });
  assert.ok(r.ok, `status ${status} within ${ms} ms; last ${r.last?.res.status} ${r.last?.res.text}`);
}

// An application created while the server runs is served within a second (the registry's poll).
async function created(opts) {
  const app = createApp(dir, opts);
  await statusWithin(() => request(server, 'GET', '/core/classes/Deals', { headers: masterHeaders(app) }), 200);
  return app;
}

const countOf = async (app, cls) => {
  const r = await request(server, 'GET', `/core/classes/${cls}?count=1&limit=0`, { headers: masterHeaders(app) });
  assert.equal(r.status, 200, r.text);
  return r.body.count;
};

test('issue 35: app list names every application with its sizes and last request; app stats counts its classes and requests; app rename renames', async () => {
  const a = await created({ id: 'listedA', name: 'Listed A' });
  createApp(dir, { id: 'listedB' });
  await createRecord(server, a, 'Deals', { Name: 'one' });
  await createRecord(server, a, 'Deals', { Name: 'two' });
  // The request log row of a write lands within about a second (README).
  const logged = await pollUntil(() => {
    const s = cliJson(['app', 'stats', '--data', dir, '--app', 'listedA']);
    return { done: s.requests >= 2, s };
  }, { timeoutMs: 5000, intervalMs: 100 });
  assert.ok(logged.ok, JSON.stringify(logged.last?.s));
  const stats = logged.last.s;
  assert.equal(stats.classes.Deals, 2);
  assert.equal(stats.name, 'Listed A');
  assert.equal(stats.apiKeys, 1);
  assert.ok(stats.storeBytes > 0);

  const list = cliJson(['app', 'list', '--data', dir]).apps;
  const byId = Object.fromEntries(list.map((x) => [x.appId, x]));
  assert.deepEqual(Object.keys(byId).filter((id) => id.startsWith('listed')).sort(), ['listedA', 'listedB']);
  assert.equal(byId.listedA.name, 'Listed A');
  assert.match(byId.listedA.lastRequest, /^\d{4}-\d{2}-\d{2}T/);
  assert.equal(byId.listedB.lastRequest, null, 'no request yet');
  for (const x of [byId.listedA, byId.listedB]) {
    assert.ok(x.storeBytes > 0);
    assert.equal(x.files, 0);
    assert.equal(x.filesBytes, 0);
  }

  assert.deepEqual(cliJson(['app', 'rename', '--data', dir, '--app', 'listedB', '--name', 'Second']), { appId: 'listedB', name: 'Second' });
  assert.equal(cliJson(['app', 'list', '--data', dir]).apps.find((x) => x.appId === 'listedB').name, 'Second');
  assert.throws(() => cli(['app', 'rename', '--data', dir, '--app', 'nosuch', '--name', 'x']), /no application nosuch/);
});

test('issue 35: key rotate-master prints a new master key once; the running server refuses the old one within a second', async () => {
  const a = await created({ id: 'rotated' });
  const probe = (key) => () => request(server, 'GET', '/core/schemas', { headers: { ...appHeaders(a), 'X-Core-Master-Key': key } });
  assert.equal((await probe(a.masterKey)()).status, 200);
  const rotated = cliJson(['key', 'rotate-master', '--data', dir, '--app', 'rotated']);
  assert.equal(rotated.appId, 'rotated');
  assert.match(rotated.masterKey, /^[A-Za-z0-9]{40}$/);
  assert.notEqual(rotated.masterKey, a.masterKey);
  await statusWithin(probe(a.masterKey), 403);
  assert.equal((await probe(rotated.masterKey)()).status, 200);
  assert.equal((await probe(a.apiKey)()).status, 403, 'an API key is not a master key');
});

test('issue 35: app delete needs --yes; it removes store, files and registry entry, the server stops serving it within a second, and an application made again under the id starts empty', async () => {
  const a = await created({ id: 'doomed' });
  await createRecord(server, a, 'Deals', { Name: 'kept?' });
  const up = await request(server, 'POST', '/core/files/doomed.png', { headers: { ...appHeaders(a), 'Content-Type': 'image/png' }, body: PNG });
  assert.equal(up.status, 201, up.text);
  const refused = (() => { try { cli(['app', 'delete', '--data', dir, '--app', 'doomed']); } catch (e) { return e; } })();
  assert.ok(refused, 'without --yes it refuses');
  assert.match(refused.stderr, /add --yes to confirm/);
  assert.equal(await countOf(a, 'Deals'), 1, 'nothing was removed');

  assert.deepEqual(cliJson(['app', 'delete', '--data', dir, '--app', 'doomed', '--yes']), { appId: 'doomed', deleted: true });
  await statusWithin(() => request(server, 'GET', '/core/classes/Deals', { headers: masterHeaders(a) }), 403);
  assert.equal(fs.existsSync(path.join(dir, 'apps', 'doomed')), false, 'the folder (store and files) is gone');
  assert.equal(cliJson(['app', 'list', '--data', dir]).apps.some((x) => x.appId === 'doomed'), false);
  assert.throws(() => cli(['app', 'delete', '--data', dir, '--app', 'doomed', '--yes']), /no application doomed/);

  // The server let go of the old store: the new application's is empty, not the deleted one.
  const again = createApp(dir, { id: 'doomed' });
  await statusWithin(() => request(server, 'GET', '/core/classes/Deals', { headers: masterHeaders(again) }), 200);
  assert.equal(await countOf(again, 'Deals'), 0);
});

test('issue 35: app export carries the files and is readable by its owner only; app import --replace restores the application in place while the server runs', async () => {
  const a = await created({ id: 'restored' });
  const M = masterHeaders(a);
  const made = await request(server, 'POST', '/core/schemas/Docs', { headers: M, body: { fields: { Logo: { type: 'File' }, Name: { type: 'String' } } } });
  assert.equal(made.status, 200, made.text);
  const up = await request(server, 'POST', '/core/files/logo.png', { headers: { ...appHeaders(a), 'Content-Type': 'image/png' }, body: PNG });
  assert.equal(up.status, 201, up.text);
  const id = await createRecord(server, a, 'Docs', { Name: 'before', Logo: { __type: 'File', name: up.body.name, url: up.body.url } });
  const got = await request(server, 'GET', `/core/classes/Docs/${id}`, { headers: M });
  const staticUrl = got.body.Logo.url;
  assert.equal((await fetch(staticUrl)).status, 200);

  const out = path.join(dir, 'restored.export');
  fs.writeFileSync(out, 'an older file, world-readable');
  fs.chmodSync(out, 0o644);
  const exported = cliJson(['app', 'export', '--data', dir, '--app', 'restored', '--out', out]);
  assert.equal(exported.files, 1);
  assert.equal(exported.filesBytes, PNG.length);
  assert.equal(fs.statSync(out).mode & 0o777, 0o600, 'the export holds secrets: its owner\'s alone');

  // What the restore must undo: the record changed, another added, the file deleted.
  assert.equal((await request(server, 'PUT', `/core/classes/Docs/${id}`, { headers: M, body: { Name: 'after' } })).status, 200);
  await createRecord(server, a, 'Docs', { Name: 'extra' });
  assert.equal((await request(server, 'DELETE', `/core/files/${encodeURIComponent(up.body.name)}`, { headers: M })).status, 200);
  assert.equal((await fetch(staticUrl)).status, 404);

  assert.throws(() => cli(['app', 'import', '--data', dir, '--in', out]), /already exists \(--replace replaces it\)/);
  const imported = cliJson(['app', 'import', '--data', dir, '--in', out, '--replace']);
  assert.equal(imported.files, 1);
  assert.equal(imported.rows.Docs, 1);

  await statusWithin(async () => {
    const r = await request(server, 'GET', `/core/classes/Docs/${id}`, { headers: M });
    return { status: r.status === 200 && r.body.Name === 'before' ? 299 : r.status };
  }, 299);
  assert.equal(await countOf(a, 'Docs'), 1, 'the record added after the export is gone');
  const served = await fetch(staticUrl);
  assert.equal(served.status, 200, 'the public file is served again');
  assert.deepEqual(Buffer.from(await served.arrayBuffer()), PNG);
});
