// Issue 21 / spec §4.10, §5.6, §7 (-32000): the MCP layer over Streamable HTTP, driven by the
// official MCP TypeScript SDK client (tests/e2e/package.json) and by raw JSON-RPC where the wire
// itself is the contract. (OAuth sign-in and the per-user switches come with the rest of issue 21.)
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { setup, stopAll, createApp, pollUntil, request, masterHeaders } from './lib/harness.mjs';

let server;
let app;
let dataDir;
before(async () => {
  ({ server, app, dataDir } = await setup({}, { productBase: true }));
});
after(stopAll);

// One JSON-RPC message, as a client without the SDK sends it.
async function rpc(body, { path = `/mcp/${app.appId}`, headers = {}, method = 'POST' } = {}) {
  const r = await fetch(`${server.base}${path}`, {
    method, headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: method === 'POST' ? (typeof body === 'string' ? body : JSON.stringify(body)) : undefined,
    signal: AbortSignal.timeout(30_000),
  });
  const text = await r.text();
  return { status: r.status, headers: r.headers, text, body: text ? JSON.parse(text) : undefined };
}
const call = (name, args, headers = { 'X-Core-API-Key': app.apiKey }, id = 1) =>
  rpc({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }, { headers });
const textOf = (r) => r.body.result.content[0].text;

