// Issue 35, logs: the access log names the application and a request id (X-Request-Id taken when
// usable, made otherwise, echoed either way), a slow request gets a warning line, `--log-level`
// drops the lines below it, and no secret sent in a query string reaches a line.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import {
  HOST, stopAll, request, makeDataDir, createApp, startServer, masterHeaders, appHeaders, pollUntil, sleep,
} from './lib/harness.mjs';

let dir;
let app;
let server;
before(async () => {
  dir = makeDataDir('crmd-logs');
  app = createApp(dir);
  server = await startServer(dir, { extraArgs: ['--slow-request-ms', '50'] });
});
after(stopAll);

// The log lines of `srv` that satisfy `pick`, once at least one does (access lines are written in
// batches, at most 20 ms after the answer).
async function linesOf(srv, pick) {
  const seen = await pollUntil(() => {
    const lines = srv.logLines().filter(pick);
    return { done: lines.length > 0, lines };
  }, { timeoutMs: 2000, intervalMs: 20 });
  return seen.last.lines;
}

test('issue 35: the access line names the application and the request id; a usable X-Request-Id is kept and echoed, another replaced', async () => {
  const kept = await request(server, 'GET', '/core/classes/Deals', { headers: { ...masterHeaders(app), 'X-Request-Id': 'proxy-7f3a:01.b_c' } });
  assert.equal(kept.headers['x-request-id'], 'proxy-7f3a:01.b_c');
  const [line] = await linesOf(server, (l) => l.msg === 'request' && l.requestId === 'proxy-7f3a:01.b_c');
  assert.ok(line, 'the access line carries the request id');
  assert.equal(line.app, app.appId);
  assert.equal(line.path, '/core/classes/Deals');
  assert.equal(line.status, kept.status);

  const made = await request(server, 'GET', '/health');
  assert.match(made.headers['x-request-id'], /^[A-Za-z0-9]{16}$/, 'one is made when none is sent');
  const [health] = await linesOf(server, (l) => l.msg === 'request' && l.requestId === made.headers['x-request-id']);
  assert.equal(health.path, '/health');
  assert.equal(health.app, undefined, '/health is no application\'s');

  for (const bad of ['has space', 'x'.repeat(129), 'quote"s', 'new\u00e9']) {
    const r = await request(server, 'GET', '/health', { headers: { 'X-Request-Id': bad } }).catch(() => null);
    if (!r) continue;  // a header fetch itself refuses to send
    assert.match(r.headers['x-request-id'], /^[A-Za-z0-9]{16}$/, `${JSON.stringify(bad)} is replaced`);
  }
});

test('issue 35: keys, tokens, OAuth codes and tickets in a query string never reach a log line; the rest of the query does', async () => {
  const secrets = ['S3cretTokenValue1', 'OAuthCodeValue22', 'TicketValue333', 'MasterKeyInQuery4'];
  const query = `token=${secrets[0]}&code=${secrets[1]}&ticket=${secrets[2]}&X-Core-Master-Key=${secrets[3]}&limit=3`;
  const r = await request(server, 'GET', `/core/classes/Deals?${query}`, { headers: { ...masterHeaders(app), 'X-Request-Id': 'secrets-1' } });
  assert.ok(r.status < 500, r.text);
  // A password reset and a sign-in with secrets in the query too, whatever they answer.
  await request(server, 'GET', `/core/apps/${app.appId}/request_password_reset?token=${secrets[0]}&username=dana`, { headers: { 'X-Request-Id': 'secrets-2' } });
  await request(server, 'GET', `/core/login?username=dana&password=${secrets[1]}`, { headers: { ...appHeaders(app), 'X-Request-Id': 'secrets-3' } });
  const [line] = await linesOf(server, (l) => l.requestId === 'secrets-1');
  assert.equal(line.query, 'token=[redacted]&code=[redacted]&ticket=[redacted]&X-Core-Master-Key=[redacted]&limit=3');
  await linesOf(server, (l) => l.requestId === 'secrets-3');
  for (const secret of secrets) assert.ok(!server.stderr().includes(secret), `${secret} is in no line`);
  assert.ok(!server.stderr().includes(app.masterKey), 'nor is the master key sent as a header');
});

test('issue 35: a request slower than --slow-request-ms gets a warning line with its request id', async () => {
  // A write whose body comes 200 ms after its head: slow by construction, whatever the machine.
  const body = JSON.stringify({ Name: 'slow' });
  const sock = net.createConnection({ host: HOST, port: server.port });
  await new Promise((resolve) => sock.once('connect', resolve));
  let answer = '';
  sock.on('data', (d) => { answer += d.toString('latin1'); });
  const closed = new Promise((resolve) => sock.on('close', resolve));
  sock.write(`POST /core/classes/Deals HTTP/1.1\r\nHost: ${HOST}\r\nX-Core-Application-Id: ${app.appId}\r\n` +
    `X-Core-Master-Key: ${app.masterKey}\r\nContent-Type: application/json\r\nX-Request-Id: slow-1\r\n` +
    `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`);
  await sleep(200);
  sock.write(body);
  await closed;
  assert.match(answer, /^HTTP\/1\.1 201/);
  const [slow] = await linesOf(server, (l) => l.msg === 'slow request' && l.requestId === 'slow-1');
  assert.equal(slow.level, 'warn');
  assert.equal(slow.app, app.appId);
  assert.ok(slow.ms >= 50, `${slow.ms} ms: over the threshold`);
});

test('issue 35: --log-level warn drops the access lines and every other info line but the server\'s landmarks', async () => {
  const quiet = await startServer(makeDataDir('crmd-logs-quiet'), { extraArgs: ['--log-level', 'warn'] });
  for (let i = 0; i < 3; i++) assert.equal((await request(quiet, 'GET', '/health')).status, 200);
  await quiet.stop();
  const lines = quiet.logLines();
  assert.equal(lines.filter((l) => l.msg === 'request').length, 0, 'no access line');
  const announced = ['listening', 'stopping', 'stopped'];  // written whatever the level: the operator's landmarks
  assert.deepEqual(lines.filter((l) => l.level === 'info').map((l) => l.msg), announced, 'no other info line');
});
