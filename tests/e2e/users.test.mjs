// Users and sessions (spec §2.4, §3.1, §3.2, §4.7, §5.3, §7; SECURITY.md session fixation and
// secrets) against the real crmd binary: sign-up, login, the login lock, sessions, /users/me,
// logout, updating and deleting users, the password policy and the password reset by mail.
// One server and one application for most tests; each test makes its own users.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { decodeMail } from './lib/receivers.mjs';
import {
  setup, stopAll, request, appHeaders, masterHeaders, apiKeyHeaders, createRecord,
  pollUntil, sleep, ISO_MS, OBJECT_ID,
  storeDirs,
} from './lib/harness.mjs';

let server;
let app;
let dataDir;
let M; // master-key headers

before(async () => {
  ({ server, app, dataDir } = await setup());
  M = masterHeaders(app);
});
after(stopAll);

const TOKEN = /^r:[0-9a-f]{32}$/;
const INVALID_LOGIN = { code: 101, error: 'Invalid username/password.' };
const LOCKED = {
  code: 101,
  error: 'Your account is locked due to multiple failed login attempts. Please try again after 30 minute(s)',
};
const INACTIVE = { code: 101, error: 'User is not active.' };
const INVALID_SESSION = { code: 209, error: 'invalid session token' };
const POLICY = { code: 142, error: 'Password does not meet the Password Policy requirements.' };
const NOT_FOUND = { code: 101, error: 'Object not found.' };
const NEEDS_AUTH = { code: 101, error: 'user needs to be authenticated' };
const RESET_ACCEPTED = { message: 'Your request will be processed shortly' };
const denied = (op, cls) => ({ code: 119, error: `Permission denied for action ${op} on class ${cls}.` });

let seq = 0;
const uniq = (p) => `${p}${(seq++).toString(36)}x${crypto.randomBytes(4).toString('hex')}`;
// A password that passes the policy, unique per call.
const strongPassword = () => `Pw${crypto.randomBytes(6).toString('hex')}Z9`;

const S = (token, a = app) => ({ ...appHeaders(a), 'X-Core-Session-Token': token });

function signUp(fields, headers = M, srv = server) {
  return request(srv, 'POST', '/core/users', { headers, body: fields });
}

function login(username, password, srv = server, a = app) {
  return request(srv, 'POST', '/core/login', { headers: appHeaders(a), body: { username, password } });
}

function me(token, srv = server, a = app) {
  return request(srv, 'GET', '/core/users/me', { headers: S(token, a) });
}

// Signs up a fresh user with the master key: {id, username, email, password, token, createdAt}.
async function newUser(extra = {}, srv = server, a = app) {
  const username = `${uniq('user')}@example.test`;
  const password = strongPassword();
  const r = await signUp({ username, password, email: username, ...extra }, masterHeaders(a), srv);
  assert.equal(r.status, 201, `sign-up: ${r.text}`);
  return { id: r.body.objectId, username, email: username, password, token: r.body.sessionToken, createdAt: r.body.createdAt };
}

// Logs in and asserts 200; returns the body.
async function loginOk(user, password = user.password, srv = server, a = app) {
  const r = await login(user.username, password, srv, a);
  assert.equal(r.status, 200, `login ${user.username}: ${r.text}`);
  return r.body;
}

function assertRecentIso(iso, label) {
  assert.match(iso, ISO_MS, `${label} is ISO 8601 with milliseconds, UTC: ${iso}`);
  assert.ok(Math.abs(Date.now() - Date.parse(iso)) < 5 * 60_000, `${label} ${iso} is close to now`);
}

// No key that names a password or a hash, and no password value anywhere in the text.
function assertNoPassword(res, label, passwords = []) {
  const walk = (v, where) => {
    if (Array.isArray(v)) { v.forEach((x, i) => walk(x, `${where}[${i}]`)); return; }
    if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        assert.doesNotMatch(k, /password|hash/i, `${label}: key ${where}.${k} is returned`);
        walk(x, `${where}.${k}`);
      }
    }
  };
  walk(res.body, '$');
  for (const p of passwords) assert.equal(res.text.includes(p), false, `${label}: a password value is in the response`);
  assert.equal(/\$argon2|\$2[aby]\$/.test(res.text), false, `${label}: a password hash is in the response`);
}

async function assertSessionInvalid(token, label) {
  const r = await me(token);
  assert.equal(r.status, 400, `${label}: ${r.text}`);
  assert.deepEqual(r.body, INVALID_SESSION, label);
}

// ---------------------------------------------------------------------------------------------
// Mail outbox (no --smtp-url: crmd writes .eml files to <dataDir>/apps/<appId>/outbox)

function outboxDir(dir = dataDir, a = app) {
  return path.join(dir, 'apps', a.appId, 'outbox');
}

function readOutbox(dir = dataDir, a = app) {
  let names;
  try {
    names = fs.readdirSync(outboxDir(dir, a));
  } catch (err) {
    if (err.code === 'ENOENT') return [];
    throw err;
  }
  return names.filter((n) => n.endsWith('.eml')).sort().map((n) => {
    const raw = fs.readFileSync(path.join(outboxDir(dir, a), n), 'utf8');
    return { file: n, raw, text: decodeMail(raw) };
  });
}

