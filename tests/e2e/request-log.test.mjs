// §2.6 _RequestLog and the system user, §5.3 who reads it, §7 protected log tables (issue 16).
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  setup, stopAll, startServer, stopServer, request, masterHeaders, apiKeyHeaders, appHeaders, createRecord, pollUntil,
  ISO_MS, OBJECT_ID,
} from './lib/harness.mjs';

let server;
let app;
let dataDir;
let M;
let K;
let user;  // {id, token}
before(async () => {
  ({ server, app, dataDir } = await setup());
  M = masterHeaders(app);
  K = apiKeyHeaders(app);
  const signed = await request(server, 'POST', '/core/users', { headers: M, body: { username: 'logged@example.test', password: 'Logged5ecret' } });
  assert.equal(signed.status, 201, signed.text);
  user = { id: signed.body.objectId, token: signed.body.sessionToken };
});
after(stopAll);

const DAY_MS = 86_400_000;
const session = (token, extra = {}) => ({ ...appHeaders(app), 'X-Core-Session-Token': token, ...extra });
const logQuery = (where, extra = '', srv = server, headers = M) =>
  request(srv, 'GET', `/core/classes/_RequestLog?where=${encodeURIComponent(JSON.stringify(where))}&order=createdAt&limit=1000${extra}`, { headers });

// The rows matching `where` once there are `count` of them (rows are written within about a second).
async function rowsOnce(where, count, srv = server, headers = M) {
  const p = await pollUntil(async () => {
    const r = await logQuery(where, '', srv, headers);
    const rows = r.status === 200 ? r.body.results : [];
    return { done: rows.length >= count, rows };
  }, { timeoutMs: 10_000, intervalMs: 100 });
  assert.ok(p.ok, `expected ${count} _RequestLog rows for ${JSON.stringify(where)}, found ${p.last?.rows.length}`);
  return p.last.rows;
}

async function systemUserId() {
  const r = await request(server, 'GET', `/core/classes/_User?where=${encodeURIComponent('{"username":"Master"}')}`, { headers: M });
  assert.equal(r.body.results.length, 1, r.text);
  return r.body.results[0].objectId;
}

test('§2.6 one row per write request with the spec\'s fields; reads are not logged', async () => {
  const headers = { ...M, Referer: 'https://crm.example.test/page', 'User-Agent': 'crmd-e2e/1', 'X-Core-Installation-Id': 'inst-123' };
  const body = { Name: 'logged' };
  const created = await request(server, 'POST', '/core/classes/Logged', { headers, body });
  assert.equal(created.status, 201);
  const id = created.body.objectId;
  await request(server, 'GET', `/core/classes/Logged/${id}`, { headers });
  await request(server, 'GET', '/core/classes/Logged', { headers });
  await request(server, 'PUT', `/core/classes/Logged/${id}`, { headers, body: { Name: 'again' } });
  const missing = await request(server, 'PUT', '/core/classes/Logged/nothere00', { headers, body: { Name: 'x' } });
  assert.equal(missing.status, 404);
  await request(server, 'DELETE', `/core/classes/Logged/${id}`, { headers });

  const rows = await rowsOnce({ installationId: 'inst-123' }, 4);
  await new Promise((r) => setTimeout(r, 1500));  // nothing more comes: the GETs are not logged
  const all = (await logQuery({ installationId: 'inst-123' })).body.results;
  assert.deepEqual(all.map((r) => `${r.method} ${r.statusCode}`), ['POST 201', 'PUT 200', 'PUT 404', 'DELETE 200']);
  const first = all[0];
  assert.match(first.objectId, OBJECT_ID);
  assert.match(first.createdAt, ISO_MS);
  assert.equal(first.path, '/core/classes/Logged');
  assert.equal(all[1].path, `/core/classes/Logged/${id}`);
  assert.equal(first.ip, '127.0.0.1');
  assert.equal(first.referer, 'https://crm.example.test/page');
  assert.equal(first.userAgent, 'crmd-e2e/1');
  assert.equal(first.usingMK, true);
  assert.equal(first.internal, false);
  assert.equal(typeof first.duration, 'number');
  assert.ok(first.duration >= 0);
  assert.equal(first.contentLength, JSON.stringify(body).length);
  assert.equal(first.service, 'core');
  for (const none of ['country', 'trustedIP', 'retries']) assert.equal(first[none], null, `${none} is null`);
  assert.deepEqual(first.user, { __type: 'Pointer', className: '_User', objectId: await systemUserId() });
  assert.equal(rows.length >= 4, true);
});