async function sdkClient(a = app, headers = { 'X-Core-Application-Id': a.appId, 'X-Core-API-Key': a.apiKey }, path = '/mcp') {
  const transport = new StreamableHTTPClientTransport(new URL(`${server.base}${path}`), { requestInit: { headers } });
  const client = new Client({ name: 'crmd-e2e', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  return client;
}

test('§4.10 the SDK client connects with the application id and an API key, lists the tools and calls them', async () => {
  const client = await sdkClient();
  try {
    const { tools, nextCursor } = await client.listTools();
    assert.equal(nextCursor, undefined, 'one page');
    const names = tools.map((t) => t.name);
    for (const name of ['Get-Schema', 'Get-Data', 'Create-Data']) assert.ok(names.includes(name), name);
    for (const tool of tools) {
      assert.match(tool.name, /^[A-Za-z0-9_-]{1,64}$/);
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      assert.ok(tool.description.length > 40, `${tool.name} tells a model what it does`);
    }
    const created = await client.callTool({ name: 'Create-Data', arguments: { table: 'Accounts', data: { Name: 'MCP Ltd', City: 'Haifa' } } });
    assert.equal(created.isError, false, created.content[0].text);
    const { objectId } = JSON.parse(created.content[0].text);
    assert.match(objectId, /^[A-Za-z0-9]{10}$/);
    const read = await client.callTool({ name: 'Get-Data', arguments: { table: 'Accounts', where: { objectId }, keys: 'Name,City' } });
    assert.equal(read.isError, false, read.content[0].text);
    const rows = JSON.parse(read.content[0].text).results;
    assert.equal(rows.length, 1);
    assert.equal(rows[0].Name, 'MCP Ltd');
    // The same row through the record API: one store, one door.
    const direct = await request(server, 'GET', `/core/classes/Accounts/${objectId}`, { headers: masterHeaders(app) });
    assert.equal(direct.body.City, 'Haifa');
  } finally {
    await client.close();
  }
});

test('§4.10 Get-Data: limit defaults to 5 and is at most 2000 (2001 is a validation error saying so)', async () => {
  for (let i = 0; i < 7; i += 1) {
    const r = await call('Create-Data', { table: 'Tasks', data: { Subject: `task ${i}` } });
    assert.equal(r.body.result.isError, false, textOf(r));
  }
  const page = await call('Get-Data', { table: 'Tasks' });
  assert.equal(JSON.parse(textOf(page)).results.length, 5);
  const big = await call('Get-Data', { table: 'Tasks', limit: 2000 });
  assert.equal(big.body.result.isError, false);
  const over = await call('Get-Data', { table: 'Tasks', limit: 2001 });
  assert.equal(over.status, 200);
  assert.equal(over.body.result.isError, true);
  assert.match(textOf(over), /limit must be at most 2000/);
  const counted = await call('Get-Data', { table: 'Tasks', limit: 0, count: true });
  assert.ok(JSON.parse(textOf(counted)).count >= 7);
});

test('§4.10 Get-Schema: the Hebrew dictionary label inline in each field; {} for _Role and _Session', async () => {
  const r = await call('Get-Schema', { table: 'Accounts' });
  assert.equal(r.body.result.isError, false, textOf(r));
  const schema = JSON.parse(textOf(r));
  assert.equal(schema.className, 'Accounts');
  const labelled = Object.values(schema.fields).filter((f) => typeof f.dictionary === 'string');
  assert.ok(labelled.length > 3, 'the product base labels Accounts');
  assert.ok(labelled.some((f) => /[\u0590-\u05FF]/.test(f.dictionary)), 'in Hebrew');
  // Never in the record API (§2.5).
  const plain = await request(server, 'GET', '/core/schemas/Accounts', { headers: masterHeaders(app) });
  assert.ok(Object.values(plain.body.fields).every((f) => f.dictionary === undefined));
  for (const table of ['_Role', '_Session']) {
    const empty = await call('Get-Schema', { table });
    assert.equal(textOf(empty), '{}');
  }
});

test('§5.6 initialize and tools/list need no authentication; tools/call without it answers 403 -32000 "Authorization header is required"', async () => {
  const init = await rpc({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  assert.equal(init.status, 200);
  assert.equal(init.body.result.protocolVersion, '2025-06-18', 'a version crmd speaks is echoed');
  const newer = await rpc({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2099-01-01' } });
  assert.equal(newer.body.result.protocolVersion, '2025-11-25', 'else crmd\'s latest');
  const list = await rpc({ jsonrpc: '2.0', id: 'l', method: 'tools/list' });
  assert.equal(list.status, 200);
  assert.ok(list.body.result.tools.length >= 3);
  const bare = await rpc({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'Get-Data', arguments: { table: 'Accounts' } } });
  assert.equal(bare.status, 401, 'issue 36: the OAuth resource /mcp/<appId> asks the client to sign in');
  assert.match(bare.headers.get('www-authenticate'), /^Bearer resource_metadata="/);
  assert.deepEqual(bare.body, { jsonrpc: '2.0', id: 7, error: { code: -32000, message: 'Authorization header is required' } });
  const viaHeader = await rpc({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'Get-Data', arguments: { table: 'Accounts' } } },
    { path: '/mcp', headers: { 'X-Core-Application-Id': app.appId } });
  assert.equal(viaHeader.status, 403, 'the application id alone is no authentication');
});

test('§5.6 wrong credentials: HTTP 200 and the tool text "Permission denied for action find on class <X>"', async () => {
  for (const headers of [{ 'X-Core-API-Key': 'not-a-key' }, { 'X-Core-Master-Key': 'not-a-key' }, { 'X-Core-API-Key': app.masterKey }]) {
    const r = await call('Get-Data', { table: 'Accounts' }, headers);
    assert.equal(r.status, 200);
    assert.equal(r.body.result.isError, true);
    assert.equal(textOf(r), 'Permission denied for action find on class Accounts');
  }
  const schema = await call('Get-Schema', { table: 'Contacts' }, { 'X-Core-API-Key': 'nope' });
  assert.equal(textOf(schema), 'Permission denied for action find on class Contacts');
  const bearer = await call('Get-Data', { table: 'Accounts' }, { Authorization: 'Bearer not-issued-by-crmd' });
  assert.equal(bearer.status, 401);
  assert.match(bearer.headers.get('www-authenticate'), /^Bearer error="invalid_token"/);
});

test('§4.10 one connection addresses one application: a key of A on /mcp/B, or with B\'s id, reaches nothing of B', async () => {
  const other = createApp(dataDir);
  await pollUntil(async () => ({ done: (await request(server, 'GET', '/core/classes/Accounts', { headers: masterHeaders(other) })).status === 200 }),
    { timeoutMs: 5000, intervalMs: 100 });
  const secret = await request(server, 'POST', '/core/classes/Secrets', { headers: masterHeaders(other), body: { Code: 'B-only' } });
  assert.equal(secret.status, 201, secret.text);
  const crossed = await rpc({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'Get-Data', arguments: { table: 'Secrets' } } },
    { path: `/mcp/${other.appId}`, headers: { 'X-Core-API-Key': app.apiKey } });
  assert.equal(crossed.body.result.isError, true);
  assert.equal(crossed.body.result.content[0].text, 'Permission denied for action find on class Secrets');
  const client = await sdkClient(other, { 'X-Core-Application-Id': other.appId, 'X-Core-API-Key': app.apiKey });
  try {
    const r = await client.callTool({ name: 'Get-Data', arguments: { table: 'Secrets' } });
    assert.equal(r.isError, true);
  } finally {
    await client.close();
  }
  // And B's own key through B's URL sees it.
  const own = await rpc({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'Get-Data', arguments: { table: 'Secrets' } } },
    { path: `/mcp/${other.appId}`, headers: { 'X-Core-API-Key': other.apiKey } });
  assert.equal(JSON.parse(own.body.result.content[0].text).results[0].Code, 'B-only');
});

test('§5.3 _Timeline and the _syslog tables are read-only through every tool, even with a key', async () => {
  for (const table of ['_Timeline', '_syslogTriggers']) {
    const r = await call('Create-Data', { table, data: { event: 'create' } });
    assert.equal(r.body.result.isError, true, table);
    assert.equal(textOf(r), `Permission denied for action create on class ${table}`);
  }
  const read = await call('Get-Data', { table: '_Timeline', limit: 1 });
  assert.equal(read.body.result.isError, false, 'reading stays open to a key');
});

test('§4.10 transport: notifications get 202 and no body; GET and DELETE 405; ids keep their type; bad JSON, bad messages, unknown methods and versions are JSON-RPC errors', async () => {
  const note = await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' });
  assert.equal(note.status, 202);
  assert.equal(note.text, '');
  for (const method of ['GET', 'DELETE']) {
    const r = await rpc(undefined, { method });
    assert.equal(r.status, 405, method);
  }
  const stringId = await rpc({ jsonrpc: '2.0', id: '1', method: 'ping' });
  assert.deepEqual(stringId.body, { jsonrpc: '2.0', id: '1', result: {} });
  const numberId = await rpc({ jsonrpc: '2.0', id: 1, method: 'ping' });
  assert.equal(numberId.body.id, 1);
  const broken = await rpc('{"jsonrpc":"2.0",');
  assert.equal(broken.status, 400);
  assert.deepEqual(broken.body.error, { code: -32700, message: 'Parse error' });
  assert.equal(broken.body.id, null);
  for (const bad of [{ jsonrpc: '1.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: {}, method: 'ping' }]) {
    const r = await rpc(bad);
    assert.equal(r.status, 400, JSON.stringify(bad));
    assert.equal(r.body.error.code, -32600);
  }
  // Batches were removed in revision 2025-06-18: refused under it and later.
  for (const version of ['2025-06-18', '2025-11-25']) {
    const r = await rpc([{ jsonrpc: '2.0', id: 1, method: 'ping' }], { headers: { 'MCP-Protocol-Version': version } });
    assert.equal(r.status, 400, version);
    assert.equal(r.body.error.code, -32600);
  }
  const unknown = await rpc({ jsonrpc: '2.0', id: 3, method: 'server/discover' });
  assert.equal(unknown.status, 200);
  assert.deepEqual(unknown.body.error, { code: -32601, message: 'Method not found' });
  const version = await rpc({ jsonrpc: '2.0', id: 4, method: 'tools/list' }, { headers: { 'MCP-Protocol-Version': '2026-07-28' } });
  assert.equal(version.status, 400);
  assert.equal(version.body.error.code, -32000);
  assert.match(version.body.error.message, /^Bad Request: Unsupported protocol version: 2026-07-28 \(supported versions: 2025-11-25, 2025-06-18, 2025-03-26\)$/);
  const wrongType = await rpc({ jsonrpc: '2.0', id: 5, method: 'ping' }, { headers: { 'Content-Type': 'text/plain' } });
  assert.equal(wrongType.status, 415);
  const noTool = await call('Delete-Everything', {});
  assert.deepEqual(noTool.body.error, { code: -32602, message: 'Unknown tool: Delete-Everything' });
});

test('§4.10 SECURITY hostile tool arguments: SQL in names, huge strings, deep JSON and unknown arguments are validation errors; nothing is written', async () => {
  const before = await request(server, 'GET', '/core/classes/Tasks?count=1&limit=0', { headers: masterHeaders(app) });
  const cases = [
    ['Get-Data', { table: 'Tasks"; DROP TABLE Tasks; --' }],
    ['Create-Data', { table: 'Tasks', data: { 'x"; DROP TABLE Tasks; --': 1 } }],
    ['Get-Data', { table: 'x'.repeat(10 * 1024 * 1024) }],
    ['Get-Data', { table: 'Tasks', limit: -1 }],
    ['Get-Data', { table: 'Tasks', limit: 'all' }],
    ['Get-Data', { table: 'Tasks', sneaky: true }],
    ['Create-Data', { table: 'Tasks' }],
    ['Create-Data', { table: 'Tasks', data: [1, 2] }],
  ];
  for (const [name, args] of cases) {
    const r = await call(name, args);
    assert.equal(r.status, 200, `${name} ${JSON.stringify(args).slice(0, 80)}`);
    assert.equal(r.body.result.isError, true, `${name} ${JSON.stringify(args).slice(0, 80)}: ${textOf(r).slice(0, 200)}`);
  }
  // 25 MB of arguments: past the MCP body limit (24 MiB), refused before a byte of it is parsed.
  const huge = await call('Get-Data', { table: 'x'.repeat(25 * 1024 * 1024) });
  assert.equal(huge.status, 413);
  let deep = { a: 1 };
  for (let i = 0; i < 100; i += 1) deep = { a: deep };
  const tooDeep = await call('Create-Data', { table: 'Tasks', data: deep });
  assert.ok(tooDeep.status === 400 || tooDeep.body.result?.isError, 'JSON nested past the limit is refused');
  const after = await request(server, 'GET', '/core/classes/Tasks?count=1&limit=0', { headers: masterHeaders(app) });
  assert.equal(after.body.count, before.body.count, 'nothing was written');
});

// The named tools of §4.10 beyond reading and writing one row.
test('§4.10 Set-Trigger adds a trigger and active:false switches it off; Get-Triggers shows each _id', async () => {
  const set = await call('Set-Trigger', { table: 'Cases', trigger: { name: 'case task', event: 'create',
    actions: [{ actionType: 'create-record', actionData: { 'create-record': { table: 'Tasks', data: { Subject: 'from case {{objectId}}' } } } }] } });
  assert.equal(set.body.result.isError, false, textOf(set));
  const listed = JSON.parse(textOf(await call('Get-Triggers', { table: 'Cases' }))).triggers;
  assert.equal(listed.length, 1);
  assert.match(listed[0]._id, /^[A-Za-z0-9]{10}$/);
  assert.equal(listed[0].active ?? true, true);
  const off = await call('Set-Trigger', { table: 'Cases', trigger: { _id: listed[0]._id, active: false } });
  assert.equal(off.body.result.isError, false, textOf(off));
  const after = JSON.parse(textOf(await call('Get-Triggers', { table: 'Cases' }))).triggers;
  assert.equal(after.length, 1, 'changed in place, not added');
  assert.equal(after[0].active, false);
  assert.equal(after[0].name, 'case task', 'the keys not sent stay');
  const bad = await call('Set-Trigger', { table: 'Cases', trigger: { event: 'explode', actions: [] } });
  assert.equal(bad.body.result.isError, true, 'the schema API checks the definition');
  assert.equal(JSON.parse(textOf(await call('Get-Triggers', { table: 'Cases' }))).triggers.length, 1, 'and the list is unchanged');
});

test('§4.10 Create-Many {table, data, skipTriggers, skipTimeline}: with a master connection the flags skip triggers and _Timeline rows', async () => {
  const M = masterHeaders(app);
  await request(server, 'POST', '/core/schemas/Echoes', { headers: M, body: { fields: { From: { type: 'String' } } } });
  const set = await call('Set-Trigger', { table: 'Accounts', trigger: { name: 'echo', event: 'create',
    actions: [{ actionType: 'create-record', actionData: { 'create-record': { table: 'Echoes', data: { From: '{{objectId}}' } } } }] } });
  assert.equal(set.body.result.isError, false, textOf(set));
  const skipped = await call('Create-Many', { table: 'Accounts', data: [{ Name: 'quiet 1' }, { Name: 'quiet 2' }], skipTriggers: true, skipTimeline: true });
  const quiet = JSON.parse(textOf(skipped));
  assert.equal(quiet.created, 2, textOf(skipped));
  const loud = JSON.parse(textOf(await call('Create-Many', { table: 'Accounts', data: [{ Name: 'loud 1' }, { Name: 'loud 2' }, { Name: { not: 'a string' } }] })));
  assert.equal(loud.created, 2);
  assert.equal(loud.failed, 1, 'a row of the wrong type fails alone');
  assert.equal(loud.results[2].error.code, 111);
  const ids = (r) => r.results.filter((x) => x.success).map((x) => x.success.objectId);
  const echoes = async () => (await request(server, 'GET', '/core/classes/Echoes?limit=100', { headers: M })).body.results.map((e) => e.From);
  await pollUntil(async () => ({ done: (await echoes()).length >= 2 }), { timeoutMs: 10_000, intervalMs: 50 });
  const echoed = await echoes();
  assert.deepEqual(echoed.sort(), ids(loud).sort(), 'only the rows created without skipTriggers fired');
  const timeline = async (id) => (await request(server, 'GET', `/core/classes/_Timeline?where=${encodeURIComponent(JSON.stringify({ objectIdValue: id }))}&count=1&limit=0`, { headers: M })).body.count;
  for (const id of ids(quiet)) assert.equal(await timeline(id), 0, 'skipTimeline: no _Timeline row');
  for (const id of ids(loud)) assert.ok(await timeline(id) >= 1, 'otherwise the change is recorded');
  const tooMany = await call('Create-Many', { table: 'Accounts', data: Array.from({ length: 501 }, (_, i) => ({ Name: `n${i}` })) });
  assert.match(textOf(tooMany), /data must have at most 500 items/);
  await call('Set-Trigger', { table: 'Accounts', trigger: { _id: JSON.parse(textOf(set)).triggers.at(-1)._id, active: false } });
});

test('§4.10 Aggregate-Data: a pipeline over a table; every row by default, at most 2000 when limited', async () => {
  const M = masterHeaders(app);
  for (const City of ['Haifa', 'Haifa', 'Eilat']) await request(server, 'POST', '/core/classes/Depots', { headers: M, body: { City } });
  const r = await call('Aggregate-Data', { table: 'Depots', pipeline: [{ $group: { _id: '$City', n: { $sum: 1 } } }, { $sort: { n: -1 } }] });
  assert.equal(r.body.result.isError, false, textOf(r));
  const rows = JSON.parse(textOf(r)).results;
  assert.deepEqual(rows.map((x) => [x.objectId ?? x._id, x.n]), [['Haifa', 2], ['Eilat', 1]]);
  const one = JSON.parse(textOf(await call('Aggregate-Data', { table: 'Depots', pipeline: [{ $group: { _id: '$City', n: { $sum: 1 } } }], limit: 1 })));
  assert.equal(one.results.length, 1);
  const over = await call('Aggregate-Data', { table: 'Depots', pipeline: [], limit: 2001 });
  assert.match(textOf(over), /limit must be at most 2000/);
});

test('§4.10 Create-Table gives permissions that still must be opened to roles; Create-or-Update-User and Get-all-Users (the first 100 only)', async () => {
  const made = await call('Create-Table', { table: 'Visits', fields: { Place: { type: 'String' } } });
  assert.equal(made.body.result.isError, false, textOf(made));
  const schema = JSON.parse(textOf(await call('Get-Schema', { table: 'Visits' })));
  assert.deepEqual(schema.classLevelPermissions.find, { 'role:Administrators': true });
  assert.deepEqual(schema.classLevelPermissions.create, { 'role:Administrators': true });
  const created = await call('Create-or-Update-User', { user: { username: 'mcp.user', password: 'McpUser9x', email: 'mcp@example.test' } });
  assert.equal(created.body.result.isError, false, textOf(created));
  const { objectId } = JSON.parse(textOf(created));
  const visitor = await request(server, 'POST', '/core/login', { headers: { 'X-Core-Application-Id': app.appId }, body: { username: 'mcp.user', password: 'McpUser9x' } });
  assert.equal(visitor.status, 200);
  const closed = await request(server, 'GET', '/core/classes/Visits', { headers: { 'X-Core-Application-Id': app.appId, 'X-Core-Session-Token': visitor.body.sessionToken } });
  assert.equal(closed.status, 400, 'a user without the Administrators role cannot read the new table');
  const weak = await call('Create-or-Update-User', { user: { username: 'weak', password: 'short' } });
  assert.equal(weak.body.result.isError, true);
  const off = await call('Create-or-Update-User', { objectId, user: { active: false } });
  assert.equal(off.body.result.isError, false, textOf(off));
  const batch = Array.from({ length: 101 }, (_, i) => ({ method: 'POST', path: '/core/classes/_User', body: { username: `bulk${i}`, password: 'Bulk5user' } }));
  const bulk = await request(server, 'POST', '/core/batch', { headers: masterHeaders(app), body: { requests: batch }, timeoutMs: 120_000 });
  assert.equal(bulk.status, 200, bulk.text);
  const users = JSON.parse(textOf(await call('Get-all-Users', {}))).results;
  assert.equal(users.length, 100, 'the first 100 only');
  assert.ok(users.every((u) => u.password === undefined && u.sessionToken === undefined));
  const noArgs = await call('Get-all-Users', { limit: 500 });
  assert.match(textOf(noArgs), /limit is not an argument of this tool/);
});

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1,
  8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89, 0, 0, 0, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0, 1, 0, 0, 5, 0, 1, 0x0d, 0x0a, 0x2d, 0xb4,
  0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82]);

test('§4.8 §4.10 Upload-Public-File takes plain base64 (no Data-URI prefix), judged by content, and answers a public url; Get-File-Content reads files back', async () => {
  const up = await call('Upload-Public-File', { name: 'logo (mcp).png', data: PNG.toString('base64') });
  assert.equal(up.body.result.isError, false, textOf(up));
  const file = JSON.parse(textOf(up));
  assert.match(file.name, /^[0-9a-f]{32}_logo \(mcp\)\.png$/);
  assert.ok(file.url.startsWith(`${server.base}/static/${app.appId}/`), file.url);
  const open = await fetch(file.url);
  assert.equal(open.status, 200, 'public: no credential needed');
  assert.deepEqual(Buffer.from(await open.arrayBuffer()), PNG);
  const back = JSON.parse(textOf(await call('Get-File-Content', { url: file.url })));
  assert.equal(back.mimeType, 'image/png');
  assert.deepEqual(Buffer.from(back.base64, 'base64'), PNG);

  const prefixed = await call('Upload-Public-File', { name: 'x.png', data: `data:image/png;base64,${PNG.toString('base64')}` });
  assert.equal(prefixed.body.result.isError, true);
  assert.match(textOf(prefixed), /without a Data-URI prefix/);
  const garbage = await call('Upload-Public-File', { name: 'x.png', data: '***not base64***' });
  assert.match(textOf(garbage), /not valid base64/);
  const html = await call('Upload-Public-File', { name: 'page.png', data: Buffer.from('<!DOCTYPE html><html><script>alert(1)</script></html>').toString('base64') });
  assert.equal(html.body.result.isError, true);
  assert.equal(textOf(html), 'Invalid file type');
  const escape = await call('Upload-Public-File', { name: '../../data.db.png', data: PNG.toString('base64') });
  assert.equal(textOf(escape), 'Invalid file name');

  // A text file through the record API's upload, attached privately: a key reads it as text.
  const M = masterHeaders(app);
  const raw = await fetch(`${server.base}/core/files/notes.txt`, { method: 'POST', headers: { 'X-Core-Application-Id': app.appId }, body: 'call back on Sunday\n' });
  const uploaded = await raw.json();
  await request(server, 'POST', '/core/schemas/Folders', { headers: M, body: { fields: { Doc: { type: 'PrivateFile' } } } });
  const holder = await request(server, 'POST', '/core/classes/Folders', { headers: M, body: { Doc: { __type: 'File', name: uploaded.name, url: uploaded.url } } });
  const stored = await request(server, 'GET', `/core/classes/Folders/${holder.body.objectId}`, { headers: M });
  const text = JSON.parse(textOf(await call('Get-File-Content', { url: stored.body.Doc.url })));
  assert.equal(text.text, 'call back on Sunday\n');
  assert.equal(text.mimeType, 'text/plain');
  const missing = await call('Get-File-Content', { url: `${server.base}/core/files/${app.appId}/${'0'.repeat(32)}_gone.txt` });
  assert.equal(textOf(missing), 'File not found');
  // Another application's key reads nothing of this one's files.
  const other = createApp(dataDir);
  await pollUntil(async () => ({ done: (await request(server, 'GET', '/core/classes/Accounts', { headers: masterHeaders(other) })).status === 200 }),
    { timeoutMs: 5000, intervalMs: 100 });
  const crossed = await rpc({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'Get-File-Content', arguments: { url: stored.body.Doc.url } } },
    { path: `/mcp/${other.appId}`, headers: { 'X-Core-API-Key': other.apiKey } });
  assert.equal(crossed.body.result.isError, true);
  assert.equal(crossed.body.result.content[0].text, 'File not found');
});

test('§4.10 a browser client: the preflight allows the MCP headers, and answers expose the challenge header', async () => {
  const pre = await fetch(`${server.base}/mcp/${app.appId}`, { method: 'OPTIONS', headers: {
    Origin: 'https://agent.example.test', 'Access-Control-Request-Method': 'POST',
    'Access-Control-Request-Headers': 'content-type, mcp-protocol-version, authorization, x-core-api-key' } });
  assert.equal(pre.status, 200);
  assert.equal(pre.headers.get('access-control-allow-origin'), 'https://agent.example.test');
  const allowed = pre.headers.get('access-control-allow-headers').toLowerCase().split(',').map((h) => h.trim());
  for (const h of ['content-type', 'mcp-protocol-version', 'authorization', 'x-core-api-key']) assert.ok(allowed.includes(h), h);
  await pre.arrayBuffer();
  const r = await rpc({ jsonrpc: '2.0', id: 1, method: 'ping' }, { headers: { Origin: 'https://agent.example.test' } });
  assert.equal(r.headers.get('access-control-allow-origin'), 'https://agent.example.test');
  assert.match(r.headers.get('access-control-expose-headers'), /WWW-Authenticate/);
});

// The MCP Inspector's CLI (tests/e2e/package.json), a second real client, non-interactive.
const INSPECTOR = path.join(import.meta.dirname, 'node_modules', '.bin', 'mcp-inspector');
async function inspector(args) {
  const { stdout } = await promisify(execFile)(INSPECTOR, ['--cli', `${server.base}/mcp/${app.appId}`, '--transport', 'http',
    '--header', `X-Core-API-Key: ${app.apiKey}`, ...args], { timeout: 60_000 });
  return JSON.parse(stdout);
}

test('§4.10 the MCP Inspector CLI lists the tools and calls them with an API key', async () => {
  const listed = await inspector(['--method', 'tools/list']);
  for (const name of ['Get-Schema', 'Get-Data', 'Create-Data', 'Create-Many', 'Upload-Public-File', 'Get-File-Content'])
    assert.ok(listed.tools.some((t) => t.name === name), name);
  const created = await inspector(['--method', 'tools/call', '--tool-name', 'Create-Data', '--tool-arg', 'table=Accounts',
    '--tool-arg', 'data={"Name":"From the Inspector"}']);
  assert.equal(created.isError, false, created.content[0].text);
  const { objectId } = JSON.parse(created.content[0].text);
  const read = await inspector(['--method', 'tools/call', '--tool-name', 'Get-Data', '--tool-arg', 'table=Accounts',
    '--tool-arg', `where={"objectId":"${objectId}"}`, '--tool-arg', 'limit=1']);
  assert.equal(JSON.parse(read.content[0].text).results[0].Name, 'From the Inspector');
  const over = await inspector(['--method', 'tools/call', '--tool-name', 'Get-Data', '--tool-arg', 'table=Accounts', '--tool-arg', 'limit=2001']);
  assert.equal(over.isError, true);
  assert.match(over.content[0].text, /limit must be at most 2000/);
});

test('issue 36: under revision 2025-03-26 (or none named) a JSON-RPC batch is answered by an array, in order', async () => {
  const keys = { 'X-Core-API-Key': app.apiKey };
  for (const headers of [{}, { 'MCP-Protocol-Version': '2025-03-26' }]) {
    const r = await rpc([
      { jsonrpc: '2.0', id: 'p', method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'Get-Data', arguments: { table: 'Accounts', limit: 1 } } },
      { jsonrpc: '1.0', id: 3, method: 'ping' },
    ], { headers: { ...headers, ...keys } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.length, 3, 'the notification has no answer');
    assert.deepEqual(r.body[0], { jsonrpc: '2.0', id: 'p', result: {} });
    assert.equal(r.body[1].id, 2);
    assert.ok(Array.isArray(JSON.parse(r.body[1].result.content[0].text).results));
    assert.deepEqual(r.body[2], { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } });
  }
  const notifications = await rpc([{ jsonrpc: '2.0', method: 'notifications/initialized' }]);
  assert.equal(notifications.status, 202);
  for (const bad of [[], Array.from({ length: 33 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }))]) {
    const r = await rpc(bad);
    assert.equal(r.status, 400, `${bad.length} messages`);
    assert.equal(r.body.error.code, -32600);
  }
  // A call without a credential refuses the whole batch, with the status that starts a sign-in.
  const anonymous = await rpc([{ jsonrpc: '2.0', id: 1, method: 'ping' },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'Get-Data', arguments: { table: 'Accounts' } } }]);
  assert.equal(anonymous.status, 401);
  assert.deepEqual(anonymous.body, [{ jsonrpc: '2.0', id: 2, error: { code: -32000, message: 'Authorization header is required' } }]);
});

test('issue 36: Get-Data without `order` returns the newest rows first, as its description says', async () => {
  const table = 'NewestFirst';
  for (const name of ['first', 'second', 'third']) {
    const made = await request(server, 'POST', `/core/classes/${table}`, { headers: masterHeaders(app), body: { Name: name } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
  }
  const names = (r) => JSON.parse(textOf(r)).results.map((row) => row.Name);
  assert.deepEqual(names(await call('Get-Data', { table, limit: 2 })), ['third', 'second']);
  assert.deepEqual(names(await call('Get-Data', { table, order: 'createdAt' })), ['first', 'second', 'third']);
});