const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function mailsTo(email, dir = dataDir, a = app) {
  const to = new RegExp(`^To:[^\\n]*${escapeRe(email)}`, 'mi');
  return readOutbox(dir, a).filter((m) => to.test(m.raw));
}

// Waits (at most 5 s) until `count` mails to `email` are in the outbox; returns them.
async function waitForMails(email, count = 1, dir = dataDir, a = app) {
  const p = await pollUntil(async () => {
    const mails = mailsTo(email, dir, a);
    return { done: mails.length >= count, mails };
  }, { timeoutMs: 5000, intervalMs: 50 });
  assert.ok(p.ok, `expected ${count} mail(s) to ${email} in ${outboxDir(dir, a)}; found ${p.last.mails.length} ` +
    `(outbox: ${readOutbox(dir, a).map((m) => m.file).join(', ') || 'empty'})`);
  return p.last.mails;
}

// The reset token from the link in a mail.
function resetTokenFrom(mail, srv = server, a = app) {
  const re = new RegExp(`http://127\\.0\\.0\\.1:${srv.port}/core/apps/${escapeRe(a.appId)}/reset-password\\?token=([^\\s"'<>&]+)`);
  const m = re.exec(mail.text);
  assert.ok(m, `no reset link http://127.0.0.1:${srv.port}/core/apps/${a.appId}/reset-password?token=... in mail:\n${mail.raw}`);
  return decodeURIComponent(m[1]);
}

function requestReset(email, srv = server, a = app) {
  return request(srv, 'POST', '/core/requestPasswordReset', { headers: appHeaders(a), body: { email } });
}

function resetPage(token, srv = server, a = app) {
  return request(srv, 'GET', `/core/apps/${a.appId}/reset-password?token=${encodeURIComponent(token)}`);
}

function postReset(token, newPassword, srv = server, a = app) {
  return request(srv, 'POST', `/core/apps/${a.appId}/reset-password`, {
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token, new_password: newPassword }).toString(),
  });
}

// Requests a reset for `user` and returns the token of the one new mail.
async function resetTokenFor(user, srv = server, a = app, dir = dataDir) {
  const before = mailsTo(user.email, dir, a).length;
  const r = await requestReset(user.email, srv, a);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, RESET_ACCEPTED);
  const mails = await waitForMails(user.email, before + 1, dir, a);
  return resetTokenFrom(mails[mails.length - 1], srv, a);
}

function assertHtml(res, status, label) {
  assert.equal(res.status, status, `${label}: ${res.text.slice(0, 300)}`);
  assert.match(res.headers['content-type'] ?? '', /text\/html/, `${label}: content-type`);
}

// ---------------------------------------------------------------------------------------------
// §4.7 sign-up

test('§4.7 sign-up with the master key: 201 {objectId, createdAt, sessionToken}; the token is r: + 32 hex', async () => {
  const username = `${uniq('signup')}@example.test`;
  const password = strongPassword();
  const r = await signUp({ username, password, email: username, name: 'Sign Up' });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(Object.keys(r.body).sort(), ['createdAt', 'objectId', 'sessionToken']);
  assert.match(r.body.objectId, OBJECT_ID);
  assertRecentIso(r.body.createdAt, 'createdAt');
  assert.match(r.body.sessionToken, TOKEN);
  assert.equal(r.body.sessionToken.length, 34);
  // §3.2: the user is logged in by the sign-up.
  const m = await me(r.body.sessionToken);
  assert.equal(m.status, 200, m.text);
  assert.equal(m.body.objectId, r.body.objectId);
  assert.equal(m.body.username, username);
  assert.equal(m.body.name, 'Sign Up');
  assertNoPassword(m, 'users/me', [password]);
});

test('§4.7 sign-up with the API key: 201', async () => {
  const username = `${uniq('apikey')}@example.test`;
  const r = await signUp({ username, password: strongPassword() }, apiKeyHeaders(app));
  assert.equal(r.status, 201, r.text);
  assert.match(r.body.sessionToken, TOKEN);
});

test('§5.3 sign-up with the application id only answers 400 119 create _User; no user is created', async () => {
  const username = `${uniq('anon')}@example.test`;
  const r = await signUp({ username, password: strongPassword() }, appHeaders(app));
  assert.equal(r.status, 400, r.text);
  assert.deepEqual(r.body, denied('create', '_User'));
  const where = encodeURIComponent(JSON.stringify({ username }));
  const l = await request(server, 'GET', `/core/classes/_User?where=${where}`, { headers: M });
  assert.equal(l.status, 200, l.text);
  assert.deepEqual(l.body.results, []);
});

test('§7 202 sign-up with an existing username answers 400 Account already exists for this username.', async () => {
  const u = await newUser();
  const r = await signUp({ username: u.username, password: strongPassword() });
  assert.equal(r.status, 400, r.text);
  assert.deepEqual(r.body, { code: 202, error: 'Account already exists for this username.' });
  // The original password still logs in.
  await loginOk(u);
});

test('§4.7 (COMPATIBILITY) sign-up with an e-mail address already in use answers 400 203', async () => {
  const u = await newUser();
  const r = await signUp({ username: `${uniq('other')}@example.test`, password: strongPassword(), email: u.email });
  assert.equal(r.status, 400, r.text);
  assert.deepEqual(r.body, { code: 203, error: 'Account already exists for this email address.' });
});

