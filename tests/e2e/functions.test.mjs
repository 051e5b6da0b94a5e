// Issue 18 / spec §4.9: the public form functions, POST /functions/{appId}/{fn}, with the
// application id alone; §7's form errors ({"error": ...} without a code); §2.6's history and
// request-log rows of a function's writes.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  setup, stopAll, request, rawRequest, masterHeaders, appHeaders, createApp, startServer, makeDataDir, sleep, pollUntil,
  cli, cliJson,
} from './lib/harness.mjs';

let server;
let app;
let M;
before(async () => {
  ({ server, app } = await setup({ extraArgs: ['--form-calls-per-minute', '0'] }, { productBase: true }));
  M = masterHeaders(app);
});
after(stopAll);

const form = (fn, body, { srv = server, a = app, headers } = {}) =>
  request(srv, 'POST', `/functions/${a.appId}/${fn}`, { headers: headers ?? appHeaders(a), body });
const accounts = async (where = {}) => {
  const r = await request(server, 'GET', `/core/classes/Accounts?where=${encodeURIComponent(JSON.stringify(where))}&limit=1000`, { headers: M });
  assert.equal(r.status, 200, r.text);
  return r.body.results;
};
const count = async (cls) => {
  const r = await request(server, 'GET', `/core/classes/${cls}?count=1&limit=0`, { headers: M });
  assert.equal(r.status, 200, r.text);
  return r.body.count;
};
const statusId = async (name) => {
  const r = await request(server, 'GET', `/core/classes/LeadStatuses?where=${encodeURIComponent(JSON.stringify({ Name: name }))}`, { headers: M });
  return r.body.results[0]?.objectId;
};

test('§4.9 getlead with the application id alone creates a lead in Accounts: 200 {success, accountId}', async () => {
  const r = await form('getlead', { PhoneNumber: '050-7000001', Email: 'first.lead@example.test', Name: 'First Lead', City: 'Haifa' });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(Object.keys(r.body).sort(), ['accountId', 'success']);
  assert.equal(r.body.success, true);
  assert.match(r.body.accountId, /^[A-Za-z0-9]{10}$/);
  const got = await request(server, 'GET', `/core/classes/Accounts/${r.body.accountId}`, { headers: M });
  assert.equal(got.status, 200, got.text);
  assert.equal(got.body.PhoneNumber, '050-7000001');
  assert.equal(got.body.Email, 'first.lead@example.test');
  assert.equal(got.body.Name, 'First Lead');
  assert.equal(got.body.City, 'Haifa');
  assert.equal(got.body.LeadStatusId, undefined, 'a new address is no duplicate');
});

test('§4.9 getlead always creates a new row; a lead whose Email matches an Account points at the Duplicate lead status', async () => {
  const duplicate = await statusId('Duplicate');
  assert.ok(duplicate, 'the product base has a Duplicate lead status');
  const first = await form('getlead', { Email: 'twice@example.test', Name: 'Once' });
  const second = await form('getlead', { Email: 'twice@example.test', Name: 'Twice' });
  assert.equal(first.status, 200, first.text);
  assert.equal(second.status, 200, second.text);
  assert.notEqual(first.body.accountId, second.body.accountId, 'not merged');
  const rows = await accounts({ Email: 'twice@example.test' });
  assert.equal(rows.length, 2);
  const byId = new Map(rows.map((r) => [r.objectId, r]));
  assert.equal(byId.get(first.body.accountId).LeadStatusId, undefined);
  assert.deepEqual(byId.get(second.body.accountId).LeadStatusId, { __type: 'Pointer', className: 'LeadStatuses', objectId: duplicate });
  assert.equal(byId.get(first.body.accountId).Name, 'Once', 'the existing contact is not updated');
});

test('§4.9 form values: unknown keys ignored, a wrapped Pointer or a bare 10-character id, dates as ISO, YYYY-MM-DD or a Date object', async () => {
  const status = await statusId('Duplicate');
  const r = await form('getlead', {
    Email: 'values@example.test', utm_source: 'ads', 'first-name': 'x', NotAField: 1,
    LeadStatusId: { __type: 'Pointer', className: 'LeadStatuses', objectId: status },
    StatusId: 'AccSts0001', Birthday: '1990-05-17', LastContactDate: { __type: 'Date', iso: '2026-01-02T03:04:05.000Z' },
  });
  assert.equal(r.status, 200, r.text);
  const got = (await request(server, 'GET', `/core/classes/Accounts/${r.body.accountId}`, { headers: M })).body;
  assert.equal(got.utm_source, undefined);
  assert.equal(got.NotAField, undefined);
  assert.deepEqual(got.LeadStatusId, { __type: 'Pointer', className: 'LeadStatuses', objectId: status });
  assert.deepEqual(got.StatusId, { __type: 'Pointer', className: 'AccountStatuses', objectId: 'AccSts0001' });
  assert.deepEqual(got.Birthday, { __type: 'Date', iso: '1990-05-17T00:00:00.000Z' });
  assert.deepEqual(got.LastContactDate, { __type: 'Date', iso: '2026-01-02T03:04:05.000Z' });
  const flat = await form('getlead', { Email: 'flatdate@example.test', Birthday: '1991-02-03T10:00:00Z' });
  assert.equal(flat.status, 200, flat.text);
  const g2 = (await request(server, 'GET', `/core/classes/Accounts/${flat.body.accountId}`, { headers: M })).body;
  assert.deepEqual(g2.Birthday, { __type: 'Date', iso: '1991-02-03T10:00:00.000Z' });
  const schema = await request(server, 'GET', '/core/schemas/Accounts', { headers: M });
  assert.equal(schema.body.fields.utm_source, undefined, 'an unknown key adds no field');
});

