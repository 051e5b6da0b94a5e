// Issue 35, the first hour: `crmd --version` (the release and the commit, the MCP server's version
// too), one server per SQLite data directory, and start-up failures told in one sentence with a
// non-zero exit before the server says it listens.
import test, { after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import {
  CRMD_BIN, HOST, ON_POSTGRESQL, stopAll, request, makeDataDir, createApp, startServer, masterHeaders, appHeaders,
} from './lib/harness.mjs';
import { withStore } from './lib/pg.mjs';

after(stopAll);

// `crmd <args>` to its end (bounded): {status, stdout, stderr}.
function run(args, { timeoutMs = 20_000, prlimitNoFile } = {}) {
  const [command, argv] = prlimitNoFile
    ? ['prlimit', [`--nofile=${prlimitNoFile}:${prlimitNoFile}`, CRMD_BIN, ...withStore(args)]]
    : [CRMD_BIN, withStore(args)];
  const r = spawnSync(command, argv, { encoding: 'utf8', timeout: timeoutMs });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

// A start that must fail: one line on stderr, `crmd: ...`, no `listening` line, exit 1.
function assertRefusedStart(r, pattern) {
  assert.equal(r.status, 1, `exit code; stderr: ${r.stderr}`);
  const lines = r.stderr.split('\n').filter((l) => l.length > 0);
  assert.equal(lines.length, 1, `one line: ${r.stderr}`);
  assert.match(lines[0], /^crmd: /);
  assert.match(lines[0], pattern);
  assert.doesNotMatch(r.stderr, /listening/);
  assert.doesNotMatch(r.stderr, /\.hpp|\.cpp|\[system:/, 'no source location of a library');
}

test('issue 35: crmd --version prints the release and the commit; the MCP server names itself the same', async () => {
  const r = run(['--version']);
  assert.equal(r.status, 0, r.stderr);
  const m = /^crmd (\d+\.\d+\.\d+(?:\+[0-9a-f]{12}(?:\.dirty)?)?)\n$/.exec(r.stdout);
  assert.ok(m, `crmd <release>+<commit>: ${JSON.stringify(r.stdout)}`);
  const version = m[1];
  const cmake = fs.readFileSync(path.join(import.meta.dirname, '..', '..', 'CMakeLists.txt'), 'utf8');
  assert.equal(version.split('+')[0], /project\(crmd VERSION (\S+)/.exec(cmake)[1], 'the one release number of the build files');

  const dir = makeDataDir('crmd-version');
  const app = createApp(dir);
  const srv = await startServer(dir);
  assert.equal(srv.listeningLine.version, version, 'the listening line says which build serves');
  const init = await request(srv, 'POST', `/mcp/${app.appId}`, {
    headers: { Accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } },
  });
  assert.equal(init.status, 200, init.text);
  assert.equal(init.body.result.serverInfo.version, version);
});

test('issue 35: a second crmd serve on one SQLite --data refuses in a sentence naming the first; after the first is killed, it starts', { skip: ON_POSTGRESQL && 'servers on a PostgreSQL --store share --data (scale-out.test.mjs)' }, async () => {
  const dir = makeDataDir('crmd-one-server');
  createApp(dir);
  const first = await startServer(dir);
  const second = run(['serve', '--data', dir, '--listen', `${HOST}:0`]);
  assertRefusedStart(second, new RegExp(`another crmd serve is running on --data .* \\(pid ${first.proc.pid}\\)`));
  await first.kill();  // SIGKILL: the kernel lets go of the lock, nothing to clean by hand
  const third = await startServer(dir);
  const health = await request(third, 'GET', '/health');
  assert.equal(health.status, 200);
});

test('issue 35: a taken port is one sentence and exit 1, before any listening line', async () => {
  const blocker = net.createServer();
  await new Promise((resolve) => blocker.listen(0, HOST, resolve));
  try {
    const dir = makeDataDir('crmd-port-taken');
    createApp(dir);
    const r = run(['serve', '--data', dir, '--listen', `${HOST}:${blocker.address().port}`]);
    assertRefusedStart(r, new RegExp(`cannot listen on ${HOST}:${blocker.address().port}: Address already in use`));
  } finally {
    blocker.close();
  }
});

test('issue 35: a data directory that is not one, and a registry that is not a database, are one sentence and exit 1', { skip: ON_POSTGRESQL && 'the registry is in PostgreSQL' }, () => {
  const parent = makeDataDir('crmd-bad-data');
  const file = path.join(parent, 'a-file');
  fs.writeFileSync(file, 'x');
  assertRefusedStart(run(['serve', '--data', file, '--listen', `${HOST}:0`]), /cannot use --data .*a-file: Not a directory/);

  const dir = path.join(parent, 'data');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'registry.db'), 'not a database, but text');
  assertRefusedStart(run(['serve', '--data', dir, '--listen', `${HOST}:0`]), /cannot read the registry of .*registry\.db: .*not a database/);
});

test('issue 33 (memory): a copy of crmd without its phone module beside it refuses to start in a sentence naming the module; app create fails naming it too', () => {
  const dir = makeDataDir('crmd-no-phone-module');
  const alone = path.join(dir, 'crmd');
  fs.copyFileSync(CRMD_BIN, alone);
  fs.chmodSync(alone, 0o755);
  const data = path.join(dir, 'data');
  const spawned = (args) => spawnSync(alone, withStore(args), { encoding: 'utf8', timeout: 20_000 });
  const created = spawned(['app', 'create', '--data', data, '--id', 'nomodule', '--no-product-base']);
  assert.notEqual(created.status, 0, 'app create checks its region with the module');
  assert.match(created.stderr, /crmd-phone\.so/);
  const r = spawned(['serve', '--data', data, '--listen', `${HOST}:0`]);
  assertRefusedStart({ status: r.status, stdout: r.stdout, stderr: r.stderr },
    /crmd's phone module .*crmd-no-phone-module[^ ]*\/crmd-phone\.so is missing: it is built beside the crmd binary and goes with it/);
  // Beside it again, the same copy starts (the module is found next to the executable, not the build).
  fs.copyFileSync(path.join(path.dirname(CRMD_BIN), 'crmd-phone.so'), path.join(dir, 'crmd-phone.so'));
  assert.equal(spawned(['app', 'create', '--data', data, '--id', 'withmodule', '--no-product-base']).status, 0);
});

test('issue 33 (memory): a SQLite server maps libcurl, libpq and libphonenumber only once it needs them; a phone number compared loads crmd-phone.so', { skip: ON_POSTGRESQL && 'a PostgreSQL store uses libpq from its start' }, async () => {
  const dir = makeDataDir('crmd-lazy-libraries');
  const app = createApp(dir, { productBase: true });
  const srv = await startServer(dir);
  const maps = () => fs.readFileSync(`/proc/${srv.proc.pid}/maps`, 'utf8');
  const notYet = (when) => {
    const mapped = maps();
    for (const lib of ['crmd-phone.so', 'libphonenumber.so', 'libprotobuf.so', 'libicuuc.so', 'libcurl.so', 'libpq.so', 'libgnutls.so', 'libcrypto.so'])
      assert.ok(!mapped.includes(lib), `${lib} is not mapped ${when}`);
  };
  const read = await request(srv, 'GET', '/core/classes/Accounts?limit=1', { headers: masterHeaders(app) });
  assert.equal(read.status, 200, read.text);
  notYet('after a read');
  const lead = () => request(srv, 'POST', `/functions/${app.appId}/getlead`, { headers: appHeaders(app), body: { PhoneNumber: '050-7000001', Name: 'Lead' } });
  const first = await lead();
  assert.equal(first.status, 200, first.text);
  notYet('after a new number (its phone key matched no contact)');
  const second = await lead();
  assert.equal(second.status, 200, second.text);
  assert.ok(maps().includes('crmd-phone.so'), 'the module is loaded to compare a number with its contact');
  assert.ok(maps().includes('libphonenumber.so'));
});

test('issue 35: too few open files is one sentence with the limit, before listening (it used to log listening, then exit on the signal pipe)', () => {
  const dir = makeDataDir('crmd-few-files');
  createApp(dir);
  const r = run(['serve', '--data', dir, '--listen', `${HOST}:0`, '--threads', '4'], { prlimitNoFile: 24 });
  assertRefusedStart(r, /the open-file limit is 24, and crmd needs at least \d+ with 4 network threads: raise it/);
});