test('§4.7 sign-up without username answers 400 200; without password 400 201', async () => {
  const noName = await signUp({ password: strongPassword(), email: `${uniq('nn')}@example.test` });
  assert.equal(noName.status, 400, noName.text);
  assert.deepEqual(noName.body, { code: 200, error: 'bad or missing username' });
  const noPassword = await signUp({ username: `${uniq('np')}@example.test` });
  assert.equal(noPassword.status, 400, noPassword.text);
  assert.deepEqual(noPassword.body, { code: 201, error: 'password is required' });
});

test('§4.7 password policy: every violation answers the same 142; 8 characters with lower, upper and digit pass', async () => {
  const weak = [
    'Sh0rtPw',        // 7 characters
    'alllower1x',     // no upper case
    'ALLUPPER1X',     // no lower case
    'NoDigitsHere',   // no digit
    '12345678',       // digits only
    'Aa1',            // short, all classes
  ];
  for (const password of weak) {
    const username = `${uniq('weak')}@example.test`;
    const r = await signUp({ username, password });
    assert.equal(r.status, 400, `${password}: ${r.text}`);
    assert.deepEqual(r.body, POLICY, password);
    const l = await login(username, password);
    assert.equal(l.status, 404, `${password}: the refused user does not exist: ${l.text}`);
  }
  const ok = await signUp({ username: `${uniq('edge')}@example.test`, password: 'Abcdefg1' });
  assert.equal(ok.status, 201, ok.text);
});

// ---------------------------------------------------------------------------------------------
// §4.7 login

test('§4.7 login with the application id only: the full user object, a new session token, never the password', async () => {
  const u = await newUser({ name: 'Login Person' });
  const r = await login(u.username, u.password);
  assert.equal(r.status, 200, r.text);
  const b = r.body;
  assert.equal(b.objectId, u.id);
  assert.equal(b.username, u.username);
  assert.equal(b.email, u.email);
  assert.equal(b.name, 'Login Person');
  assert.equal(b.createdAt, u.createdAt);
  assert.match(b.updatedAt, ISO_MS);
  if ('ACL' in b) assert.equal(typeof b.ACL, 'object');
  assert.equal(b.last_success_login?.__type, 'Date', `last_success_login: ${JSON.stringify(b.last_success_login)}`);
  assertRecentIso(b.last_success_login.iso, 'last_success_login');
  assert.equal(b._failed_login_count, 0);
  assert.match(b.sessionToken, TOKEN);
  assert.notEqual(b.sessionToken, u.token, 'login opens a new session');
  assertNoPassword(r, 'login', [u.password]);
  // Both sessions are valid.
  assert.equal((await me(b.sessionToken)).status, 200);
  assert.equal((await me(u.token)).status, 200);
});

test('§2.4 last_success_login moves forward with every successful login', async () => {
  const u = await newUser();
  const first = await loginOk(u);
  await sleep(20);
  const second = await loginOk(u);
  assert.ok(second.last_success_login.iso > first.last_success_login.iso,
    `${second.last_success_login.iso} after ${first.last_success_login.iso}`);
});

test('§7 login with a wrong password or an unknown user answers 404 101 Invalid username/password.', async () => {
  const u = await newUser();
  const wrong = await login(u.username, `${u.password}x`);
  assert.equal(wrong.status, 404, wrong.text);
  assert.deepEqual(wrong.body, INVALID_LOGIN);
  const unknown = await login(`${uniq('nobody')}@example.test`, strongPassword());
  assert.equal(unknown.status, 404, unknown.text);
  assert.deepEqual(unknown.body, INVALID_LOGIN);
});

test('§2.4 _failed_login_count reports the consecutive failures before a success, then 0', async () => {
  const u = await newUser();
  for (let i = 0; i < 3; i++) {
    const r = await login(u.username, 'Wrong' + strongPassword());
    assert.deepEqual(r.body, INVALID_LOGIN);
  }
  const ok = await loginOk(u);
  assert.equal(ok._failed_login_count, 3);
  const again = await loginOk(u);
  assert.equal(again._failed_login_count, 0);
});

test('§3.1 the 8th consecutive failure locks the account; the correct password is refused while locked', async () => {
  const u = await newUser();
  const bystander = await newUser();
  for (let i = 1; i <= 7; i++) {
    const r = await login(u.username, `Wrong${i}${u.password}`);
    assert.equal(r.status, 404, `failure ${i}: ${r.text}`);
    assert.deepEqual(r.body, INVALID_LOGIN, `failure ${i}`);
  }
  const eighth = await login(u.username, `Wrong8${u.password}`);
  assert.equal(eighth.status, 404, eighth.text);
  assert.deepEqual(eighth.body, LOCKED);
  const correct = await login(u.username, u.password);
  assert.equal(correct.status, 404, correct.text);
  assert.deepEqual(correct.body, LOCKED);
  const wrongAgain = await login(u.username, `Wrong9${u.password}`);
  assert.equal(wrongAgain.status, 404, wrongAgain.text);
  assert.deepEqual(wrongAgain.body, LOCKED);
  // The lock is per account.
  await loginOk(bystander);
});

