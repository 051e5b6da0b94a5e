// Issue 35, upgrades, from fixtures the ae6c27d binary made (tests/fixtures/ae6c27d, README.md
// there says how). SQLite: its data directory (an application, a class with records, an uploaded
// and attached file; the stores checkpointed, nothing else changed). PostgreSQL: a plain pg_dump of
// its database (an application, records of every common type, a user, an attached file) and the
// data directory's files, loaded into a fresh database with psql. This crmd serves each, marks the
// registry and the store with its format; a registry or store of a newer format is refused in words.
import test, { after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  CRMD_BIN, HOST, ON_POSTGRESQL, stopAll, request, makeDataDir, startServer, cliJson, pollUntil, storeUrl,
} from './lib/harness.mjs';

const skip = ON_POSTGRESQL && 'this fixture is a SQLite data directory (the PostgreSQL run loads the dump below)';
const skipPg = !ON_POSTGRESQL && 'this fixture is a PostgreSQL dump (the SQLite run serves the data directory above)';
after(stopAll);

const FIXTURE = path.join(import.meta.dirname, '..', 'fixtures', 'ae6c27d');
const app = JSON.parse(fs.readFileSync(path.join(FIXTURE, 'app.json'), 'utf8'));
const M = { 'X-Core-Application-Id': app.appId, 'X-Core-Master-Key': app.masterKey };

// SQLite's user_version of `file`, as SQLite reads it (its log included: crmd closes without a
// checkpoint).
const formatOf = (file) => Number(execFileSync('sqlite3', [file, 'PRAGMA user_version'], { encoding: 'utf8' }).trim());

function copyFixture() {
  const dir = makeDataDir('crmd-upgrade');
  fs.cpSync(path.join(FIXTURE, 'sqlite-data'), dir, { recursive: true });
  return dir;
}

test('issue 35: a data directory of the ae6c27d binary is served with its records, keys and files, and is marked with this format', { skip }, async () => {
  const dir = copyFixture();
  assert.equal(formatOf(path.join(dir, 'registry.db')), 0, 'the old binary wrote no format');
  const srv = await startServer(dir);
  const docs = await request(srv, 'GET', '/core/classes/Docs?order=Score', { headers: M });
  assert.equal(docs.status, 200, docs.text);
  assert.deepEqual(docs.body.results.map((d) => d.Name), ['with logo', 'doc 1', 'doc 2', 'doc 3']);
  const withLogo = docs.body.results[0];
  // The address as the old server stored it names its port; the path is what the new one serves.
  const served = await fetch(`${srv.base}${new URL(withLogo.Logo.url).pathname}`);
  assert.equal(served.status, 200, 'its attached file is served');
  const apiKey = await request(srv, 'GET', '/core/classes/Docs', { headers: { 'X-Core-Application-Id': app.appId, 'X-Core-API-Key': app.apiKey } });
  assert.equal(apiKey.status, 200, 'its API key still works');
  const created = await request(srv, 'POST', '/core/classes/Docs', { headers: M, body: { Name: 'after the upgrade', Score: 9 } });
  assert.equal(created.status, 201, created.text);
  await srv.stop();
  assert.equal(formatOf(path.join(dir, 'registry.db')), 1);
  assert.equal(formatOf(path.join(dir, 'apps', app.appId, 'data.db')), 1);
  const listed = cliJson(['app', 'list', '--data', dir]).apps;
  assert.deepEqual(listed.map((a) => [a.appId, a.name]), [[app.appId, 'Made by ae6c27d']]);
});

