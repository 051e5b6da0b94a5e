// Roles, class-level permissions, record ACLs and the credential table (spec §2.1, §2.4, §2.5,
// §4.7, §4.9 Config, §5.2, §5.3, §7) and the attacks of SECURITY.md that target them, against the
// real crmd binary. One server with two applications; each test makes its own users, roles and classes.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import {
  makeDataDir, createApp, startServer, stopAll, request, appHeaders, masterHeaders, apiKeyHeaders,
  createRecord, listAll,
} from './lib/harness.mjs';

let server;
let app;   // application A: everything happens here
let appB;  // application B: only for tenant isolation
let M;     // master-key headers of A
let K;     // API-key headers of A

before(async () => {
  const dataDir = makeDataDir();
  app = createApp(dataDir, { id: 'permsA', name: 'Permissions A' });
  appB = createApp(dataDir, { id: 'permsB', name: 'Permissions B' });
  server = await startServer(dataDir);
  M = masterHeaders(app);
  K = apiKeyHeaders(app);
});
after(stopAll);

const NOT_FOUND = { code: 101, error: 'Object not found.' };
const NEEDS_AUTH = { code: 101, error: 'user needs to be authenticated' };
const INVALID_SESSION = { code: 209, error: 'invalid session token' };
const INVALID_LOGIN = { code: 101, error: 'Invalid username/password.' };
const CAPTCHA = { code: 119, error: 'This action is not allowed without a valid CAPTCHA' };
const SCHEMA_DENIED = { error: 'unauthorized: master key is required' };
const denied = (op, cls) => ({ code: 119, error: `Permission denied for action ${op} on class ${cls}.` });

const OPS = ['find', 'get', 'count', 'create', 'update', 'delete', 'addField'];
const clpAll = (perm) => Object.fromEntries(OPS.map((op) => [op, perm]));

let seq = 0;
const hex = (n) => crypto.randomBytes(n).toString('hex');
const uniqClass = (p) => `${p}${(seq++).toString(36)}x${hex(3)}`;
const uniqRole = (p) => `${p}_${(seq++).toString(36)}${hex(3)}`;
const strongPassword = () => `Pw${hex(6)}Z9`;
const ptr = (className, objectId) => ({ __type: 'Pointer', className, objectId });
const q = (where) => `where=${encodeURIComponent(JSON.stringify(where))}`;
const S = (token, a = app) => ({ ...appHeaders(a), 'X-Core-Session-Token': token });

// Signs up a fresh user with the master key: {id, username, password, token}.
async function newUser(a = app) {
  const username = `${(seq++).toString(36)}u${hex(4)}@example.test`;
  const password = strongPassword();
  const r = await request(server, 'POST', '/core/users', { headers: masterHeaders(a), body: { username, password, email: username } });
  assert.equal(r.status, 201, `sign-up: ${r.text}`);
  return { id: r.body.objectId, username, password, token: r.body.sessionToken };
}

function login(username, password, a = app) {
  return request(server, 'POST', '/core/login', { headers: appHeaders(a), body: { username, password } });
}

// Creates a _Role with the master key; returns its objectId.
async function makeRole(name, { users = [], roles = [], ACL = { '*': { read: true } } } = {}) {
  const body = { name, ACL };
  if (users.length) body.users = { __op: 'AddRelation', objects: users.map((u) => ptr('_User', u.id)) };
  if (roles.length) body.roles = { __op: 'AddRelation', objects: roles.map((id) => ptr('_Role', id)) };
  const r = await request(server, 'POST', '/core/classes/_Role', { headers: M, body });
  assert.equal(r.status, 201, `create role ${name}: ${r.text}`);
  return r.body.objectId;
}

async function setClp(cls, classLevelPermissions) {
  const r = await request(server, 'PUT', `/core/schemas/${cls}`, { headers: M, body: { classLevelPermissions } });
  assert.equal(r.status, 200, `set CLP of ${cls}: ${r.text}`);
  return r;
}

// A new class open to everyone for every operation (made through the schema API).
async function openClass(cls) {
  const r = await request(server, 'POST', `/core/schemas/${cls}`, { headers: M, body: { classLevelPermissions: clpAll({ '*': true }) } });
  assert.equal(r.status, 200, `open ${cls}: ${r.text}`);
}

// A class created by a master write with `n` records Name r0..r(n-1), then opened to everyone
// (a class a key's write makes starts closed, issue 17 #4); returns [ids].
async function seedClass(cls, n = 2) {
  const ids = [];
  for (let i = 0; i < n; i++) ids.push(await createRecord(server, app, cls, { Name: `r${i}` }));
  await setClp(cls, clpAll({ '*': true }));
  return ids;
}

const find = (cls, headers, query = '') => request(server, 'GET', `/core/classes/${cls}${query ? `?${query}` : ''}`, { headers });
const get = (cls, id, headers, query = '') => request(server, 'GET', `/core/classes/${cls}/${id}${query ? `?${query}` : ''}`, { headers });
const create = (cls, body, headers) => request(server, 'POST', `/core/classes/${cls}`, { headers, body });
const update = (cls, id, body, headers) => request(server, 'PUT', `/core/classes/${cls}/${id}`, { headers, body });
const remove = (cls, id, headers) => request(server, 'DELETE', `/core/classes/${cls}/${id}`, { headers });

// find, get, create, update, delete against `cls`/`id` with `headers`: [{op, res}].
async function everyOperation(cls, id, headers) {
  return [
    { op: 'find', res: await find(cls, headers) },
    { op: 'get', res: await get(cls, id, headers) },
    { op: 'create', res: await create(cls, { Name: 'intruder' }, headers) },
    { op: 'update', res: await update(cls, id, { Name: 'changed' }, headers) },
    { op: 'delete', res: await remove(cls, id, headers) },
  ];
}

