// Issue 23: what Parse's client SDKs need from the server, checked over plain HTTP. The stock SDK
// itself drives crmd in tests/compat/. Here: the SDK's transport (every call a POST of a JSON
// body carrying `_method` and the credentials) on both prefixes, the per-application gates and
// the Parse profile (docs/PROFILES.md), the Parse-mode routes, and the login and session gaps of
// spec §4.7.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import {
  setup, stopAll, request, masterHeaders, appHeaders, createRecord, makeDataDir, createApp, startServer,
  cli, cliJson, pollUntil,
} from './lib/harness.mjs';

let server, app, dataDir;
let parseServer, parseApp, parseDir;
before(async () => {
  ({ server, app, dataDir } = await setup());
  parseDir = makeDataDir();
  parseApp = createApp(parseDir);
  parseServer = await startServer(parseDir, { prefix: 'parse' });
});
after(stopAll);

// A call as the SDK sends it: POST, text/plain, the real method and the credentials in the body.
function sdkCall(srv, prefix, method, path, body) {
  return request(srv, 'POST', `/${prefix}/${path}`, {
    headers: { 'Content-Type': 'text/plain' },
    body: JSON.stringify({ ...body, _method: method, _ClientVersion: 'js8.6.2', _InstallationId: 'inst-1' }),
  });
}

test('issue 23 transport: a POST with _method and credential keys is the call it names, on /core', async () => {
  await createRecord(server, app, 'Items', { n: 1, s: 'a' });
  await createRecord(server, app, 'Items', { n: 2, s: 'b' });
  const found = await sdkCall(server, 'core', 'GET', 'classes/Items', {
    _ApplicationId: app.appId, _MasterKey: app.masterKey, where: { n: { $gt: 1 } }, limit: 10, order: '-n', count: 1,
  });
  assert.equal(found.status, 200, found.text);
  assert.deepEqual(found.body.results.map((r) => r.s), ['b']);
  assert.equal(found.body.count, 1);

  // A create is a plain POST whose body carries the credentials: they are not fields.
  const created = await sdkCall(server, 'core', 'POST', 'classes/Items', { _ApplicationId: app.appId, _MasterKey: app.masterKey, n: 3 });
  assert.equal(created.status, 201, created.text);
  const got = await request(server, 'GET', `/core/classes/Items/${created.body.objectId}`, { headers: masterHeaders(app) });
  assert.deepEqual(Object.keys(got.body).filter((k) => k.startsWith('_')), []);
  assert.equal(got.body.n, 3);

  const updated = await sdkCall(server, 'core', 'PUT', `classes/Items/${created.body.objectId}`,
    { _ApplicationId: app.appId, _MasterKey: app.masterKey, n: { __op: 'Increment', amount: 2 } });
  assert.equal(updated.status, 200, updated.text);
  assert.equal(updated.body.n, 5);
  const deleted = await sdkCall(server, 'core', 'DELETE', `classes/Items/${created.body.objectId}`, { _ApplicationId: app.appId, _MasterKey: app.masterKey });
  assert.equal(deleted.status, 200, deleted.text);
  const gone = await request(server, 'GET', `/core/classes/Items/${created.body.objectId}`, { headers: masterHeaders(app) });
  assert.equal(gone.status, 404);
});