test('issue 35: a store or registry of a newer format is refused in a sentence naming both formats', { skip }, async () => {
  const dir = copyFixture();
  const registry = path.join(dir, 'registry.db');
  const bytes = fs.readFileSync(registry);
  bytes.writeInt32BE(7, 60);  // as a future crmd would mark it
  fs.writeFileSync(registry, bytes);
  const r = spawnSync(CRMD_BIN, ['serve', '--data', dir, '--listen', `${HOST}:0`], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /registry .* is in format 7, written by a newer crmd; this one reads formats up to 1/);
  assert.doesNotMatch(r.stderr, /listening/);
  const cliRefusal = spawnSync(CRMD_BIN, ['app', 'list', '--data', dir], { encoding: 'utf8', timeout: 20_000 });
  assert.notEqual(cliRefusal.status, 0);
  assert.match(cliRefusal.stderr, /newer crmd/);

  // A newer store under a registry this crmd reads: its requests fail (500) and the log says why.
  const other = copyFixture();
  execFileSync('sqlite3', [path.join(other, 'apps', app.appId, 'data.db'), 'PRAGMA user_version = 7']);
  const srv = await startServer(other);
  const answer = await request(srv, 'GET', '/core/classes/Docs', { headers: M });
  assert.equal(answer.status, 500);
  // The log line is written beside the answer, not before it: looked for until it is there.
  const logged = await pollUntil(() => ({
    done: srv.logLines().some((l) => l.level === 'error' && /data\.db is in format 7, written by a newer crmd/.test(l.error ?? '')) }),
  { timeoutMs: 5000 });
  assert.ok(logged.ok, srv.stderr());
});

// --- PostgreSQL ---

const pgApp = JSON.parse(fs.readFileSync(path.join(FIXTURE, 'postgresql-app.json'), 'utf8'));
const PM = { 'X-Core-Application-Id': pgApp.appId, 'X-Core-Master-Key': pgApp.masterKey };