test('§3.1 a success before the 8th failure resets the counter', async () => {
  const u = await newUser();
  for (let i = 0; i < 7; i++) assert.deepEqual((await login(u.username, `Bad${i}${u.password}`)).body, INVALID_LOGIN);
  const ok = await loginOk(u);
  assert.equal(ok._failed_login_count, 7);
  // Seven more failures are again below the lock.
  for (let i = 0; i < 7; i++) {
    const r = await login(u.username, `Bad${i}${u.password}`);
    assert.deepEqual(r.body, INVALID_LOGIN, `failure ${i + 1} after the reset: ${r.text}`);
  }
  const ok2 = await loginOk(u);
  assert.equal(ok2._failed_login_count, 7);
  const ok3 = await loginOk(u);
  assert.equal(ok3._failed_login_count, 0);
});

test('§3.1 active:false set with the master key blocks login with 404 101 User is not active.; active:true allows it again', async () => {
  const u = await newUser();
  const off = await request(server, 'PUT', `/core/users/${u.id}`, { headers: M, body: { active: false } });
  assert.equal(off.status, 200, off.text);
  const r = await login(u.username, u.password);
  assert.equal(r.status, 404, r.text);
  assert.deepEqual(r.body, INACTIVE);
  const on = await request(server, 'PUT', `/core/users/${u.id}`, { headers: M, body: { active: true } });
  assert.equal(on.status, 200, on.text);
  await loginOk(u);
});

test('§3.1 SECURITY 8 concurrent failed logins lock the account like 8 consecutive ones', async () => {
  const u = await newUser();
  const results = await Promise.all(Array.from({ length: 8 }, (_, i) => login(u.username, `Wrong${i}${u.password}`)));
  for (const r of results) {
    assert.equal(r.status, 404, r.text);
    assert.ok([INVALID_LOGIN.error, LOCKED.error].includes(r.body.error), r.text);
  }
  const correct = await login(u.username, u.password);
  assert.equal(correct.status, 404, `the counter lost concurrent failures: ${correct.text}`);
  assert.deepEqual(correct.body, LOCKED);
});

test('§2.4 _User.permissions (the MCP switches) is an Array of strings the master key sets', async () => {
  const u = await newUser();
  const r = await request(server, 'PUT', `/core/users/${u.id}`, { headers: M, body: { permissions: ['mcp:view', 'mcp:create'] } });
  assert.equal(r.status, 200, r.text);
  const g = await request(server, 'GET', `/core/classes/_User/${u.id}`, { headers: M });
  assert.deepEqual(g.body.permissions, ['mcp:view', 'mcp:create']);
  const self = await request(server, 'PUT', `/core/users/${u.id}`, {
    headers: S(u.token), body: { permissions: ['mcp:view', 'mcp:create', 'mcp:update', 'mcp:edit-page-and-schema'] },
  });
  assert.equal(self.status, 400, self.text);
  assert.deepEqual((await request(server, 'GET', `/core/classes/_User/${u.id}`, { headers: M })).body.permissions, ['mcp:view', 'mcp:create']);
});

test('SECURITY session fixation: a sessionToken sent by the client at sign-up is never adopted', async () => {
  const fixed = `r:${crypto.randomBytes(16).toString('hex')}`;
  const username = `${uniq('fix')}@example.test`;
  const r = await signUp({ username, password: strongPassword(), sessionToken: fixed });
  if (r.status === 201) assert.notEqual(r.body.sessionToken, fixed);
  else assert.ok(r.status >= 400 && r.status < 500, r.text);
  await assertSessionInvalid(fixed, 'a client-chosen token');
});

// ---------------------------------------------------------------------------------------------
// §3.2 sessions, /users/me, logout

test('§4.7 GET /core/users/me with a session token answers the user with its sessionToken, without password', async () => {
  const u = await newUser({ name: 'Me Myself', phone: '+972-50-0000000' });
  const r = await me(u.token);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.objectId, u.id);
  assert.equal(r.body.username, u.username);
  assert.equal(r.body.email, u.email);
  assert.equal(r.body.name, 'Me Myself');
  assert.equal(r.body.phone, '+972-50-0000000');
  assert.equal(r.body.sessionToken, u.token);
  assert.equal(r.body.createdAt, u.createdAt);
  assertNoPassword(r, 'users/me', [u.password]);
});

test('§3.2 logout answers 200 {} and cancels the session: 400 209 afterwards; other sessions stay valid', async () => {
  const u = await newUser();
  const second = (await loginOk(u)).sessionToken;
  const out = await request(server, 'POST', '/core/logout', { headers: S(u.token) });
  assert.equal(out.status, 200, out.text);
  assert.deepEqual(out.body, {});
  await assertSessionInvalid(u.token, 'me after logout');
  const list = await request(server, 'GET', '/core/classes/_User', { headers: S(u.token) });
  assert.equal(list.status, 400, list.text);
  assert.deepEqual(list.body, INVALID_SESSION);
  const again = await request(server, 'POST', '/core/logout', { headers: S(u.token) });
  assert.equal(again.status, 400, again.text);
  assert.deepEqual(again.body, INVALID_SESSION);
  assert.equal((await me(second)).status, 200, 'the other session of the user is not cancelled');
});