test('§2.6 a batch is one row, whatever its items', async () => {
  const r = await request(server, 'POST', '/core/batch', {
    headers: { ...M, 'X-Core-Installation-Id': 'batch-1' },
    body: { requests: [1, 2, 3].map((n) => ({ method: 'POST', path: '/core/classes/LoggedBatch', body: { n } })) },
  });
  assert.equal(r.status, 200, r.text);
  const rows = await rowsOnce({ installationId: 'batch-1' }, 1);
  await new Promise((res) => setTimeout(res, 1200));
  const again = (await logQuery({ installationId: 'batch-1' })).body.results;
  assert.equal(again.length, 1);
  assert.equal(rows[0].path, '/core/batch');
  assert.equal(rows[0].method, 'POST');
});

test('§2.6 user: the session user for its writes, the system user for API-key writes, null for anonymous ones', async () => {
  await request(server, 'POST', '/core/classes/LoggedOpen', { headers: { ...K, 'X-Core-Installation-Id': 'who-key' }, body: { a: 1 } });
  await request(server, 'POST', '/core/logout', { headers: session(user.token, { 'X-Core-Installation-Id': 'who-session' }) });
  await request(server, 'POST', '/core/login', { headers: { ...appHeaders(app), 'X-Core-Installation-Id': 'who-anon' }, body: { username: 'nobody', password: 'x' } });
  const [key] = await rowsOnce({ installationId: 'who-key' }, 1);
  assert.deepEqual(key.user, { __type: 'Pointer', className: '_User', objectId: await systemUserId() });
  assert.equal(key.usingMK, true);
  const [mine] = await rowsOnce({ installationId: 'who-session' }, 1);
  assert.deepEqual(mine.user, { __type: 'Pointer', className: '_User', objectId: user.id });
  assert.equal(mine.usingMK, false);
  const [anon] = await rowsOnce({ installationId: 'who-anon' }, 1);
  assert.equal(anon.user, null);
  assert.equal(anon.statusCode, 404);
  // Sign in again for the tests below.
  const login = await request(server, 'POST', '/core/login', { headers: appHeaders(app), body: { username: 'logged@example.test', password: 'Logged5ecret' } });
  user.token = login.body.sessionToken;
});

test('§5.3 _RequestLog is read with the master key only: an API key and a session token are refused', async () => {
  await rowsOnce({}, 1);
  assert.equal((await logQuery({}, '', server, M)).status, 200);
  for (const headers of [K, session(user.token)]) {
    const r = await logQuery({}, '', server, headers);
    assert.equal(r.status, 400, r.text);
    assert.deepEqual(r.body, { code: 119, error: 'Permission denied for action find on class _RequestLog.' });
    const count = await request(server, 'GET', '/core/classes/_RequestLog?count=1&limit=0', { headers });
    assert.equal(count.status, 400);
  }
});

test('§2.6 the system user: no password, cannot log in, cannot get one, and its deletion is refused by the pointer rule', async () => {
  const id = await systemUserId();
  const record = await request(server, 'GET', `/core/users/${id}`, { headers: M });
  assert.equal(record.status, 200, record.text);
  assert.equal(record.body.username, 'Master');
  for (const password of ['', 'Master', 'anything']) {
    const login = await request(server, 'POST', '/core/login', { headers: appHeaders(app), body: { username: 'Master', password } });
    assert.equal(login.status, 404);
    assert.deepEqual(login.body, { code: 101, error: 'Invalid username/password.' });
  }
  const set = await request(server, 'PUT', `/core/users/${id}`, { headers: M, body: { password: 'Sy5temPass' } });
  assert.equal(set.status, 400, set.text);
  for (const headers of [M, K]) {
    for (const path of [`/core/users/${id}`, `/core/classes/_User/${id}`]) {
      const del = await request(server, 'DELETE', path, { headers });
      assert.equal(del.status, 400, del.text);
      assert.deepEqual(del.body, { code: 119, error: `Pointer to Object ${id} exists in table _RequestLog in key user. Delete is not allowed.` });
    }
  }
  assert.equal((await request(server, 'GET', `/core/users/${id}`, { headers: M })).status, 200);
  // Not visible to signed-in users (its ACL is nobody's).
  const seen = await request(server, 'GET', `/core/classes/_User/${id}`, { headers: session(user.token) });
  assert.equal(seen.status, 404);
});

