// Issue 31: authority follows the author. A request never gains through another door (an MCP
// tool, a form, sign-up, the change history) a right the record API refuses the same caller.
// Each test reproduces one finding of the table, by number.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  setup, stopAll, request, masterHeaders, apiKeyHeaders, appHeaders, cli, pollUntil,
} from './lib/harness.mjs';
import { oauthDoors } from './lib/oauth.mjs';

let server;
let app;
let dataDir;
let M;
let doors;
before(async () => {
  // No per-address rate of form calls: #6 polls web2table as often as a busy machine needs (the
  // rate has its own test, doors-functions.test.mjs).
  ({ server, app, dataDir } = await setup({ extraArgs: ['--form-calls-per-minute', '0'] }, { productBase: true }));
  M = masterHeaders(app);
  doors = oauthDoors(server);
});
after(stopAll);

const where = (w) => encodeURIComponent(JSON.stringify(w));
const schemaOf = async (table) => (await request(server, 'GET', `/core/schemas/${table}`, { headers: M })).body;

test('issue 31 #2: a signed-in Administrator with the schema switch cannot set triggers, permissions, indexes or the timeline, nor make tables; new fields only where addField is granted', async () => {
  await doors.makeUser(app, 'schema.admin', ['mcp:view', 'mcp:edit-page-and-schema'], { role: 'Administrators' });
  const token = await doors.signedIn(app, 'schema.admin');
  const call = (name, args) => doors.callTool(app, token, name, args);
  const before = await schemaOf('Accounts');
  const refusals = {
    'Set-Trigger': { table: 'Tasks', trigger: { name: 'copy', event: 'create', active: true,
      actions: [{ actionType: 'create-record', actionData: { 'create-record': { table: 'Config', data: { Name: '{{Name}}' } } } }] } },
    'Set-Table-Permissions': { table: 'Accounts', permissions: { find: { '*': true }, get: { '*': true } } },
    'Create-Table': { table: 'Sneaky' },
    'Add-Index': { table: 'Accounts', name: 'City_1', fields: { City: 1 } },
    'Set-Timeline': { table: 'Tasks', timeline: { displayFields: {}, index: {} } },
    'Remove-Trigger': { table: 'Accounts', _id: 'AbCdEfGhIj' },
    'Get-Triggers': { table: 'Accounts' },
    'Get-Table-Permissions': { table: 'Accounts' },
    'List-Indexes': { table: 'Accounts' },
  };
  for (const [tool, args] of Object.entries(refusals)) {
    const answer = await call(tool, args);
    assert.equal(answer.isError, true, `${tool} is the keys' alone: ${answer.text}`);
    assert.equal(answer.text, 'unauthorized: master key is required', tool);
  }
  const after = await schemaOf('Accounts');
  assert.deepEqual(after.classLevelPermissions, before.classLevelPermissions, 'the permissions are unchanged');
  assert.deepEqual(after.indexes, before.indexes, 'and the indexes');
  assert.deepEqual((await schemaOf('Tasks')).triggers ?? [], [], 'no trigger was stored');
  const anonymous = await request(server, 'GET', '/core/classes/Accounts', { headers: appHeaders(app) });
  assert.notEqual(anonymous.status, 200, 'Accounts stay closed to anonymous reads');
  assert.equal((await request(server, 'GET', '/core/schemas/Sneaky', { headers: M })).status, 400, 'no table was made');

  // What the record API gives this user stays: a new field where Accounts grants addField.
  const added = await call('Add-Field', { table: 'Accounts', field: 'AdminNote', type: 'String' });
  assert.equal(added.isError, false, added.text);
  assert.equal((await schemaOf('Accounts')).fields.AdminNote.type, 'String');
  // Not a change of an existing field's definition.
  const changed = await call('Add-Field', { table: 'Accounts', field: 'Name', type: 'Number' });
  assert.equal(changed.isError, true);
  assert.equal(changed.text, 'Permission denied for action addField on class Accounts');
  // Nor a field of a table whose addField the CLP does not grant (Config: none but the keys).
  const config = await call('Add-Field', { table: 'Config', field: 'Sneaky', type: 'String' });
  assert.equal(config.isError, true);
  assert.match(config.text, /^Permission denied for action addField on class Config/);

  // A key keeps every one of them (spec §5.6: key mode is master).
  const keyed = await fetch(doors.mcpUrl(app), { method: 'POST', headers: { ...apiKeyHeaders(app), 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'Get-Table-Permissions', arguments: { table: 'Accounts' } } }) });
  const keyedBody = await keyed.json();
  assert.equal(keyedBody.result.isError, false, keyedBody.result.content[0].text);
});