test('§3.2 an unknown or malformed session token answers 400 209 invalid session token', async () => {
  const u = await newUser();
  const forged = [
    `r:${crypto.randomBytes(16).toString('hex')}`,
    u.token.slice(0, -1) + (u.token.endsWith('0') ? '1' : '0'),
    u.token.toUpperCase(),
    u.token.slice(2),
    `${u.token}0`,
    'garbage',
  ];
  for (const token of forged) {
    const r = await me(token);
    assert.equal(r.status, 400, `${token}: ${r.text}`);
    assert.deepEqual(r.body, INVALID_SESSION, token);
    const l = await request(server, 'GET', '/core/classes/_User', { headers: S(token) });
    assert.equal(l.status, 400, `${token}: ${l.text}`);
    assert.deepEqual(l.body, INVALID_SESSION, token);
  }
  assert.equal((await me(u.token)).status, 200);
});

test('§3.2 --session-ttl 2: a session expires and then answers 400 209', async () => {
  const s = await setup({ extraArgs: ['--session-ttl', '2'] });
  const u = await newUser({}, s.server, s.app);
  const token = (await loginOk(u, u.password, s.server, s.app)).sessionToken;
  const fresh = await me(token, s.server, s.app);
  assert.equal(fresh.status, 200, fresh.text);
  await sleep(3000);
  for (const t of [token, u.token]) {
    const r = await me(t, s.server, s.app);
    assert.equal(r.status, 400, r.text);
    assert.deepEqual(r.body, INVALID_SESSION);
  }
  // A new login gives a working session again.
  const again = (await loginOk(u, u.password, s.server, s.app)).sessionToken;
  assert.equal((await me(again, s.server, s.app)).status, 200);
  await s.server.stop();
});

// ---------------------------------------------------------------------------------------------
// §4.7 updating users

test('§4.7 PUT /core/users/<id> with the master key: 200 {updatedAt, objectId}; the fields change', async () => {
  const u = await newUser();
  const r = await request(server, 'PUT', `/core/users/${u.id}`, { headers: M, body: { phone: '03-1234567', job: 'Sales rep' } });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(Object.keys(r.body).sort(), ['objectId', 'updatedAt']);
  assert.equal(r.body.objectId, u.id);
  assertRecentIso(r.body.updatedAt, 'updatedAt');
  const m = await me(u.token);
  assert.equal(m.body.phone, '03-1234567');
  assert.equal(m.body.job, 'Sales rep');
  assert.equal(m.body.updatedAt, r.body.updatedAt);
});

test('§7 206 another user\'s session updating a user answers 400 Cannot modify user <id>.; nothing changes', async () => {
  const victim = await newUser({ name: 'Victim' });
  const attacker = await newUser();
  const r = await request(server, 'PUT', `/core/users/${victim.id}`, {
    headers: S(attacker.token), body: { name: 'Pwned', password: strongPassword() },
  });
  assert.equal(r.status, 400, r.text);
  assert.deepEqual(r.body, { code: 206, error: `Cannot modify user ${victim.id}.` });
  const g = await request(server, 'GET', `/core/classes/_User/${victim.id}`, { headers: M });
  assert.equal(g.body.name, 'Victim');
  await loginOk(victim);
});

test('§4.7 a user cannot update their own record: 400 119 update _User, on /users and on /classes/_User', async () => {
  const u = await newUser({ name: 'Self' });
  for (const p of [`/core/users/${u.id}`, `/core/classes/_User/${u.id}`]) {
    const r = await request(server, 'PUT', p, { headers: S(u.token), body: { name: 'Changed', permissions: ['mcp:view'] } });
    assert.equal(r.status, 400, `${p}: ${r.text}`);
    assert.deepEqual(r.body, denied('update', '_User'), p);
  }
  const g = await request(server, 'GET', `/core/classes/_User/${u.id}`, { headers: M });
  assert.equal(g.body.name, 'Self');
  assert.equal(g.body.permissions, undefined);
});

test('§4.7 master password change: the policy applies (142); then the old password fails, the new works, old sessions get 209', async () => {
  const u = await newUser();
  const loggedIn = (await loginOk(u)).sessionToken;
  const weak = await request(server, 'PUT', `/core/users/${u.id}`, { headers: M, body: { password: 'weakpassword' } });
  assert.equal(weak.status, 400, weak.text);
  assert.deepEqual(weak.body, POLICY);
  assert.equal((await me(u.token)).status, 200, 'a refused change revokes nothing');
  await loginOk(u);

  const newPassword = strongPassword();
  const r = await request(server, 'PUT', `/core/users/${u.id}`, { headers: M, body: { password: newPassword } });
  assert.equal(r.status, 200, r.text);
  assertNoPassword(r, 'password change', [newPassword]);
  const old = await login(u.username, u.password);
  assert.equal(old.status, 404, old.text);
  assert.deepEqual(old.body, INVALID_LOGIN);
  const fresh = await loginOk(u, newPassword);
  assert.equal((await me(fresh.sessionToken)).status, 200);
  await assertSessionInvalid(u.token, 'sign-up session after a password change');
  await assertSessionInvalid(loggedIn, 'login session after a password change');
});

// ---------------------------------------------------------------------------------------------
// §4.7 deleting users

