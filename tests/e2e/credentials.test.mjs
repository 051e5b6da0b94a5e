// Application id and credential headers (spec §5.1, §5.2, §7 code 119; SECURITY.md tenant isolation
// and secrets) against the real crmd binary, with keys issued and revoked by the crmd CLI while the
// server runs.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import {
  makeDataDir, createApp, createKey, revokeKey, listKeys, startServer, stopAll, request,
  appHeaders, masterHeaders, apiKeyHeaders, createRecord, listAll, pollUntil,
} from './lib/harness.mjs';

let dataDir;
let server;
let appA;
let appB;
const secrets = []; // every key value issued in this file: none may show up in a log line

before(async () => {
  dataDir = makeDataDir();
  appA = createApp(dataDir, { id: 'tenantA', name: 'Tenant A' });
  appB = createApp(dataDir, { id: 'tenantB', name: 'Tenant B' });
  secrets.push(appA.masterKey, appA.apiKey, appB.masterKey, appB.apiKey);
  server = await startServer(dataDir);
});
after(stopAll);

const UNAUTHORIZED = { error: 'unauthorized' };
const NOT_FOUND = { code: 101, error: 'Object not found.' };
const denied = (op, cls) => ({ code: 119, error: `Permission denied for action ${op} on class ${cls}.` });
const CAPTCHA = { code: 119, error: 'This action is not allowed without a valid CAPTCHA' };

// One request of each operation against `cls`/`id`, with `headers`. Returns [{op, res}].
async function everyOperation(cls, id, headers) {
  const out = [];
  out.push({ op: 'find', res: await request(server, 'GET', `/core/classes/${cls}`, { headers }) });
  out.push({ op: 'get', res: await request(server, 'GET', `/core/classes/${cls}/${id}`, { headers }) });
  out.push({ op: 'create', res: await request(server, 'POST', `/core/classes/${cls}`, { headers, body: { Name: 'intruder' } }) });
  out.push({ op: 'update', res: await request(server, 'PUT', `/core/classes/${cls}/${id}`, { headers, body: { Name: 'changed' } }) });
  out.push({ op: 'delete', res: await request(server, 'DELETE', `/core/classes/${cls}/${id}`, { headers }) });
  return out;
}

// Asserts the class holds exactly the one record `id` with Name `name` (nothing created, changed, deleted).
async function assertUntouched(app, cls, id, name) {
  const all = await listAll(server, app, cls);
  assert.deepEqual(all.map((r) => r.objectId), [id], `${cls} still holds exactly its record`);
  assert.equal(all[0].Name, name);
}

test('§5.1 a missing application id answers 403 {"error":"unauthorized"}', async () => {
  const id = await createRecord(server, appA, 'NoAppId', { Name: 'orig' });
  const withoutId = { 'X-Core-Master-Key': appA.masterKey };
  for (const headers of [withoutId, {}, { 'X-Core-API-Key': appA.apiKey }]) {
    for (const { op, res } of await everyOperation('NoAppId', id, headers)) {
      assert.equal(res.status, 403, `${op}: ${res.text}`);
      assert.deepEqual(res.body, UNAUTHORIZED, op);
    }
  }
  const empty = await request(server, 'GET', '/core/classes/NoAppId', { headers: { 'X-Core-Application-Id': '', ...withoutId } });
  assert.equal(empty.status, 403, empty.text);
  assert.deepEqual(empty.body, UNAUTHORIZED);
  await assertUntouched(appA, 'NoAppId', id, 'orig');
});

test('§5.1 an unknown application id answers 403 {"error":"unauthorized"}, before any credential check', async () => {
  const id = await createRecord(server, appA, 'UnknownApp', { Name: 'orig' });
  const cases = [
    { 'X-Core-Application-Id': 'noSuchApp', 'X-Core-Master-Key': appA.masterKey },
    { 'X-Core-Application-Id': 'noSuchApp', 'X-Core-API-Key': appA.apiKey },
    { 'X-Core-Application-Id': 'noSuchApp', 'X-Core-Master-Key': 'wrong' },
    { 'X-Core-Application-Id': 'noSuchApp' },
    { 'X-Core-Application-Id': 'TENANTA', 'X-Core-Master-Key': appA.masterKey }, // ids are exact
  ];
  for (const headers of cases) {
    for (const { op, res } of await everyOperation('UnknownApp', id, headers)) {
      assert.equal(res.status, 403, `${op} ${JSON.stringify(headers)}: ${res.text}`);
      assert.deepEqual(res.body, UNAUTHORIZED, op);
    }
  }
  await assertUntouched(appA, 'UnknownApp', id, 'orig');
});