test('issue 23 transport: the same door as headers (a wrong key, no key, another application, a header wins)', async () => {
  // §5.2: a wrong key in the body is refused like a wrong key in a header.
  const wrong = await sdkCall(server, 'core', 'GET', 'classes/Items', { _ApplicationId: app.appId, _MasterKey: 'not-the-key' });
  assert.equal(wrong.status, 400, wrong.text);
  assert.deepEqual(wrong.body, { code: 119, error: 'Permission denied for action find on class Items.' });
  // §4.1: the application id alone cannot write, whichever way it is sent.
  const anonymous = await sdkCall(server, 'core', 'POST', 'classes/Items', { _ApplicationId: app.appId, n: 9 });
  assert.deepEqual(anonymous.body, { code: 119, error: 'This action is not allowed without a valid CAPTCHA' });
  const unknownApp = await sdkCall(server, 'core', 'GET', 'classes/Items', { _ApplicationId: 'nobody', _MasterKey: app.masterKey });
  assert.equal(unknownApp.status, 403);
  assert.deepEqual(unknownApp.body, { error: 'unauthorized' });
  // A credential header the request sent wins over the body's: the body adds none a header would not.
  const both = await request(server, 'POST', '/core/classes/Items', {
    headers: { ...appHeaders(app), 'X-Core-Master-Key': 'not-the-key', 'Content-Type': 'text/plain' },
    body: JSON.stringify({ _method: 'GET', _ApplicationId: app.appId, _MasterKey: app.masterKey }),
  });
  assert.equal(both.status, 400, both.text);
  assert.equal(both.body.code, 119);
  // An API key configured as a header has the master identity (§5.2): the `_MasterKey` the SDK
  // sends for its master-key calls is not a second key then.
  const apiKeyed = await request(server, 'POST', '/core/schemas/Items', {
    headers: { 'X-Core-API-Key': app.apiKey, 'Content-Type': 'text/plain' },
    body: JSON.stringify({ _method: 'GET', _ApplicationId: app.appId, _MasterKey: 'any placeholder' }),
  });
  assert.equal(apiKeyed.status, 200, apiKeyed.text);
  assert.equal(apiKeyed.body.className, 'Items');
  // A session token in the body is a session, with its user's rights; after logout, 209 (§5.5).
  await request(server, 'POST', '/core/users', { headers: masterHeaders(app), body: { username: 'tina', password: 'Passw0rd1' } });
  const login = await sdkCall(server, 'core', 'POST', 'login', { _ApplicationId: app.appId, username: 'tina', password: 'Passw0rd1' });
  assert.equal(login.status, 200, login.text);
  const me = await sdkCall(server, 'core', 'GET', 'users/me', { _ApplicationId: app.appId, _SessionToken: login.body.sessionToken });
  assert.equal(me.status, 200, me.text);
  assert.equal(me.body.username, 'tina');
  const out = await sdkCall(server, 'core', 'POST', 'logout', { _ApplicationId: app.appId, _SessionToken: login.body.sessionToken });
  assert.equal(out.status, 200, out.text);
  const stale = await sdkCall(server, 'core', 'GET', 'users/me', { _ApplicationId: app.appId, _SessionToken: login.body.sessionToken });
  assert.deepEqual(stale.body, { code: 209, error: 'invalid session token' });
});

test('issue 23 transport: unknown _ keys are refused as the body and query rules refuse them', async () => {
  const query = await sdkCall(server, 'core', 'GET', 'classes/Items', { _ApplicationId: app.appId, _MasterKey: app.masterKey, _context: { a: 1 } });
  assert.equal(query.status, 400, query.text);
  assert.deepEqual(query.body, { code: 102, error: 'Invalid parameter for query: _context' });
  const create = await sdkCall(server, 'core', 'POST', 'classes/Items', { _ApplicationId: app.appId, _MasterKey: app.masterKey, _secret: 1 });
  assert.equal(create.status, 400, create.text);
  assert.equal(create.body.code, 105);
  const method = await request(server, 'POST', '/core/classes/Items', {
    headers: { 'Content-Type': 'text/plain' }, body: JSON.stringify({ _method: 7, _ApplicationId: app.appId }),
  });
  assert.equal(method.status, 400, method.text);
  // A plain JSON body without the transport's keys is the request it always was.
  const plain = await request(server, 'POST', '/core/classes/Items', { headers: masterHeaders(app), body: { n: 10 } });
  assert.equal(plain.status, 201, plain.text);
});

test('issue 23 transport: /parse answers the SDK too, a file sent as base64 JSON included', async () => {
  const created = await sdkCall(parseServer, 'parse', 'POST', 'classes/Things', { _ApplicationId: parseApp.appId, _MasterKey: parseApp.masterKey, n: 1 });
  assert.equal(created.status, 201, created.text);
  const bytes = Buffer.from('hello from a Parse client\n');
  const file = await request(parseServer, 'POST', '/parse/files/note.txt', {
    headers: { 'Content-Type': 'text/plain' },
    body: JSON.stringify({ base64: bytes.toString('base64'), _ContentType: 'text/plain', _ApplicationId: parseApp.appId, _ClientVersion: 'js8.6.2' }),
  });
  assert.equal(file.status, 201, file.text);
  assert.match(file.body.name, /^[0-9a-f]{32}_note\.txt$/);
  // docs/FILES.md: an upload not yet attached is served to a key (a browser goes to the sign-in gate).
  const read = await fetch(file.body.url, { headers: { 'X-Parse-Master-Key': parseApp.masterKey }, redirect: 'manual' });
  assert.equal(read.status, 200);
  assert.deepEqual(Buffer.from(await read.arrayBuffer()), bytes);
  // §4.8: judged by content, whatever _ContentType says.
  const html = await request(parseServer, 'POST', '/parse/files/page.txt', {
    headers: { 'Content-Type': 'text/plain' },
    body: JSON.stringify({ base64: Buffer.from('<html><script>alert(1)</script></html>').toString('base64'), _ContentType: 'text/plain', _ApplicationId: parseApp.appId }),
  });
  assert.equal(html.status, 403, html.text);
  const broken = await request(parseServer, 'POST', '/parse/files/x.txt', {
    headers: { 'Content-Type': 'text/plain' }, body: JSON.stringify({ base64: '***', _ApplicationId: parseApp.appId }),
  });
  assert.equal(broken.status, 400, broken.text);
});

