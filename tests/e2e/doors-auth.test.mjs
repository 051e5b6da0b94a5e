// Issue 31 (the small findings): template values in staff mail (#11), the sign-in gate's CSRF
// defence, return addresses and address budget (#12), MCP Who-Am-I with a refused key (#14), `$regex`
// patterns the two stores run alike (#15), the OAuth consent ticket's single use (#16), and dotted
// keys into ACL and the other builtin fields (#17). Each test is named after its finding; each ran
// against the build before the fix (ae6c27d) and failed there.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import {
  makeDataDir, createApp, startServer, request, masterHeaders, appHeaders, stopAll, pollUntil, cliJson, HOST,
} from './lib/harness.mjs';
import { startFakeSmtp, closeAll } from './lib/receivers.mjs';
import { MemoryProvider, hiddenFields } from './lib/oauth.mjs';

let server;
let app;
let dataDir;
before(async () => {
  dataDir = makeDataDir();
  app = createApp(dataDir, { productBase: true });
  server = await startServer(dataDir);
});
after(async () => {
  await closeAll();
  await stopAll();
});

// ---------------------------------------------------------------------------------------------
// #11: mail

// The text of an unstructured header as a reader shows it: folded lines unfolded, RFC 2047
// encoded words decoded (whitespace between two encoded words dropped).
function headerText(raw, name) {
  const head = raw.split('\r\n\r\n')[0];
  const unfolded = head.replace(/\r\n[ \t]/g, ' ');
  const line = unfolded.split('\r\n').find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  if (line === undefined) return undefined;
  const value = line.slice(name.length + 1).trim();
  return value
    .replace(/(\?=)\s+(=\?)/g, '$1$2')
    .replace(/=\?UTF-8\?B\?([A-Za-z0-9+/=]*)\?=/gi, (_, b64) => Buffer.from(b64, 'base64').toString('utf8'));
}

test('issue 31 #11: a send-email trigger puts an anonymous lead\'s markup into staff mail as text: HTML-escaped in the body, one encoded line in the subject', async () => {
  const smtp = await startFakeSmtp();
  const dir = makeDataDir();
  const a = createApp(dir, { productBase: true });
  const srv = await startServer(dir, { extraArgs: ['--smtp-url', `smtp://${HOST}:${smtp.port}`, '--mail-from', 'crm@example.test'] });
  const M = masterHeaders(a);
  const set = await request(srv, 'PUT', '/core/schemas/Accounts', { headers: M, body: { triggers: [{
    name: 'tell staff', event: 'create', actions: [{ actionType: 'send-email', actionData: { 'send-email': {
      to: 'staff@example.test', subject: 'New lead {{Name}}', html: '<p>Lead: <b>{{Name}}</b></p>' } } }] }] } });
  assert.equal(set.status, 200, set.text);
  // An anonymous web lead (spec §4.9: the application id alone).
  const name = '<a href="https://evil.test/pay">Pay here</a> & \'now\' שלום\r\nBcc: victim@evil.test';
  const lead = await request(srv, 'POST', `/functions/${a.appId}/getlead`, { headers: appHeaders(a), body: { Name: name, Email: 'lead@example.test' } });
  assert.equal(lead.status, 200, lead.text);
  const got = await pollUntil(async () => ({ done: smtp.messages.length >= 1 }), { timeoutMs: 15_000, intervalMs: 50 });
  assert.ok(got.ok, 'one mail');
  const [mail] = smtp.messages;
  const [head, ...rest] = mail.data.split('\r\n\r\n');
  const body = rest.join('\r\n\r\n');
  // The author's markup stays; the lead's is text.
  assert.ok(!body.includes('<a href='), `no markup of the lead in the body: ${body}`);
  assert.ok(body.includes('<p>Lead: <b>&lt;a href=&quot;https://evil.test/pay&quot;&gt;Pay here&lt;/a&gt; &amp; &#39;now&#39; שלום'), body);
  // The subject is one header, ASCII on the wire, and reads as the lead's text on one line.
  assert.match(head, /^[\x20-\x7e\r\n\t]*$/, `headers are ASCII (RFC 2047 words): ${head}`);
  assert.equal(headerText(mail.data, 'Subject'), 'New lead <a href="https://evil.test/pay">Pay here</a> & \'now\' שלום  Bcc: victim@evil.test');
  assert.equal(headerText(mail.data, 'Bcc'), undefined, 'no header of the lead\'s own');
  assert.deepEqual(mail.to, ['RCPT TO:<staff@example.test>']);
  await srv.stop();
});