// Asserts every operation answers 400 119 Permission denied for action <op>; count too.
async function assertAllDenied(cls, id, headers, label) {
  for (const { op, res } of await everyOperation(cls, id, headers)) {
    assert.equal(res.status, 400, `${label} ${op}: ${res.text}`);
    assert.deepEqual(res.body, denied(op, cls), `${label} ${op}`);
  }
  const c = await find(cls, headers, 'count=1&limit=0');
  assert.equal(c.status, 400, `${label} count: ${c.text}`);
  assert.equal(c.body.code, 119, `${label} count: ${c.text}`);
}

// Asserts find, get, count, create, update, delete all succeed; leaves the class as it was plus nothing.
async function assertAllAllowed(cls, id, headers, label) {
  const f = await find(cls, headers);
  assert.equal(f.status, 200, `${label} find: ${f.text}`);
  assert.ok(f.body.results.some((r) => r.objectId === id), `${label} find sees ${id}`);
  const c = await find(cls, headers, 'count=1&limit=0');
  assert.equal(c.status, 200, `${label} count: ${c.text}`);
  assert.equal(c.body.count, f.body.results.length, `${label} count`);
  const g = await get(cls, id, headers);
  assert.equal(g.status, 200, `${label} get: ${g.text}`);
  const cr = await create(cls, { Name: `by ${label}` }, headers);
  assert.equal(cr.status, 201, `${label} create: ${cr.text}`);
  const u = await update(cls, cr.body.objectId, { Name: `changed by ${label}` }, headers);
  assert.equal(u.status, 200, `${label} update: ${u.text}`);
  const d = await remove(cls, cr.body.objectId, headers);
  assert.equal(d.status, 200, `${label} delete: ${d.text}`);
  assert.deepEqual(d.body, {});
}

async function names(cls, headers, query = '') {
  const r = await find(cls, headers, query);
  assert.equal(r.status, 200, `find ${cls}: ${r.text}`);
  return r.body.results.map((x) => x.Name).sort();
}

// ---------------------------------------------------------------------------------------------
// §2.5 class-level permissions and roles

test('§2.5 PUT /core/schemas/<T> sets classLevelPermissions; GET /core/schemas/<T> with the master key returns them', async () => {
  const cls = uniqClass('ClpShape');
  await seedClass(cls, 1);
  const u = await newUser();
  const clp = {
    find: { 'role:Sales': true }, get: { requiresAuthentication: true }, count: {},
    create: { [u.id]: true }, update: { '*': true }, delete: {}, addField: {},
  };
  await setClp(cls, clp);
  const r = await request(server, 'GET', `/core/schemas/${cls}`, { headers: M });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.className, cls);
  for (const op of OPS) assert.deepEqual(r.body.classLevelPermissions?.[op], clp[op], `${op}: ${r.text}`);
});

test('§2.5 CLP role:<Name>: a member of the role may find, get, count, create, update and delete', async () => {
  const cls = uniqClass('RoleDeals');
  const [id] = await seedClass(cls);
  const alice = await newUser();
  const role = uniqRole('Sales');
  await makeRole(role, { users: [alice] });
  await setClp(cls, clpAll({ [`role:${role}`]: true }));
  await assertAllAllowed(cls, id, S(alice.token), 'member');
  assert.deepEqual(await names(cls, S(alice.token)), ['r0', 'r1']);
});

test('§2.4 a user with no role on a class granting only roles gets 119 on every operation', async () => {
  const classes = [uniqClass('OnlyRolesA'), uniqClass('OnlyRolesB')];
  const role = uniqRole('Sales');
  const member = await newUser();
  await makeRole(role, { users: [member] });
  const bob = await newUser();
  for (const cls of classes) {
    const [id] = await seedClass(cls);
    await setClp(cls, clpAll({ [`role:${role}`]: true }));
    await assertAllDenied(cls, id, S(bob.token), 'no role');
    assert.deepEqual(await names(cls, M), ['r0', 'r1'], 'nothing changed');
  }
});

test('§2.5 an empty map means nobody: role members get 119; the master key and the API key still pass', async () => {
  const cls = uniqClass('Nobody');
  const [id] = await seedClass(cls);
  const alice = await newUser();
  await makeRole(uniqRole('Sales'), { users: [alice] });
  await setClp(cls, clpAll({}));
  await assertAllDenied(cls, id, S(alice.token), 'session');
  await assertAllAllowed(cls, id, M, 'master');
  await assertAllAllowed(cls, id, K, 'api key');
});

test('§2.5 role hierarchy: members of a role in Sales.roles get Sales\' permissions, two levels deep; not the reverse', async () => {
  const salesRep = await newUser();
  const manager = await newUser();
  const director = await newUser();
  const outsider = await newUser();
  const directors = uniqRole('Directors');
  const managers = uniqRole('Managers');
  const sales = uniqRole('Sales');
  const directorsId = await makeRole(directors, { users: [director] });
  const managersId = await makeRole(managers, { users: [manager], roles: [directorsId] });
  await makeRole(sales, { users: [salesRep], roles: [managersId] });

  const salesCls = uniqClass('SalesOnly');
  const [salesId] = await seedClass(salesCls);
  await setClp(salesCls, clpAll({ [`role:${sales}`]: true }));
  const managersCls = uniqClass('ManagersOnly');
  const [managersRec] = await seedClass(managersCls);
  await setClp(managersCls, clpAll({ [`role:${managers}`]: true }));

  await assertAllAllowed(salesCls, salesId, S(salesRep.token), 'sales rep on Sales');
  await assertAllAllowed(salesCls, salesId, S(manager.token), 'manager on Sales');
  await assertAllAllowed(salesCls, salesId, S(director.token), 'director on Sales');
  await assertAllAllowed(managersCls, managersRec, S(director.token), 'director on Managers');
  await assertAllAllowed(managersCls, managersRec, S(manager.token), 'manager on Managers');
  await assertAllDenied(managersCls, managersRec, S(salesRep.token), 'sales rep on Managers');
  await assertAllDenied(salesCls, salesId, S(outsider.token), 'outsider on Sales');
});

