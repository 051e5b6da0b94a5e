// Issue 5 / spec §2.3, §2.5, §2.6, §4.9: a fresh application starts from the CRM product base.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, stopAll, request, masterHeaders, apiKeyHeaders, appHeaders } from './lib/harness.mjs';

let server;
let app;
let M;
let schemas;
before(async () => {
  ({ server, app } = await setup({}, { productBase: true }));
  M = masterHeaders(app);
  const r = await request(server, 'GET', '/core/schemas', { headers: M });
  assert.equal(r.status, 200, r.text);
  schemas = new Map(r.body.results.map((s) => [s.className, s]));
});
after(stopAll);

const fieldType = (cls, field) => {
  const f = schemas.get(cls)?.fields[field];
  return f && (f.targetClass ? `${f.type}<${f.targetClass}>` : f.type);
};

test('§2.3 a fresh application has exactly 111 classes', () => {
  assert.equal(schemas.size, 111);
  for (const lazy of ['_RequestLog', '_syslogCampaignSMS', '_syslogCampaignWA', '_syslogCampaignEmails'])
    assert.equal(schemas.has(lazy), false, `${lazy} is registered lazily`);
  for (const present of ['_User', '_Session', '_Role', '_Timeline', '_syslogTriggers', '_GeneralLogs', '_Notification', '_syslogSMS', '_Dictionary'])
    assert.ok(schemas.has(present), present);
  assert.deepEqual(Object.keys(schemas.get('_syslogSMS').fields).sort(), ['ACL', 'createdAt', 'createdBy', 'objectId', 'updatedAt', 'updatedBy']);
});

test('§2.3 Accounts has 40 fields with the named ones and their types', () => {
  assert.equal(Object.keys(schemas.get('Accounts').fields).length, 40);
  const named = {
    Name: 'String', PhoneNumber: 'String', Email: 'String', IsAccount: 'Boolean', StatusId: 'Pointer<AccountStatuses>',
    LeadStatusId: 'Pointer<LeadStatuses>', LeadSourceId: 'Pointer<LeadSource>', Comment: 'HTML/XML',
    array_languages_Pointer_Languages: 'Array', ExternalId: 'String', City: 'String',
  };
  for (const [field, type] of Object.entries(named)) assert.equal(fieldType('Accounts', field), type, field);
});

test('§2.3 named fields of the other business tables', () => {
  const named = {
    Tasks: { Date: 'Date', AccountId: 'Pointer<Accounts>' },
    Activities: { AccountId: 'Pointer<Accounts>' },
    Sales: { Total: 'Number', ClosingDate: 'Date', SaleStatusId: 'Pointer<SaleStatuses>', AccountId: 'Pointer<Accounts>' },
    PriceQuotes: { SignedPdf: 'PrivateFile', Signature: 'PrivateFile' },
    Products: { PreviewImage: 'File', Image1: 'File', Image2: 'File' },
    Files: { PublicFile: 'File', File: 'PrivateFile' },
    Notes: { File: 'PrivateFile' },
    ConversationMessages: { File: 'PrivateFile' },
    Cases: { Attachment: 'File' },
    Config: { Name: 'String', Value: 'Object' },
    _Dictionary: { tblName: 'String', field: 'String', value: 'String' },
  };
  for (const [cls, fields] of Object.entries(named))
    for (const [field, type] of Object.entries(fields)) assert.equal(fieldType(cls, field), type, `${cls}.${field}`);
  for (const later of ['IsFirst', 'AccountNotExist', 'CampaignName', 'PageName'])
    assert.equal(fieldType('Sales', later), undefined, `Sales.${later} arrives with the form functions`);
});