// The head of a request whose body is never sent, and whatever the server answers before it closes.
function headOnly(srv, head) {
  return new Promise((resolve) => {
    const sock = net.createConnection({ host: '127.0.0.1', port: srv.port });
    let text = '';
    sock.on('data', (d) => { text += d; });
    sock.on('error', () => {});
    sock.on('close', () => resolve(text));
    sock.write(`${head}\r\nHost: 127.0.0.1\r\n\r\n`);
  });
}

test('issue 23 transport: an upload without an application id that cannot be a JSON file is refused by its head', async () => {
  // A raw upload names its application in a header; the SDK's JSON one is at most 32 MiB. Anything
  // else is refused before its body would be streamed to disk (here the body never comes: without
  // the early answer the server would wait for it and close unanswered).
  const dir = makeDataDir();
  createApp(dir);
  const srv = await startServer(dir, { prefix: 'parse', extraArgs: ['--request-timeout', '3'] });
  const big = await headOnly(srv, 'POST /parse/files/big.bin HTTP/1.1\r\nContent-Type: application/octet-stream\r\nContent-Length: 50000000');
  assert.match(big, /^HTTP\/1\.1 403/);
  assert.match(big, /"error":"unauthorized"/);
  const chunked = await headOnly(srv, 'POST /parse/files/big.bin HTTP/1.1\r\nTransfer-Encoding: chunked');
  assert.match(chunked, /^HTTP\/1\.1 403/);
});

