// Issue 35, behind a reverse proxy: with `--trusted-proxies`, the forwarding headers of those
// peers name the client (the access log, `_RequestLog.ip`, the per-address password rate) and
// its scheme (the sign-in gate's Secure cookie); from any other peer they are ignored, so a client
// cannot choose its address or spread its attempts over made-up ones. The test process is the
// proxy: it connects from 127.0.0.1.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  stopAll, request, makeDataDir, createApp, startServer, masterHeaders, appHeaders, pollUntil,
} from './lib/harness.mjs';

let dir;
let app;
let trusting;  // trusts 127.0.0.1
let wary;      // trusts a block the test is not in
before(async () => {
  dir = makeDataDir('crmd-proxy');
  app = createApp(dir);
  // Two password checks per address a minute: the third from one address answers 429.
  trusting = await startServer(dir, { extraArgs: ['--trusted-proxies', '10.0.0.0/8,127.0.0.1', '--password-rate', '2'] });
});
after(stopAll);

const login = (srv, forwardedFor) => request(srv, 'POST', '/core/login', {
  headers: { ...appHeaders(app), 'X-Forwarded-For': forwardedFor }, body: { username: 'nobody', password: 'wrong password 1' },
});

async function accessLine(srv, requestId) {
  const seen = await pollUntil(() => {
    const line = srv.logLines().find((l) => l.msg === 'request' && l.requestId === requestId);
    return { done: Boolean(line), line };
  }, { timeoutMs: 2000, intervalMs: 20 });
  assert.ok(seen.ok, `the access line of ${requestId}`);
  return seen.last.line;
}

test('issue 35: from a trusted proxy, X-Forwarded-For and Forwarded name the client in the access log and _RequestLog.ip; a client\'s own header to the left is not believed', async () => {
  const M = masterHeaders(app);
  const r = await request(trusting, 'POST', '/core/classes/Visits', {
    headers: { ...M, 'X-Forwarded-For': '198.51.100.1, 203.0.113.7', 'X-Request-Id': 'xff-1' }, body: { Name: 'one' },
  });
  assert.equal(r.status, 201, r.text);
  assert.equal((await accessLine(trusting, 'xff-1')).ip, '203.0.113.7');
  const f = await request(trusting, 'GET', '/health', { headers: { Forwarded: 'for="[2001:db8::7]:4711";proto=https', 'X-Request-Id': 'fwd-1' } });
  assert.equal(f.status, 200);
  assert.equal((await accessLine(trusting, 'fwd-1')).ip, '2001:db8::7');

  const logged = await pollUntil(async () => {
    const rows = await request(trusting, 'GET', '/core/classes/_RequestLog?order=-createdAt&limit=10', { headers: M });
    const row = rows.body.results?.find((x) => x.path === '/core/classes/Visits');
    return { done: Boolean(row), row };
  }, { timeoutMs: 5000, intervalMs: 100 });
  assert.ok(logged.ok, 'the write is in _RequestLog');
  assert.equal(logged.last.row.ip, '203.0.113.7');
});

test('issue 35: the password rate counts per forwarded client behind a trusted proxy, and per peer when the headers are spoofed', async () => {
  // Behind the trusted proxy: two clients, two buckets.
  for (let i = 0; i < 2; i++) assert.notEqual((await login(trusting, '203.0.113.20')).status, 429);
  assert.equal((await login(trusting, '203.0.113.20')).status, 429, 'the third from one client');
  assert.notEqual((await login(trusting, '203.0.113.21')).status, 429, 'another client has its own');

  // A server that trusts nothing here: the header is the client's own word and is ignored; a
  // client that made up a new address for each attempt still shares its peer's bucket.
  wary = await startServer(makeDataDir('crmd-proxy-wary'), { extraArgs: ['--trusted-proxies', '10.0.0.0/8', '--password-rate', '2'] });
  const other = createApp(wary.dataDir);
  const spoofed = (ip) => request(wary, 'POST', '/core/login', {
    headers: { ...appHeaders(other), 'X-Forwarded-For': ip, 'X-Request-Id': `spoof-${ip}` }, body: { username: 'nobody', password: 'wrong password 1' },
  });
  await pollUntil(async () => ({ done: (await request(wary, 'GET', '/core/classes/X', { headers: masterHeaders(other) })).status === 200 }), { timeoutMs: 2000 });
  assert.notEqual((await spoofed('198.51.100.1')).status, 429);
  assert.notEqual((await spoofed('198.51.100.2')).status, 429);
  assert.equal((await spoofed('198.51.100.3')).status, 429, 'made-up addresses share the peer\'s bucket');
  assert.equal((await accessLine(wary, 'spoof-198.51.100.3')).ip, '127.0.0.1', 'the log names the peer');
});

test('issue 35: the sign-in gate\'s cookie is Secure when a trusted proxy says the browser used HTTPS, and not on a spoofed X-Forwarded-Proto', async () => {
  const gate = (srv, a, headers) => request(srv, 'GET',
    `/core/apps/${a.appId}/signin?return=${encodeURIComponent(`${srv.base}/core/files/${a.appId}/x.png`)}`, { headers });
  const secure = await gate(trusting, app, { 'X-Forwarded-Proto': 'https' });
  assert.equal(secure.status, 200, secure.text);
  assert.match(secure.headers['set-cookie'], /; Secure/);
  const plain = await gate(trusting, app, {});
  assert.doesNotMatch(plain.headers['set-cookie'], /Secure/, 'over plain HTTP no Secure cookie');

  if (!wary) wary = await startServer(makeDataDir('crmd-proxy-wary2'), { extraArgs: ['--trusted-proxies', '10.0.0.0/8'] });
  const other = createApp(wary.dataDir, { id: 'gateOther' });
  await pollUntil(async () => ({ done: (await gate(wary, other, {})).status === 200 }), { timeoutMs: 2000 });
  const spoofed = await gate(wary, other, { 'X-Forwarded-Proto': 'https' });
  assert.equal(spoofed.status, 200, spoofed.text);
  assert.doesNotMatch(spoofed.headers['set-cookie'], /Secure/, 'an untrusted peer\'s word is not taken');
});

test('issue 35: a wrong --trusted-proxies entry refuses to start', async () => {
  await assert.rejects(startServer(makeDataDir('crmd-proxy-bad'), { extraArgs: ['--trusted-proxies', '10.0.0.0/33'] }), /exited early/);
});