test('§2.4 effective permissions are the union of all the user\'s roles', async () => {
  const r1 = uniqRole('Support');
  const r2 = uniqRole('Billing');
  const both = await newUser();
  const onlyOne = await newUser();
  await makeRole(r1, { users: [both, onlyOne] });
  await makeRole(r2, { users: [both] });
  const c1 = uniqClass('SupportOnly');
  const c2 = uniqClass('BillingOnly');
  const [id1] = await seedClass(c1);
  const [id2] = await seedClass(c2);
  await setClp(c1, clpAll({ [`role:${r1}`]: true }));
  await setClp(c2, clpAll({ [`role:${r2}`]: true }));
  await assertAllAllowed(c1, id1, S(both.token), 'both on c1');
  await assertAllAllowed(c2, id2, S(both.token), 'both on c2');
  await assertAllAllowed(c1, id1, S(onlyOne.token), 'one on c1');
  await assertAllDenied(c2, id2, S(onlyOne.token), 'one on c2');
  // Per operation: find for one role, create for the other.
  const mixed = uniqClass('Mixed');
  const [mid] = await seedClass(mixed);
  await setClp(mixed, { ...clpAll({}), find: { [`role:${r1}`]: true }, create: { [`role:${r2}`]: true } });
  assert.equal((await find(mixed, S(both.token))).status, 200);
  assert.equal((await create(mixed, { Name: 'x' }, S(both.token))).status, 201);
  assert.deepEqual((await create(mixed, { Name: 'y' }, S(onlyOne.token))).body, denied('create', mixed));
  assert.deepEqual((await get(mixed, mid, S(both.token))).body, denied('get', mixed));
});

test('§2.5 CLP keys: * grants every session; a user objectId grants that user only', async () => {
  const alice = await newUser();
  const bob = await newUser();
  const star = uniqClass('StarRead');
  const [sid] = await seedClass(star);
  await setClp(star, { ...clpAll({}), find: { '*': true }, get: { '*': true }, count: { '*': true } });
  for (const u of [alice, bob]) {
    assert.deepEqual(await names(star, S(u.token)), ['r0', 'r1']);
    assert.equal((await get(star, sid, S(u.token))).status, 200);
    const c = await create(star, { Name: 'no' }, S(u.token));
    assert.equal(c.status, 400, c.text);
    assert.deepEqual(c.body, denied('create', star));
  }
  const byId = uniqClass('ById');
  const [bid] = await seedClass(byId);
  await setClp(byId, clpAll({ [alice.id]: true }));
  await assertAllAllowed(byId, bid, S(alice.token), 'named user');
  await assertAllDenied(byId, bid, S(bob.token), 'other user');
});

test('§2.5 requiresAuthentication: anonymous → 404 101 user needs to be authenticated; any session may read', async () => {
  const cls = uniqClass('AuthOnly');
  const [id] = await seedClass(cls);
  const perm = { requiresAuthentication: true };
  await setClp(cls, { ...clpAll({}), find: perm, get: perm, count: perm });
  const anonFind = await find(cls, appHeaders(app));
  assert.equal(anonFind.status, 404, anonFind.text);
  assert.deepEqual(anonFind.body, NEEDS_AUTH);
  const anonGet = await get(cls, id, appHeaders(app));
  assert.equal(anonGet.status, 404, anonGet.text);
  assert.deepEqual(anonGet.body, NEEDS_AUTH);
  const u = await newUser();
  assert.deepEqual(await names(cls, S(u.token)), ['r0', 'r1']);
  assert.equal((await get(cls, id, S(u.token))).status, 200);
  const c = await create(cls, { Name: 'no' }, S(u.token));
  assert.deepEqual(c.body, denied('create', cls));
});

test('§2.5 addField: {} refuses a write that adds a field; existing fields stay writable', async () => {
  const cls = uniqClass('NoNewFields');
  const [id] = await seedClass(cls);
  const alice = await newUser();
  const role = uniqRole('Sales');
  await makeRole(role, { users: [alice] });
  await setClp(cls, { ...clpAll({ [`role:${role}`]: true }), addField: {} });
  const ok = await create(cls, { Name: 'fine' }, S(alice.token));
  assert.equal(ok.status, 201, ok.text);
  const newField = await create(cls, { Name: 'x', Smuggled: 'y' }, S(alice.token));
  assert.equal(newField.status, 400, newField.text);
  assert.equal(newField.body.code, 119, newField.text);
  const upd = await update(cls, id, { Smuggled: 'y' }, S(alice.token));
  assert.equal(upd.status, 400, upd.text);
  assert.equal(upd.body.code, 119, upd.text);
  const schema = await request(server, 'GET', `/core/schemas/${cls}`, { headers: M });
  assert.equal(schema.body.fields?.Smuggled, undefined, 'the field was not added');
  // The master key adds fields regardless.
  assert.equal((await update(cls, id, { Added: 'by master' }, M)).status, 200);
});