test('issue 23 profile: the spec gates by default, each its own switch, the Parse profile opens them', async () => {
  const dir = makeDataDir();
  const gated = createApp(dir);
  assert.deepEqual(gated.gates, { captcha: 'on', signup: 'key', passwordPolicy: 'on', newClasses: 'closed', dottedKeys: 'off', anonymousUsers: 'off', userFields: 'closed', selfUpdate: 'off', dropSystemClasses: 'off', installations: 'off', parseNames: 'off' });
  const srv = await startServer(dir);
  const A = appHeaders(gated);
  const M = masterHeaders(gated);
  await request(srv, 'POST', '/core/schemas/Open', { headers: M, body: { classLevelPermissions: { create: { '*': true }, find: { '*': true }, update: { '*': true }, addField: { '*': true } } } });
  const anonymous = await request(srv, 'POST', '/core/classes/Open', { headers: A, body: { n: 1 } });
  assert.deepEqual(anonymous.body, { code: 119, error: 'This action is not allowed without a valid CAPTCHA' });
  const signup = await request(srv, 'POST', '/core/users', { headers: A, body: { username: 'ann', password: 'Passw0rd1' } });
  assert.deepEqual(signup.body, { code: 119, error: 'Permission denied for action create on class _User.' });
  const weak = await request(srv, 'POST', '/core/users', { headers: M, body: { username: 'ann', password: 'weak' } });
  assert.equal(weak.body.code, 142);

  // One switch: anonymous writes go to the permissions; sign-up still needs a key.
  const set = cliJson(['app', 'set', '--data', dir, '--app', gated.appId, '--captcha', 'off']);
  assert.deepEqual(set.gates, { captcha: 'off', signup: 'key', passwordPolicy: 'on', newClasses: 'closed', dottedKeys: 'off', anonymousUsers: 'off', userFields: 'closed', selfUpdate: 'off', dropSystemClasses: 'off', installations: 'off', parseNames: 'off' });
  const opened = await pollUntil(async () => ({ done: (await request(srv, 'POST', '/core/classes/Open', { headers: A, body: { n: 1 } })).status === 201 }), { timeoutMs: 30_000, intervalMs: 50 });
  assert.ok(opened.ok, 'an anonymous create on an open class once the captcha gate is off');
  const closed = await request(srv, 'POST', '/core/classes/Closed', { headers: A, body: { n: 1 } });
  assert.equal(closed.body.code, 119, 'new classes stay closed');
  assert.match(closed.body.error, /Permission denied for action create on class Closed/);
  const stillKey = await request(srv, 'POST', '/core/users', { headers: A, body: { username: 'ann', password: 'Passw0rd1' } });
  assert.equal(stillKey.body.code, 119);

  // The Parse profile: Parse Server's defaults.
  const parse = cliJson(['app', 'set', '--data', dir, '--app', gated.appId, '--profile', 'parse']);
  assert.deepEqual(parse.gates, { captcha: 'off', signup: 'open', passwordPolicy: 'off', newClasses: 'open', dottedKeys: 'on', anonymousUsers: 'on', userFields: 'open', selfUpdate: 'on', dropSystemClasses: 'on', installations: 'on', parseNames: 'on' });
  const user = await pollUntil(async () => {
    const r = await request(srv, 'POST', '/core/users', { headers: A, body: { username: 'bob', password: 'x' } });
    return { done: r.status === 201, body: r.body };
  }, { timeoutMs: 30_000, intervalMs: 50 });
  assert.ok(user.ok, `open sign-up with any password: ${JSON.stringify(user.last)}`);
  const token = user.last.body.sessionToken;
  const S = { ...A, 'X-Core-Session-Token': token };
  const made = await request(srv, 'POST', '/core/classes/ClientMade', { headers: S, body: { note: { visits: 1, city: 'Haifa' } } });
  assert.equal(made.status, 201, made.text);
  const schema = await request(srv, 'GET', '/core/schemas/ClientMade', { headers: M });
  assert.deepEqual(schema.body.classLevelPermissions.find, { '*': true }, 'a class a client makes is open, as in Parse');
  const anyone = await request(srv, 'GET', '/core/classes/ClientMade', { headers: A });
  assert.equal(anyone.body.results.length, 1);

  // Dotted keys reach inside the Object field: set, increment, unset.
  const id = made.body.objectId;
  const dotted = await request(srv, 'PUT', `/core/classes/ClientMade/${id}`, {
    headers: S, body: { 'note.city': 'Acre', 'note.visits': { __op: 'Increment', amount: 2 }, 'note.extra.deep': true },
  });
  assert.equal(dotted.status, 200, dotted.text);
  const unset = await request(srv, 'PUT', `/core/classes/ClientMade/${id}`, { headers: S, body: { 'note.extra': { __op: 'Delete' } } });
  assert.equal(unset.status, 200, unset.text);
  const read = await request(srv, 'GET', `/core/classes/ClientMade/${id}`, { headers: M });
  assert.deepEqual(read.body.note, { visits: 3, city: 'Acre' });
  const notObject = await request(srv, 'PUT', `/core/classes/ClientMade/${id}`, { headers: M, body: { 'createdBy.x': 1 } });
  assert.equal(notObject.body.code, 111, notObject.text);

  // And back: the spec's gates again.
  cliJson(['app', 'set', '--data', dir, '--app', gated.appId, '--profile', 'crmd']);
  const refused = await pollUntil(async () => ({ done: (await request(srv, 'PUT', `/core/classes/ClientMade/${id}`, { headers: M, body: { 'note.city': 'x' } })).body.code === 105 }), { timeoutMs: 30_000, intervalMs: 50 });
  assert.ok(refused.ok, 'a dotted key is an invalid field name with the spec gates');
});

test('issue 23 profile: app create --profile parse, and the CLI refuses unknown values', async () => {
  const dir = makeDataDir();
  const created = cliJson(['app', 'create', '--data', dir, '--no-product-base', '--profile', 'parse', '--password-policy', 'on']);
  assert.deepEqual(created.gates, { captcha: 'off', signup: 'open', passwordPolicy: 'on', newClasses: 'open', dottedKeys: 'on', anonymousUsers: 'on', userFields: 'open', selfUpdate: 'on', dropSystemClasses: 'on', installations: 'on', parseNames: 'on' });
  assert.throws(() => cli(['app', 'set', '--data', dir, '--app', created.appId, '--signup', 'maybe']), /--signup takes key or open/);
  assert.throws(() => cli(['app', 'set', '--data', dir, '--app', created.appId, '--profile', 'mongo']), /--profile takes crmd or parse/);
  const srv = await startServer(dir);
  const weak = await request(srv, 'POST', '/core/users', { headers: appHeaders(created), body: { username: 'c', password: 'weak' } });
  assert.equal(weak.body.code, 142, 'the one gate left on holds');
});