test('issue 31 #3: rights fields of _User are the Master identity\'s alone, at sign-up too, before the field exists, in every profile', async () => {
  // An application with open sign-up (the parse profile), and no user granted any switch yet:
  // `mcpPermissions` is not a field of its `_User`.
  const made = JSON.parse(cli(['app', 'create', '--data', dataDir, '--profile', 'parse', '--no-product-base']).stdout);
  const parse = { appId: made.appId, masterKey: made.masterKey, apiKey: made.apiKey };
  const A = appHeaders(parse);
  await pollUntil(async () => ({ done: (await request(server, 'POST', '/core/users', { headers: A,
    body: { username: `probe${Date.now()}`, password: 'x' } })).status === 201 }), { timeoutMs: 10_000, intervalMs: 100 });
  assert.equal((await request(server, 'GET', '/core/schemas/_User', { headers: masterHeaders(parse) })).body.fields.mcpPermissions, undefined);
  const grabs = [
    { mcpPermissions: ['mcp:view', 'mcp:create', 'mcp:update', 'mcp:edit-page-and-schema'] },
    { active: true }, { emailVerified: true }, { 'authData.google': { id: 'x' } }, { 'authData.anonymous': { id: 'x' } },
    { permissions: ['admin'] }, { isPortalUser: false },
  ];
  for (const [i, grab] of grabs.entries()) {
    const signup = await request(server, 'POST', '/core/users', { headers: A, body: { username: `grab${i}`, password: 'Secret123', ...grab } });
    assert.equal(signup.status, 400, `sign-up with ${JSON.stringify(grab)}: ${signup.text}`);
    assert.deepEqual(signup.body, { code: 119, error: 'Permission denied for action create on class _User.' });
    const viaClasses = await request(server, 'POST', '/core/classes/_User', { headers: A, body: { username: `grab${i}b`, password: 'Secret123', ...grab } });
    assert.equal(viaClasses.status, 400, viaClasses.text);
    assert.equal(viaClasses.body.code, 119);
  }
  // Issue 36: this profile's anonymousUsers gate takes a user's own `authData.anonymous` as their
  // credential (tests/compat/parse-gates.test.mjs); any other provider is no sign-in at all.
  const google = await request(server, 'POST', '/core/users', { headers: A,
    body: { username: 'grab.google', password: 'Secret123', authData: { google: { id: 'x', access_token: 't' } } } });
  assert.deepEqual(google.body, { code: 252, error: 'This authentication method is unsupported.' });
  const none = await request(server, 'GET', `/core/classes/_User?where=${where({ username: { $regex: '^grab' } })}&count=1&limit=0`, { headers: masterHeaders(parse) });
  assert.equal(none.body.count, 0, 'no user was made');
  // A user's own session cannot set them either.
  const me = await request(server, 'POST', '/core/users', { headers: A, body: { username: 'plain.user', password: 'Secret123' } });
  assert.equal(me.status, 201, me.text);
  const own = { ...A, 'X-Core-Session-Token': me.body.sessionToken };
  for (const grab of grabs) {
    const r = await request(server, 'PUT', `/core/users/${me.body.objectId}`, { headers: own, body: grab });
    assert.equal(r.status, 400, `${JSON.stringify(grab)}: ${r.text}`);
    assert.equal(r.body.code, 119);
  }
  // The Master identity sets them, at sign-up too.
  const granted = await request(server, 'POST', '/core/users', { headers: masterHeaders(parse),
    body: { username: 'granted.user', password: 'Secret123', mcpPermissions: ['mcp:view'], emailVerified: true } });
  assert.equal(granted.status, 201, granted.text);
});