test('§2.5 count: {} refuses count=1 even where find is allowed', async () => {
  const cls = uniqClass('NoCount');
  await seedClass(cls);
  const alice = await newUser();
  const role = uniqRole('Sales');
  await makeRole(role, { users: [alice] });
  await setClp(cls, { ...clpAll({ [`role:${role}`]: true }), count: {} });
  assert.deepEqual(await names(cls, S(alice.token)), ['r0', 'r1']);
  const c = await find(cls, S(alice.token), 'count=1&limit=0');
  assert.equal(c.status, 400, c.text);
  assert.equal(c.body.code, 119, c.text);
});

test('§2.5 issue 17 #4: a class created by a key\'s first write starts closed to everyone but keys; opened, sessions use it; anonymous writes get the CAPTCHA 119', async () => {
  const cls = uniqClass('ClosedByDefault');
  const id = await createRecord(server, app, cls, { Name: 'r0' });
  await createRecord(server, app, cls, { Name: 'r1' });
  const schema = await request(server, 'GET', `/core/schemas/${cls}`, { headers: M });
  assert.equal(schema.status, 200, schema.text);
  for (const op of OPS) assert.deepEqual(schema.body.classLevelPermissions?.[op], {}, `${op}: ${schema.text}`);
  const u = await newUser();
  await assertAllDenied(cls, id, S(u.token), 'session before opening');
  const anonymousRead = await find(cls, appHeaders(app));
  assert.equal(anonymousRead.status, 400, anonymousRead.text);
  assert.deepEqual(anonymousRead.body, denied('find', cls));
  await setClp(cls, clpAll({ '*': true }));
  await assertAllAllowed(cls, id, S(u.token), 'session');
  for (const res of [
    await create(cls, { Name: 'spam' }, appHeaders(app)),
    await update(cls, id, { Name: 'spam' }, appHeaders(app)),
    await remove(cls, id, appHeaders(app)),
  ]) {
    assert.equal(res.status, 400, res.text);
    assert.deepEqual(res.body, CAPTCHA);
  }
  assert.deepEqual(await names(cls, M), ['r0', 'r1']);
});

test('§2.4 removing a user from a role takes their permissions away at once', async () => {
  const cls = uniqClass('Revoked');
  const [id] = await seedClass(cls);
  const alice = await newUser();
  const role = uniqRole('Sales');
  const roleId = await makeRole(role, { users: [alice] });
  await setClp(cls, clpAll({ [`role:${role}`]: true }));
  assert.equal((await find(cls, S(alice.token))).status, 200);
  const r = await update('_Role', roleId, { users: { __op: 'RemoveRelation', objects: [ptr('_User', alice.id)] } }, M);
  assert.equal(r.status, 200, r.text);
  await assertAllDenied(cls, id, S(alice.token), 'after removal');
});

// ---------------------------------------------------------------------------------------------
// §2.1 record ACLs

test('§2.1 ACL: find returns only rows the user may read (public, own id, a role held, inherited); count agrees', async () => {
  const alice = await newUser();
  const bob = await newUser();
  const role = uniqRole('Readers');
  const parent = uniqRole('Parent');
  const roleId = await makeRole(role, { users: [alice] });
  await makeRole(parent, { roles: [roleId] });
  const cls = uniqClass('AclRows');
  await openClass(cls);
  const rows = {
    public: { '*': { read: true } },
    mine: { [alice.id]: { read: true } },
    role: { [`role:${role}`]: { read: true } },
    inherited: { [`role:${parent}`]: { read: true } },
    bobs: { [bob.id]: { read: true, write: true } },
    nobody: {},
  };
  const ids = {};
  for (const [Name, ACL] of Object.entries(rows)) ids[Name] = await createRecord(server, app, cls, { Name, ACL });
  ids.noacl = await createRecord(server, app, cls, { Name: 'noacl' });

  const aliceSees = ['inherited', 'mine', 'noacl', 'public', 'role'];
  assert.deepEqual(await names(cls, S(alice.token)), aliceSees);
  assert.deepEqual(await names(cls, S(bob.token)), ['bobs', 'noacl', 'public']);
  assert.deepEqual(await names(cls, M), ['bobs', 'inherited', 'mine', 'noacl', 'nobody', 'public', 'role']);
  const c = await find(cls, S(alice.token), 'count=1&limit=0');
  assert.equal(c.status, 200, c.text);
  assert.equal(c.body.count, aliceSees.length);
  // Paging is over the visible rows, not post-filtered pages.
  const page = await find(cls, S(alice.token), 'order=Name&limit=2');
  assert.deepEqual(page.body.results.map((r) => r.Name), ['inherited', 'mine']);
  const page2 = await find(cls, S(alice.token), 'order=Name&limit=2&skip=2');
  assert.deepEqual(page2.body.results.map((r) => r.Name), ['noacl', 'public']);

  for (const visible of aliceSees) {
    const g = await get(cls, ids[visible], S(alice.token));
    assert.equal(g.status, 200, `${visible}: ${g.text}`);
  }
});

test('§2.1 ACL: get of a row hidden from the user answers 404 101 Object not found.', async () => {
  const alice = await newUser();
  const bob = await newUser();
  const cls = uniqClass('AclGet');
  await openClass(cls);
  const hidden = await createRecord(server, app, cls, { Name: 'hidden', ACL: { [alice.id]: { read: true, write: true } } });
  const none = await createRecord(server, app, cls, { Name: 'none', ACL: {} });
  for (const id of [hidden, none]) {
    const g = await get(cls, id, S(bob.token));
    assert.equal(g.status, 404, g.text);
    assert.deepEqual(g.body, NOT_FOUND);
  }
  assert.equal((await get(cls, hidden, S(alice.token))).status, 200);
  assert.equal((await get(cls, none, M)).status, 200);
});