test('§4.9 a Pointer id of another length in getlead, or a File anywhere, fails the whole call with 400 and writes nothing', async () => {
  const before = await count('Accounts');
  for (const body of [
    { Email: 'badptr@example.test', StatusId: 'short' },
    { Email: 'badptr@example.test', LeadStatusId: { __type: 'Pointer', className: 'LeadStatuses', objectId: 'waytoolongid' } },
    { Email: 'file@example.test', Image: { __type: 'File', name: 'a.png', url: 'http://x/a.png' } },
    { Email: 'file@example.test', NotAField: { __type: 'File', name: 'a.png' } },
    { Email: 'file@example.test', Tags: [{ nested: { __type: 'File', name: 'a.png' } }] },
  ]) {
    const r = await form('getlead', body);
    assert.equal(r.status, 400, r.text);
    assert.deepEqual(Object.keys(r.body), ['error'], 'a form error has no code');
  }
  assert.equal(await count('Accounts'), before);
});

test('§4.9 an unknown function answers 400 {"error":"User function not found"}; names match exactly', async () => {
  for (const fn of ['nope', 'GetLead', 'getleads', 'getlea', 'GETLEAD']) {
    const r = await form(fn, {});
    assert.equal(r.status, 400, `${fn}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'User function not found' });
  }
  const generic = await request(server, 'POST', '/core/functions/getlead', { headers: appHeaders(app), body: {} });
  assert.deepEqual(generic.body, { code: 141, error: 'function not found' });
});

test('§4.9 the application id header is required and must name the path\'s application; nothing is written', async () => {
  const other = createApp(server.dataDir, { productBase: false });
  // The running server sees the new application within its registry's poll.
  const known = await pollUntil(async () => ({ done: (await request(server, 'GET', '/core/classes/Anything', { headers: masterHeaders(other) })).status === 200 }),
    { timeoutMs: 30_000, intervalMs: 100 });
  assert.ok(known.ok, 'the server knows the new application');
  const before = await count('Accounts');
  const missing = await request(server, 'POST', `/functions/${app.appId}/getlead`, { body: { Email: 'nohdr@example.test' } });
  assert.equal(missing.status, 403, missing.text);
  assert.deepEqual(missing.body, { error: 'unauthorized' });
  const wrong = await request(server, 'POST', `/functions/${app.appId}/getlead`, { headers: appHeaders(other), body: { Email: 'wrong@example.test' } });
  assert.equal(wrong.status, 403, wrong.text);
  const unknownPath = await request(server, 'POST', '/functions/NoSuchApp0/getlead', { headers: appHeaders(app), body: {} });
  assert.equal(unknownPath.status, 403, unknownPath.text);
  assert.equal(await count('Accounts'), before);
});

test('§4.9 Config gate: AcceptWebLeads decides, the first-created row of a Name wins, and a change is seen at the next call', async () => {
  const dir = makeDataDir();
  const a = createApp(dir, { productBase: true });
  const srv = await startServer(dir);
  const A = masterHeaders(a);
  const call = () => form('getlead', { Email: 'gate@example.test' }, { srv, a });
  assert.equal((await call()).status, 200, 'on in a fresh application');

  const rows = await request(srv, 'GET', `/core/classes/Config?where=${encodeURIComponent(JSON.stringify({ Name: 'AcceptWebLeads' }))}`, { headers: A });
  const first = rows.body.results[0].objectId;
  const off = await request(srv, 'PUT', `/core/classes/Config/${first}`, { headers: A, body: { Value: { AcceptWebLeads: false } } });
  assert.equal(off.status, 200, off.text);
  const disabled = await call();
  assert.equal(disabled.status, 400, disabled.text);
  assert.deepEqual(disabled.body, { error: 'AcceptWebLeads is Disabled' });

  // A newer row saying true does not count: the first created decides.
  const newer = await request(srv, 'POST', '/core/classes/Config', { headers: A, body: { Name: 'AcceptWebLeads', Value: { AcceptWebLeads: true } } });
  assert.equal(newer.status, 201, newer.text);
  assert.deepEqual((await call()).body, { error: 'AcceptWebLeads is Disabled' });

  const del = await request(srv, 'DELETE', `/core/classes/Config/${first}`, { headers: A });
  assert.equal(del.status, 200, del.text);
  assert.equal((await call()).status, 200, 'the newer row is the first now');

  const delNewer = await request(srv, 'DELETE', `/core/classes/Config/${newer.body.objectId}`, { headers: A });
  assert.equal(delNewer.status, 200, delNewer.text);
  assert.deepEqual((await call()).body, { error: 'AcceptWebLeads is Disabled' }, 'a missing row is off');

  const accounts = await request(srv, 'GET', `/core/classes/Accounts?where=${encodeURIComponent(JSON.stringify({ Email: 'gate@example.test' }))}&count=1&limit=0`, { headers: A });
  assert.equal(accounts.body.count, 2, 'a disabled call writes nothing');
});

test('§2.6 a function\'s write shows in _Timeline as Master with Referer server-side-code:getlead, and in _RequestLog as service functions', async () => {
  const r = await form('getlead', { Email: 'history@example.test' });
  assert.equal(r.status, 200, r.text);
  const where = encodeURIComponent(JSON.stringify({ objectIdValue: r.body.accountId }));
  const history = await request(server, 'GET', `/core/classes/_Timeline?where=${where}`, { headers: M });
  assert.equal(history.status, 200, history.text);
  assert.equal(history.body.results.length, 1);
  const row = history.body.results[0];
  assert.equal(row.event, 'create');
  assert.equal(row.user, 'Master');
  assert.equal(row.Referer, 'server-side-code:getlead');
  const logged = await pollUntil(async () => {
    const q = encodeURIComponent(JSON.stringify({ path: `/functions/${app.appId}/getlead`, statusCode: 200 }));
    const l = await request(server, 'GET', `/core/classes/_RequestLog?where=${q}&limit=1`, { headers: M });
    return { done: l.status === 200 && l.body.results.length > 0, row: l.body.results?.[0] };
  }, { timeoutMs: 30_000, intervalMs: 100 });
  assert.ok(logged.ok, 'a _RequestLog row');
  assert.equal(logged.last.row.service, 'functions');
  assert.equal(logged.last.row.method, 'POST');
});

test('§4.9 SECURITY hostile form input: non-JSON, 10,000 keys, __proto__ and SQL in keys answer 400 {error}; nothing is written', async () => {
  const before = await count('Accounts');
  const path = `/functions/${app.appId}/getlead`;
  const raw = await rawRequest(server, `POST ${path} HTTP/1.1\r\nX-Core-Application-Id: ${app.appId}\r\nContent-Type: application/json`, 'not json');
  assert.equal(raw.status, 400, raw.text);
  assert.deepEqual(Object.keys(raw.body), ['error']);
  const wide = await form('getlead', Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i])));
  assert.equal(wide.status, 400, wide.text);
  assert.deepEqual(Object.keys(wide.body), ['error']);
  for (const key of ['__proto__', 'x"; DROP TABLE Accounts; --', '$where', "Name' OR '1'='1"]) {
    const r = await request(server, 'POST', path, { headers: { ...appHeaders(app), 'Content-Type': 'application/json' }, body: `{"Email":"hostile@example.test",${JSON.stringify(key)}:1}` });
    assert.equal(r.status, 400, `${key}: ${r.text}`);
    assert.deepEqual(Object.keys(r.body), ['error']);
  }
  const array = await form('getlead', [1, 2]);
  assert.equal(array.status, 400, array.text);
  assert.equal(await count('Accounts'), before);
  assert.equal((await request(server, 'GET', '/health')).status, 200);
});

test('§4.9 with --prefix parse the functions path is the same', async () => {
  const dir = makeDataDir();
  const a = createApp(dir, { productBase: true });
  const srv = await startServer(dir, { prefix: 'parse' });
  const r = await request(srv, 'POST', `/functions/${a.appId}/getlead`, { headers: { 'X-Parse-Application-Id': a.appId }, body: { Email: 'parse@example.test' } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.success, true);
});

// An application with the web-to-table flags on.
async function formsApp() {
  const dir = makeDataDir();
  const a = createApp(dir, { productBase: true });
  const srv = await startServer(dir);
  const A = masterHeaders(a);
  for (const flag of ['AcceptWebToTable', 'AcceptWebToCaseLeads', 'AcceptWebToSaleLeads']) {
    const r = await request(srv, 'POST', '/core/classes/Config', { headers: A, body: { Name: flag, Value: { [flag]: true } } });
    assert.equal(r.status, 201, r.text);
  }
  const call = (fn, body) => form(fn, body, { srv, a });
  const list = async (cls, where = {}) => {
    const r = await request(srv, 'GET', `/core/classes/${cls}?where=${encodeURIComponent(JSON.stringify(where))}&order=createdAt&limit=1000`, { headers: A });
    assert.equal(r.status, 200, r.text);
    return r.body.results;
  };
  return { srv, a, A, call, list };
}

test('§4.9 web2table, web2case, web2sale answer "<Flag> is Disabled" while their Config row is missing', async () => {
  for (const [fn, flag] of [['web2table', 'AcceptWebToTable'], ['web2case', 'AcceptWebToCaseLeads'], ['web2sale', 'AcceptWebToSaleLeads']]) {
    const r = await form(fn, { table: 'Tasks', phone: '0501111111' });
    assert.equal(r.status, 400, r.text);
    assert.deepEqual(r.body, { error: `${flag} is Disabled` });
  }
});

test('§4.9 web2table: table and phone are required; the contact is found by phone in any form and never updated; the row links it', async () => {
  const { A, srv, call, list } = await formsApp();
  assert.deepEqual((await call('web2table', { phone: '0501234567' })).body, { error: 'missing "table" in request body' });
  assert.deepEqual((await call('web2table', { table: 'Tasks' })).body, { error: 'missing "phone"' });

  const first = await call('web2table', { table: 'Tasks', phone: '050-1234567', Name: 'Call back', account_Name: 'Dana', account_City: 'Haifa', table_Date: '2026-12-01' });
  assert.equal(first.status, 200, first.text);
  assert.deepEqual(Object.keys(first.body).sort(), ['Id', 'accountId', 'success']);
  const contact = (await request(srv, 'GET', `/core/classes/Accounts/${first.body.accountId}`, { headers: A })).body;
  assert.equal(contact.Name, 'Dana');
  assert.equal(contact.City, 'Haifa');
  assert.equal(contact.PhoneNumber, '050-1234567');
  const task = (await request(srv, 'GET', `/core/classes/Tasks/${first.body.Id}`, { headers: A })).body;
  assert.equal(task.Name, 'Call back');
  assert.deepEqual(task.AccountId, { __type: 'Pointer', className: 'Accounts', objectId: first.body.accountId });
  assert.deepEqual(task.Date, { __type: 'Date', iso: '2026-12-01T00:00:00.000Z' });

  // The same number written three other ways is the same contact, which is not updated.
  for (const phone of ['+972 50-123-4567', '0501234567', '972501234567']) {
    const again = await call('web2table', { table: 'Tasks', phone, Name: `again ${phone}`, account_Name: 'Someone else' });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.accountId, first.body.accountId, phone);
  }
  assert.equal((await list('Accounts')).length, 1);
  assert.equal((await request(srv, 'GET', `/core/classes/Accounts/${first.body.accountId}`, { headers: A })).body.Name, 'Dana');
  assert.equal((await list('Tasks')).length, 4, 'web2table never updates: a row per call');

  // A contact made through the record API is found too; account_PhoneNumber does not feed the match.
  const made = await request(srv, 'POST', '/core/classes/Accounts', { headers: A, body: { Name: 'Typed in', PhoneNumber: '(052) 999-8888' } });
  assert.equal(made.status, 201, made.text);
  const byApi = await call('web2table', { table: 'Tasks', phone: '+972529998888' });
  assert.equal(byApi.body.accountId, made.body.objectId);
  const other = await call('web2table', { table: 'Tasks', phone: '0533333333', account_PhoneNumber: '0529998888' });
  assert.notEqual(other.body.accountId, made.body.objectId);
  assert.equal((await request(srv, 'GET', `/core/classes/Accounts/${other.body.accountId}`, { headers: A })).body.PhoneNumber, '0529998888');
  // A contact whose phone changed is found by the new number only.
  await request(srv, 'PUT', `/core/classes/Accounts/${made.body.objectId}`, { headers: A, body: { PhoneNumber: '0544444444' } });
  assert.notEqual((await call('web2table', { table: 'Tasks', phone: '0529998888' })).body.accountId, made.body.objectId);
  assert.equal((await call('web2table', { table: 'Tasks', phone: '+972544444444' })).body.accountId, made.body.objectId);
});

test('§4.9 web2table value rules: table_ Pointers only as a bare 10-character id (others dropped, still 200); account_ Pointers wrapped too, a wrong length fails', async () => {
  const { A, srv, call, list } = await formsApp();
  const ok = await call('web2table', {
    table: 'Tasks', phone: '0507777777', table_OwnerId: { __type: 'Pointer', className: '_User', objectId: 'abcdefghij' },
    table_TaskTypeId: 'short', account_StatusId: { __type: 'Pointer', className: 'AccountStatuses', objectId: 'AccSts0001' },
  });
  assert.equal(ok.status, 200, ok.text);
  const task = (await request(srv, 'GET', `/core/classes/Tasks/${ok.body.Id}`, { headers: A })).body;
  assert.equal(task.OwnerId, undefined, 'a wrapped Pointer in table_ is dropped');
  assert.equal(task.TaskTypeId, undefined, 'a short id in table_ is dropped');
  const contact = (await request(srv, 'GET', `/core/classes/Accounts/${ok.body.accountId}`, { headers: A })).body;
  assert.deepEqual(contact.StatusId, { __type: 'Pointer', className: 'AccountStatuses', objectId: 'AccSts0001' });

  const accounts = (await list('Accounts')).length;
  const tasks = (await list('Tasks')).length;
  const bad = await call('web2table', { table: 'Tasks', phone: '0508888888', account_StatusId: 'toolongid12' });
  assert.equal(bad.status, 400, bad.text);
  const file = await call('web2table', { table: 'Tasks', phone: '0508888888', table_Attachment: { __type: 'File', name: 'x.pdf' } });
  assert.equal(file.status, 400, file.text);
  assert.equal((await list('Accounts')).length, accounts, 'no contact left behind');
  assert.equal((await list('Tasks')).length, tasks, 'no row left behind');
  for (const table of ['_User', '_Session', 'NoSuchTable', 'x"; DROP TABLE Tasks; --']) {
    const r = await call('web2table', { table, phone: '0508888888' });
    assert.equal(r.status, 400, `${table}: ${r.text}`);
    assert.deepEqual(Object.keys(r.body), ['error']);
  }
  assert.equal((await list('Accounts')).length, accounts);
});

test('§4.9 §2.3 web2case writes Cases; web2sale writes Sales and adds IsFirst, AccountNotExist, CampaignName, PageName, PhoneNumber, Email on first use', async () => {
  const { A, srv, call, list } = await formsApp();
  const kase = await call('web2case', { phone: '0541230000', Name: 'Broken', table: 'Tasks' });
  assert.equal(kase.status, 200, kase.text);
  assert.equal((await request(srv, 'GET', `/core/classes/Cases/${kase.body.Id}`, { headers: A })).status, 200, 'the table is fixed: Cases');
  assert.equal((await list('Tasks')).length, 0);

  const before = await request(srv, 'GET', '/core/schemas/Sales', { headers: A });
  for (const f of ['IsFirst', 'AccountNotExist', 'CampaignName', 'PageName', 'PhoneNumber', 'Email']) assert.equal(before.body.fields[f], undefined, f);
  const sale = await call('web2sale', { phone: '0541230000', Name: 'Deal', CampaignName: 'Spring', PageName: 'lp-1', email: 'buyer@example.test', table_Total: 120 });
  assert.equal(sale.status, 200, sale.text);
  assert.equal(sale.body.accountId, kase.body.accountId, 'the case made the contact');
  const after = await request(srv, 'GET', '/core/schemas/Sales', { headers: A });
  assert.deepEqual(
    Object.fromEntries(['IsFirst', 'AccountNotExist', 'CampaignName', 'PageName', 'PhoneNumber', 'Email'].map((f) => [f, after.body.fields[f]?.type])),
    { IsFirst: 'Boolean', AccountNotExist: 'Boolean', CampaignName: 'String', PageName: 'String', PhoneNumber: 'String', Email: 'String' });
  const row = (await request(srv, 'GET', `/core/classes/Sales/${sale.body.Id}`, { headers: A })).body;
  assert.equal(row.Name, 'Deal');
  assert.equal(row.Total, 120);
  assert.equal(row.IsFirst, true);
  assert.equal(row.AccountNotExist, false);
  assert.equal(row.CampaignName, 'Spring');
  assert.equal(row.PageName, 'lp-1');
  assert.equal(row.PhoneNumber, '0541230000');
  assert.equal(row.Email, 'buyer@example.test');
  const second = await call('web2sale', { phone: '+972 54 123 0000' });
  const again = (await request(srv, 'GET', `/core/classes/Sales/${second.body.Id}`, { headers: A })).body;
  assert.equal(again.IsFirst, false);
  const fresh = await call('web2sale', { phone: '0549990000' });
  const third = (await request(srv, 'GET', `/core/classes/Sales/${fresh.body.Id}`, { headers: A })).body;
  assert.equal(third.AccountNotExist, true);
  assert.equal(third.IsFirst, true);
});

test('§4.9 getlead marks a lead Duplicate when its phone matches an Account in another form', async () => {
  const { A, srv, call } = await formsApp();
  const made = await request(srv, 'POST', '/core/classes/Accounts', { headers: A, body: { Name: 'Known', PhoneNumber: '054-5550000' } });
  assert.equal(made.status, 201, made.text);
  const lead = await call('getlead', { PhoneNumber: '+972545550000' });
  assert.equal(lead.status, 200, lead.text);
  const row = (await request(srv, 'GET', `/core/classes/Accounts/${lead.body.accountId}`, { headers: A })).body;
  assert.equal(row.LeadStatusId?.objectId, 'LeadSts007');
  const fresh = await call('getlead', { PhoneNumber: '0545550001' });
  assert.equal((await request(srv, 'GET', `/core/classes/Accounts/${fresh.body.accountId}`, { headers: A })).body.LeadStatusId, undefined);
});

test('§4.9 the phone region is an application setting: crmd app create --region, changed with crmd app region; contacts are matched in it', async () => {
  const dir = makeDataDir();
  const a = cliJson(['app', 'create', '--data', dir, '--region', 'US']);
  const srv = await startServer(dir);
  const A = masterHeaders(a);
  const flag = await request(srv, 'POST', '/core/classes/Config', { headers: A, body: { Name: 'AcceptWebToTable', Value: { AcceptWebToTable: true } } });
  assert.equal(flag.status, 201, flag.text);
  const call = (phone) => form('web2table', { table: 'Tasks', phone }, { srv, a });
  const us = await call('(650) 253-0000');
  assert.equal((await call('+1 650 253 0000')).body.accountId, us.body.accountId, 'a US local number meets its international form');
  const local = await request(srv, 'POST', '/core/classes/Accounts', { headers: A, body: { Name: 'Israeli', PhoneNumber: '050-1234567' } });
  assert.equal(local.status, 201, local.text);
  assert.notEqual((await call('+972501234567')).body.accountId, local.body.objectId, 'read as a US number, it is another');

  const changed = cliJson(['app', 'region', '--data', dir, '--app', a.appId, '--region', 'IL']);
  assert.deepEqual(changed, { appId: a.appId, region: 'IL' });
  const seen = await pollUntil(async () => ({ done: (await call('+972501234567')).body.accountId === local.body.objectId }), { timeoutMs: 30_000, intervalMs: 250 });
  assert.ok(seen.ok, 'after the change the running server reads local numbers as Israeli, for the contacts it had too');

  assert.throws(() => cli(['app', 'region', '--data', dir, '--app', a.appId, '--region', 'ZZ']), /--region/);
  assert.throws(() => cli(['app', 'create', '--data', dir, '--region', 'Israel']), /--region/);
  assert.throws(() => cli(['app', 'region', '--data', dir, '--app', 'NoSuchApp', '--region', 'US']), /no application/);
});

// An application with the operator's functions deployed from `sources` ({name: code}).
async function luaApp(sources, extraArgs = []) {
  const dir = makeDataDir();
  const a = createApp(dir, { productBase: true });
  for (const [name, code] of Object.entries(sources)) deploy(dir, a, name, code);
  // No per-address rate: these tests poll their functions as often as a busy machine needs
  // (the rate has tests of its own, doors-functions.test.mjs).
  const srv = await startServer(dir, { extraArgs: ['--form-calls-per-minute', '0', ...extraArgs] });
  return { dir, a, srv, A: masterHeaders(a), call: (name, body = {}) => form(name, body, { srv, a }) };
}
function deploy(dir, a, name, code) {
  const file = path.join(dir, `${name}.lua`);
  fs.writeFileSync(file, code);
  return cliJson(['function', 'deploy', '--data', dir, '--app', a.appId, '--name', name, '--file', file]);
}

const makeTask = `
local account = crm.get("Accounts", request.body.accountId)
if not account then error({status = 404, error = "no such account"}) end
local task = crm.create("Tasks", {
  Name = "Call " .. account.Name,
  AccountId = {__type = "Pointer", className = "Accounts", objectId = account.objectId},
})
crm.log("made task", task.objectId)
return {taskId = task.objectId, leads = crm.config("AcceptWebLeads"), found = #crm.find("Accounts", {Name = account.Name}, {limit = 5})}
`;

test('§4.9 an operator function deployed with the CLI runs with master rights through the record API: a Task for an Account', async () => {
  const { srv, A, call } = await luaApp({ maketask: makeTask });
  const account = await request(srv, 'POST', '/core/classes/Accounts', { headers: A, body: { Name: 'Dana' } });
  const r = await call('maketask', { accountId: account.body.objectId });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.leads, true);
  assert.equal(r.body.found, 1);
  const task = await request(srv, 'GET', `/core/classes/Tasks/${r.body.taskId}`, { headers: A });
  assert.equal(task.status, 200, task.text);
  assert.equal(task.body.Name, 'Call Dana');
  assert.deepEqual(task.body.AccountId, { __type: 'Pointer', className: 'Accounts', objectId: account.body.objectId });
  const history = await request(srv, 'GET', `/core/classes/_Timeline?where=${encodeURIComponent(JSON.stringify({ objectIdValue: r.body.taskId }))}`, { headers: A });
  assert.equal(history.body.results[0].Referer, 'server-side-code:maketask');
  assert.equal(history.body.results[0].user, 'Master');
  assert.ok(srv.logLines().some((l) => l.msg === 'function' && l.function === 'maketask' && l.message === `made task ${r.body.taskId}`));

  const missing = await call('maketask', { accountId: 'NoSuchAcc1' });
  assert.equal(missing.status, 404, missing.text);
  assert.deepEqual(missing.body, { error: 'no such account' });
});

test('§4.9 a function call is one unit: a failure after a write leaves nothing behind; a failed crm call answers its status', async () => {
  const { srv, A, call } = await luaApp({
    halfway: 'crm.create("Tasks", {Name = "kept?"})\nerror({status = 409, error = "changed my mind"})',
    badwrite: 'crm.create("Tasks", {Name = "first"})\ncrm.create("Tasks", {Name = 5, Date = "not a date"})\nreturn {}',
    crash: 'crm.create("Tasks", {Name = "before the crash"})\nlocal x = nil\nreturn x.field',
  });
  const tasks = async () => (await request(srv, 'GET', '/core/classes/Tasks?count=1&limit=0', { headers: A })).body.count;
  const before = await tasks();
  const r = await call('halfway');
  assert.equal(r.status, 409, r.text);
  assert.deepEqual(r.body, { error: 'changed my mind' });
  const bad = await call('badwrite');
  assert.equal(bad.status, 400, bad.text);
  assert.deepEqual(Object.keys(bad.body), ['error']);
  const crash = await call('crash');
  assert.equal(crash.status, 500, crash.text);
  assert.deepEqual(crash.body, { error: 'function crash failed' });
  assert.equal(await tasks(), before, 'nothing written by the failed calls');
});

test('§4.9 SECURITY the Lua sandbox: no io, os, package, debug or code loading; an endless loop and a memory hog are stopped; the server goes on', async () => {
  const { srv, call } = await luaApp({
    probe: 'return {io = io == nil, os = os == nil, package = package == nil, debug = debug == nil, load = load == nil, dofile = dofile == nil, loadfile = loadfile == nil, require = require == nil, dump = string.dump == nil}',
    escape: 'return os.execute("touch /tmp/crmd-escaped")',
    loop: 'while true do end',
    caught: 'while true do pcall(function() while true do end end) end',
    hog: 'local t = {}\nfor i = 1, 1e9 do t[i] = string.rep("x", 4096) .. i end',
    bigstring: 'return string.rep("x", 1 << 30)',
  // The wall-time limit out of the way (it has its tests in doors-functions.test.mjs): on a
  // machine as busy as it gets, the memory hog must meet its memory cap first.
  }, ['--function-instructions', '2000000', '--function-memory-mib', '16', '--function-timeout-ms', '60000']);
  const probe = await call('probe');
  assert.equal(probe.status, 200, probe.text);
  assert.deepEqual(probe.body, { io: true, os: true, package: true, debug: true, load: true, dofile: true, loadfile: true, require: true, dump: true });
  const escape = await call('escape');
  assert.equal(escape.status, 500, escape.text);
  assert.equal(fs.existsSync('/tmp/crmd-escaped'), false);
  for (const [name, why] of [['loop', 'ran past its instruction budget'], ['caught', 'ran past its instruction budget'],
    ['hog', 'ran out of memory'], ['bigstring', 'ran out of memory']]) {
    const r = await call(name);
    assert.equal(r.status, 500, `${name}: ${r.text}`);
    assert.deepEqual(r.body, { error: `function ${name} ${why}` });
  }
  assert.ok(srv.logLines().some((l) => l.msg === 'function' && l.function === 'loop' && /instruction budget/.test(l.message)));
  assert.equal((await request(srv, 'GET', '/health')).status, 200);
  assert.equal((await call('probe')).status, 200, 'still serving functions');
});

test('§4.9 deploy and removal reach a running server within a second; built-in names cannot be shadowed; code that does not compile is refused', async () => {
  const { dir, a, call } = await luaApp({});
  assert.deepEqual((await call('hello')).body, { error: 'User function not found' });
  deploy(dir, a, 'hello', 'return {hello = request.body.name}');
  const seen = await pollUntil(async () => ({ done: (await call('hello', { name: 'crmd' })).status === 200 }), { timeoutMs: 30_000, intervalMs: 100 });
  assert.ok(seen.ok, "deployed, within the registry's poll");
  assert.deepEqual((await call('hello', { name: 'crmd' })).body, { hello: 'crmd' });
  deploy(dir, a, 'hello', 'return {hello = "again"}');
  assert.ok((await pollUntil(async () => ({ done: (await call('hello')).body.hello === 'again' }), { timeoutMs: 30_000, intervalMs: 100 })).ok, 'replaced');
  const list = cliJson(['function', 'list', '--data', dir, '--app', a.appId]);
  assert.deepEqual(list.functions.map((f) => f.name), ['hello']);
  cliJson(['function', 'remove', '--data', dir, '--app', a.appId, '--name', 'hello']);
  assert.ok((await pollUntil(async () => ({ done: (await call('hello')).status === 400 }), { timeoutMs: 30_000, intervalMs: 100 })).ok, 'removed');
  for (const name of ['getlead', 'web2table', 'web2case', 'web2sale']) assert.throws(() => deploy(dir, a, name, 'return {}'), /built-in/);
  assert.throws(() => deploy(dir, a, 'broken', 'return {'), /does not compile/);
  assert.throws(() => deploy(dir, a, 'bad name!', 'return {}'), /--name/);
  assert.throws(() => cli(['function', 'remove', '--data', dir, '--app', a.appId, '--name', 'nothing']), /no function/);
});

test('§4.9 a function\'s answer is its return value as JSON; request.body is the body; crm.null stands for JSON null', async () => {
  const { call } = await luaApp({
    echo: 'return {body = request.body, list = {1, 2, 3}, empty = {}, null = crm.null, float = 1.5, text = "שלום"}',
    nothing: 'local x = 1',
    inf: 'return {x = 1/0}',
  });
  const r = await call('echo', { a: [1, null, { b: true }], s: 'x' });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { body: { a: [1, null, { b: true }], s: 'x' }, list: [1, 2, 3], empty: {}, null: null, float: 1.5, text: 'שלום' });
  assert.deepEqual((await call('nothing')).body, {});
  assert.equal((await call('inf')).status, 500);
});

test('docs/FUNCTIONS.md: the example function runs as documented', async () => {
  const doc = fs.readFileSync(path.resolve(import.meta.dirname, '../../docs/FUNCTIONS.md'), 'utf8');
  const code = /```lua\n([\s\S]*?)```/.exec(doc)[1];
  const { srv, A, call } = await luaApp({ 'task-for-account': code });
  const account = await request(srv, 'POST', '/core/classes/Accounts', { headers: A, body: { Name: 'Noa' } });
  const r = await call('task-for-account', { accountId: account.body.objectId });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.success, true);
  const task = await request(srv, 'GET', `/core/classes/Tasks/${r.body.taskId}`, { headers: A });
  assert.equal(task.body.Name, 'Call Noa');
  assert.deepEqual((await call('task-for-account', {})).body, { error: 'accountId is required' });
  assert.equal((await call('task-for-account', { accountId: 'NoSuchAcc1' })).status, 404);
});

test('§4.9 Config flag rows: Value must be an object; a bare boolean fails with 111', async () => {
  const r = await request(server, 'POST', '/core/classes/Config', { headers: M, body: { Name: 'AcceptWebToTable', Value: true } });
  assert.equal(r.status, 400, r.text);
  assert.deepEqual(r.body, { code: 111, error: 'schema mismatch for Config.Value; expected Object but got Boolean' });
  assert.deepEqual((await form('web2table', { table: 'Tasks', phone: '0501111111' })).body, { error: 'AcceptWebToTable is Disabled' });
});

test('§4.9 an application whose Accounts gained PhoneNumber after it opened gets its phone index at the first form call', async () => {
  const dir = makeDataDir();
  const a = createApp(dir);  // no product base: Accounts, Tasks and Config come from writes
  const srv = await startServer(dir);
  const A = masterHeaders(a);
  const contact = await request(srv, 'POST', '/core/classes/Accounts', { headers: A, body: { Name: 'Later', PhoneNumber: '050-1234567' } });
  assert.equal(contact.status, 201, contact.text);
  for (const [path, body] of [['/core/classes/Tasks', { Name: 'seed' }], ['/core/classes/Config', { Name: 'AcceptWebToTable', Value: { AcceptWebToTable: true } }]])
    assert.equal((await request(srv, 'POST', path, { headers: A, body })).status, 201);
  const calls = await Promise.all(Array.from({ length: 4 }, () => form('web2table', { table: 'Tasks', phone: '+972 50 123 4567' }, { srv, a })));
  for (const r of calls) {
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.accountId, contact.body.objectId);
  }
});