test('issue 31 #6: web2table never writes Config, system or log classes; an operator narrows it to a list of classes', async () => {
  const A = appHeaders(app);
  const flag = await request(server, 'POST', '/core/classes/Config', { headers: M, body: { Name: 'AcceptWebToTable', Value: { AcceptWebToTable: true } } });
  assert.equal(flag.status, 201, flag.text);
  const configRows = async () => (await request(server, 'GET', '/core/classes/Config?count=1&limit=0', { headers: M })).body.count;
  const rowsBefore = await configRows();
  const web2table = (table, extra = {}) => request(server, 'POST', `/functions/${app.appId}/web2table`, { headers: A,
    body: { table, phone: '050-7001234', Name: 'AcceptWebToCaseLeads', table_Value: { AcceptWebToCaseLeads: true }, ...extra } });
  const config = await web2table('Config');
  assert.equal(config.status, 400, config.text);
  assert.deepEqual(config.body, { error: 'table Config is not open to web forms' });
  assert.equal(await configRows(), rowsBefore, 'no Config row was written');
  const gate = await request(server, 'POST', `/functions/${app.appId}/web2case`, { headers: A, body: { phone: '050-7001234', Name: 'x' } });
  assert.deepEqual(gate.body, { error: 'AcceptWebToCaseLeads is Disabled' }, 'so no form switched another on');
  for (const table of ['_User', '_Timeline', '_syslogTriggers', '_RequestLog', '_Role', '_Session']) {
    const r = await web2table(table);
    assert.equal(r.status, 400, `${table}: ${r.text}`);
  }
  // Any class of the application's own, by default (spec §4.9: master rights).
  const tasks = await web2table('Tasks', { Name: 'a lead task' });
  assert.equal(tasks.status, 200, tasks.text);
  // Narrowed by the operator: the others are refused, the forms' own tables stay theirs.
  const set = JSON.parse(cli(['app', 'set', '--data', dataDir, '--app', app.appId, '--web2table-classes', 'Tasks,Activities']).stdout);
  assert.equal(set.gates.web2tableClasses, 'Tasks,Activities');
  await pollUntil(async () => ({ done: (await web2table('Sales')).status === 400 }), { timeoutMs: 10_000, intervalMs: 100 });
  const sales = await web2table('Sales');
  assert.deepEqual(sales.body, { error: 'table Sales is not open to web forms' });
  assert.equal((await web2table('Tasks', { Name: 'still open' })).status, 200);
  assert.throws(() => cli(['app', 'set', '--data', dataDir, '--app', app.appId, '--web2table-classes', 'Config']), /web2table-classes/);
  cli(['app', 'set', '--data', dataDir, '--app', app.appId, '--web2table-classes', '*']);
  await pollUntil(async () => ({ done: (await web2table('Sales', { Name: 'open again' })).status === 200 }), { timeoutMs: 10_000, intervalMs: 100 });
});

test('issue 31 #8: a record\'s history follows its read rights: restricted to its owner, its old rows are hidden from others; the master still reads them all', async () => {
  const agent = await doors.makeUser(app, 'history.agent', null, { role: 'Agents' });
  const owner = await doors.makeUser(app, 'history.owner', null, { role: 'Agents' });
  const login = async (username) => (await request(server, 'POST', '/core/login', { headers: appHeaders(app),
    body: { username, password: 'Agent5ecret' } })).body.sessionToken;
  const agentHeaders = { ...appHeaders(app), 'X-Core-Session-Token': await login('history.agent') };
  const ownerHeaders = { ...appHeaders(app), 'X-Core-Session-Token': await login('history.owner') };
  const shared = { 'role:Agents': { read: true, write: true } };
  const made = await request(server, 'POST', '/core/classes/Accounts', { headers: M, body: { Name: 'Private Person', ACL: shared } });
  assert.equal(made.status, 201, made.text);
  const id = made.body.objectId;
  assert.equal((await request(server, 'PUT', `/core/classes/Accounts/${id}`, { headers: M, body: { City: 'Haifa' } })).status, 200);
  const history = (headers) => request(server, 'GET', `/core/classes/_Timeline?where=${where({ objectIdValue: id })}&count=1`, { headers });
  assert.equal((await history(agentHeaders)).body.count, 2, 'while the record is shared, so is its history');
  const restricted = await request(server, 'PUT', `/core/classes/Accounts/${id}`, { headers: M,
    body: { ACL: { [owner]: { read: true, write: true } } } });
  assert.equal(restricted.status, 200, restricted.text);
  assert.equal((await request(server, 'GET', `/core/classes/Accounts/${id}`, { headers: agentHeaders })).status, 404, 'the record is hidden');
  const seen = await history(agentHeaders);
  assert.equal(seen.status, 200, seen.text);
  assert.equal(seen.body.count, 0, 'and so are its old history rows');
  assert.equal((await history(ownerHeaders)).body.count, 3, 'its owner reads them all');
  assert.equal((await history(M)).body.count, 3, 'the master too; no row was deleted');
  assert.ok(agent);
});

