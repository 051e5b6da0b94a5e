// Issue 35, configuration: every `crmd serve` flag also from a TOML file (`--config`, keys named
// as the flags at the top level) and from CRMD_* environment variables; the command line wins over
// the environment, which wins over the file; `--print-config` shows what is in effect with the
// secrets masked, and a misspelt key is refused.
import test, { after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  CRMD_BIN, stopAll, request, makeDataDir, createApp, startServer, masterHeaders,
} from './lib/harness.mjs';

after(stopAll);

function printConfig(args, env = {}) {
  const r = spawnSync(CRMD_BIN, ['serve', ...args, '--print-config'], { encoding: 'utf8', timeout: 20_000, env: { ...process.env, ...env } });
  const settings = {};
  for (const line of r.stdout.split('\n')) {
    const m = /^([a-z-]+)=(.*)$/.exec(line);
    if (m) settings[m[1]] = m[2].replace(/^"(.*)"$/, '$1');
  }
  return { status: r.status, stderr: r.stderr, stdout: r.stdout, settings };
}

test('issue 35: the file, the environment and the command line, in that order of strength; secrets masked', () => {
  const dir = makeDataDir('crmd-config');
  const file = path.join(dir, 'crmd.toml');
  fs.writeFileSync(file, [
    `data = "${dir}"`, 'listen = "127.0.0.1:18999"', 'threads = 3', 'read-timeout = 9',
    'smtp-url = "smtp://mailer:hunter2@mail.example:587"', '',
  ].join('\n'));
  const fromFile = printConfig(['--config', file]);
  assert.equal(fromFile.status, 0, fromFile.stderr);
  assert.equal(fromFile.settings.data, dir);
  assert.equal(fromFile.settings.listen, '127.0.0.1:18999');
  assert.equal(fromFile.settings.threads, '3');
  assert.equal(fromFile.settings['read-timeout'], '9');
  assert.equal(fromFile.settings['smtp-url'], 'smtp://mailer:****@mail.example:587');
  assert.equal(fromFile.settings['idle-timeout'], '60', 'the defaults are shown too');
  assert.ok(!fromFile.stdout.includes('hunter2'), 'no secret printed');

  const env = { CRMD_THREADS: '5', CRMD_STORE: 'postgresql://crmd:pw-in-env@db.example/crmd?password=pw2' };
  const fromEnv = printConfig(['--config', file], env);
  assert.equal(fromEnv.settings.threads, '5', 'the environment wins over the file');
  assert.equal(fromEnv.settings['read-timeout'], '9');
  assert.equal(fromEnv.settings.store, 'postgresql://crmd:****@db.example/crmd?password=****');
  assert.ok(!fromEnv.stdout.includes('pw-in-env') && !fromEnv.stdout.includes('pw2'));

  const fromFlags = printConfig(['--config', file, '--threads', '7'], env);
  assert.equal(fromFlags.settings.threads, '7', 'the command line wins over both');

  fs.appendFileSync(file, 'read-timout = 3\n');
  const misspelt = printConfig(['--config', file]);
  assert.notEqual(misspelt.status, 0);
  assert.match(misspelt.stderr, /read-timout/);
});

test('issue 35: a server takes its settings from the config file', async () => {
  const dir = makeDataDir('crmd-config-serve');
  const app = createApp(dir);
  const file = path.join(dir, 'crmd.toml');
  fs.writeFileSync(file, 'prefix = "parse"\n');
  const srv = await startServer(dir, { extraArgs: ['--config', file] });
  const r = await request(srv, 'GET', '/parse/classes/Deals', { headers: { 'X-Parse-Application-Id': app.appId, 'X-Parse-Master-Key': app.masterKey } });
  assert.equal(r.status, 200, r.text);
  assert.equal(srv.listeningLine.prefix, 'parse');
  assert.equal((await request(srv, 'GET', '/core/classes/Deals', { headers: masterHeaders(app) })).status, 404);
});