test('§5.2 the master key and the API key both read and write', async () => {
  for (const [label, headers] of [['master', masterHeaders(appA)], ['api key', apiKeyHeaders(appA)]]) {
    const c = await request(server, 'POST', '/core/classes/BothKeys', { headers, body: { Name: label } });
    assert.equal(c.status, 201, `${label}: ${c.text}`);
    const id = c.body.objectId;
    const g = await request(server, 'GET', `/core/classes/BothKeys/${id}`, { headers });
    assert.equal(g.status, 200, `${label}: ${g.text}`);
    assert.equal(g.body.Name, label);
    const u = await request(server, 'PUT', `/core/classes/BothKeys/${id}`, { headers, body: { Name: `${label}!` } });
    assert.equal(u.status, 200, `${label}: ${u.text}`);
    const l = await request(server, 'GET', '/core/classes/BothKeys', { headers });
    assert.equal(l.status, 200, `${label}: ${l.text}`);
    assert.ok(l.body.results.some((r) => r.objectId === id && r.Name === `${label}!`));
    const d = await request(server, 'DELETE', `/core/classes/BothKeys/${id}`, { headers });
    assert.equal(d.status, 200, `${label}: ${d.text}`);
    assert.deepEqual(d.body, {});
  }
});

test('§5.2 a master key value sent in X-Core-API-Key answers 400 119 Permission denied for action <op>', async () => {
  const id = await createRecord(server, appA, 'SwappedKeys', { Name: 'orig' });
  const headers = { 'X-Core-Application-Id': appA.appId, 'X-Core-API-Key': appA.masterKey };
  for (const { op, res } of await everyOperation('SwappedKeys', id, headers)) {
    assert.equal(res.status, 400, `${op}: ${res.text}`);
    assert.deepEqual(res.body, denied(op, 'SwappedKeys'), op);
  }
  await assertUntouched(appA, 'SwappedKeys', id, 'orig');
});

test('§5.2 an API key value sent in X-Core-Master-Key answers 400 119', async () => {
  const id = await createRecord(server, appA, 'SwappedKeys2', { Name: 'orig' });
  const headers = { 'X-Core-Application-Id': appA.appId, 'X-Core-Master-Key': appA.apiKey };
  for (const { op, res } of await everyOperation('SwappedKeys2', id, headers)) {
    assert.equal(res.status, 400, `${op}: ${res.text}`);
    assert.deepEqual(res.body, denied(op, 'SwappedKeys2'), op);
  }
  await assertUntouched(appA, 'SwappedKeys2', id, 'orig');
});

test('§5.2 a wrong key answers the same 119 as a missing permission', async () => {
  const id = await createRecord(server, appA, 'WrongKeys', { Name: 'orig' });
  const almost = appA.masterKey.slice(0, -1) + (appA.masterKey.endsWith('x') ? 'y' : 'x');
  const cases = [
    { 'X-Core-Application-Id': appA.appId, 'X-Core-Master-Key': 'definitely-not-the-key' },
    { 'X-Core-Application-Id': appA.appId, 'X-Core-Master-Key': almost },
    { 'X-Core-Application-Id': appA.appId, 'X-Core-Master-Key': appA.masterKey + 'x' },
    { 'X-Core-Application-Id': appA.appId, 'X-Core-API-Key': 'definitely-not-the-key' },
  ];
  for (const headers of cases) {
    for (const { op, res } of await everyOperation('WrongKeys', id, headers)) {
      assert.equal(res.status, 400, `${op} ${JSON.stringify(headers)}: ${res.text}`);
      assert.deepEqual(res.body, denied(op, 'WrongKeys'), `${op} ${JSON.stringify(headers)}`);
    }
  }
  await assertUntouched(appA, 'WrongKeys', id, 'orig');
});