test('§7 rows of _syslogTriggers and the other _syslog* classes: PUT and DELETE are denied for every credential, the row stays', async () => {
  for (const cls of ['_syslogTriggers', '_syslogSMS']) {
    const made = await request(server, 'POST', `/core/classes/${cls}`, { headers: M, body: { event: 'create' } });
    assert.equal(made.status, 201, made.text);
    const id = made.body.objectId;
    for (const headers of [M, K, session(user.token), appHeaders(app)]) {
      for (const method of ['DELETE', 'PUT']) {
        const r = await request(server, method, `/core/classes/${cls}/${id}`, { headers, body: method === 'PUT' ? { event: 'x' } : undefined });
        assert.equal(r.status, 400, `${method} ${cls}: ${r.text}`);
        assert.deepEqual(r.body, { error: 'Action is denied for system tables' });
      }
    }
    const inBatch = await request(server, 'POST', '/core/batch', { headers: M, body: { requests: [{ method: 'DELETE', path: `/core/classes/${cls}/${id}` }] } });
    assert.deepEqual(inBatch.body, [{ error: { error: 'Action is denied for system tables' } }]);
    const still = await request(server, 'GET', `/core/classes/${cls}/${id}`, { headers: M });
    assert.equal(still.status, 200);
    assert.equal(still.body.event, 'create');
  }
});

test('§2.3 _RequestLog appears on first use', async () => {
  const { server: fresh, app: freshApp } = await setup();
  const before = await request(fresh, 'GET', '/core/schemas/_RequestLog', { headers: masterHeaders(freshApp) });
  assert.equal(before.status, 400, 'no class before the first logged request');
  await createRecord(fresh, freshApp, 'Anything', { a: 1 });
  const p = await pollUntil(async () => {
    const r = await request(fresh, 'GET', '/core/schemas/_RequestLog', { headers: masterHeaders(freshApp) });
    return { done: r.status === 200, r };
  }, { timeoutMs: 10_000, intervalMs: 100 });
  assert.ok(p.ok, 'the class exists once a write was logged');
  assert.deepEqual(p.last.r.body.fields.user, { type: 'Pointer', targetClass: '_User' });
  await stopServer(fresh);
});

test('issue 16 retention: --request-log-days prunes older rows in the background (the clock set 31 days on)', async () => {
  const { server: first, app: a, dataDir: dir } = await setup();
  const H = { ...masterHeaders(a), 'X-Core-Installation-Id': 'old' };
  for (let i = 0; i < 3; i++) await request(first, 'POST', '/core/classes/Aged', { headers: H, body: { i } });
  const old = await pollUntil(async () => {
    const r = await logQuery({ installationId: 'old' }, '', first, masterHeaders(a));
    return { done: r.status === 200 && r.body.results.length === 3 };
  }, { timeoutMs: 10_000, intervalMs: 100 });
  assert.ok(old.ok);
  await stopServer(first);

  // 29 days on, with a 30-day retention: the rows stay.
  const kept = await startServer(dir, { env: { CRMD_TEST_CLOCK_OFFSET_MS: String(29 * DAY_MS) } });
  await request(kept, 'POST', '/core/classes/Aged', { headers: { ...masterHeaders(a), 'X-Core-Installation-Id': 'day29' }, body: { i: 29 } });
  await rowsOnce({ installationId: 'day29' }, 1, kept, masterHeaders(a));
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal((await logQuery({ installationId: 'old' }, '', kept, masterHeaders(a))).body.results.length, 3);
  await stopServer(kept);

  // 31 days on: the rows of the first run go, the newer ones stay.
  const later = await startServer(dir, { env: { CRMD_TEST_CLOCK_OFFSET_MS: String(31 * DAY_MS) } });
  await request(later, 'POST', '/core/classes/Aged', { headers: { ...masterHeaders(a), 'X-Core-Installation-Id': 'new' }, body: { i: 4 } });
  const pruned = await pollUntil(async () => {
    const r = await logQuery({ installationId: 'old' }, '', later, masterHeaders(a));
    return { done: r.status === 200 && r.body.results.length === 0 };
  }, { timeoutMs: 10_000, intervalMs: 100 });
  assert.ok(pruned.ok, 'rows older than 30 days are deleted');
  await rowsOnce({ installationId: 'new' }, 1, later, masterHeaders(a));
  assert.equal((await logQuery({ installationId: 'day29' }, '', later, masterHeaders(a))).body.results.length, 1);
  assert.ok(later.logLines().some((l) => l.msg === 'request log pruned' && l.rows === 3), 'the pruning is logged');
  await stopServer(later);
});