test('§4.7 DELETE /core/users/<id> with the master key or the API key: 200 {}; the user is gone', async () => {
  for (const headers of [M, apiKeyHeaders(app)]) {
    const u = await newUser();
    const r = await request(server, 'DELETE', `/core/users/${u.id}`, { headers });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, {});
    const g = await request(server, 'GET', `/core/classes/_User/${u.id}`, { headers: M });
    assert.equal(g.status, 404, g.text);
    assert.deepEqual(g.body, NOT_FOUND);
    const l = await login(u.username, u.password);
    assert.equal(l.status, 404, l.text);
    assert.deepEqual(l.body, INVALID_LOGIN);
    await assertSessionInvalid(u.token, 'session of a deleted user');
  }
});

test('§4.7 DELETE of a user a record points at answers 400 119 (pointer rule); the user stays', async () => {
  const u = await newUser();
  await createRecord(server, app, 'OwnedThings', { Name: 'thing', Owner: { __type: 'Pointer', className: '_User', objectId: u.id } });
  const r = await request(server, 'DELETE', `/core/users/${u.id}`, { headers: M });
  assert.equal(r.status, 400, r.text);
  assert.deepEqual(r.body, {
    code: 119,
    error: `Pointer to Object ${u.id} exists in table OwnedThings in key Owner. Delete is not allowed.`,
  });
  await loginOk(u);
});

test('§4.7 a session cannot delete a user, not even its own: 400 119 delete _User', async () => {
  const u = await newUser();
  const other = await newUser();
  for (const [token, target] of [[u.token, u.id], [other.token, u.id]]) {
    for (const p of [`/core/users/${target}`, `/core/classes/_User/${target}`]) {
      const r = await request(server, 'DELETE', p, { headers: S(token) });
      assert.equal(r.status, 400, `${p}: ${r.text}`);
      assert.deepEqual(r.body, denied('delete', '_User'), p);
    }
  }
  await loginOk(u);
});

// ---------------------------------------------------------------------------------------------
// §2.4 password is write-only; §4.7 reading _User

test('§2.4 password is never returned: master get, keys=password, list, include of a Pointer to _User', async () => {
  const u = await newUser({ name: 'Hidden Password' });
  const reads = {
    get: `/core/classes/_User/${u.id}`,
    'get keys=password': `/core/classes/_User/${u.id}?keys=password`,
    'get keys=password,username': `/core/classes/_User/${u.id}?keys=password,username`,
    list: '/core/classes/_User?limit=1000',
    'list keys=password': '/core/classes/_User?keys=password',
  };
  for (const [label, p] of Object.entries(reads)) {
    for (const headers of [M, apiKeyHeaders(app)]) {
      const r = await request(server, 'GET', p, { headers });
      assert.equal(r.status, 200, `${label}: ${r.text}`);
      assertNoPassword(r, label, [u.password]);
    }
  }
  // `_hashed_password` is not a valid field name: 105 or a result without it.
  const hashed = await request(server, 'GET', `/core/classes/_User/${u.id}?keys=_hashed_password,username`, { headers: M });
  if (hashed.status !== 200) assert.equal(hashed.body.code, 105, hashed.text);
  assertNoPassword(hashed, 'keys=_hashed_password', [u.password]);

  const rec = await createRecord(server, app, 'UserRefs', { Owner: { __type: 'Pointer', className: '_User', objectId: u.id } });
  for (const p of [`/core/classes/UserRefs/${rec}?include=Owner`, '/core/classes/UserRefs?include=Owner',
    `/core/classes/UserRefs/${rec}?include=Owner&keys=Owner.password,Owner.username`]) {
    const r = await request(server, 'GET', p, { headers: M });
    assert.equal(r.status, 200, `${p}: ${r.text}`);
    assertNoPassword(r, p, [u.password]);
  }
  const inc = await request(server, 'GET', `/core/classes/UserRefs/${rec}?include=Owner`, { headers: M });
  assert.equal(inc.body.Owner.username, u.username, 'include expands the user (without password)');
  const m = await me(u.token);
  assertNoPassword(m, 'users/me', [u.password]);
});

test('SECURITY field oracles: where on password or _hashed_password answers 400 105, top level and nested', async () => {
  const u = await newUser();
  const wheres = [
    { password: u.password },
    { password: { $exists: true } },
    { password: { $regex: '^P' } },
    { _hashed_password: { $exists: true } },
    { _hashed_password: { $regex: '^\\$argon2' } },
    { $or: [{ username: 'nobody' }, { password: u.password }] },
    { $and: [{ _hashed_password: { $gt: '' } }] },
  ];
  for (const headers of [M, S(u.token)]) {
    for (const w of wheres) {
      const r = await request(server, 'GET', `/core/classes/_User?where=${encodeURIComponent(JSON.stringify(w))}`, { headers });
      assert.equal(r.status, 400, `${JSON.stringify(w)}: ${r.text}`);
      assert.equal(r.body.code, 105, `${JSON.stringify(w)}: ${r.text}`);
    }
  }
  // Through a sub-query into _User.
  await createRecord(server, app, 'UserRefs2', { Owner: { __type: 'Pointer', className: '_User', objectId: u.id } });
  const sub = { Owner: { $inQuery: { className: '_User', where: { password: { $regex: '^P' } } } } };
  const r = await request(server, 'GET', `/core/classes/UserRefs2?where=${encodeURIComponent(JSON.stringify(sub))}`, { headers: M });
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.code, 105, r.text);
});