test('§4.1 anonymous POST, PUT and DELETE (application id only) answer 400 119 CAPTCHA; the class is untouched', async () => {
  const id = await createRecord(server, appA, 'AnonWrites', { Name: 'orig' });
  const headers = appHeaders(appA);
  const c = await request(server, 'POST', '/core/classes/AnonWrites', { headers, body: { Name: 'spam' } });
  assert.equal(c.status, 400, c.text);
  assert.deepEqual(c.body, CAPTCHA);
  const u = await request(server, 'PUT', `/core/classes/AnonWrites/${id}`, { headers, body: { Name: 'spam' } });
  assert.equal(u.status, 400, u.text);
  assert.deepEqual(u.body, CAPTCHA);
  const d = await request(server, 'DELETE', `/core/classes/AnonWrites/${id}`, { headers });
  assert.equal(d.status, 400, d.text);
  assert.deepEqual(d.body, CAPTCHA);
  // A class that does not exist yet is not created by an anonymous write either.
  const n = await request(server, 'POST', '/core/classes/AnonNewClass', { headers, body: { Name: 'spam' } });
  assert.equal(n.status, 400, n.text);
  assert.deepEqual(n.body, CAPTCHA);
  await assertUntouched(appA, 'AnonWrites', id, 'orig');
  assert.deepEqual(await listAll(server, appA, 'AnonNewClass'), []);
});

test('§5.2 a key created with the CLI works on the running server (within 1 s)', async () => {
  const { apiKey } = createKey(dataDir, appA.appId, 'integration-1');
  assert.equal(typeof apiKey, 'string');
  assert.ok(apiKey.length >= 20, 'an API key is a long random secret');
  secrets.push(apiKey);
  const issuedAt = Date.now();
  const p = await pollUntil(async () => {
    const r = await request(server, 'GET', '/core/classes/NewKeyProbe', { headers: apiKeyHeaders(appA, apiKey) });
    return { done: r.status === 200, r };
  }, { timeoutMs: 1000, intervalMs: 20 });
  assert.ok(p.ok, `new key still refused ${Date.now() - issuedAt} ms after the CLI returned: ${p.last.r.text}`);
  assert.deepEqual(p.last.r.body, { results: [] });
  const c = await request(server, 'POST', '/core/classes/NewKeyProbe', { headers: apiKeyHeaders(appA, apiKey), body: { N: 1 } });
  assert.equal(c.status, 201, c.text);
});

test('§5.2 a key revoked with the CLI is refused (119) by the running server within 1 s; other keys keep working', async () => {
  const { apiKey } = createKey(dataDir, appA.appId, 'to-revoke');
  secrets.push(apiKey);
  const headers = apiKeyHeaders(appA, apiKey);
  const ready = await pollUntil(async () => {
    const r = await request(server, 'GET', '/core/classes/RevokeProbe', { headers });
    return { done: r.status === 200, r };
  }, { timeoutMs: 1000, intervalMs: 20 });
  assert.ok(ready.ok, `key never accepted: ${ready.last.r.text}`);

  revokeKey(dataDir, appA.appId, 'to-revoke');
  const revokedAt = Date.now();
  const p = await pollUntil(async () => {
    const r = await request(server, 'GET', '/core/classes/RevokeProbe', { headers });
    return { done: r.status !== 200, r };
  }, { timeoutMs: 1000, intervalMs: 20 });
  assert.ok(p.ok, `revoked key still accepted ${Date.now() - revokedAt} ms after the CLI returned`);
  assert.equal(p.last.r.status, 400, p.last.r.text);
  assert.deepEqual(p.last.r.body, denied('find', 'RevokeProbe'));

  for (const { op, res } of await everyOperation('RevokeProbe', 'abcdefghij', headers)) {
    assert.equal(res.status, 400, `${op}: ${res.text}`);
    assert.deepEqual(res.body, denied(op, 'RevokeProbe'), op);
  }
  assert.deepEqual(await listAll(server, appA, 'RevokeProbe'), []);
  // The application's other keys are unaffected.
  const other = await request(server, 'GET', '/core/classes/RevokeProbe', { headers: apiKeyHeaders(appA) });
  assert.equal(other.status, 200, other.text);
});

