// Issue 21 / spec §5.6: MCP user sign-in through crmd's OAuth 2.1 server, driven headless by the
// official MCP TypeScript SDK's own client flow (discovery, dynamic registration, PKCE S256, code,
// token, refresh), and the per-user MCP switches on top of the user's table permissions.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { setup, stopAll, createApp, pollUntil, request, masterHeaders, cliJson } from './lib/harness.mjs';
import { MemoryProvider, hiddenFields, postForm, REDIRECT, oauthDoors } from './lib/oauth.mjs';
import { launchBrowser } from './lib/browser.mjs';

let server;
let app;
let dataDir;
before(async () => {
  ({ server, app, dataDir } = await setup({}, { productBase: true }));
});
after(stopAll);

// Signs `username` in on the authorization page and consents (or not): the redirect's parameters.
async function signIn(provider, username, password, decision = 'allow') {
  const page = await fetch(provider.authorizationUrl, { redirect: 'manual' });
  assert.equal(page.status, 200, 'the sign-in form');
  const form = hiddenFields(await page.text());
  const at = new URL(provider.authorizationUrl);
  const action = `${at.origin}${at.pathname}`;
  const signedIn = await postForm(action, { ...form, username, password });
  if (signedIn.status !== 200) return { status: signedIn.status, text: await signedIn.text(), location: signedIn.headers.get('location') };
  const consent = await signedIn.text();
  assert.match(consent, /asks to use the CRM application/);
  const { ticket } = hiddenFields(consent);
  const decided = await postForm(action, { ticket, decision });
  assert.equal(decided.status, 302);
  await decided.arrayBuffer();
  return { status: 302, params: new URL(decided.headers.get('location')).searchParams, location: decided.headers.get('location') };
}

const mcpUrl = (a = app) => `${server.base}/mcp/${a.appId}`;

// A user of the application with `switches`, in the Viewers role (who may read Accounts).
const makeUser = (username, switches, { role = 'Viewers', a = app } = {}) => oauthDoors(server).makeUser(a, username, switches, { role });

// The whole flow, as an MCP client runs it: the provider ends up holding tokens.
async function authorized(username, a = app) {
  const provider = new MemoryProvider();
  assert.equal(await auth(provider, { serverUrl: mcpUrl(a) }), 'REDIRECT');
  const back = await signIn(provider, username, 'Agent5ecret');
  assert.equal(back.status, 302, back.text);
  assert.equal(back.params.get('state'), 'state-123');
  assert.equal(back.params.get('iss'), `${server.base}/oauth/${a.appId}`);
  assert.equal(await auth(provider, { serverUrl: mcpUrl(a), authorizationCode: back.params.get('code') }), 'AUTHORIZED');
  return provider;
}

async function connect(provider, a = app) {
  const client = new Client({ name: 'crmd-e2e', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl(a)), { authProvider: provider }));
  return client;
}

const bearerCall = (token, name, args, a = app) => fetch(mcpUrl(a), { method: 'POST',
  headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }) });