test('§2.1 ACL: update and delete need write permission (user, role or *); without it 404 101 and nothing changes', async () => {
  const alice = await newUser();
  const bob = await newUser();
  const role = uniqRole('Writers');
  await makeRole(role, { users: [alice] });
  const cls = uniqClass('AclWrite');
  await openClass(cls);
  const bobsOnly = await createRecord(server, app, cls, { Name: 'bobs', ACL: { '*': { read: true }, [bob.id]: { read: true, write: true } } });
  const readOnly = await createRecord(server, app, cls, { Name: 'readonly', ACL: { '*': { read: true } } });
  const roleWrite = await createRecord(server, app, cls, { Name: 'rolew', ACL: { '*': { read: true }, [`role:${role}`]: { write: true } } });
  const publicWrite = await createRecord(server, app, cls, { Name: 'pubw', ACL: { '*': { read: true, write: true } } });

  for (const id of [bobsOnly, readOnly]) {
    const u = await update(cls, id, { Name: 'hacked' }, S(alice.token));
    assert.equal(u.status, 404, u.text);
    assert.deepEqual(u.body, NOT_FOUND);
    const d = await remove(cls, id, S(alice.token));
    assert.equal(d.status, 404, d.text);
    assert.deepEqual(d.body, NOT_FOUND);
  }
  assert.deepEqual(await names(cls, M), ['bobs', 'pubw', 'readonly', 'rolew']);

  assert.equal((await update(cls, roleWrite, { Name: 'rolew2' }, S(alice.token))).status, 200);
  assert.equal((await update(cls, publicWrite, { Name: 'pubw2' }, S(alice.token))).status, 200);
  assert.equal((await update(cls, bobsOnly, { Name: 'bobs2' }, S(bob.token))).status, 200);
  const rw = await update(cls, roleWrite, { Name: 'nope' }, S(bob.token));
  assert.deepEqual(rw.body, NOT_FOUND);
  assert.deepEqual(await names(cls, M), ['bobs2', 'pubw2', 'readonly', 'rolew2']);
  const d = await remove(cls, publicWrite, S(bob.token));
  assert.equal(d.status, 200, d.text);
});

test('§2.1 a session create sets createdBy/updatedBy to the user\'s Pointer; an update sets updatedBy; client values are ignored', async () => {
  const alice = await newUser();
  const bob = await newUser();
  const cls = uniqClass('Authored');
  await seedClass(cls, 1); // open CLPs
  const c = await create(cls, { Name: 'mine', createdBy: ptr('_User', bob.id), updatedBy: ptr('_User', bob.id) }, S(alice.token));
  assert.equal(c.status, 201, c.text);
  const g = await get(cls, c.body.objectId, M);
  assert.deepEqual(g.body.createdBy, ptr('_User', alice.id));
  assert.deepEqual(g.body.updatedBy, ptr('_User', alice.id));
  const u = await update(cls, c.body.objectId, { Name: 'edited', createdBy: ptr('_User', bob.id) }, S(bob.token));
  assert.equal(u.status, 200, u.text);
  const g2 = await get(cls, c.body.objectId, M);
  assert.deepEqual(g2.body.createdBy, ptr('_User', alice.id));
  assert.deepEqual(g2.body.updatedBy, ptr('_User', bob.id));
  assert.equal(g2.body.Name, 'edited');
});

// ---------------------------------------------------------------------------------------------
// Attacks (SECURITY.md)

test('SECURITY tenant isolation: a session token of application A on application B answers 400 209', async () => {
  const a = await newUser(app);
  const b = await newUser(appB);
  await createRecord(server, appB, 'CrossSession', { Name: 'B data' });
  const requests = [
    ['GET', '/core/users/me'],
    ['GET', '/core/classes/CrossSession'],
    ['GET', '/core/classes/_User'],
    ['POST', '/core/classes/CrossSession', { Name: 'from elsewhere' }],
    ['POST', '/core/logout'],
  ];
  for (const [token, onApp, label] of [[a.token, appB, 'A on B'], [b.token, app, 'B on A']]) {
    for (const [method, p, body] of requests) {
      const r = await request(server, method, p, { headers: S(token, onApp), body });
      assert.equal(r.status, 400, `${label} ${method} ${p}: ${r.text}`);
      assert.deepEqual(r.body, INVALID_SESSION, `${label} ${method} ${p}`);
    }
  }
  assert.deepEqual((await listAll(server, appB, 'CrossSession')).map((r) => r.Name), ['B data']);
  assert.deepEqual(await listAll(server, app, 'CrossSession'), []);
  // Both tokens still work at home, and A's user cannot log in to B.
  assert.equal((await request(server, 'GET', '/core/users/me', { headers: S(a.token, app) })).status, 200);
  assert.equal((await request(server, 'GET', '/core/users/me', { headers: S(b.token, appB) })).status, 200);
  const l = await login(a.username, a.password, appB);
  assert.equal(l.status, 404, l.text);
  assert.deepEqual(l.body, INVALID_LOGIN);
});