test('§5.2 CLI: app create prints exactly {appId, masterKey, apiKey, apiKeyName, gates}; key list names keys, never secrets', async () => {
  const dir = makeDataDir();
  const app = createApp(dir);
  secrets.push(app.masterKey, app.apiKey);
  assert.deepEqual(Object.keys(app).sort(), ['apiKey', 'apiKeyName', 'appId', 'gates', 'masterKey']);
  for (const k of ['appId', 'masterKey', 'apiKey', 'apiKeyName']) {
    assert.equal(typeof app[k], 'string', k);
    assert.ok(app[k].length > 0, k);
  }
  assert.notEqual(app.masterKey, app.apiKey);
  const other = createApp(dir);
  secrets.push(other.masterKey, other.apiKey);
  assert.notEqual(other.appId, app.appId);
  assert.notEqual(other.masterKey, app.masterKey);

  const named = createApp(dir, { id: 'namedApp', name: 'Named' });
  secrets.push(named.masterKey, named.apiKey);
  assert.equal(named.appId, 'namedApp');

  const k = createKey(dir, app.appId, 'reporting');
  secrets.push(k.apiKey);
  assert.deepEqual(Object.keys(k), ['apiKey']);
  const listing = JSON.stringify(listKeys(dir, app.appId));
  assert.ok(listing.includes('reporting'), listing);
  assert.ok(listing.includes(app.apiKeyName), listing);
  for (const secret of [app.masterKey, app.apiKey, k.apiKey]) {
    assert.equal(listing.includes(secret), false, 'key list must not print a key');
    const sha = crypto.createHash('sha256').update(secret).digest('hex');
    assert.equal(listing.includes(sha), false, 'key list must not print a key hash');
  }
});

test('§5.2 an application created with the CLI while the server runs is served within 1 s', async () => {
  const late = createApp(dataDir, { id: 'lateApp' });
  secrets.push(late.masterKey, late.apiKey);
  const p = await pollUntil(async () => {
    const r = await request(server, 'GET', '/core/classes/Anything', { headers: masterHeaders(late) });
    return { done: r.status === 200, r };
  }, { timeoutMs: 1000, intervalMs: 20 });
  assert.ok(p.ok, `new application still refused: ${p.last.r.status} ${p.last.r.text}`);
  assert.deepEqual(p.last.r.body, { results: [] });
});

test('§5.2 SECURITY tenant isolation: two applications never see each other\'s records', async () => {
  const ra = await createRecord(server, appA, 'Isolated', { Name: 'A secret' });
  const rb = await createRecord(server, appB, 'Isolated', { Name: 'B secret' });
  // The same client-chosen objectId in both applications names two different records.
  const sa = await request(server, 'POST', '/core/classes/Isolated', { headers: masterHeaders(appA), body: { objectId: 'sharedId1', Name: 'A shared' } });
  assert.equal(sa.status, 201, sa.text);
  const sb = await request(server, 'POST', '/core/classes/Isolated', { headers: masterHeaders(appB), body: { objectId: 'sharedId1', Name: 'B shared' } });
  assert.equal(sb.status, 201, sb.text);

  for (const [me, mine, theirs, label] of [[appA, ra, rb, 'A'], [appB, rb, ra, 'B']]) {
    for (const headers of [masterHeaders(me), apiKeyHeaders(me)]) {
      const l = await request(server, 'GET', '/core/classes/Isolated', { headers });
      assert.equal(l.status, 200, l.text);
      assert.deepEqual(l.body.results.map((r) => r.objectId).sort(), [mine, 'sharedId1'].sort(), label);
      assert.deepEqual(l.body.results.map((r) => r.Name).sort(), [`${label} secret`, `${label} shared`]);
      const g = await request(server, 'GET', `/core/classes/Isolated/${theirs}`, { headers });
      assert.equal(g.status, 404, g.text);
      assert.deepEqual(g.body, NOT_FOUND);
      const u = await request(server, 'PUT', `/core/classes/Isolated/${theirs}`, { headers, body: { Name: 'overwritten' } });
      assert.equal(u.status, 404, u.text);
      assert.deepEqual(u.body, NOT_FOUND);
      const d = await request(server, 'DELETE', `/core/classes/Isolated/${theirs}`, { headers });
      assert.equal(d.status, 404, d.text);
      assert.deepEqual(d.body, NOT_FOUND);
      const s = await request(server, 'GET', '/core/classes/Isolated/sharedId1', { headers });
      assert.equal(s.body.Name, `${label} shared`);
    }
  }
  assert.equal((await request(server, 'GET', `/core/classes/Isolated/${ra}`, { headers: masterHeaders(appA) })).body.Name, 'A secret');
  assert.equal((await request(server, 'GET', `/core/classes/Isolated/${rb}`, { headers: masterHeaders(appB) })).body.Name, 'B secret');
});

