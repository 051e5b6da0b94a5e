// Issue 35, backups that restore: `crmd backup` while writes keep being acknowledged (counted
// during the backup, not paused), `crmd backup verify`, and `crmd restore` into an empty data
// directory: every write acknowledged before the backup began is there, the stores pass their
// integrity check, and the files come back. SQLite (PostgreSQL's backup is pg_dump's).
import test, { after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  CRMD_BIN, ON_POSTGRESQL, stopAll, request, makeDataDir, createApp, startServer, masterHeaders, appHeaders, cli, cliJson, listAll,
} from './lib/harness.mjs';

const skip = ON_POSTGRESQL && 'crmd backup copies SQLite data directories; PostgreSQL is backed up with pg_dump (docs/OPERATIONS.md)';
after(stopAll);

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1,
  8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89, 0, 0, 0, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0, 1, 0, 0, 5, 0, 1,
  0x0d, 0x0a, 0x2d, 0xb4, 0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82]);
// Writers going on during the backup, and the most any of them writes: bounded whatever happens.
const WRITERS = 4;
const MAX_WRITES_EACH = 2000;

// `crmd <args>` as a child that runs while the test goes on: resolves with {code, stdout, stderr}.
function runAsync(args) {
  return new Promise((resolve) => {
    const child = spawn(CRMD_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

test('issue 35: a backup taken while writes are acknowledged restores every write acknowledged before it began, with its files, and verifies clean', { skip }, async () => {
  const dir = makeDataDir('crmd-backup');
  const apps = [createApp(dir, { id: 'bkA' }), createApp(dir, { id: 'bkB' })];
  const server = await startServer(dir);
  const M = masterHeaders(apps[0]);
  assert.equal((await request(server, 'POST', '/core/schemas/Docs', { headers: M, body: { fields: { Logo: { type: 'File' } } } })).status, 200);
  const up = await request(server, 'POST', '/core/files/logo.png', { headers: { ...appHeaders(apps[0]), 'Content-Type': 'image/png' }, body: PNG });
  assert.equal(up.status, 201, up.text);
  const doc = await request(server, 'POST', '/core/classes/Docs', { headers: M, body: { Logo: { __type: 'File', name: up.body.name, url: up.body.url } } });
  assert.equal(doc.status, 201, doc.text);

  // Writers: each acknowledged write is remembered, in the order of the acknowledgements.
  let stop = false;
  const acknowledged = [];  // {app, id}
  const writers = Array.from({ length: WRITERS }, async (_, w) => {
    const app = apps[w % apps.length];
    for (let i = 0; i < MAX_WRITES_EACH && !stop; i++) {
      const r = await request(server, 'POST', '/core/classes/Writes', { headers: masterHeaders(app), body: { w, i } });
      assert.equal(r.status, 201, r.text);
      acknowledged.push({ app: app.appId, id: r.body.objectId });
    }
  });
  // Some writes first, so that there is something before the backup.
  while (acknowledged.length < 40) await new Promise((r) => setTimeout(r, 5));
  const out = path.join(makeDataDir('crmd-backup-out'), 'b');
  const ackedBefore = acknowledged.length;  // acknowledged before the backup began
  const beforeIds = new Set(acknowledged.slice(0, ackedBefore).map((x) => x.id));
  const backup = await runAsync(['backup', '--data', dir, '--out', out]);
  const duringBackup = acknowledged.length - ackedBefore;
  stop = true;
  await Promise.all(writers);
  assert.equal(backup.code, 0, backup.stderr);
  const summary = JSON.parse(backup.stdout);
  assert.equal(summary.apps, 2);
  assert.equal(summary.files, 1);
  assert.ok(beforeIds.size >= 40);
  console.log(`writes acknowledged during the backup: ${duringBackup}`);

  const verified = cliJson(['backup', 'verify', '--in', out]);
  assert.equal(verified.ok, true);
  assert.equal(verified.apps, 2);

  // Restored into an empty directory and served.
  const restored = makeDataDir('crmd-restored');
  assert.equal(cliJson(['restore', '--in', out, '--data', restored]).apps, 2);
  assert.throws(() => cli(['restore', '--in', out, '--data', restored]), /already holds applications/);
  const again = await startServer(restored);
  const found = new Set();
  for (const app of apps) for (const row of await listAll(again, app, 'Writes')) found.add(row.objectId);
  const missing = [...beforeIds].filter((id) => !found.has(id));
  assert.deepEqual(missing, [], 'every write acknowledged before the backup began is restored');
  const got = await request(again, 'GET', `/core/classes/Docs/${doc.body.objectId}`, { headers: masterHeaders(apps[0]) });
  assert.equal(got.status, 200);
  const served = await fetch(got.body.Logo.url.replace(server.base, again.base));
  assert.equal(served.status, 200, 'the public file is served from the restored directory');
  assert.deepEqual(Buffer.from(await served.arrayBuffer()), PNG);
});

test('issue 35: a backup cut short (no manifest) or damaged fails verify; restore refuses a data directory a server runs on', { skip }, async () => {
  const dir = makeDataDir('crmd-backup-bad');
  createApp(dir, { id: 'bkC' });
  const out = path.join(makeDataDir('crmd-backup-bad-out'), 'b');
  cliJson(['backup', '--data', dir, '--out', out]);
  assert.throws(() => cli(['backup', '--data', dir, '--out', out]), /is not empty/);

  const cut = path.join(makeDataDir('crmd-backup-cut'), 'b');
  fs.cpSync(out, cut, { recursive: true });
  fs.rmSync(path.join(cut, 'backup.json'));
  assert.throws(() => cli(['backup', 'verify', '--in', cut]), /no backup\.json/);

  const damaged = path.join(makeDataDir('crmd-backup-damaged'), 'b');
  fs.cpSync(out, damaged, { recursive: true });
  const store = path.join(damaged, 'apps', 'bkC', 'data.db');
  const bytes = fs.readFileSync(store);
  bytes.fill(0x5a, 4096, 8192);  // a page of the store overwritten
  fs.writeFileSync(store, bytes);
  assert.throws(() => cli(['backup', 'verify', '--in', damaged]), /bkC/);

  const busy = makeDataDir('crmd-backup-busy');
  await startServer(busy);
  assert.throws(() => cli(['restore', '--in', out, '--data', busy]), /another crmd serve is running/);
});