test('SECURITY principal confusion: a user adding themselves to a role is refused; $relatedTo shows they are not in it', async () => {
  const member = await newUser();
  const bob = await newUser();
  const role = uniqRole('Admins');
  const roleId = await makeRole(role, { users: [member] });
  const cls = uniqClass('AdminOnly');
  const [id] = await seedClass(cls);
  await setClp(cls, clpAll({ [`role:${role}`]: true }));

  const add = { users: { __op: 'AddRelation', objects: [ptr('_User', bob.id)] } };
  const r = await update('_Role', roleId, add, S(bob.token));
  assert.ok(r.status >= 400 && r.status < 500, `AddRelation of oneself: ${r.status} ${r.text}`);
  // Adding a role one controls to the role's `roles` is refused too.
  const own = uniqRole('Mine');
  const ownId = await makeRole(own, { users: [bob], ACL: { '*': { read: true }, [bob.id]: { read: true, write: true } } });
  const nest = await update('_Role', roleId, { roles: { __op: 'AddRelation', objects: [ptr('_Role', ownId)] } }, S(bob.token));
  assert.ok(nest.status >= 400 && nest.status < 500, `AddRelation of an own role: ${nest.status} ${nest.text}`);
  // A second role of the same name.
  const dup = await create('_Role', { name: role, ACL: { '*': { read: true } }, ...add }, S(bob.token));
  assert.ok(dup.status >= 400 && dup.status < 500, `duplicate role name: ${dup.status} ${dup.text}`);

  const members = await find('_User', M, q({ $relatedTo: { object: ptr('_Role', roleId), key: 'users' } }));
  assert.equal(members.status, 200, members.text);
  assert.deepEqual(members.body.results.map((u) => u.objectId), [member.id]);
  const nested = await find('_Role', M, q({ $relatedTo: { object: ptr('_Role', roleId), key: 'roles' } }));
  assert.deepEqual(nested.body.results, []);
  const sameName = await find('_Role', M, q({ name: role }));
  assert.deepEqual(sameName.body.results.map((x) => x.objectId), [roleId]);
  await assertAllDenied(cls, id, S(bob.token), 'after the attempts');
});

test('SECURITY: a user writing a record whose ACL denies them write gets 404 101; the record is unchanged', async () => {
  const owner = await newUser();
  const attacker = await newUser();
  const cls = uniqClass('Guarded');
  await seedClass(cls, 1);
  const c = await create(cls, { Name: 'owned', ACL: { '*': { read: true }, [owner.id]: { read: true, write: true } } }, S(owner.token));
  assert.equal(c.status, 201, c.text);
  const id = c.body.objectId;
  const before = (await get(cls, id, M)).body;
  for (const body of [{ Name: 'hacked' }, { Name: { __op: 'Delete' } }, { Extra: 1 }]) {
    const u = await update(cls, id, body, S(attacker.token));
    assert.equal(u.status, 404, `${JSON.stringify(body)}: ${u.text}`);
    assert.deepEqual(u.body, NOT_FOUND);
  }
  const d = await remove(cls, id, S(attacker.token));
  assert.equal(d.status, 404, d.text);
  assert.deepEqual(d.body, NOT_FOUND);
  assert.deepEqual((await get(cls, id, M)).body, before);
});

test('SECURITY: a user changing the ACL of someone else\'s record gets 404 101; the ACL is unchanged', async () => {
  const owner = await newUser();
  const attacker = await newUser();
  const cls = uniqClass('AclTheft');
  await openClass(cls);
  const ACL = { '*': { read: true }, [owner.id]: { read: true, write: true } };
  const id = await createRecord(server, app, cls, { Name: 'owned', ACL });
  for (const stolen of [{ '*': { read: true, write: true } }, { [attacker.id]: { read: true, write: true } }]) {
    const u = await update(cls, id, { ACL: stolen }, S(attacker.token));
    assert.equal(u.status, 404, u.text);
    assert.deepEqual(u.body, NOT_FOUND);
  }
  assert.deepEqual((await get(cls, id, M)).body.ACL, ACL);
  assert.deepEqual((await update(cls, id, { Name: 'x' }, S(attacker.token))).body, NOT_FOUND);
});

test('SECURITY second read path: GET /core/classes/_Session with a session returns only the user\'s own sessions, never a token', async () => {
  const alice = await newUser();
  const bob = await newUser();
  const tokens = [alice.token, bob.token];
  for (let i = 0; i < 2; i++) {
    const l = await login(alice.username, alice.password);
    assert.equal(l.status, 200, l.text);
    tokens.push(l.body.sessionToken);
  }
  const l = await find('_Session', S(alice.token));
  assert.equal(l.status, 200, l.text);
  assert.equal(l.body.results.length, 3, `alice has 3 sessions: ${l.text}`);
  for (const s of l.body.results) assert.deepEqual(s.user, ptr('_User', alice.id), JSON.stringify(s));
  for (const t of tokens) {
    assert.equal(l.text.includes(t), false, 'a session token is returned');
    assert.equal(l.text.includes(t.slice(2)), false, 'a session token\'s hex is returned');
  }
  // Bob's session rows, as the master key sees them, are out of alice's reach.
  const all = await listAll(server, app, '_Session');
  const bobs = all.filter((s) => s.user?.objectId === bob.id).map((s) => s.objectId);
  assert.ok(bobs.length >= 1, 'the master key lists bob\'s session with its user');
  for (const sid of bobs) {
    assert.deepEqual((await get('_Session', sid, S(alice.token))).body, NOT_FOUND);
    const u = await update('_Session', sid, { user: ptr('_User', alice.id) }, S(alice.token));
    assert.ok(u.status >= 400 && u.status < 500, u.text);
    const d = await remove('_Session', sid, S(alice.token));
    assert.ok(d.status >= 400 && d.status < 500, d.text);
  }
  const probe = await find('_Session', S(alice.token), q({ user: ptr('_User', bob.id) }));
  assert.ok(probe.status >= 400 || probe.body.results.length === 0, probe.text);
  assert.equal((await request(server, 'GET', '/core/users/me', { headers: S(bob.token) })).status, 200, 'bob\'s session survives');
});

