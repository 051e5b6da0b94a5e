// MCP user sign-in for end-to-end tests: crmd's OAuth 2.1 server driven headless by the official
// MCP TypeScript SDK's own client flow (discovery, dynamic registration, PKCE S256, code, token).
import assert from 'node:assert/strict';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { request, masterHeaders } from './harness.mjs';

export const REDIRECT = 'http://127.0.0.1:53682/callback';

// An OAuthClientProvider that keeps everything in memory and never opens a browser.
export class MemoryProvider {
  constructor(redirect = REDIRECT) { this.redirect = redirect; this.stored = {}; }
  get redirectUrl() { return this.redirect; }
  get clientMetadata() {
    return { client_name: 'crmd e2e agent', redirect_uris: [this.redirect], grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  state() { return 'state-123'; }
  clientInformation() { return this.stored.client; }
  saveClientInformation(c) { this.stored.client = c; }
  tokens() { return this.stored.tokens; }
  saveTokens(t) { this.stored.tokens = t; }
  redirectToAuthorization(url) { this.authorizationUrl = url; }
  saveCodeVerifier(v) { this.stored.verifier = v; }
  codeVerifier() { return this.stored.verifier; }
  invalidateCredentials(scope) { if (scope === 'all' || scope === 'tokens') delete this.stored.tokens; if (scope === 'all') delete this.stored.client; }
}

export const hiddenFields = (html) => Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)]
  .map(([, name, value]) => [name, value.replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>')]));
export const postForm = (url, fields) => fetch(url, { method: 'POST', redirect: 'manual',
  headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });

// The MCP and OAuth doors of one server: users, sign-in, tool calls with a bearer token.
export function oauthDoors(server) {
  const mcpUrl = (a) => `${server.base}/mcp/${a.appId}`;
  // A user of `a` with the MCP `switches`, in `role`.
  async function makeUser(a, username, switches, { role = 'Viewers', password = 'Agent5ecret' } = {}) {
    const M = masterHeaders(a);
    const made = await request(server, 'POST', '/core/users', { headers: M, body: { username, password } });
    assert.equal(made.status, 201, made.text);
    if (switches) {
      const set = await request(server, 'PUT', `/core/users/${made.body.objectId}`, { headers: M, body: { mcpPermissions: switches } });
      assert.equal(set.status, 200, set.text);
    }
    if (role) {
      const roles = await request(server, 'GET', `/core/classes/_Role?where=${encodeURIComponent(JSON.stringify({ name: role }))}`, { headers: M });
      const added = await request(server, 'PUT', `/core/classes/_Role/${roles.body.results[0].objectId}`, { headers: M,
        body: { users: { __op: 'AddRelation', objects: [{ __type: 'Pointer', className: '_User', objectId: made.body.objectId }] } } });
      assert.equal(added.status, 200, added.text);
    }
    return made.body.objectId;
  }
  // The whole flow, as an MCP client runs it: the access token.
  async function signedIn(a, username, password = 'Agent5ecret') {
    const provider = new MemoryProvider();
    assert.equal(await auth(provider, { serverUrl: mcpUrl(a) }), 'REDIRECT');
    const page = await fetch(provider.authorizationUrl, { redirect: 'manual' });
    const at = new URL(provider.authorizationUrl);
    const action = `${at.origin}${at.pathname}`;
    const form = await postForm(action, { ...hiddenFields(await page.text()), username, password });
    assert.equal(form.status, 200, 'signed in');
    const decided = await postForm(action, { ticket: hiddenFields(await form.text()).ticket, decision: 'allow' });
    assert.equal(decided.status, 302);
    const code = new URL(decided.headers.get('location')).searchParams.get('code');
    assert.equal(await auth(provider, { serverUrl: mcpUrl(a), authorizationCode: code }), 'AUTHORIZED');
    return provider.tokens().access_token;
  }
  // A tool's result: {isError, text}.
  async function callTool(a, token, name, args) {
    const r = await fetch(mcpUrl(a), { method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }) });
    const body = await r.json();
    return { isError: body.result.isError, text: body.result.content[0].text };
  }
  return { mcpUrl, makeUser, signedIn, callTool };
}