test('issue 23 routes: /parse has config, aggregate, purge, sessions/me and excludeKeys; /core keeps the spec', async () => {
  const M = { 'X-Parse-Application-Id': parseApp.appId, 'X-Parse-Master-Key': parseApp.masterKey };
  for (const [n, s] of [[1, 'x'], [2, 'y'], [3, 'x']])
    assert.equal((await request(parseServer, 'POST', '/parse/classes/Agg', { headers: M, body: { n, s } })).status, 201);
  const put = await request(parseServer, 'PUT', '/parse/config', { headers: M, body: { params: { color: 'red', limit: 5 } } });
  assert.deepEqual(put.body, { result: true });
  const config = await request(parseServer, 'GET', '/parse/config', { headers: M });
  assert.deepEqual(config.body, { params: { color: 'red', limit: 5 } });
  const rows = await request(parseServer, 'GET', '/parse/classes/Config?where=' + encodeURIComponent(JSON.stringify({ Name: 'color' })), { headers: M });
  assert.deepEqual(rows.body.results[0].Value, { color: 'red' }, 'a param is a Config row of the spec shape (§4.9)');
  await request(parseServer, 'PUT', '/parse/config', { headers: M, body: { params: { limit: { __op: 'Delete' } } } });
  assert.deepEqual((await request(parseServer, 'GET', '/parse/config', { headers: M })).body, { params: { color: 'red' } });
  // masterKeyOnly: the keys read the param, a session does not (neither here nor as a Config row).
  await request(parseServer, 'PUT', '/parse/config', { headers: M, body: { params: { secret: 's3' }, masterKeyOnly: { secret: true } } });
  assert.equal((await request(parseServer, 'GET', '/parse/config', { headers: M })).body.params.secret, 's3');
  await request(parseServer, 'POST', '/parse/users', { headers: M, body: { username: 'reader', password: 'Passw0rd1' } });
  const reader = await request(parseServer, 'POST', '/parse/login', { headers: { 'X-Parse-Application-Id': parseApp.appId }, body: { username: 'reader', password: 'Passw0rd1' } });
  const R = { 'X-Parse-Application-Id': parseApp.appId, 'X-Parse-Session-Token': reader.body.sessionToken };
  assert.deepEqual((await request(parseServer, 'GET', '/parse/config', { headers: R })).body, { params: { color: 'red' } });
  const rowsSeen = await request(parseServer, 'GET', '/parse/classes/Config', { headers: R });
  assert.deepEqual(rowsSeen.body.results.map((r) => r.Name), ['color']);
  await request(parseServer, 'PUT', '/parse/config', { headers: M, body: { params: { secret: 's3' }, masterKeyOnly: { secret: false } } });
  assert.equal((await request(parseServer, 'GET', '/parse/config', { headers: R })).body.params.secret, 's3');
  await request(parseServer, 'PUT', '/parse/config', { headers: M, body: { params: { secret: { __op: 'Delete' } } } });
  const badFlags = await request(parseServer, 'PUT', '/parse/config', { headers: M, body: { params: { a: 1 }, masterKeyOnly: { a: 'yes' } } });
  assert.equal(badFlags.status, 400, badFlags.text);
  const anonymousPut = await request(parseServer, 'PUT', '/parse/config', { headers: { 'X-Parse-Application-Id': parseApp.appId }, body: { params: { color: 'blue' } } });
  assert.equal(anonymousPut.status, 403);

  const distinct = await request(parseServer, 'GET', `/parse/aggregate/Agg?distinct=s&where=${encodeURIComponent(JSON.stringify({ n: { $gte: 2 } }))}`, { headers: M });
  assert.equal(distinct.status, 200, distinct.text);
  assert.deepEqual(distinct.body.results.sort(), ['x', 'y']);
  const grouped = await request(parseServer, 'GET', `/parse/aggregate/Agg?pipeline=${encodeURIComponent(JSON.stringify([{ $group: { _id: '$s', total: { $sum: '$n' } } }]))}`, { headers: M });
  assert.deepEqual(grouped.body.results.sort((a, b) => a.objectId.localeCompare(b.objectId)), [{ objectId: 'x', total: 4 }, { objectId: 'y', total: 2 }]);
  const excluded = await request(parseServer, 'GET', '/parse/classes/Agg?excludeKeys=s&order=n', { headers: M });
  assert.deepEqual(excluded.body.results.map((r) => [r.n, r.s]), [[1, undefined], [2, undefined], [3, undefined]]);

  // §4.6 and §4.2: /core has no `aggregate/` and refuses `excludeKeys`.
  const core = masterHeaders(app);
  assert.equal((await request(server, 'GET', '/core/aggregate/Items', { headers: core })).status, 404);
  assert.deepEqual((await request(server, 'GET', '/core/classes/Items?excludeKeys=s', { headers: core })).body,
    { code: 102, error: 'Invalid parameter for query: excludeKeys' });
  assert.equal((await request(server, 'GET', '/core/config', { headers: core })).status, 404);

  // Parse.Session.current(): the caller's own session, with the token it sent.
  await request(parseServer, 'POST', '/parse/users', { headers: M, body: { username: 'sam', password: 'Passw0rd1' } });
  const login = await request(parseServer, 'POST', '/parse/login', { headers: { 'X-Parse-Application-Id': parseApp.appId }, body: { username: 'sam', password: 'Passw0rd1' } });
  const me = await request(parseServer, 'GET', '/parse/sessions/me', { headers: { 'X-Parse-Application-Id': parseApp.appId, 'X-Parse-Session-Token': login.body.sessionToken } });
  assert.equal(me.status, 200, me.text);
  assert.equal(me.body.sessionToken, login.body.sessionToken);
  assert.equal(me.body.user.objectId, login.body.objectId);
  const noSession = await request(parseServer, 'GET', '/parse/sessions/me', { headers: M });
  assert.deepEqual(noSession.body, { code: 209, error: 'invalid session token' });
  assert.equal((await request(server, 'GET', '/core/sessions/me', { headers: core })).status, 404);

  const purge = await request(parseServer, 'DELETE', '/parse/purge/Agg', { headers: M });
  assert.equal(purge.status, 200, purge.text);
  const left = await request(parseServer, 'GET', '/parse/classes/Agg?count=1&limit=0', { headers: M });
  assert.equal(left.body.count, 0);
  const anonymousPurge = await request(parseServer, 'DELETE', '/parse/purge/Config', { headers: { 'X-Parse-Application-Id': parseApp.appId } });
  assert.equal(anonymousPurge.status, 403);
});