test('§4.7 anonymous read of _User answers 404 101 user needs to be authenticated; any session reads it', async () => {
  const u = await newUser();
  const anon = await request(server, 'GET', '/core/classes/_User', { headers: appHeaders(app) });
  assert.equal(anon.status, 404, anon.text);
  assert.deepEqual(anon.body, NEEDS_AUTH);
  const anonGet = await request(server, 'GET', `/core/classes/_User/${u.id}`, { headers: appHeaders(app) });
  assert.ok([400, 404].includes(anonGet.status), anonGet.text);
  assert.ok([101, 119].includes(anonGet.body.code), anonGet.text);
  assert.equal(anonGet.text.includes(u.username), false);
  const s = await request(server, 'GET', '/core/classes/_User', { headers: S(u.token) });
  assert.equal(s.status, 200, s.text);
  assert.ok(Array.isArray(s.body.results), s.text);
  assert.ok(s.body.results.some((x) => x.objectId === u.id), 'the user sees itself');
  assertNoPassword(s, 'session list of _User', [u.password]);
});

// ---------------------------------------------------------------------------------------------
// §4.7 password reset

test('§4.7 requestPasswordReset answers the same 200 for known and unknown addresses; only a known one gets a mail', async () => {
  const u = await newUser();
  const unknownEmail = `${uniq('ghost')}@example.test`;
  const unknown = await requestReset(unknownEmail);
  const known = await requestReset(u.email);
  assert.equal(unknown.status, 200, unknown.text);
  assert.equal(known.status, 200, known.text);
  assert.deepEqual(unknown.body, RESET_ACCEPTED);
  assert.deepEqual(known.body, RESET_ACCEPTED);
  assert.equal(unknown.text, known.text);

  const mails = await waitForMails(u.email, 1);
  assert.equal(mails.length, 1, 'exactly one mail for one request');
  assert.match(mails[0].raw, new RegExp(`^To:[^\\n]*${escapeRe(u.email)}`, 'mi'));
  const token = resetTokenFrom(mails[0]);
  assert.ok(token.length >= 16, `a reset token is a long random value: ${token}`);
  assert.equal(mails[0].text.includes(u.password), false, 'the mail does not carry the password');
  // The unknown address was requested first; once the known one's mail is written, none came for it.
  await sleep(200);
  assert.deepEqual(mailsTo(unknownEmail), [], 'no mail for an unknown address');
  assert.equal(readOutbox().filter((m) => m.raw.includes(unknownEmail)).length, 0);
});

test('§4.7 reset page: GET the link answers an HTML form; POST a strong password answers 200 HTML and changes the password', async () => {
  const u = await newUser();
  const loggedIn = (await loginOk(u)).sessionToken;
  const token = await resetTokenFor(u);
  const page = await resetPage(token);
  assertHtml(page, 200, 'reset page');
  assert.match(page.text, /<form/i);
  const newPassword = strongPassword();
  const done = await postReset(token, newPassword);
  assertHtml(done, 200, 'reset POST');
  assert.equal(done.text.includes(newPassword), false, 'the page does not echo the password');
  const old = await login(u.username, u.password);
  assert.deepEqual(old.body, INVALID_LOGIN);
  await loginOk(u, newPassword);
  await assertSessionInvalid(u.token, 'sign-up session after a reset');
  await assertSessionInvalid(loggedIn, 'login session after a reset');
});

test('§4.7 reset: a weak password answers 400 HTML and the token stays usable; the token is single-use', async () => {
  const u = await newUser();
  const token = await resetTokenFor(u);
  const weak = await postReset(token, 'weakpassword');
  assertHtml(weak, 400, 'weak password');
  await loginOk(u); // unchanged
  const p1 = strongPassword();
  assertHtml(await postReset(token, p1), 200, 'first use');
  const p2 = strongPassword();
  const second = await postReset(token, p2);
  assertHtml(second, 400, 'second use');
  await loginOk(u, p1);
  const l2 = await login(u.username, p2);
  assert.deepEqual(l2.body, INVALID_LOGIN);
});

test('§4.7 reset: an unknown token is refused with 400', async () => {
  const u = await newUser();
  const r = await postReset(crypto.randomBytes(24).toString('hex'), strongPassword());
  assertHtml(r, 400, 'unknown token');
  await loginOk(u);
});

test('SECURITY reset page: a hostile token in the URL or the form is never reflected unescaped', async () => {
  const payload = '"><script>alert(1)</script><img src=x onerror=alert(2)>';
  const g = await request(server, 'GET', `/core/apps/${app.appId}/reset-password?token=${encodeURIComponent(payload)}`);
  assert.ok(g.status < 500, `${g.status} ${g.text.slice(0, 300)}`);
  assert.equal(g.text.includes('<script>alert(1)'), false, 'the token is reflected as HTML');
  assert.equal(g.text.includes('<img src=x'), false, 'the token is reflected as HTML');
  const p = await postReset(payload, strongPassword());
  assert.equal(p.status, 400, p.text.slice(0, 300));
  assert.equal(p.text.includes('<script>alert(1)'), false, 'the token is reflected as HTML');
  assert.equal(p.text.includes('<img src=x'), false, 'the token is reflected as HTML');
});