test('§5.2 SECURITY tenant isolation: an application never accepts another application\'s master or API key', async () => {
  const ra = await createRecord(server, appA, 'CrossKeys', { Name: 'orig' });
  const rb = await createRecord(server, appB, 'CrossKeys', { Name: 'orig' });
  const crossings = [
    [appA, ra, { 'X-Core-Master-Key': appB.masterKey }],
    [appA, ra, { 'X-Core-API-Key': appB.apiKey }],
    [appA, ra, { 'X-Core-API-Key': appB.masterKey }],
    [appA, ra, { 'X-Core-Master-Key': appB.apiKey }],
    [appB, rb, { 'X-Core-Master-Key': appA.masterKey }],
    [appB, rb, { 'X-Core-API-Key': appA.apiKey }],
    [appB, rb, { 'X-Core-API-Key': appA.masterKey }],
    [appB, rb, { 'X-Core-Master-Key': appA.apiKey }],
  ];
  for (const [app, id, keyHeader] of crossings) {
    const headers = { 'X-Core-Application-Id': app.appId, ...keyHeader };
    for (const { op, res } of await everyOperation('CrossKeys', id, headers)) {
      assert.equal(res.status, 400, `${app.appId} ${op} ${Object.keys(keyHeader)[0]}: ${res.text}`);
      assert.deepEqual(res.body, denied(op, 'CrossKeys'), `${app.appId} ${op}`);
    }
  }
  await assertUntouched(appA, 'CrossKeys', ra, 'orig');
  await assertUntouched(appB, 'CrossKeys', rb, 'orig');
});

test('§5 (DESIGN --prefix) --prefix parse answers X-Parse-* headers on /parse; /core and X-Core-* are not served', async () => {
  const dir = makeDataDir();
  const app = createApp(dir);
  secrets.push(app.masterKey, app.apiKey);
  const other = await startServer(dir, { prefix: 'parse' });
  try {
    const P = { 'X-Parse-Application-Id': app.appId, 'X-Parse-Master-Key': app.masterKey };
    const c = await request(other, 'POST', '/parse/classes/Prefixed', { headers: P, body: { Name: 'p' } });
    assert.equal(c.status, 201, c.text);
    const g = await request(other, 'GET', `/parse/classes/Prefixed/${c.body.objectId}`, { headers: P });
    assert.equal(g.status, 200, g.text);
    assert.equal(g.body.Name, 'p');
    const api = await request(other, 'GET', '/parse/classes/Prefixed', { headers: { 'X-Parse-Application-Id': app.appId, 'X-Parse-REST-API-Key': 'x', 'X-Parse-API-Key': app.apiKey } });
    assert.equal(api.status, 200, api.text);
    const coreHeaders = await request(other, 'GET', '/parse/classes/Prefixed', { headers: masterHeaders(app) });
    assert.equal(coreHeaders.status, 403, coreHeaders.text);
    assert.deepEqual(coreHeaders.body, UNAUTHORIZED);
    const corePath = await request(other, 'GET', '/core/classes/Prefixed', { headers: P });
    assert.equal(corePath.status, 404, corePath.text);
    assert.deepEqual(corePath.body, { error: 'Cannot GET /core/classes/Prefixed' });
  } finally {
    assert.deepEqual(await other.stop(), { code: 0, signal: null });
  }
});

// Runs last: stops the server and reads everything it logged.
test('SECURITY secrets: logs are JSON lines, one access line per request, and no key ever appears; SIGTERM exits 0', async () => {
  const served = server.responseCount;
  const { code, signal } = await server.stop();
  assert.equal(signal, null);
  assert.equal(code, 0);
  const text = server.stderr();
  const lines = server.logLines();
  for (const l of lines) {
    assert.equal(l.__unparsed, undefined, `not a JSON log line: ${l.__unparsed}`);
    assert.equal(typeof l.ts, 'string');
    assert.equal(typeof l.level, 'string');
    assert.equal(typeof l.msg, 'string');
  }
  assert.equal(lines.filter((l) => l.msg === 'request').length, served, 'one access-log line per request');
  for (const secret of secrets) {
    assert.equal(text.includes(secret), false, 'a key value appears in the log');
    const sha = crypto.createHash('sha256').update(secret).digest('hex');
    assert.equal(text.includes(sha), false, 'a key hash appears in the log');
  }
});