// `sql` run by psql on `url`'s database; its rows as lines of '|'-separated values.
const psql = (url, sql) => execFileSync('psql', ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-d', url, '-c', sql],
  { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

// A data directory holding the old server's files, and a fresh database holding its dump.
function loadDump() {
  const dir = makeDataDir('crmd-upgrade-pg');
  fs.cpSync(path.join(FIXTURE, 'postgresql-data'), dir, { recursive: true });
  const url = storeUrl(dir);
  execFileSync('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', url, '-f', path.join(FIXTURE, 'postgresql.sql')],
    { stdio: ['ignore', 'ignore', 'pipe'] });
  return { dir, url };
}

test('issue 35: a PostgreSQL database of the ae6c27d binary is served with its records, user, keys and files, and is marked with this format', { skip: skipPg }, async () => {
  const { dir, url } = loadDump();
  assert.equal(psql(url, "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'crmd' AND column_name = 'format'"), '0',
    'the old binary wrote no format');
  const srv = await startServer(dir);
  const docs = await request(srv, 'GET', '/core/classes/Docs?order=Score', { headers: PM });
  assert.equal(docs.status, 200, docs.text);
  assert.deepEqual(docs.body.results.map((d) => d.Name), ['with logo', 'doc 1', 'doc 2', 'doc 3']);
  const [withLogo, doc1, doc2] = docs.body.results;
  assert.deepEqual(doc1.Due, { __type: 'Date', iso: '2026-01-15T09:30:00.000Z' });
  assert.deepEqual([doc1.Done, doc2.Done], [false, true]);
  assert.deepEqual(doc2.Tags, ['t2', 'all']);
  assert.deepEqual(doc2.Meta, { n: 2 });
  assert.equal(doc1.Owner.objectId, pgApp.userId);
  const served = await fetch(`${srv.base}${new URL(withLogo.Logo.url).pathname}`);
  assert.equal(served.status, 200, 'its attached file is served');
  // Typed columns answer typed queries: a Date range, an array element, a pointer.
  const due = await request(srv, 'GET', `/core/classes/Docs?where=${encodeURIComponent(JSON.stringify({
    Due: { $gt: { __type: 'Date', iso: '2026-02-01T00:00:00.000Z' } }, Tags: 'all',
    Owner: { __type: 'Pointer', className: '_User', objectId: pgApp.userId } }))}&order=Score`, { headers: PM });
  assert.equal(due.status, 200, due.text);
  assert.deepEqual(due.body.results.map((d) => d.Name), ['doc 2', 'doc 3']);

  const apiKey = { 'X-Core-Application-Id': pgApp.appId, 'X-Core-API-Key': pgApp.apiKey };
  const login = await request(srv, 'POST', '/core/login', { headers: apiKey, body: { username: pgApp.username, password: pgApp.password } });
  assert.equal(login.status, 200, `the old password hash still signs in: ${login.text}`);
  const mine = await request(srv, 'GET', '/core/users/me', { headers: { 'X-Core-Application-Id': pgApp.appId, 'X-Core-Session-Token': login.body.sessionToken } });
  assert.equal(mine.body.objectId, pgApp.userId, mine.text);

  const created = await request(srv, 'POST', '/core/classes/Docs', { headers: PM, body: { Name: 'after the upgrade', Score: 9, Tags: ['new'] } });
  assert.equal(created.status, 201, created.text);
  const counted = await request(srv, 'GET', '/core/classes/Docs?count=1&limit=0', { headers: PM });
  assert.equal(counted.body.count, 5);
  await srv.stop();

  assert.equal(psql(url, 'SELECT format FROM crmd.registry_version'), '1');
  assert.equal(psql(url, "SELECT format FROM crmd.stores WHERE app_id = 'legacy'"), '1');
  assert.equal(psql(url, "SELECT to_regclass('app_legacy._crmd_generation') IS NOT NULL"), 't', 'the store was brought up to date');
  const listed = cliJson(['app', 'list', '--data', dir]).apps;
  assert.deepEqual(listed.map((a) => [a.appId, a.name, a.files]), [[pgApp.appId, 'Made by ae6c27d', 1]]);
});

test('issue 35: a PostgreSQL registry or store of a newer format is refused in a sentence naming both formats', { skip: skipPg }, async () => {
  const { dir, url } = loadDump();
  const first = cliJson(['app', 'list', '--data', dir]).apps;  // brings it to this format
  assert.equal(first.length, 1);
  psql(url, 'UPDATE crmd.registry_version SET format = 7');  // as a future crmd would mark it
  const r = spawnSync(CRMD_BIN, ['serve', '--data', dir, '--store', url, '--listen', `${HOST}:0`], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /registry schema crmd is in format 7, written by a newer crmd; this one reads formats up to 1/);
  assert.doesNotMatch(r.stderr, /listening/);
  const cliRefusal = spawnSync(CRMD_BIN, ['app', 'list', '--data', dir, '--store', url], { encoding: 'utf8', timeout: 20_000 });
  assert.notEqual(cliRefusal.status, 0);
  assert.match(cliRefusal.stderr, /newer crmd/);
  assert.equal(psql(url, 'SELECT format FROM crmd.registry_version'), '7', 'the refusal left the newer registry as it was');

  // A newer store under a registry this crmd reads: its requests fail (500) and the log says why.
  psql(url, "UPDATE crmd.registry_version SET format = 1; UPDATE crmd.stores SET format = 7 WHERE app_id = 'legacy'");
  const srv = await startServer(dir);
  const answer = await request(srv, 'GET', '/core/classes/Docs', { headers: PM });
  assert.equal(answer.status, 500);
  const logged = await pollUntil(() => ({
    done: srv.logLines().some((l) => l.level === 'error' && /store schema app_legacy is in format 7, written by a newer crmd/.test(l.error ?? '')) }),
  { timeoutMs: 5000 });
  assert.ok(logged.ok, srv.stderr());
  assert.equal(psql(url, "SELECT format FROM crmd.stores WHERE app_id = 'legacy'"), '7');

  // A newer server raising the registry's format under this running one: its next poll says so.
  // First a key made by the CLI is seen working: the server's poll has its registry open by then.
  psql(url, "UPDATE crmd.stores SET format = 1 WHERE app_id = 'legacy'");
  const key = cliJson(['key', 'create', '--data', dir, '--app', pgApp.appId, '--name', 'later']);
  const seen = await pollUntil(async () => ({
    done: (await request(srv, 'GET', '/core/classes/Docs', { headers: { 'X-Core-Application-Id': pgApp.appId, 'X-Core-API-Key': key.apiKey } })).status === 200 }),
  { timeoutMs: 5000 });
  assert.ok(seen.ok);
  psql(url, 'UPDATE crmd.registry_version SET format = 7');
  const polled = await pollUntil(() => ({
    done: srv.logLines().some((l) => l.msg === 'registry poll failed' && /registry schema crmd is in format 7/.test(l.error ?? '')) }),
  { timeoutMs: 5000 });
  assert.ok(polled.ok, srv.stderr());
});