test('§2.5 the 11 timeline-enabled tables carry timeline, and only they', () => {
  const expected = ['Accounts', 'Activities', 'Cases', 'Contacts', 'Conversations', 'Emails', 'Notes', 'PriceQuotes', 'SMS', 'Sales', 'Tasks'];
  const withTimeline = [...schemas.values()].filter((s) => s.timeline).map((s) => s.className).sort();
  assert.deepEqual(withTimeline, expected);
  for (const cls of expected) {
    assert.ok(schemas.get(cls).timeline.displayFields, cls);
    assert.deepEqual(schemas.get(cls).timeline.index, { AccountId: 'Accounts' });
  }
  assert.deepEqual(schemas.get('Accounts').triggers, []);
});

test('§4.9 Config holds only AcceptWebLeads and Payment, shaped {Name, Value:{<flag>:true}}', async () => {
  const r = await request(server, 'GET', '/core/classes/Config?order=Name', { headers: M });
  assert.deepEqual(r.body.results.map((row) => ({ Name: row.Name, Value: row.Value })), [
    { Name: 'AcceptWebLeads', Value: { AcceptWebLeads: true } },
    { Name: 'Payment', Value: { Payment: true } },
  ]);
  const bare = await request(server, 'POST', '/core/classes/Config', { headers: M, body: { Name: 'X', Value: true } });
  assert.deepEqual(bare.body, { code: 111, error: 'schema mismatch for Config.Value; expected Object but got Boolean' });
});

test('§2.5 _Dictionary holds Hebrew labels for the business fields, read with ordinary queries', async () => {
  const where = encodeURIComponent(JSON.stringify({ tblName: 'Accounts', field: 'Name' }));
  const r = await request(server, 'GET', `/core/classes/_Dictionary?where=${where}`, { headers: M });
  assert.equal(r.body.results.length, 1);
  assert.match(r.body.results[0].value, /[\u0590-\u05FF]/, 'a Hebrew label');
  const count = await request(server, 'GET', '/core/classes/_Dictionary?count=1&limit=0', { headers: M });
  assert.ok(count.body.count >= 100);
});

test('issue 5: lookup tables are seeded; LeadStatuses has a duplicate-lead status', async () => {
  for (const cls of ['LeadSource', 'LeadStatuses', 'AccountStatuses', 'SaleStatuses', 'Languages', 'UserStatuses']) {
    const r = await request(server, 'GET', `/core/classes/${cls}?count=1&limit=0`, { headers: M });
    assert.ok(r.body.count >= 3, `${cls} seeded`);
  }
  const dup = await request(server, 'GET', `/core/classes/LeadStatuses?where=${encodeURIComponent('{"Name":{"$regex":"^Dup"}}')}`, { headers: M });
  assert.equal(dup.body.results.length, 1);
});

test('§2.4 default roles exist and their CLPs open the business tables to them; a user without a role gets 119', async () => {
  const roles = await request(server, 'GET', '/core/classes/_Role?keys=name&order=name', { headers: M });
  const names = roles.body.results.map((r) => r.name);
  assert.ok(names.includes('Administrators') && names.length >= 3, names.join());
  const find = schemas.get('Accounts').classLevelPermissions.find;
  assert.equal(find['*'], undefined, 'business tables are not public');
  assert.ok(Object.keys(find).some((k) => k.startsWith('role:')));

  const u = await request(server, 'POST', '/core/users', { headers: apiKeyHeaders(app), body: { username: 'norole', password: 'Passw0rdA' } });
  const session = { ...appHeaders(app), 'X-Core-Session-Token': u.body.sessionToken };
  const denied = await request(server, 'GET', '/core/classes/Accounts', { headers: session });
  assert.deepEqual(denied.body, { code: 119, error: 'Permission denied for action find on class Accounts.' });

  const role = roles.body.results.find((r) => find[`role:${r.name}`]);
  const added = await request(server, 'PUT', `/core/classes/_Role/${role.objectId}`, {
    headers: M, body: { users: { __op: 'AddRelation', objects: [{ __type: 'Pointer', className: '_User', objectId: u.body.objectId }] } },
  });
  assert.equal(added.status, 200, added.text);
  const allowed = await request(server, 'GET', '/core/classes/Accounts', { headers: session });
  assert.equal(allowed.status, 200, allowed.text);
});