test('SECURITY session fixation: one reset token used by 5 concurrent POSTs succeeds exactly once', async () => {
  const u = await newUser();
  const token = await resetTokenFor(u);
  const passwords = Array.from({ length: 5 }, () => strongPassword());
  const results = await Promise.all(passwords.map((p) => postReset(token, p)));
  const statuses = results.map((r) => r.status);
  assert.equal(statuses.filter((s) => s === 200).length, 1, `statuses: ${statuses.join(', ')}`);
  assert.equal(statuses.filter((s) => s === 400).length, 4, `statuses: ${statuses.join(', ')}`);
  const winner = passwords[statuses.indexOf(200)];
  const logins = [];
  for (const p of passwords) logins.push((await login(u.username, p)).status);
  assert.deepEqual(logins, passwords.map((p) => (p === winner ? 200 : 404)), 'only the winning password logs in');
});

// Every file under `dir` (data files, WAL, outbox), as bytes.
function filesUnder(dir) {
  const out = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, e.name);
      if (e.isDirectory()) walk(full); else if (e.isFile()) out.push({ file: full, bytes: fs.readFileSync(full) });
    }
  };
  walk(dir);
  return out;
}

test('§3.2 SECURITY secrets: session tokens are stored hashed and passwords as argon2id hashes; neither is in any data file', async () => {
  const u = await newUser();
  const logged = (await loginOk(u)).sessionToken;
  // The data directory, and the database's own files where the store is PostgreSQL.
  const files = [dataDir, ...storeDirs(dataDir)].flatMap(filesUnder).filter((f) => !f.file.endsWith('.eml'));
  assert.ok(files.length > 0);
  for (const secret of [u.token, logged, u.token.slice(2), logged.slice(2), u.password]) {
    const hits = files.filter((f) => f.bytes.includes(Buffer.from(secret, 'utf8'))).map((f) => f.file);
    assert.deepEqual(hits, [], `a ${secret.startsWith('Pw') ? 'password' : 'session token'} is stored in clear`);
  }
  assert.ok(files.some((f) => f.bytes.includes(Buffer.from('$argon2id$'))), 'an argon2id hash is stored');
});

// ---------------------------------------------------------------------------------------------
// SECURITY secrets: nothing secret in the server's log (a server of its own, read after it stops)

test('SECURITY secrets: no password, session token, reset token, master key or API key in the server log', async () => {
  const s = await setup();
  const secrets = [s.app.masterKey, s.app.apiKey];
  const track = (v) => { if (typeof v === 'string' && v.length > 0) secrets.push(v); return v; };

  const u = await newUser({}, s.server, s.app);
  track(u.password);
  track(u.token);
  const failed = await login(u.username, track(`Wrong${strongPassword()}`), s.server, s.app);
  assert.equal(failed.status, 404);
  const weakSignUp = await signUp({ username: `${uniq('w')}@example.test`, password: track(`weak${crypto.randomBytes(5).toString('hex')}`) },
    masterHeaders(s.app), s.server);
  assert.equal(weakSignUp.status, 400);
  track((await loginOk(u, u.password, s.server, s.app)).sessionToken);
  const changed = track(strongPassword());
  const put = await request(s.server, 'PUT', `/core/users/${u.id}`, { headers: masterHeaders(s.app), body: { password: changed } });
  assert.equal(put.status, 200, put.text);
  const weakPut = await request(s.server, 'PUT', `/core/users/${u.id}`, {
    headers: masterHeaders(s.app), body: { password: track(`weak${crypto.randomBytes(5).toString('hex')}`) },
  });
  assert.equal(weakPut.status, 400);
  const t2 = track((await loginOk(u, changed, s.server, s.app)).sessionToken);
  assert.equal((await me(t2, s.server, s.app)).status, 200);
  const resetToken = track(await resetTokenFor(u, s.server, s.app, s.dataDir));
  assertHtml(await resetPage(resetToken, s.server, s.app), 200, 'reset page');
  assertHtml(await postReset(resetToken, track(`weak${crypto.randomBytes(5).toString('hex')}`), s.server, s.app), 400, 'weak reset');
  const reset = track(strongPassword());
  assertHtml(await postReset(resetToken, reset, s.server, s.app), 200, 'reset');
  const t3 = track((await loginOk(u, reset, s.server, s.app)).sessionToken);
  assert.equal((await request(s.server, 'POST', '/core/logout', { headers: S(t3, s.app) })).status, 200);
  assert.equal((await me(t3, s.server, s.app)).status, 400);

  assert.deepEqual(await s.server.stop(), { code: 0, signal: null });
  const log = s.server.stderr();
  assert.ok(log.length > 0, 'the server logged something');
  for (const secret of secrets) {
    const label = `${secret.slice(0, 4)}… (length ${secret.length})`;
    assert.equal(log.includes(secret), false, `a secret appears in the log: ${label}`);
    if (secret.startsWith('r:')) assert.equal(log.includes(secret.slice(2)), false, `a session token's hex appears in the log: ${label}`);
    const sha = crypto.createHash('sha256').update(secret).digest('hex');
    assert.equal(log.includes(sha), false, `the SHA-256 of a secret appears in the log: ${label}`);
  }
  assert.equal(/\$argon2|\$2[aby]\$/.test(log), false, 'a password hash appears in the log');
});