// ---------------------------------------------------------------------------------------------
// #12: the sign-in gate

const gateUrl = (a = app, srv = server) => `${srv.base}/core/apps/${a.appId}/signin`;
const filesBase = (a = app, srv = server) => `${srv.base}/core/files/${a.appId}/`;
const hidden = (html, name) => {
  const m = html.match(new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`));
  return m ? m[1].replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>') : undefined;
};
const gatePost = (fields, headers = {}, url = gateUrl()) => fetch(url, { method: 'POST', redirect: 'manual',
  headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields).toString(),
  signal: AbortSignal.timeout(20_000) });

// The form as a browser gets it: its cookie pair and its token.
async function openGate(returnTo, url = gateUrl()) {
  const page = await fetch(`${url}?return=${encodeURIComponent(returnTo)}`, { signal: AbortSignal.timeout(20_000) });
  assert.equal(page.status, 200);
  const html = await page.text();
  const setCookie = page.headers.get('set-cookie') ?? '';
  return { html, setCookie, cookie: setCookie.split(';')[0], csrf: hidden(html, 'csrf') };
}

let gateUserMade = false;
async function gateUser() {
  if (!gateUserMade) {
    const made = await request(server, 'POST', '/core/users', { headers: masterHeaders(app), body: { username: 'mallory', password: 'Mall0ryPass' } });
    assert.equal(made.status, 201, made.text);
    gateUserMade = true;
  }
  return { username: 'mallory', password: 'Mall0ryPass' };
}

test('issue 31 #12: a cross-site post to the sign-in gate signs no one in (login CSRF); only the form\'s own post, with its token and SameSite=Strict cookie, does', async () => {
  const user = await gateUser();
  const back = `${filesBase()}0123456789abcdef0123456789abcdef_plan.png`;
  // The attacker's page posts his own credentials to the gate from the victim's browser.
  const forged = await gatePost({ ...user, return: back }, { Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site' });
  assert.equal(forged.status, 403, 'a cross-site post is refused');
  assert.ok(!(forged.headers.get('set-cookie') ?? '').includes('crmd_session'), 'and sets no session');
  assert.match(await forged.text(), /This form expired or was not sent from its page/);
  const bare = await gatePost({ ...user, return: back });
  assert.equal(bare.status, 403, 'a post without the form\'s token (an old browser, a script) is refused too');
  await bare.arrayBuffer();

  const form = await openGate(back);
  const [pair, ...attributes] = form.setCookie.split(';').map((p) => p.trim());
  assert.match(pair, /^crmd_gate=[A-Za-z0-9]{32}$/);
  assert.deepEqual(attributes.sort(), ['HttpOnly', `Path=/core/apps/${app.appId}/signin`, 'SameSite=Strict']);
  assert.match(form.csrf, /^[0-9a-f]{64}$/);
  const other = await openGate(back);
  for (const [why, fields, headers] of [
    ['the token without its cookie', { ...user, return: back, csrf: form.csrf }, {}],
    ['the cookie without the token', { ...user, return: back }, { Cookie: form.cookie }],
    ['another browser\'s token', { ...user, return: back, csrf: other.csrf }, { Cookie: form.cookie }],
    ['a post another site makes', { ...user, return: back, csrf: form.csrf }, { Cookie: form.cookie, Origin: 'https://evil.example' }],
    ['a post a sibling site makes', { ...user, return: back, csrf: form.csrf }, { Cookie: form.cookie, 'Sec-Fetch-Site': 'same-site' }],
  ]) {
    const r = await gatePost(fields, headers);
    assert.equal(r.status, 403, why);
    assert.ok(!(r.headers.get('set-cookie') ?? '').includes('crmd_session'), why);
    await r.arrayBuffer();
  }
  // The browser's own post: its cookie, its token, its own origin (or `null`, as a page without
  // referrers sends it).
  for (const origin of [server.base, 'null']) {
    const signed = await gatePost({ ...user, return: back, csrf: form.csrf },
      { Cookie: form.cookie, Origin: origin, 'Sec-Fetch-Site': 'same-origin' });
    assert.equal(signed.status, 303, origin);
    assert.equal(signed.headers.get('location'), back);
    assert.match(signed.headers.get('set-cookie'), /^crmd_session=r:[0-9a-zA-Z]+;/);
    await signed.arrayBuffer();
  }
});

test('issue 31 #12: the gate returns only to the application\'s files: dot segments in any spelling, empty segments and encoded slashes are refused', async () => {
  const user = await gateUser();
  const base = filesBase();
  const { cookie, csrf } = await openGate(`${base}x.png`);
  for (const tail of ['../../../../health', 'x/../../../health', '%2e%2e/%2e%2e/%2e%2e/health', '%2E%2e/x', '.%2e/x', '%2e./x',
    './x.png', 'a/./b', '..%2f..%2fhealth', '..%5c..%5chealth', '%2e%2e%5chealth', 'a//b', 'a%2fb', 'a%00b', 'a%zz',
    'x.png/..', 'x.png/%2e%2e?y=1']) {
    const url = base + tail;
    const page = await fetch(`${gateUrl()}?return=${encodeURIComponent(url)}`, { signal: AbortSignal.timeout(20_000) });
    assert.equal(page.status, 400, `the form is not shown for ${tail}`);
    await page.arrayBuffer();
  }
  // Posted, the same check: a few of them (each post spends the address's sign-in budget).
  for (const tail of ['../../../../health', '%2e%2e/%2e%2e/health', '..%5chealth', 'a%2fb']) {
    const posted = await gatePost({ ...user, return: base + tail, csrf }, { Cookie: cookie });
    assert.equal(posted.status, 400, `no sign-in returns to ${tail}`);
    assert.equal(posted.headers.get('set-cookie'), null);
    await posted.arrayBuffer();
  }
  // A file's own addresses still pass: an encoded name, a private file's record-scoped address.
  for (const tail of ['0123456789abcdef0123456789abcdef_my%20plan%20(1).png', '0123456789abcdef0123456789abcdef_a.pdf/Contracts/abcDEF1234/Scan',
    '0123456789abcdef0123456789abcdef_..png']) {
    const page = await fetch(`${gateUrl()}?return=${encodeURIComponent(base + tail)}`, { signal: AbortSignal.timeout(20_000) });
    assert.equal(page.status, 200, tail);
    await page.arrayBuffer();
  }
});

test('issue 31 #12: sign-in posts spend a per-address budget (30 a minute, --signin-rate); beyond it the gate answers 429 on its own page', async () => {
  // The gate's statuses for `n` posts from this address (none a valid form: refused, but counted).
  const postAll = async (srv, a, n) => {
    const back = `${filesBase(a, srv)}x.png`;
    const statuses = [];
    for (let i = 0; i < n; i++) {
      const r = await gatePost({ username: 'nobody', password: 'Wr0ngPass', return: back }, {}, gateUrl(a, srv));
      statuses.push(r.status);
      if (r.status === 429) {
        assert.match(r.headers.get('content-type'), /^text\/html/);
        assert.equal(r.headers.get('retry-after'), '60');
        assert.match(await r.text(), /Too many sign-in attempts from this address/);
      } else {
        await r.arrayBuffer();
      }
    }
    return statuses;
  };
  const dir = makeDataDir();
  const a = createApp(dir);
  const srv = await startServer(dir);
  const statuses = await postAll(srv, a, 31);
  assert.deepEqual(statuses, [...Array(30).fill(403), 429], 'thirty posts a minute by default, then 429');
  // The form itself stays open to read.
  const page = await fetch(`${gateUrl(a, srv)}?return=${encodeURIComponent(`${filesBase(a, srv)}x.png`)}`, { signal: AbortSignal.timeout(20_000) });
  assert.equal(page.status, 200);
  await page.arrayBuffer();
  await srv.stop();
  const narrow = await startServer(dir, { extraArgs: ['--signin-rate', '3'] });
  assert.deepEqual(await postAll(narrow, a, 4), [403, 403, 403, 429]);
  await narrow.stop();
});

// ---------------------------------------------------------------------------------------------
// #14: MCP Who-Am-I

async function mcpCall(name, args, headers) {
  const r = await fetch(`${server.base}/mcp/${app.appId}`, { method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    signal: AbortSignal.timeout(20_000) });
  return { status: r.status, body: await r.json() };
}

test('issue 31 #14: MCP Who-Am-I with a wrong or misplaced key answers the permission text of every other tool, never Master', async () => {
  for (const headers of [{ 'X-Core-API-Key': 'not-a-key' }, { 'X-Core-Master-Key': 'not-a-key' }, { 'X-Core-API-Key': app.masterKey }]) {
    const r = await mcpCall('Who-Am-I', {}, headers);
    assert.equal(r.status, 200);
    assert.equal(r.body.result.content[0].text, 'Permission denied for action find on class _User', JSON.stringify(headers));
    assert.equal(r.body.result.isError, true);
  }
  const key = await mcpCall('Who-Am-I', {}, { 'X-Core-API-Key': app.apiKey });
  assert.equal(JSON.parse(key.body.result.content[0].text).identity, 'Master', 'a key that matched is the Master identity');
});

// ---------------------------------------------------------------------------------------------
// #15: $regex on both stores

test('issue 31 #15: $regex patterns RE2 accepts answer alike on both stores: the same rows, or 400 102 on both', async () => {
  const M = masterHeaders(app);
  for (const Name of ['Dana', 'dana', 'a\nb', 'Alpha', 'ab', 'Ωmega', 'word here', 'swordfish']) {
    const r = await request(server, 'POST', '/core/classes/Rx', { headers: M, body: { Name } });
    assert.equal(r.status, 201, r.text);
  }
  const find = (pattern, options) => request(server, 'GET',
    `/core/classes/Rx?order=Name&keys=Name&where=${encodeURIComponent(JSON.stringify({ Name: options ? { $regex: pattern, $options: options } : { $regex: pattern } }))}`,
    { headers: M });
  // Each runs, with RE2's meaning, on either store.
  for (const [pattern, names, options] of [
    ['(?U)a+', ['Alpha', 'Dana', 'a\nb', 'ab', 'dana', 'Ωmega']],
    ['^[[:word:]]+$', ['Alpha', 'Dana', 'ab', 'dana', 'swordfish']],
    ['(?i:DANA)', ['Dana', 'dana']],
    ['\\x{41}', ['Alpha']],
    ['mega\\z', ['Ωmega']],
    ['\\QΩ\\E', ['Ωmega']],
    ['\\bword', ['word here']],
    ['a.b', []],
    ['(?s:a.b)', ['a\nb']],
    ['(?m)^b', ['a\nb']],
    ['^d', ['Dana', 'dana'], 'i'],
  ]) {
    const r = await find(pattern, options);
    assert.equal(r.status, 200, `/${pattern}/${options ?? ''}: ${r.text}`);
    assert.deepEqual(r.body.results.map((row) => row.Name), names, `/${pattern}/${options ?? ''}`);
  }
  // Each is refused, whatever the store.
  for (const [pattern, error] of [
    ['\\pL', 'bad $regex: \\p and \\P (Unicode classes) are not supported'],
    ['\\p{Greek}', 'bad $regex: \\p and \\P (Unicode classes) are not supported'],
    ['[\\PN]', 'bad $regex: \\p and \\P (Unicode classes) are not supported'],
    ['a\\C', 'bad $regex: \\C (a single byte) is not supported'],
    ['a{1000}', 'bad $regex: a repetition count may be at most 255'],
    ['a{2,256}', 'bad $regex: a repetition count may be at most 255'],
  ]) {
    const r = await find(pattern);
    assert.equal(r.status, 400, `/${pattern}/: ${r.text}`);
    assert.deepEqual(r.body, { code: 102, error }, pattern);
  }
  // $text without a text index keeps spec §7's answer on both stores.
  const text = await request(server, 'GET', `/core/classes/Rx?where=${encodeURIComponent(JSON.stringify({ Name: { $text: { $search: { $term: 'Dana' } } } }))}`, { headers: M });
  assert.equal(text.status, 500);
  assert.deepEqual(text.body, { code: 1, message: 'Internal server error.' });
});

// ---------------------------------------------------------------------------------------------
// #16: the OAuth consent ticket

let oauthUserMade = false;
// A consent ticket for the user `agent`, through the SDK's own discovery and registration.
async function consentTicket() {
  if (!oauthUserMade) {
    const M = masterHeaders(app);
    const made = await request(server, 'POST', '/core/users', { headers: M, body: { username: 'agent', password: 'Agent5ecret' } });
    assert.equal(made.status, 201, made.text);
    const set = await request(server, 'PUT', `/core/users/${made.body.objectId}`, { headers: M, body: { mcpPermissions: ['mcp:view'] } });
    assert.equal(set.status, 200, set.text);
    oauthUserMade = true;
  }
  const provider = new MemoryProvider();
  assert.equal(await auth(provider, { serverUrl: `${server.base}/mcp/${app.appId}` }), 'REDIRECT');
  const page = await fetch(provider.authorizationUrl, { redirect: 'manual', signal: AbortSignal.timeout(20_000) });
  assert.equal(page.status, 200);
  const html = await page.text();
  const fields = hiddenFields(html);
  const at = new URL(provider.authorizationUrl);
  const action = `${at.origin}${at.pathname}`;
  const signedIn = await gatePost({ ...fields, username: 'agent', password: 'Agent5ecret' }, {}, action);
  assert.equal(signedIn.status, 200);
  const ticket = hidden(await signedIn.text(), 'ticket');
  assert.ok(ticket, 'the consent page carries its ticket');
  return { provider, action, ticket };
}

// A decision posted: the code the redirect carries (undefined when none), or the page's status.
async function decide(action, ticket, decision = 'allow') {
  const r = await gatePost({ ticket, decision }, {}, action);
  const location = r.headers.get('location');
  await r.arrayBuffer();
  return { status: r.status, code: location ? new URL(location).searchParams.get('code') ?? undefined : undefined,
    error: location ? new URL(location).searchParams.get('error') ?? undefined : undefined };
}

test('issue 31 #16: an OAuth consent ticket decides once: posted again it issues no second code, and of two posts at once one wins', async () => {
  const { provider, action, ticket } = await consentTicket();
  const first = await decide(action, ticket);
  assert.equal(first.status, 302);
  assert.match(first.code, /^mcp_code_/);
  const again = await decide(action, ticket);
  assert.equal(again.status, 400, 'the ticket was spent');
  assert.equal(again.code, undefined, 'no second code');
  // The one code still works.
  assert.equal(await auth(provider, { serverUrl: `${server.base}/mcp/${app.appId}`, authorizationCode: first.code }), 'AUTHORIZED');

  // Two posts of one ticket at once: one code.
  const race = await consentTicket();
  const both = await Promise.all([decide(race.action, race.ticket), decide(race.action, race.ticket)]);
  assert.deepEqual(both.map((d) => d.status).sort(), [302, 400]);
  assert.equal(both.filter((d) => d.code !== undefined).length, 1);

  // A refusal is a decision too.
  const denied = await consentTicket();
  const no = await decide(denied.action, denied.ticket, 'deny');
  assert.equal(no.status, 302);
  assert.equal(no.error, 'access_denied');
  const yes = await decide(denied.action, denied.ticket, 'allow');
  assert.equal(yes.status, 400);
  assert.equal(yes.code, undefined);
});

// ---------------------------------------------------------------------------------------------
// #17: dotted keys into builtin fields

test('issue 31 #17: with dotted keys on (Parse profile), a key into ACL or another builtin field answers 111 and the record is unchanged', async () => {
  const dir = makeDataDir();
  const a = cliJson(['app', 'create', '--data', dir, '--no-product-base', '--profile', 'parse']);
  const srv = await startServer(dir);
  const A = appHeaders(a);
  const signup = await request(srv, 'POST', '/core/users', { headers: A, body: { username: 'eve', password: 'x' } });
  assert.equal(signup.status, 201, signup.text);
  const S = { ...A, 'X-Core-Session-Token': signup.body.sessionToken };
  const me = signup.body.objectId;
  const made = await request(srv, 'POST', '/core/classes/Notes', { headers: S,
    body: { Text: 'mine', ACL: { [me]: { read: true, write: true } } } });
  assert.equal(made.status, 201, made.text);
  const id = made.body.objectId;
  const opened = await request(srv, 'PUT', `/core/classes/Notes/${id}`, { headers: S, body: { 'ACL.*': { read: true } } });
  assert.equal(opened.status, 400, `a dotted key into ACL: ${opened.text}`);
  assert.deepEqual(opened.body, { code: 111, error: 'schema mismatch for Notes.ACL; expected ACL but got Object' });
  for (const [key, type] of [['ACL.role:Staff', 'ACL'], ['objectId.x', 'String'], ['createdAt.iso', 'Date'], ['updatedAt.x', 'Date']]) {
    const r = await request(srv, 'PUT', `/core/classes/Notes/${id}`, { headers: masterHeaders(a), body: { [key]: { read: true } } });
    assert.deepEqual(r.body, { code: 111, error: `schema mismatch for Notes.${key.split('.')[0]}; expected ${type} but got Object` }, key);
  }
  const anonymous = await request(srv, 'GET', `/core/classes/Notes/${id}`, { headers: A });
  assert.equal(anonymous.status, 404, 'still the owner\'s alone');
  const stored = await request(srv, 'GET', `/core/classes/Notes/${id}`, { headers: masterHeaders(a) });
  assert.deepEqual(stored.body.ACL, { [me]: { read: true, write: true } });
  // Dotted keys into an Object field still work.
  const obj = await request(srv, 'PUT', `/core/classes/Notes/${id}`, { headers: S, body: { 'meta.seen': 1 } });
  assert.equal(obj.status, 200, obj.text);
  await srv.stop();
});