test('issue 31 #8: the history of a class a session may not read stays hidden from it, whatever read path it takes', async () => {
  await doors.makeUser(app, 'payroll.agent', null, { role: 'Agents' });
  const token = (await request(server, 'POST', '/core/login', { headers: appHeaders(app), body: { username: 'payroll.agent', password: 'Agent5ecret' } })).body.sessionToken;
  const agent = { ...appHeaders(app), 'X-Core-Session-Token': token };
  // Records without an ACL, kept from Agents by the class's permissions alone (a common Parse setup).
  const closed = { 'role:Administrators': true };
  const made = await request(server, 'POST', '/core/schemas/Payroll', { headers: M, body: { className: 'Payroll',
    fields: { Name: { type: 'String' }, Salary: { type: 'Number' } },
    classLevelPermissions: { find: closed, count: closed, get: closed, create: closed, update: closed, delete: closed, addField: closed },
    timeline: { displayFields: {}, index: {} } } });
  assert.equal(made.status, 200, made.text);
  const row = await request(server, 'POST', '/core/classes/Payroll', { headers: M, body: { Name: 'CEO', Salary: 1000000 } });
  assert.equal(row.status, 201, row.text);
  assert.equal((await request(server, 'GET', '/core/classes/Payroll', { headers: agent })).status, 400, 'the class is closed to Agents');
  const mine = await request(server, 'GET', `/core/classes/_Timeline?where=${where({ objectClass: 'Payroll' })}&count=1`, { headers: agent });
  assert.equal(mine.status, 200, mine.text);
  assert.equal(mine.body.count, 0, 'its history is too');
  const all = await request(server, 'GET', `/core/classes/_Timeline?where=${where({ objectClass: 'Payroll' })}`, { headers: M });
  assert.equal(all.body.results.length, 1, 'the master reads it');
  const historyId = all.body.results[0].objectId;
  assert.equal((await request(server, 'GET', `/core/classes/_Timeline/${historyId}`, { headers: agent })).status, 404, 'nor by its id');
  const grouped = await request(server, 'GET', `/core/classes-aggregate/_Timeline?group=${encodeURIComponent(JSON.stringify({ _id: '$objectClass', n: { $sum: 1 } }))}`, { headers: agent });
  assert.equal(grouped.status, 200, grouped.text);
  assert.ok(!JSON.stringify(grouped.body).includes('Payroll'), `nor through an aggregate: ${grouped.text}`);
  // A record the Agent reads, whose Name is the hidden record's id: a sub-query of the history
  // would tell the id by matching it.
  assert.equal((await request(server, 'POST', '/core/classes/Tasks', { headers: M, body: { Name: row.body.objectId } })).status, 201);
  const sub = await request(server, 'GET', `/core/classes/Tasks?count=1&limit=0&where=${where({ Name: { $select: { query: { className: '_Timeline', where: { objectClass: 'Payroll' } }, key: 'objectIdValue' } } })}`, { headers: agent });
  assert.equal(sub.status, 200, sub.text);
  assert.equal(sub.body.count, 0, 'nor through a sub-query');
  const subMaster = await request(server, 'GET', `/core/classes/Tasks?count=1&limit=0&where=${where({ Name: { $select: { query: { className: '_Timeline', where: { objectClass: 'Payroll' } }, key: 'objectIdValue' } } })}`, { headers: M });
  assert.equal(subMaster.body.count, 1, 'which finds it for the master');
  // Rows of the classes an Agent reads stay readable.
  const account = await request(server, 'POST', '/core/classes/Accounts', { headers: M, body: { Name: 'Visible Person' } });
  const seen = await request(server, 'GET', `/core/classes/_Timeline?where=${where({ objectIdValue: account.body.objectId })}&count=1`, { headers: agent });
  assert.equal(seen.body.count, 1, seen.text);
});