test('§5.6 discovery: the 401 of the OAuth resource (403 on /mcp) names the protected-resource metadata, which names crmd\'s authorization server (RFC 9728, RFC 8414)', async () => {
  const r = await fetch(mcpUrl(), { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'Get-Data', arguments: { table: 'Accounts' } } }) });
  assert.equal(r.status, 401, 'issue 36: standard MCP clients start OAuth on a 401');
  assert.deepEqual(await r.json(), { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'Authorization header is required' } });
  const prmUrl = `${server.base}/.well-known/oauth-protected-resource/mcp/${app.appId}`;
  assert.equal(r.headers.get('www-authenticate'), `Bearer resource_metadata="${prmUrl}", scope="mcp"`);
  const viaHeader = await fetch(`${server.base}/mcp`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Core-Application-Id': app.appId },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'Get-Data', arguments: { table: 'Accounts' } } }) });
  assert.equal(viaHeader.status, 403, 'spec §5.6 on /mcp');
  assert.equal(viaHeader.headers.get('www-authenticate'), `Bearer resource_metadata="${prmUrl}", scope="mcp"`);
  await viaHeader.arrayBuffer();
  // A message too large to be read from a caller of no credential is refused from its head alike.
  const large = await fetch(mcpUrl(), { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'Get-Data', arguments: { table: 'x'.repeat(70_000) } } }) });
  assert.equal(large.status, 401);
  assert.equal(large.headers.get('www-authenticate'), `Bearer resource_metadata="${prmUrl}", scope="mcp"`);
  await large.arrayBuffer();
  const prm = await (await fetch(prmUrl)).json();
  assert.deepEqual(prm.resource, mcpUrl());
  assert.deepEqual(prm.authorization_servers, [`${server.base}/oauth/${app.appId}`]);
  const as = await (await fetch(`${server.base}/.well-known/oauth-authorization-server/oauth/${app.appId}`)).json();
  assert.equal(as.issuer, `${server.base}/oauth/${app.appId}`);
  assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
  for (const endpoint of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint', 'revocation_endpoint'])
    assert.ok(as[endpoint].startsWith(as.issuer), endpoint);
  const unknown = await fetch(`${server.base}/.well-known/oauth-protected-resource/mcp/nosuchapp`);
  assert.equal(unknown.status, 404);
});

test('§5.6 the SDK\'s own OAuth flow, headless: registration, PKCE, sign-in and consent, code, token; tools run as the user', async () => {
  await makeUser('viewer.one', ['mcp:view']);
  const provider = await authorized('viewer.one');
  assert.match(provider.tokens().access_token, /^mcp_at_/);
  assert.equal(provider.tokens().token_type, 'Bearer');
  const client = await connect(provider);
  try {
    const rows = await client.callTool({ name: 'Get-Data', arguments: { table: 'Accounts', limit: 1 } });
    assert.equal(rows.isError, false, rows.content[0].text);
    const schema = await client.callTool({ name: 'Get-Schema', arguments: { table: 'Accounts' } });
    assert.equal(schema.isError, false, schema.content[0].text);
    assert.ok(JSON.parse(schema.content[0].text).fields.Name.dictionary, 'labels for a user too');
    const write = await client.callTool({ name: 'Create-Data', arguments: { table: 'Accounts', data: { Name: 'not allowed' } } });
    assert.equal(write.isError, true);
    assert.equal(write.content[0].text, 'Permission denied: Create-Data needs the MCP permission mcp:create, which this user does not have');
  } finally {
    await client.close();
  }
});

test('§5.6 the switches never go beyond the user\'s own rights: a switch without the table permission is refused; mcp:create with it writes as the user', async () => {
  const M = masterHeaders(app);
  await request(server, 'POST', '/core/schemas/Payroll', { headers: M, body: { fields: { Amount: { type: 'Number' } },
    classLevelPermissions: { find: { 'role:Administrators': true }, get: { 'role:Administrators': true }, create: { 'role:Administrators': true } } } });
  const userId = await makeUser('agent.two', ['mcp:view', 'mcp:create'], { role: 'Agents' });
  const provider = await authorized('agent.two');
  const token = provider.tokens().access_token;
  const read = await (await bearerCall(token, 'Get-Data', { table: 'Payroll' })).json();
  assert.equal(read.result.isError, true);
  assert.equal(read.result.content[0].text, 'Permission denied for action find on class Payroll');
  const schema = await (await bearerCall(token, 'Get-Schema', { table: 'Payroll' })).json();
  assert.equal(schema.result.isError, true, 'nor its schema');
  const created = await (await bearerCall(token, 'Create-Data', { table: 'Tasks', data: { Name: 'by agent' } })).json();
  assert.equal(created.result.isError, false, created.result.content[0].text);
  const row = await request(server, 'GET', `/core/classes/Tasks/${JSON.parse(created.result.content[0].text).objectId}`, { headers: M });
  assert.equal(row.body.createdBy?.objectId ?? row.body.createdBy, userId, 'written as the user');
  const many = await (await bearerCall(token, 'Create-Many', { table: 'Tasks', data: [{ Name: 'a' }], skipTimeline: true, skipTriggers: true })).json();
  assert.equal(JSON.parse(many.result.content[0].text).created, 1, 'a user\'s skip flags are ignored, the rows are created');
  const ids = JSON.parse(many.result.content[0].text).results.map((x) => x.success.objectId);
  const history = await request(server, 'GET', `/core/classes/_Timeline?where=${encodeURIComponent(JSON.stringify({ objectIdValue: ids[0] }))}&count=1&limit=0`, { headers: M });
  assert.ok(history.body.count >= 1, 'skipTimeline is master-only: the user\'s row is recorded');
  const schemaTool = await (await bearerCall(token, 'Create-Table', { table: 'Sneaky' })).json();
  assert.match(schemaTool.result.content[0].text, /needs the MCP permission mcp:edit-page-and-schema/);
});