test('SECURITY field oracles: where on password or _hashed_password answers 400 105, directly or through a sub-query', async () => {
  const u = await newUser();
  const cls = uniqClass('UserLinks');
  await openClass(cls);
  await createRecord(server, app, cls, { Owner: ptr('_User', u.id) });
  const cases = [
    ['_User', { password: { $regex: '^P' } }],
    ['_User', { _hashed_password: { $exists: true } }],
    ['_User', { $or: [{ username: 'x' }, { password: u.password }] }],
    [cls, { Owner: { $inQuery: { className: '_User', where: { password: { $regex: '^P' } } } } }],
    [cls, { Owner: { $inQuery: { className: '_User', where: { _hashed_password: { $regex: '^\\$' } } } } }],
  ];
  for (const [c, w] of cases) {
    const r = await find(c, S(u.token), q(w));
    assert.equal(r.status, 400, `${c} ${JSON.stringify(w)}: ${r.text}`);
    assert.equal(r.body.code, 105, `${c} ${JSON.stringify(w)}: ${r.text}`);
  }
});

test('SECURITY field oracles: $regex, count, $inQuery, $notInQuery, $select on a class the user cannot find answer 119', async () => {
  const bob = await newUser();
  const secret = uniqClass('SecretDeals');
  const secretId = await createRecord(server, app, secret, { Name: 'Alpha deal' });
  await setClp(secret, clpAll({ [`role:${uniqRole('Nobody')}`]: true }));
  const notes = uniqClass('OpenNotes');
  await openClass(notes);
  await createRecord(server, app, notes, { Label: 'Alpha deal', Ref: ptr(secret, secretId) });

  const direct = await find(secret, S(bob.token), q({ Name: { $regex: '^A' } }));
  assert.equal(direct.status, 400, direct.text);
  assert.deepEqual(direct.body, denied('find', secret));
  const count = await find(secret, S(bob.token), `${q({ Name: { $regex: '^A' } })}&count=1&limit=0`);
  assert.equal(count.status, 400, count.text);
  assert.equal(count.body.code, 119, count.text);

  const sub = { className: secret, where: { Name: { $regex: '^A' } } };
  for (const w of [
    { Ref: { $inQuery: sub } },
    { Ref: { $notInQuery: sub } },
    { Label: { $select: { query: sub, key: 'Name' } } },
    { Label: { $dontSelect: { query: sub, key: 'Name' } } },
  ]) {
    const r = await find(notes, S(bob.token), q(w));
    assert.equal(r.status, 400, `${JSON.stringify(w)}: ${r.text}`);
    assert.deepEqual(r.body, denied('find', secret), JSON.stringify(w));
  }
});

test('SECURITY field oracles: $regex, count, $inQuery and $select never count rows hidden by ACL', async () => {
  const alice = await newUser();
  const bob = await newUser();
  const hidden = uniqClass('HiddenRows');
  await openClass(hidden);
  const mine = { [alice.id]: { read: true, write: true } };
  const h1 = await createRecord(server, app, hidden, { Name: 'secret-1', ACL: mine });
  const h2 = await createRecord(server, app, hidden, { Name: 'secret-2', ACL: mine });
  const p1 = await createRecord(server, app, hidden, { Name: 'public-1' });
  const notes = uniqClass('NotesOnHidden');
  await openClass(notes);
  for (const [label, id] of [['secret-1', h1], ['secret-2', h2], ['public-1', p1]]) {
    await createRecord(server, app, notes, { Name: `note ${label}`, Label: label, Ref: ptr(hidden, id) });
  }

  const rx = await find(hidden, S(bob.token), `${q({ Name: { $regex: '^secret' } })}&count=1`);
  assert.equal(rx.status, 200, rx.text);
  assert.deepEqual(rx.body, { results: [], count: 0 });
  const exact = await find(hidden, S(bob.token), `${q({ Name: 'secret-1' })}&count=1&limit=0`);
  assert.equal(exact.body.count, 0, exact.text);
  const byId = await find(hidden, S(bob.token), q({ objectId: { $in: [h1, h2] } }));
  assert.deepEqual(byId.body.results, []);

  const inQ = q({ Ref: { $inQuery: { className: hidden, where: { Name: { $regex: '^secret' } } } } });
  assert.deepEqual(await names(notes, S(bob.token), inQ), []);
  assert.deepEqual(await names(notes, S(alice.token), inQ), ['note secret-1', 'note secret-2']);
  const sel = q({ Label: { $select: { query: { className: hidden, where: {} }, key: 'Name' } } });
  assert.deepEqual(await names(notes, S(bob.token), sel), ['note public-1']);
  assert.deepEqual(await names(notes, S(alice.token), sel), ['note public-1', 'note secret-1', 'note secret-2']);
});

