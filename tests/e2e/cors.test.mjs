// CORS (spec §1 and COMPATIBILITY.md §1): preflights echo the Origin, never `*`, allow exactly
// GET,PUT,POST,DELETE,OPTIONS and every X-Core-* header asked for; ordinary responses echo the Origin.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, stopAll, request, masterHeaders, createRecord } from './lib/harness.mjs';

let server;
let app;

before(async () => {
  ({ server, app } = await setup());
});
after(stopAll);

const ORIGIN = 'https://example.test';
const METHODS = 'GET,PUT,POST,DELETE,OPTIONS';

const headerList = (v) => (v ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);

function assertVaryOrigin(res) {
  assert.ok(headerList(res.headers.vary).includes('origin'), `Vary must name Origin: ${res.headers.vary}`);
}

async function preflight(path, origin, requestHeaders, method = 'POST') {
  const headers = { Origin: origin, 'Access-Control-Request-Method': method };
  if (requestHeaders !== undefined) headers['Access-Control-Request-Headers'] = requestHeaders;
  return request(server, 'OPTIONS', path, { headers });
}

test('§1 OPTIONS preflight: 200, Allow-Origin echoes the Origin, Allow-Methods exact, every requested header allowed', async () => {
  const asked = 'X-Core-Application-Id, X-Core-Session-Token, Content-Type';
  const r = await preflight('/core/classes/Accounts', ORIGIN, asked);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers['access-control-allow-origin'], ORIGIN);
  assert.equal(r.headers['access-control-allow-methods'], METHODS);
  const allowed = headerList(r.headers['access-control-allow-headers']);
  for (const h of headerList(asked)) assert.ok(allowed.includes(h), `${h} not in ${r.headers['access-control-allow-headers']}`);
  assertVaryOrigin(r);
});

test('§1 a preflight allows every X-Core-* header crmd reads and any X-Core-* header asked for', async () => {
  const asked = 'x-core-master-key,x-core-api-key,X-CORE-APPLICATION-ID,X-Core-Session-Token,X-Core-Client-Version,X-Core-Revocable-Session';
  const r = await preflight('/core/classes/Accounts/abcdefghij', ORIGIN, asked, 'PUT');
  assert.equal(r.status, 200, r.text);
  const allowed = headerList(r.headers['access-control-allow-headers']);
  for (const h of headerList(asked)) assert.ok(allowed.includes(h), `${h} not in ${r.headers['access-control-allow-headers']}`);
  // Even without Access-Control-Request-Headers the four credential headers are allowed.
  const bare = await preflight('/core/classes/Accounts', ORIGIN, undefined);
  assert.equal(bare.status, 200, bare.text);
  const bareAllowed = headerList(bare.headers['access-control-allow-headers']);
  for (const h of ['x-core-application-id', 'x-core-master-key', 'x-core-api-key', 'x-core-session-token']) {
    assert.ok(bareAllowed.includes(h), `${h} not in ${bare.headers['access-control-allow-headers']}`);
  }
});

test('§1 the Origin is echoed exactly, never *, on any path and without an application id', async () => {
  for (const origin of ['http://localhost:3000', 'https://crm.customer.example']) {
    for (const path of ['/core/classes/Accounts', '/core/classes/Accounts/abc', '/core/users', '/core/anything/else', '/health']) {
      const r = await preflight(path, origin, 'X-Core-Application-Id');
      assert.equal(r.status, 200, `${origin} ${path}: ${r.text}`);
      assert.equal(r.headers['access-control-allow-origin'], origin, `${origin} ${path}`);
      assert.notEqual(r.headers['access-control-allow-origin'], '*');
      assert.equal(r.headers['access-control-allow-methods'], METHODS);
    }
  }
});

test('§1 ordinary responses echo the Origin too (success, created and error answers)', async () => {
  const headers = { ...masterHeaders(app), Origin: ORIGIN };
  const c = await request(server, 'POST', '/core/classes/CorsRecords', { headers, body: { Name: 'x' } });
  assert.equal(c.status, 201, c.text);
  assert.equal(c.headers['access-control-allow-origin'], ORIGIN);
  assertVaryOrigin(c);

  const g = await request(server, 'GET', `/core/classes/CorsRecords/${c.body.objectId}`, { headers });
  assert.equal(g.status, 200, g.text);
  assert.equal(g.headers['access-control-allow-origin'], ORIGIN);
  assertVaryOrigin(g);

  const l = await request(server, 'GET', '/core/classes/CorsRecords', { headers });
  assert.equal(l.status, 200, l.text);
  assert.equal(l.headers['access-control-allow-origin'], ORIGIN);

  const nf = await request(server, 'GET', '/core/classes/CorsRecords/missing000', { headers });
  assert.equal(nf.status, 404, nf.text);
  assert.equal(nf.headers['access-control-allow-origin'], ORIGIN);

  const unauth = await request(server, 'GET', '/core/classes/CorsRecords', { headers: { Origin: ORIGIN } });
  assert.equal(unauth.status, 403, unauth.text);
  assert.equal(unauth.headers['access-control-allow-origin'], ORIGIN);

  const health = await request(server, 'GET', '/health', { headers: { Origin: 'http://other.example' } });
  assert.equal(health.status, 200);
  assert.equal(health.headers['access-control-allow-origin'], 'http://other.example');

  const id = await createRecord(server, app, 'CorsRecords', { Name: 'y' });
  const d = await request(server, 'DELETE', `/core/classes/CorsRecords/${id}`, { headers });
  assert.equal(d.status, 200, d.text);
  assert.equal(d.headers['access-control-allow-origin'], ORIGIN);
});

test('§1 a response to a request without Origin never carries Allow-Origin *', async () => {
  const r = await request(server, 'GET', '/core/classes/CorsRecords', { headers: masterHeaders(app) });
  assert.equal(r.status, 200, r.text);
  assert.notEqual(r.headers['access-control-allow-origin'], '*');
});