test('§4.7 login answers every listed field, null when unset; _Session keeps the installation and shows Parse\'s schema', async () => {
  await request(server, 'POST', '/core/users', { headers: masterHeaders(app), body: { username: 'lena', password: 'Passw0rd1' } });
  const login = await request(server, 'POST', '/core/login', {
    headers: { ...appHeaders(app), 'X-Core-Installation-Id': 'device-42' }, body: { username: 'lena', password: 'Passw0rd1' },
  });
  assert.equal(login.status, 200, login.text);
  for (const field of ['objectId', 'username', 'email', 'name', 'createdAt', 'updatedAt', 'ACL', 'createdBy', 'updatedBy',
    'last_success_login', '_failed_login_count', 'sessionToken'])
    assert.ok(field in login.body, `login answers ${field}: ${login.text}`);
  assert.equal(login.body.createdBy, null);
  assert.equal(login.body.email, null);

  const sessions = await request(server, 'GET', `/core/classes/_Session?where=${encodeURIComponent(JSON.stringify({ installationId: 'device-42' }))}`, { headers: masterHeaders(app) });
  assert.equal(sessions.body.results.length, 1, sessions.text);
  assert.equal(sessions.body.results[0].user.objectId, login.body.objectId);
  assert.ok(!JSON.stringify(sessions.body).includes(login.body.sessionToken.slice(2)), 'no read returns the token');

  const schema = await request(server, 'GET', '/core/schemas/_Session', { headers: masterHeaders(app) });
  const { fields } = schema.body;
  assert.deepEqual(fields.sessionToken, { type: 'String' });
  assert.deepEqual(fields.expiresAt, { type: 'Date' });
  assert.deepEqual(fields.user, { type: 'Pointer', targetClass: '_User' });
  assert.deepEqual(fields.createdWith, { type: 'Object' });
  assert.deepEqual(fields.installationId, { type: 'String' });
  assert.ok(!Object.keys(fields).some((f) => f.startsWith('_')), `no stored column of crmd's own: ${Object.keys(fields)}`);
});