test('SECURITY second read path: include of a Pointer to a record the user may not read stays a plain Pointer', async () => {
  const alice = await newUser();
  const bob = await newUser();
  const hidden = uniqClass('IncHidden');
  await openClass(hidden);
  const hid = await createRecord(server, app, hidden, { Name: 'secret', ACL: { [alice.id]: { read: true } } });
  const closed = uniqClass('IncClosed');
  const cid = await createRecord(server, app, closed, { Name: 'closed secret' });
  await setClp(closed, clpAll({}));
  const notes = uniqClass('IncNotes');
  await openClass(notes);
  const nid = await createRecord(server, app, notes, { Name: 'note', Ref: ptr(hidden, hid), Closed: ptr(closed, cid) });

  for (const r of [
    await get(notes, nid, S(bob.token), 'include=Ref,Closed'),
    await find(notes, S(bob.token), 'include=Ref,Closed').then((x) => ({ ...x, body: x.body.results?.[0] })),
    await get(notes, nid, S(bob.token), 'include=Ref,Closed&keys=Ref.Name,Closed.Name'),
  ]) {
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.Ref, ptr(hidden, hid), r.text);
    assert.deepEqual(r.body.Closed, ptr(closed, cid), r.text);
    assert.equal(r.text.includes('secret'), false, 'a hidden value leaked');
  }
  const own = await get(notes, nid, S(alice.token), 'include=Ref');
  assert.equal(own.body.Ref.Name, 'secret', 'the owner sees the included record');
});

test('SECURITY second read path: $relatedTo on a record the user may not read reveals nothing', async () => {
  const bob = await newUser();
  const alice = await newUser();
  const members = uniqClass('RelMembers');
  await openClass(members);
  const m1 = await createRecord(server, app, members, { Name: 'member one' });
  const closedTeams = uniqClass('RelClosedTeams');
  const closedTeam = await createRecord(server, app, closedTeams, {
    Name: 'closed', members: { __op: 'AddRelation', objects: [ptr(members, m1)] },
  });
  await setClp(closedTeams, clpAll({}));
  const hiddenTeams = uniqClass('RelHiddenTeams');
  await openClass(hiddenTeams);
  const hiddenTeam = await createRecord(server, app, hiddenTeams, {
    Name: 'hidden', ACL: { [alice.id]: { read: true } }, members: { __op: 'AddRelation', objects: [ptr(members, m1)] },
  });
  for (const [cls, id] of [[closedTeams, closedTeam], [hiddenTeams, hiddenTeam]]) {
    const r = await find(members, S(bob.token), q({ $relatedTo: { object: ptr(cls, id), key: 'members' } }));
    assert.ok((r.status >= 400 && r.status < 500) || (r.status === 200 && r.body.results.length === 0),
      `${cls}: ${r.status} ${r.text}`);
  }
  const own = await find(members, S(alice.token), q({ $relatedTo: { object: ptr(hiddenTeams, hiddenTeam), key: 'members' } }));
  assert.deepEqual(own.body.results?.map((x) => x.objectId), [m1], 'the owner reads the relation');
});

test('SECURITY login timing: an unknown user and a wrong password answer the same 404 body', async () => {
  const u = await newUser();
  const unknown = await login(`${hex(6)}@example.test`, u.password);
  const wrong = await login(u.username, `${u.password}x`);
  assert.equal(unknown.status, 404, unknown.text);
  assert.equal(wrong.status, 404, wrong.text);
  assert.deepEqual(unknown.body, INVALID_LOGIN);
  assert.equal(unknown.text, wrong.text);
});

// ---------------------------------------------------------------------------------------------
// §4.9 Config and §5.3 the credential table

test('§4.9 Config is readable with the master key, the API key, and a session when its CLP requires authentication', async () => {
  await createRecord(server, app, 'Config', { Name: 'E2eFlag', Value: { E2eFlag: true } });
  const perm = { requiresAuthentication: true };
  await setClp('Config', { ...clpAll({}), find: perm, get: perm, count: perm });
  const u = await newUser();
  for (const [label, headers] of [['master', M], ['api key', K], ['session', S(u.token)]]) {
    const r = await find('Config', headers, q({ Name: 'E2eFlag' }));
    assert.equal(r.status, 200, `${label}: ${r.text}`);
    assert.deepEqual(r.body.results.map((x) => x.Value), [{ E2eFlag: true }], label);
  }
  const anon = await find('Config', appHeaders(app));
  assert.ok((anon.status === 404 && anon.body.code === 101) || (anon.status === 400 && anon.body.code === 119), anon.text);
  const w = await create('Config', { Name: 'Injected', Value: { Injected: true } }, S(u.token));
  assert.deepEqual(w.body, denied('create', 'Config'));

  await setClp('Config', clpAll({}));
  const closed = await find('Config', S(u.token));
  assert.equal(closed.status, 400, closed.text);
  assert.deepEqual(closed.body, denied('find', 'Config'));
  assert.equal((await find('Config', K)).status, 200);
});

test('§5.3 schemas are read with the master key or the API key only: a session (or nobody) gets 403', async () => {
  const cls = uniqClass('SchemaRead');
  const [id] = await seedClass(cls);
  const role = uniqRole('Sales');
  await setClp(cls, clpAll({ [`role:${role}`]: true }));
  const u = await newUser();
  for (const headers of [S(u.token), appHeaders(app)]) {
    for (const p of [`/core/schemas/${cls}`, '/core/schemas']) {
      const r = await request(server, 'GET', p, { headers });
      assert.equal(r.status, 403, `${p}: ${r.text}`);
      assert.deepEqual(r.body, SCHEMA_DENIED, p);
    }
  }
  for (const headers of [M, K]) {
    assert.equal((await request(server, 'GET', `/core/schemas/${cls}`, { headers })).status, 200);
  }
  // A session cannot open the class to itself either.
  const open = await request(server, 'PUT', `/core/schemas/${cls}`, { headers: S(u.token), body: { classLevelPermissions: clpAll({ '*': true }) } });
  assert.ok(open.status >= 400 && open.status < 500, `${open.status} ${open.text}`);
  await assertAllDenied(cls, id, S(u.token), 'after the attempt');
});
