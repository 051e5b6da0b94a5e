// SECURITY.md session fixation and reuse, principal confusion: findings of the issue-4 security
// review, each pinned.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setup, stopAll, request, masterHeaders, apiKeyHeaders, appHeaders, createRecord, pollUntil, outboxMails } from './lib/harness.mjs';

let server;
let app;
let dataDir;
let M;
before(async () => {
  ({ server, app, dataDir } = await setup());
  M = masterHeaders(app);
});
after(stopAll);

async function signUp(username, extra = {}) {
  const r = await request(server, 'POST', '/core/users', { headers: M, body: { username, password: 'Passw0rdA', ...extra } });
  assert.equal(r.status, 201, r.text);
  return r.body;
}
const session = (token) => ({ ...appHeaders(app), 'X-Core-Session-Token': token });

test('SECURITY session reuse: deactivating a user ends their sessions at once', async () => {
  const u = await signUp('deactivated');
  assert.equal((await request(server, 'GET', '/core/users/me', { headers: session(u.sessionToken) })).status, 200);
  const off = await request(server, 'PUT', `/core/users/${u.objectId}`, { headers: M, body: { active: false } });
  assert.equal(off.status, 200, off.text);
  const me = await request(server, 'GET', '/core/users/me', { headers: session(u.sessionToken) });
  assert.equal(me.status, 400);
  assert.deepEqual(me.body, { code: 209, error: 'invalid session token' });
});

test('GET /users/me with a key beside the session token answers the session\'s user; a key alone or a wrong token is 209', async () => {
  const u = await signUp('mewithkey');
  for (const key of [M, apiKeyHeaders(app)]) {
    const me = await request(server, 'GET', '/core/users/me', { headers: { ...key, 'X-Core-Session-Token': u.sessionToken } });
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.objectId, u.objectId);
    assert.equal(me.body.username, 'mewithkey');
    assert.equal(me.body.sessionToken, u.sessionToken);
    for (const headers of [key, { ...key, 'X-Core-Session-Token': 'r:' + 'x'.repeat(32) }]) {
      const none = await request(server, 'GET', '/core/users/me', { headers });
      assert.equal(none.status, 400, none.text);
      assert.deepEqual(none.body, { code: 209, error: 'invalid session token' });
    }
  }
});

test('SECURITY session reuse: a password change voids a reset link mailed before it', async () => {
  await signUp('resetvoid', { email: 'resetvoid@example.test' });
  const asked = await request(server, 'POST', '/core/requestPasswordReset', { headers: appHeaders(app), body: { email: 'resetvoid@example.test' } });
  assert.equal(asked.status, 200);
  // The mail goes once the token's write is durable, from the after-commit thread: poll for it.
  const outbox = path.join(dataDir, 'apps', app.appId, 'outbox');
  const found = await pollUntil(() => {
    const mails = outboxMails(outbox).map((f) => fs.readFileSync(path.join(outbox, f), 'utf8'));
    const hit = mails.find((m) => m.includes('resetvoid@example.test'));
    return { done: Boolean(hit), mail: hit };
  }, { timeoutMs: 5000, intervalMs: 25 });
  assert.ok(found.ok, 'the reset mail reached the outbox');
  const mail = found.last.mail;
  const link = mail.match(/http:\/\/\S+reset-password\?token=([0-9a-f]+)/);
  const me = await request(server, 'GET', `/core/classes/_User?where=${encodeURIComponent(JSON.stringify({ username: 'resetvoid' }))}`, { headers: M });
  const id = me.body.results[0].objectId;
  const changed = await request(server, 'PUT', `/core/users/${id}`, { headers: M, body: { password: 'Admin5etIt' } });
  assert.equal(changed.status, 200, changed.text);
  const used = await fetch(link[0].split('?')[0], {
    method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: `token=${link[1]}&new_password=Attack3rX`,
  });
  assert.equal(used.status, 400);
  const login = await request(server, 'POST', '/core/login', { headers: appHeaders(app), body: { username: 'resetvoid', password: 'Admin5etIt' } });
  assert.equal(login.status, 200, login.text);
});

test('SECURITY principal confusion: a CLP opening _User updates to a role never lets one user rewrite another', async () => {
  const manager = await signUp('manager');
  const victim = await signUp('victim');
  await createRecord(server, app, '_Role', {
    name: 'Managers', users: { __op: 'AddRelation', objects: [{ __type: 'Pointer', className: '_User', objectId: manager.objectId }] },
  });
  const clp = await request(server, 'PUT', '/core/schemas/_User', { headers: M, body: { classLevelPermissions: { update: { 'role:Managers': true } } } });
  assert.equal(clp.status, 200, clp.text);
  for (const body of [{ password: 'Takeover1x' }, { email: 'evil@example.test' }, { phone: '1' }]) {
    const r = await request(server, 'PUT', `/core/classes/_User/${victim.objectId}`, { headers: session(manager.sessionToken), body });
    assert.equal(r.status, 400, r.text);
    assert.deepEqual(r.body, { code: 206, error: `Cannot modify user ${victim.objectId}.` });
  }
  const own = await request(server, 'PUT', `/core/classes/_User/${manager.objectId}`, { headers: session(manager.sessionToken), body: { password: 'Changed9x' } });
  assert.equal(own.status, 400, own.text);
  assert.equal(own.body.code, 119);
  const login = await request(server, 'POST', '/core/login', { headers: appHeaders(app), body: { username: 'victim', password: 'Passw0rdA' } });
  assert.equal(login.status, 200, 'the victim keeps their password');
});

test('§2.4 a new user gets public read and owner write in its ACL (Parse)', async () => {
  const u = await signUp('aclcheck');
  const got = await request(server, 'GET', `/core/users/${u.objectId}`, { headers: M });
  assert.deepEqual(got.body.ACL, { '*': { read: true }, [u.objectId]: { read: true, write: true } });
});

test('SECURITY field oracles: protectedFields that crmd cannot enforce yet are refused, not silently stored', async () => {
  await createRecord(server, app, 'Leads', { Name: 'x', Salary: 5 });
  const r = await request(server, 'PUT', '/core/schemas/Leads', { headers: M, body: { classLevelPermissions: { protectedFields: { '*': ['Salary'] } } } });
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.code, 107);
});

test('SECURITY principal confusion: role names are validated, unique and immutable (ACLs name roles by them)', async () => {
  const first = await request(server, 'POST', '/core/classes/_Role', { headers: M, body: { name: 'Sales Team', ACL: { '*': { read: true } } } });
  assert.equal(first.status, 201, first.text);
  const dup = await request(server, 'POST', '/core/classes/_Role', { headers: M, body: { name: 'Sales Team' } });
  assert.deepEqual(dup.body, { code: 137, error: 'Cannot add duplicate role name of Sales Team.' });
  for (const name of ['role:Admin', '*', 'a"b', '', 'x'.repeat(64)]) {
    const bad = await request(server, 'POST', '/core/classes/_Role', { headers: M, body: { name } });
    assert.equal(bad.status, 400, `${name}: ${bad.text}`);
    assert.equal(bad.body.code, 139);
  }
  const rename = await request(server, 'PUT', `/core/classes/_Role/${first.body.objectId}`, { headers: M, body: { name: 'Admins' } });
  assert.deepEqual(rename.body, { code: 136, error: "A role's name can only be set before it has been saved." });
});