test('§5.6, issue 34: users have no MCP access by default, not even the owner: the authorization page sends them back to the client with access_denied', async () => {
  await makeUser('no.switch', null);
  const provider = new MemoryProvider();
  assert.equal(await auth(provider, { serverUrl: mcpUrl() }), 'REDIRECT');
  const refused = await signIn(provider, 'no.switch', 'Agent5ecret');
  assert.equal(refused.status, 302, refused.text);
  const back = new URL(refused.location);
  const asked = new URL(provider.authorizationUrl);
  assert.equal(`${back.origin}${back.pathname}`, asked.searchParams.get('redirect_uri'), 'back to the client\'s registered address');
  assert.equal(back.searchParams.get('error'), 'access_denied');
  assert.match(back.searchParams.get('error_description'), /no MCP access/);
  assert.equal(back.searchParams.get('state'), asked.searchParams.get('state'));
  assert.equal(back.searchParams.get('code'), null);
  // Issue 34: the page itself fits a phone, names the application, and follows the browser's language.
  const page = await fetch(provider.authorizationUrl, { redirect: 'manual', headers: { 'Accept-Language': 'he' } });
  const html = await page.text();
  assert.match(html, /<html lang="he" dir="rtl">/);
  assert.match(html, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
  assert.match(html, /<p class="app-name">[^<]+<\/p>/);
  assert.match(html, /<label for="username">שם משתמש<\/label>/);
  const wrong = await signIn(provider, 'no.switch', 'wrong-password');
  assert.equal(wrong.status, 401);
  assert.match(wrong.text, /Invalid username\/password\./);
  await makeUser('denier', ['mcp:view']);
  const denied = await signIn(provider, 'denier', 'Agent5ecret', 'deny');
  assert.equal(denied.params.get('error'), 'access_denied');
  assert.equal(denied.params.get('code'), null);
});

test('§5.6 refresh tokens rotate; a rotated one used again revokes the whole grant; revocation (RFC 7009) ends a token', async () => {
  await makeUser('rotator', ['mcp:view']);
  const provider = await authorized('rotator');
  const first = provider.tokens();
  assert.equal(await auth(provider, { serverUrl: mcpUrl() }), 'AUTHORIZED');
  const second = provider.tokens();
  assert.notEqual(second.access_token, first.access_token);
  assert.notEqual(second.refresh_token, first.refresh_token, 'rotated');
  assert.equal((await bearerCall(second.access_token, 'Get-Data', { table: 'Accounts' })).status, 200);
  const as = `${server.base}/oauth/${app.appId}`;
  const replay = await postForm(`${as}/token`, { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: provider.stored.client.client_id });
  assert.equal(replay.status, 400);
  assert.equal((await replay.json()).error, 'invalid_grant');
  assert.equal((await bearerCall(second.access_token, 'Get-Data', { table: 'Accounts' })).status, 401, 'the whole grant is revoked');
  const again = await postForm(`${as}/token`, { grant_type: 'refresh_token', refresh_token: second.refresh_token, client_id: provider.stored.client.client_id });
  assert.equal(again.status, 400);
  await again.arrayBuffer();

  const fresh = await authorized('rotator');
  const revoked = await postForm(`${as}/revoke`, { token: fresh.tokens().access_token, client_id: fresh.stored.client.client_id });
  assert.equal(revoked.status, 200);
  await revoked.arrayBuffer();
  const after = await bearerCall(fresh.tokens().access_token, 'Get-Data', { table: 'Accounts' });
  assert.equal(after.status, 401);
  assert.match(after.headers.get('www-authenticate'), /^Bearer error="invalid_token", resource_metadata="/);
});

test('§5.6 tokens die with the user\'s deactivation, password change and the application\'s OAuth key rotation', async () => {
  const M = masterHeaders(app);
  const userId = await makeUser('leaver', ['mcp:view']);
  let provider = await authorized('leaver');
  await request(server, 'PUT', `/core/users/${userId}`, { headers: M, body: { active: false } });
  assert.equal((await bearerCall(provider.tokens().access_token, 'Get-Data', { table: 'Accounts' })).status, 401, 'deactivated');
  await request(server, 'PUT', `/core/users/${userId}`, { headers: M, body: { active: true } });
  provider = await authorized('leaver');
  await request(server, 'PUT', `/core/users/${userId}`, { headers: M, body: { password: 'Changed5ecret' } });
  const stale = await postForm(`${server.base}/oauth/${app.appId}/token`, { grant_type: 'refresh_token', refresh_token: provider.tokens().refresh_token,
    client_id: provider.stored.client.client_id });
  assert.equal(stale.status, 400, 'a password change ends the refresh token');
  await stale.arrayBuffer();
  await request(server, 'PUT', `/core/users/${userId}`, { headers: M, body: { password: 'Agent5ecret' } });
  provider = await authorized('leaver');
  cliJson(['app', 'oauth-rotate', '--data', dataDir, '--app', app.appId]);
  const ended = await pollUntil(async () => ({ done: (await bearerCall(provider.tokens().access_token, 'Get-Data', { table: 'Accounts' })).status === 401 }),
    { timeoutMs: 30_000, intervalMs: 100 });  // the registry's poll, on a machine as busy as it gets
  assert.ok(ended.ok, 'the rotation reaches the server and ends the token');
  const reRegistered = new MemoryProvider();
  reRegistered.stored.client = provider.stored.client;
  assert.equal(await auth(reRegistered, { serverUrl: mcpUrl() }), 'REDIRECT', 'the old client id is refused; the SDK registers again');
});

test('§5.6 SECURITY OAuth hardening: PKCE required and checked; redirect URIs exact, loopback or https only; codes single-use; tokens are no sessions; tenant isolation', async () => {
  await makeUser('careful', ['mcp:view']);
  const as = `${server.base}/oauth/${app.appId}`;
  const badRedirect = await fetch(`${as}/register`, { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ redirect_uris: ['http://evil.example.test/cb'], token_endpoint_auth_method: 'none' }) });
  assert.equal(badRedirect.status, 400);
  assert.equal((await badRedirect.json()).error, 'invalid_redirect_uri');
  const provider = new MemoryProvider();
  await auth(provider, { serverUrl: mcpUrl() });
  const url = new URL(provider.authorizationUrl);
  // Another redirect than the registered one: a page, never a redirect.
  const elsewhere = new URL(url); elsewhere.searchParams.set('redirect_uri', 'https://evil.example.test/cb');
  const page = await fetch(elsewhere, { redirect: 'manual' });
  assert.equal(page.status, 400);
  await page.arrayBuffer();
  // Without PKCE: back to the client with invalid_request.
  const plain = new URL(url); plain.searchParams.delete('code_challenge');
  const noPkce = await fetch(plain, { redirect: 'manual' });
  assert.equal(noPkce.status, 302);
  assert.equal(new URL(noPkce.headers.get('location')).searchParams.get('error'), 'invalid_request');
  await noPkce.arrayBuffer();
  // Another resource than this application's MCP URL.
  const other = new URL(url); other.searchParams.set('resource', `${server.base}/mcp/someone-else`);
  const target = await fetch(other, { redirect: 'manual' });
  assert.equal(new URL(target.headers.get('location')).searchParams.get('error'), 'invalid_target');
  await target.arrayBuffer();
  // A wrong verifier, then a replayed code.
  const back = await signIn(provider, 'careful', 'Agent5ecret');
  const code = back.params.get('code');
  const exchange = (verifier) => postForm(`${as}/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT,
    code_verifier: verifier, client_id: provider.stored.client.client_id });
  const wrong = await exchange('x'.repeat(43));
  assert.equal((await wrong.json()).error, 'invalid_grant');
  const good = await exchange(provider.stored.verifier);
  assert.equal(good.status, 200);
  const tokens = await good.json();
  const replay = await exchange(provider.stored.verifier);
  assert.equal((await replay.json()).error, 'invalid_grant');
  assert.equal((await bearerCall(tokens.access_token, 'Get-Data', { table: 'Accounts' })).status, 401, 'a replayed code revokes what it issued');
  // Tokens are not sessions, and sessions are not bearer tokens.
  const fresh = await authorized('careful');
  const asSession = await request(server, 'GET', '/core/classes/Accounts', { headers: { 'X-Core-Application-Id': app.appId, 'X-Core-Session-Token': fresh.tokens().access_token } });
  assert.equal(asSession.status, 400);
  assert.equal(asSession.body.code, 209);
  const login = await request(server, 'POST', '/core/login', { headers: { 'X-Core-Application-Id': app.appId }, body: { username: 'careful', password: 'Agent5ecret' } });
  assert.equal((await bearerCall(login.body.sessionToken, 'Get-Data', { table: 'Accounts' })).status, 401);
  // A token of this application against another's MCP URL.
  const b = createApp(dataDir, { productBase: true });
  await pollUntil(async () => ({ done: (await request(server, 'GET', '/core/classes/Accounts', { headers: masterHeaders(b) })).status === 200 }),
    { timeoutMs: 10_000, intervalMs: 100 });
  const crossed = await bearerCall(fresh.tokens().access_token, 'Get-Data', { table: 'Accounts' }, b);
  assert.equal(crossed.status, 401);
  // Tokens are stored hashed: the store holds no token text.
  const sessions = await request(server, 'GET', `/core/classes/_Session?limit=1000`, { headers: masterHeaders(app) });
  assert.ok(!JSON.stringify(sessions.body).includes(fresh.tokens().access_token));
  assert.ok(sessions.body.results.some((s) => s.createdWith?.action === 'oauth'), 'the grants are sessions of their user');
});

test('§5.6 each switch grants its tools and withholds the others: mcp:view reads, mcp:create creates, mcp:update changes, mcp:edit-page-and-schema changes schemas', async () => {
  const M = masterHeaders(app);
  const account = (await request(server, 'POST', '/core/classes/Accounts', { headers: M, body: { Name: 'Switchboard' } })).body.objectId;
  // One user per switch, each an Administrator so that only the switch decides.
  const cases = {
    'mcp:view': ['Get-Data', { table: 'Accounts', limit: 1 }],
    'mcp:create': ['Create-Data', { table: 'Accounts', data: { Name: 'made by a switch' } }],
    'mcp:update': ['Update-Data', { table: 'Accounts', objectId: account, data: { City: 'Switched' } }],
    'mcp:edit-page-and-schema': ['Add-Field', { table: 'Accounts', field: 'SwitchNote', type: 'String' }],
  };
  const tokens = {};
  for (const [i, which] of Object.keys(cases).entries()) {
    await makeUser(`switch.user${i}`, [which], { role: 'Administrators' });
    tokens[which] = (await authorized(`switch.user${i}`)).tokens().access_token;
  }
  for (const [which, token] of Object.entries(tokens)) {
    for (const [other, [tool, args]] of Object.entries(cases)) {
      const answer = await (await bearerCall(token, tool, args)).json();
      if (other === which) {
        assert.equal(answer.result.isError, false, `${which} opens ${tool}: ${answer.result.content[0].text}`);
      } else {
        assert.equal(answer.result.isError, true, `${which} does not open ${tool}`);
        assert.equal(answer.result.content[0].text, `Permission denied: ${tool} needs the MCP permission ${other}, which this user does not have`);
      }
    }
  }
  const account2 = await request(server, 'GET', `/core/classes/Accounts/${account}`, { headers: M });
  assert.equal(account2.body.City, 'Switched');
  // The schema switch of an Agent, whom Accounts' addField permission does not name: refused.
  await makeUser('switch.agent', ['mcp:view', 'mcp:edit-page-and-schema'], { role: 'Agents' });
  const agent = (await authorized('switch.agent')).tokens().access_token;
  const added = await (await bearerCall(agent, 'Add-Field', { table: 'Accounts', field: 'AgentField', type: 'String' })).json();
  assert.equal(added.result.isError, true);
  assert.equal(added.result.content[0].text, 'Permission denied for action addField on class Accounts');
  const table = await (await bearerCall(agent, 'Create-Table', { table: 'AgentTable' })).json();
  assert.equal(table.result.content[0].text, 'unauthorized: master key is required', 'a new table is the keys\' alone (issue 31 #2)');
});

test('issue 36: the SDK\'s own client, given only the MCP URL and an auth provider, is sent to sign in by the 401 of its first tool call; the user signs in and consents in Chromium; then it calls tools', async () => {
  await makeUser('by.itself', ['mcp:view']);
  const provider = new MemoryProvider();
  const url = new URL(mcpUrl());
  const client = new Client({ name: 'crmd-e2e', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));  // initialize needs no sign-in
  await assert.rejects(client.callTool({ name: 'Get-Data', arguments: { table: 'Accounts' } }), (e) => e.constructor.name === 'UnauthorizedError');
  assert.ok(provider.authorizationUrl, 'the client was sent to the authorization page');
  assert.equal(new URL(provider.authorizationUrl).pathname, `/oauth/${app.appId}/authorize`);

  // The person's part, in a browser: the client's redirect address is caught where it would land.
  const browser = await launchBrowser();
  let code;
  try {
    const page = await browser.newPage();
    const landed = new Promise((resolve) => page.route(`${new URL(REDIRECT).origin}/**`, (route) => {
      resolve(new URL(route.request().url()));
      return route.fulfill({ status: 200, contentType: 'text/plain', body: 'signed in' });
    }));
    await page.goto(String(provider.authorizationUrl));
    await page.fill('input[name=username]', 'by.itself');
    await page.fill('input[name=password]', 'Agent5ecret');
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit], input[type=submit]')]);
    await page.click('button[value=allow]');
    const back = await Promise.race([landed, new Promise((_, reject) => setTimeout(() => reject(new Error('never sent back to the client')), 30_000).unref())]);
    assert.equal(back.searchParams.get('state'), 'state-123');
    code = back.searchParams.get('code');
    assert.ok(code, back.href);
  } finally {
    await browser.close();
  }
  const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await transport.finishAuth(code);
  const signedIn = new Client({ name: 'crmd-e2e', version: '1.0.0' }, { capabilities: {} });
  await signedIn.connect(transport);
  const answer = await signedIn.callTool({ name: 'Get-Data', arguments: { table: 'Accounts' } });
  assert.notEqual(answer.isError, true, JSON.stringify(answer));
  assert.ok(Array.isArray(JSON.parse(answer.content[0].text).results));
  await signedIn.close();
  await client.close();
});
