// Issue 21 / spec §4.10: every one of the 67 tools, called with a key through the real MCP SDK
// client, does what its description says, through the record API (checked back through it).
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { setup, stopAll, request, masterHeaders, createRecord, pollUntil } from './lib/harness.mjs';

let server;
let app;
let client;
before(async () => {
  ({ server, app } = await setup({}, { productBase: true }));
  client = new Client({ name: 'crmd-e2e', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.base}/mcp/${app.appId}`),
    { requestInit: { headers: { 'X-Core-API-Key': app.apiKey } } }));
});
after(async () => {
  await client?.close();
  await stopAll();
});

// Calls a tool that must succeed: its JSON answer.
async function ok(name, args = {}) {
  const r = await client.callTool({ name, arguments: args });
  assert.equal(r.isError, false, `${name}: ${r.content[0].text}`);
  return JSON.parse(r.content[0].text);
}
async function refused(name, args = {}) {
  const r = await client.callTool({ name, arguments: args });
  assert.equal(r.isError, true, `${name} should fail: ${r.content[0].text}`);
  return r.content[0].text;
}
const M = () => masterHeaders(app);
const get = async (path) => (await request(server, 'GET', path, { headers: M() })).body;

test('§4.10 67 tools, none of them deleting records or files, each with an object input schema and a description for a model', async () => {
  const { tools } = await client.listTools();
  assert.equal(tools.length, 67);
  assert.equal(new Set(tools.map((t) => t.name)).size, 67, 'unique names');
  for (const t of tools) {
    assert.equal(t.inputSchema.type, 'object', t.name);
    assert.equal(t.annotations.destructiveHint, false, t.name);
    assert.doesNotMatch(t.name, /^(Delete|Drop|Destroy|Purge)/i, t.name);
    assert.match(t.name, /^[A-Za-z-]{1,32}$/);
  }
});

test('§4.10 the record tools: get, count, update, update many, upsert by ExternalId, search, distinct values, counts by field', async () => {
  const ids = [];
  for (const [Name, City] of [['Alpha Ltd', 'Haifa'], ['Beta Ltd', 'Haifa'], ['Gamma Ltd', 'Eilat']]) ids.push(await createRecord(server, app, 'Accounts', { Name, City }));
  assert.equal((await ok('Get-Record', { table: 'Accounts', objectId: ids[0], keys: 'Name' })).Name, 'Alpha Ltd');
  assert.equal((await ok('Count-Data', { table: 'Accounts', where: { City: 'Haifa' } })).count, 2);
  await ok('Update-Data', { table: 'Accounts', objectId: ids[2], data: { City: 'Tel Aviv' } });
  assert.equal((await get(`/core/classes/Accounts/${ids[2]}`)).City, 'Tel Aviv');
  const many = await ok('Update-Many', { table: 'Accounts', where: { City: 'Haifa' }, data: { Comment: 'north' } });
  assert.equal(many.updated, 2);
  const up1 = await ok('Upsert-By-ExternalId', { table: 'Contacts', externalId: 'crm-77', data: { Name: 'Dana' } });
  assert.equal(up1.created, true);
  const up2 = await ok('Upsert-By-ExternalId', { table: 'Contacts', externalId: 'crm-77', data: { Email: 'dana@example.test' } });
  assert.deepEqual(up2, { created: false, objectId: up1.objectId });
  assert.equal((await get(`/core/classes/Contacts/${up1.objectId}`)).Email, 'dana@example.test');
  const found = await ok('Search-Data', { table: 'Accounts', text: 'beta', fields: ['Name', 'City'] });
  assert.deepEqual(found.results.map((r) => r.Name), ['Beta Ltd']);
  const literal = await ok('Search-Data', { table: 'Accounts', text: '.*', fields: ['Name'] });
  assert.equal(literal.results.length, 0, 'the text is matched literally, not as a pattern');
  const cities = await ok('Get-Distinct-Values', { table: 'Accounts', field: 'City' });
  assert.deepEqual(cities.results.sort(), ['Haifa', 'Tel Aviv']);
  const counts = await ok('Count-By', { table: 'Accounts', field: 'City' });
  assert.deepEqual(counts.results[0], { objectId: 'Haifa', count: 2 });
});

test('§4.10 the relation and history tools: link, list, unlink; a record\'s timeline, deletions, recent changes, trigger runs', async () => {
  const activity = await createRecord(server, app, 'Activities', { Name: 'Kick-off' });
  const users = [];
  for (const u of ['rel.one', 'rel.two']) users.push((await request(server, 'POST', '/core/users', { headers: M(), body: { username: u, password: 'Relation5x' } })).body.objectId);
  const rel = { table: 'Activities', objectId: activity, field: 'Participants', targetTable: '_User' };
  await ok('Add-Relation', { ...rel, objectIds: users });
  assert.equal((await ok('Get-Related', rel)).results.length, 2);
  await ok('Remove-Relation', { ...rel, objectIds: [users[0]] });
  assert.deepEqual((await ok('Get-Related', rel)).results.map((u) => u.objectId), [users[1]]);

  const account = await createRecord(server, app, 'Accounts', { Name: 'History Co' });
  await request(server, 'PUT', `/core/classes/Accounts/${account}`, { headers: M(), body: { City: 'Acre' } });
  const timeline = await ok('Get-Record-Timeline', { table: 'Accounts', objectId: account });
  assert.deepEqual(timeline.results.map((r) => r.event), ['update', 'create']);
  await request(server, 'DELETE', `/core/classes/Accounts/${account}`, { headers: M() });
  const deleted = await ok('Get-Deleted-Records', { table: 'Accounts' });
  assert.ok(deleted.results.some((r) => r.objectIdValue === account));
  assert.ok((await ok('Get-Recent-Changes', { limit: 5 })).results.length > 0);
  assert.ok(Array.isArray((await ok('Get-Trigger-Runs', {})).results));
});

test('§4.10 the schema tools: list tables, add a field, labels, permissions, indexes, the change history, triggers removed, Pointer options', async () => {
  const tables = (await ok('List-Tables')).tables.map((t) => t.table);
  assert.ok(tables.includes('Accounts') && tables.includes('_User'));
  await ok('Create-Table', { table: 'Vehicles' });
  await ok('Add-Field', { table: 'Vehicles', field: 'Plate', type: 'String' });
  await ok('Add-Field', { table: 'Vehicles', field: 'AccountId', type: 'Pointer', targetClass: 'Accounts' });
  await ok('Set-Field-Label', { table: 'Vehicles', field: 'Plate', label: 'מספר רישוי' });
  await ok('Set-Field-Label', { table: 'Vehicles', field: 'Plate', label: 'לוחית' });
  assert.deepEqual((await ok('Get-Labels', { table: 'Vehicles' })).labels, { Plate: 'לוחית' }, 'changed in place');
  assert.equal((await ok('Get-Schema', { table: 'Vehicles' })).fields.Plate.dictionary, 'לוחית');
  await ok('Set-Table-Permissions', { table: 'Vehicles', permissions: { find: { 'role:Agents': true, 'role:Administrators': true } } });
  assert.deepEqual((await ok('Get-Table-Permissions', { table: 'Vehicles' })).classLevelPermissions.find, { 'role:Agents': true, 'role:Administrators': true });
  await ok('Add-Index', { table: 'Vehicles', name: 'Plate_1', fields: { Plate: 1 } });
  assert.deepEqual((await ok('List-Indexes', { table: 'Vehicles' })).indexes.Plate_1, { Plate: 1 });
  await ok('Set-Timeline', { table: 'Vehicles', timeline: { displayFields: {}, index: { AccountId: 'Accounts' } } });
  const vehicle = (await ok('Create-Data', { table: 'Vehicles', data: { Plate: '12-345-67' } })).objectId;
  assert.equal((await ok('Get-Record-Timeline', { table: 'Vehicles', objectId: vehicle })).results.length, 1, 'history on');
  const set = await ok('Set-Trigger', { table: 'Vehicles', trigger: { name: 'x', event: 'create', active: false,
    actions: [{ actionType: 'create-record', actionData: { 'create-record': { table: 'Tasks', data: { Name: 'car' } } } }] } });
  const remaining = await ok('Remove-Trigger', { table: 'Vehicles', _id: set.triggers[0]._id });
  assert.deepEqual(remaining.triggers, []);
  assert.match(await refused('Remove-Trigger', { table: 'Vehicles', _id: set.triggers[0]._id }), /No trigger/);
  const options = await ok('Get-Pointer-Options', { table: 'Accounts', field: 'LeadStatusId' });
  assert.equal(options.targetClass, 'LeadStatuses');
  assert.ok(options.results.length > 0 && options.results.every((r) => r.objectId && 'Name' in r));
  assert.match(await refused('Get-Pointer-Options', { table: 'Accounts', field: 'Name' }), /not a Pointer field/);
});

test('§4.10 the CRM shortcuts: an account\'s summary, contacts, calls, notes, follow-ups, tasks, the pipeline, emails', async () => {
  const account = await createRecord(server, app, 'Accounts', { Name: 'Summary Inc' });
  const pointer = { __type: 'Pointer', className: 'Accounts', objectId: account };
  await createRecord(server, app, 'Contacts', { Name: 'Noa Levi', Email: 'noa@summary.test', AccountId: pointer });
  const task = (await ok('Create-Follow-Up-Task', { name: 'Send the quote', dueDate: '2026-12-01T09:00:00.000Z', accountId: account })).objectId;
  await ok('Log-Call', { accountId: account, type: 'outgoing', durationSeconds: 90, summary: 'asked for a quote' });
  await ok('Add-Note', { title: 'Budget', content: 'About 20k', accountId: account });
  await ok('Log-Email', { subject: 'Quote', body: '<p>Attached</p>', to: 'noa@summary.test', accountId: account });
  const summary = await ok('Get-Account-Summary', { accountId: account });
  assert.equal(summary.account.Name, 'Summary Inc');
  assert.deepEqual(summary.contacts.map((c) => c.Name), ['Noa Levi']);
  assert.deepEqual(summary.openTasks.map((t) => t.Name), ['Send the quote']);
  assert.ok(Array.isArray(summary.recentHistory));
  assert.equal((await ok('Get-Account-Contacts', { accountId: account })).results.length, 1);
  assert.deepEqual((await ok('Find-Contact', { text: 'NOA@' })).results.map((c) => c.Name), ['Noa Levi']);
  assert.equal((await ok('Get-Open-Tasks', { accountId: account })).results.length, 1);
  await ok('Complete-Task', { taskId: task });
  assert.equal((await ok('Get-Open-Tasks', { accountId: account })).results.length, 0);
  assert.equal((await get(`/core/classes/Tasks/${task}`)).Done, true);
  assert.equal((await get(`/core/classes/CallRecords?where=${encodeURIComponent(JSON.stringify({ AccountId: pointer }))}`)).results[0].duration, 90);
  assert.equal((await get(`/core/classes/Notes?where=${encodeURIComponent(JSON.stringify({ AccountId: pointer }))}`)).results[0].Name, 'Budget');
  assert.deepEqual((await ok('Get-Account-Emails', { accountId: account })).results.map((e) => e.Subject), ['Quote']);
  await createRecord(server, app, 'Sales', { Name: 'Deal', Total: 100 });
  assert.ok(Array.isArray((await ok('Get-Pipeline-Summary')).results));
});

test('§4.10 users, roles and MCP switches: find, roles and their members, who am I, switches set with a master connection', async () => {
  const user = (await ok('Create-or-Update-User', { user: { username: 'tool.user', password: 'ToolUser9x', email: 'tool@example.test' } })).objectId;
  assert.equal((await ok('Get-User', { userId: user })).username, 'tool.user');
  assert.deepEqual((await ok('Find-Users', { where: { email: 'tool@example.test' } })).results.map((u) => u.objectId), [user]);
  await ok('Create-Role', { name: 'Drivers' });
  assert.ok((await ok('List-Roles')).results.some((r) => r.name === 'Drivers'));
  await ok('Add-User-To-Role', { userId: user, role: 'Drivers' });
  assert.deepEqual((await ok('Get-Role-Members', { role: 'Drivers' })).results.map((u) => u.objectId), [user]);
  await ok('Remove-User-From-Role', { userId: user, role: 'Drivers' });
  assert.deepEqual((await ok('Get-Role-Members', { role: 'Drivers' })).results, []);
  assert.match(await refused('Get-Role-Members', { role: 'Nobody' }), /No role is named "Nobody"/);
  assert.equal((await ok('Who-Am-I')).identity, 'Master');
  assert.deepEqual((await ok('Get-MCP-Permissions', { userId: user })).mcpPermissions, []);
  await ok('Set-MCP-Permissions', { userId: user, mcpPermissions: ['mcp:view', 'mcp:create'] });
  assert.deepEqual((await ok('Get-MCP-Permissions', { userId: user })).mcpPermissions, ['mcp:view', 'mcp:create']);
  assert.match(await refused('Set-MCP-Permissions', { userId: user, mcpPermissions: ['mcp:everything'] }), /must be one of/);
});

test('§4.9 §4.10 Config flags, notifications, functions and the request log through tools', async () => {
  await ok('Set-Config-Flag', { name: 'AcceptWebToTable', enabled: true });
  const config = await ok('Get-Config');
  assert.deepEqual(config.results.find((r) => r.Name === 'AcceptWebToTable').Value, { AcceptWebToTable: true });
  await ok('Set-Config-Flag', { name: 'AcceptWebToTable', enabled: false });
  assert.equal((await ok('Get-Config')).results.filter((r) => r.Name === 'AcceptWebToTable').length, 1, 'the row changes, no second row');
  const user = (await request(server, 'POST', '/core/users', { headers: M(), body: { username: 'bell', password: 'BellUser9x' } })).body.objectId;
  await ok('Create-Notification', { userId: user, content: 'A new lead' });
  assert.deepEqual((await ok('Get-Notifications', { userId: user })).results.map((n) => n.Content), ['A new lead']);
  const functions = (await ok('List-Functions')).functions.map((f) => f.name);
  assert.ok(functions.includes('getlead') && functions.includes('web2table'));
  await ok('Set-Config-Flag', { name: 'AcceptWebToTable', enabled: true });
  const ran = await ok('Run-Function', { name: 'web2table', body: { table: 'Tasks', phone: '0501234567', table_Name: 'via MCP' } });
  assert.equal(ran.success, true);
  assert.match(await refused('Run-Function', { name: 'no-such-function' }), /User function not found/);
  // Spec §5.3: the request log is the master key's alone; an API key is refused.
  assert.equal(await refused('Get-Request-Log', { limit: 5 }), 'Permission denied for action find on class _RequestLog');
  const viaMaster = async () => (await fetch(`${server.base}/mcp/${app.appId}`, { method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Core-Master-Key': app.masterKey },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'Get-Request-Log', arguments: { limit: 5 } } }) })).json();
  // Rows of the request log are written within a second of their request.
  const logged = await pollUntil(async () => {
    const log = await viaMaster();
    assert.equal(log.result.isError, false, log.result.content[0].text);
    return { done: JSON.parse(log.result.content[0].text).results.some((r) => r.path === `/mcp/${app.appId}`) };
  }, { timeoutMs: 5000, intervalMs: 100 });
  assert.ok(logged.ok, 'the MCP request is in the request log');
});
