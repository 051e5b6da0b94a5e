// Issue 35, upgrades: a SQLite data directory made by the ae6c27d binary (tests/fixtures/ae6c27d:
// an application, a class with records, an uploaded and attached file; the stores checkpointed,
// nothing else changed) is served by this crmd, which marks the registry and the store with its
// format; a store of a newer format is refused in words. SQLite (the fixture is a data directory).
import test, { after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  CRMD_BIN, HOST, ON_POSTGRESQL, stopAll, request, makeDataDir, startServer, cliJson, pollUntil,
} from './lib/harness.mjs';

const skip = ON_POSTGRESQL && 'the fixture is a SQLite data directory made by the ae6c27d binary';
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
