// Records (spec §4.1, §2.1, §2.2, §3.4 and the choices in docs/COMPATIBILITY.md) against the real
// crmd binary. One server and one application for the file; each test uses its own classes.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import {
  setup, stopAll, request, masterHeaders, apiKeyHeaders, createRecord, listAll,
  ISO_MS, OBJECT_ID, HOST,
} from './lib/harness.mjs';

let server;
let app;
let M; // master-key headers

before(async () => {
  ({ server, app } = await setup());
  M = masterHeaders(app);
});
after(stopAll);

const post = (cls, body, headers = M) => request(server, 'POST', `/core/classes/${cls}`, { headers, body });
const get = (cls, id, query = '', headers = M) => request(server, 'GET', `/core/classes/${cls}/${id}${query}`, { headers });
const put = (cls, id, body, headers = M) => request(server, 'PUT', `/core/classes/${cls}/${id}`, { headers, body });
const del = (cls, id, headers = M) => request(server, 'DELETE', `/core/classes/${cls}/${id}`, { headers });
const list = (cls, query = '', headers = M) => request(server, 'GET', `/core/classes/${cls}${query}`, { headers });

const NOT_FOUND = { code: 101, error: 'Object not found.' };
const mismatch = (table, field, expected, got) => ({
  code: 111,
  error: `schema mismatch for ${table}.${field}; expected ${expected} but got ${got}`,
});

function assertRecentIso(iso, label) {
  assert.match(iso, ISO_MS, `${label} is ISO 8601 with milliseconds, UTC: ${iso}`);
  const t = Date.parse(iso);
  assert.ok(Math.abs(Date.now() - t) < 5 * 60_000, `${label} ${iso} is close to now`);
}

// ---------------------------------------------------------------------------------------------
// §4.1 create

test('§4.1 POST creates a record: 201 {objectId, createdAt}', async () => {
  const r = await post('Accounts', { Name: 'Acme' });
  assert.equal(r.status, 201, r.text);
  assert.match(r.headers['content-type'] ?? '', /application\/json/);
  assert.deepEqual(Object.keys(r.body).sort(), ['createdAt', 'objectId']);
  assert.match(r.body.objectId, OBJECT_ID);
  assertRecentIso(r.body.createdAt, 'createdAt');
});

test('§2.1 server-generated objectIds are 10 alphanumerics and all distinct', async () => {
  const ids = new Set();
  for (let i = 0; i < 25; i++) {
    const id = await createRecord(server, app, 'IdProbe', { N: i });
    assert.match(id, OBJECT_ID);
    ids.add(id);
  }
  assert.equal(ids.size, 25);
});

test('§4.1 the API key creates and reads like the master key', async () => {
  const A = apiKeyHeaders(app);
  const r = await post('ApiKeyRecords', { Name: 'via api key' }, A);
  assert.equal(r.status, 201, r.text);
  const g = await get('ApiKeyRecords', r.body.objectId, '', A);
  assert.equal(g.status, 200, g.text);
  assert.equal(g.body.Name, 'via api key');
});

// ---------------------------------------------------------------------------------------------
// §2.1/§2.2 full object and wire formats

test('§2.2 GET returns the full object: createdAt/updatedAt flat, every field type round-trips', async () => {
  const contactId = await createRecord(server, app, 'RtContacts', { Name: 'Target' });
  const fields = {
    Name: 'Grüße, 世界 \u{1F600} "quoted" \\ back',
    Empty: '',
    Amount: 1234,
    Ratio: -0.125,
    Big: 9007199254740991,
    Active: true,
    Archived: false,
    Due: { __type: 'Date', iso: '2026-01-02T03:04:05.678Z' },
    Contact: { __type: 'Pointer', className: 'RtContacts', objectId: contactId },
    Meta: { source: 'web', score: 7, nested: { deep: [1, 'two', null, true] }, none: null },
    Tags: ['a', 2, false, null, { k: 'v' }, [1, 2]],
  };
  const file = { __type: 'File', name: 'contract.pdf', url: 'https://files.example.test/abc_contract.pdf' };
  const c = await post('RtAccounts', { ...fields, Doc: file });
  assert.equal(c.status, 201, c.text);

  const g = await get('RtAccounts', c.body.objectId);
  assert.equal(g.status, 200, g.text);
  const { Doc, ...rest } = g.body;
  // §2.2, §4.8: a File keeps __type and name; attached to a File field, its url becomes the static
  // host's address of the name and it is marked "public": true (issue 20).
  assert.deepEqual(Doc, { __type: 'File', name: file.name, url: `${server.base}/static/${app.appId}/${file.name}`, public: true });
  assert.deepEqual(rest, {
    objectId: c.body.objectId,
    createdAt: c.body.createdAt,
    updatedAt: c.body.createdAt,
    ...fields,
  });
  assert.equal(typeof g.body.createdAt, 'string');
  assert.equal(typeof g.body.updatedAt, 'string');
});

test('§2.2 list results use the same wire formats as GET', async () => {
  const id = await createRecord(server, app, 'RtList', {
    When: { __type: 'Date', iso: '2025-12-31T23:59:59.999Z' },
    N: 1,
  });
  const one = await get('RtList', id);
  const l = await list('RtList');
  assert.equal(l.status, 200, l.text);
  assert.deepEqual(l.body, { results: [one.body] });
});

// ---------------------------------------------------------------------------------------------
// §4.1 update and operators

test('§4.1 PUT answers 200 {updatedAt, objectId}; unsent fields are untouched', async () => {
  const c = await post('UpdAccounts', { Name: 'Before', City: 'Oslo', Employees: 10 });
  assert.equal(c.status, 201, c.text);
  const id = c.body.objectId;

  const u = await put('UpdAccounts', id, { Name: 'After' });
  assert.equal(u.status, 200, u.text);
  assert.deepEqual(Object.keys(u.body).sort(), ['objectId', 'updatedAt']);
  assert.equal(u.body.objectId, id);
  assertRecentIso(u.body.updatedAt, 'updatedAt');
  assert.ok(u.body.updatedAt >= c.body.createdAt, 'updatedAt is not before createdAt');

  const g = await get('UpdAccounts', id);
  assert.equal(g.status, 200, g.text);
  assert.deepEqual(g.body, {
    objectId: id,
    createdAt: c.body.createdAt,
    updatedAt: u.body.updatedAt,
    Name: 'After',
    City: 'Oslo',
    Employees: 10,
  });
});

test('§4.1 PUT of a missing record answers 404 101', async () => {
  await createRecord(server, app, 'UpdMissing', { Name: 'x' });
  const u = await put('UpdMissing', 'NoSuchId12', { Name: 'y' });
  assert.equal(u.status, 404, u.text);
  assert.deepEqual(u.body, NOT_FOUND);
});

test('§4.1 concurrent writes of one application (its write queue): each answered once, none lost, Increments one after another', async () => {
  const id = await createRecord(server, app, 'QueueCounts', { Hits: 0 });
  // Creates, half of which grow the schema (run alone, after the queue's group is committed), a
  // wrong type among them, and Increments of one record, all at once.
  const creates = Array.from({ length: 40 }, (_, i) => post('QueueRows', i % 2 ? { N: i, [`F${i}`]: 'x' } : { N: i }));
  const wrong = post('QueueRows', { N: 'not a number' });
  const increments = Array.from({ length: 30 }, () => put('QueueCounts', id, { Hits: { __op: 'Increment', amount: 1 } }));
  const [created, refused, incremented] = await Promise.all([Promise.all(creates), wrong, Promise.all(increments)]);
  for (const r of created) assert.equal(r.status, 201, r.text);
  assert.equal(refused.status, 400, refused.text);
  assert.equal(refused.body.code, 111);
  // Every Increment saw the one before it: the echoed values are 1..30, each once.
  assert.deepEqual(incremented.map((r) => r.body.Hits).sort((a, b) => a - b), Array.from({ length: 30 }, (_, i) => i + 1));
  assert.equal((await get('QueueCounts', id)).body.Hits, 30);
  const rows = await listAll(server, app, 'QueueRows');
  assert.deepEqual(rows.map((r) => r.N).sort((a, b) => a - b), Array.from({ length: 40 }, (_, i) => i));
  assert.equal(rows.find((r) => r.N === 39).F39, 'x');
});

test('§4.1 Increment: the response carries the new value; negative amounts work', async () => {
  const id = await createRecord(server, app, 'IncAccounts', { Score: 10, Name: 'n' });

  const a = await put('IncAccounts', id, { Score: { __op: 'Increment', amount: 5 }, Name: 'm' });
  assert.equal(a.status, 200, a.text);
  assert.deepEqual(Object.keys(a.body).sort(), ['Score', 'objectId', 'updatedAt']);
  assert.equal(a.body.Score, 15);
  assert.equal(a.body.objectId, id);

  const b = await put('IncAccounts', id, { Score: { __op: 'Increment', amount: -20 } });
  assert.equal(b.status, 200, b.text);
  assert.equal(b.body.Score, -5);

  const c = await put('IncAccounts', id, { Score: { __op: 'Increment', amount: 0.5 } });
  assert.equal(c.status, 200, c.text);
  assert.equal(c.body.Score, -4.5);

  const g = await get('IncAccounts', id);
  assert.equal(g.body.Score, -4.5);
  assert.equal(g.body.Name, 'm');
});

test('§4.1 Increment on a missing field starts at 0', async () => {
  const id = await createRecord(server, app, 'IncMissing', { Name: 'first' });
  // A field the class does not have yet.
  const a = await put('IncMissing', id, { Visits: { __op: 'Increment', amount: 3 } });
  assert.equal(a.status, 200, a.text);
  assert.equal(a.body.Visits, 3);
  // A declared field that is unset on this record.
  const other = await createRecord(server, app, 'IncMissing', { Name: 'second' });
  const b = await put('IncMissing', other, { Visits: { __op: 'Increment', amount: -2 } });
  assert.equal(b.status, 200, b.text);
  assert.equal(b.body.Visits, -2);
  assert.equal((await get('IncMissing', id)).body.Visits, 3);
  assert.equal((await get('IncMissing', other)).body.Visits, -2);
});

test('§4.1 AddUnique does not duplicate a value already in the array', async () => {
  const id = await createRecord(server, app, 'ArrUnique', { Tags: ['a', 'b'] });
  const r = await put('ArrUnique', id, { Tags: { __op: 'AddUnique', objects: ['b', 'c', 'c'] } });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body.Tags, ['a', 'b', 'c']);
  const again = await put('ArrUnique', id, { Tags: { __op: 'AddUnique', objects: ['a'] } });
  assert.equal(again.status, 200, again.text);
  assert.deepEqual(again.body.Tags, ['a', 'b', 'c']);
  assert.deepEqual((await get('ArrUnique', id)).body.Tags, ['a', 'b', 'c']);
});

test('§4.1 Add appends, duplicates included', async () => {
  const id = await createRecord(server, app, 'ArrAdd', { Tags: ['a'] });
  const r = await put('ArrAdd', id, { Tags: { __op: 'Add', objects: ['a', 'd'] } });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body.Tags, ['a', 'a', 'd']);
  assert.deepEqual((await get('ArrAdd', id)).body.Tags, ['a', 'a', 'd']);
  // Add on a field the record does not have starts from an empty array.
  const r2 = await put('ArrAdd', id, { Extra: { __op: 'Add', objects: [1] } });
  assert.equal(r2.status, 200, r2.text);
  assert.deepEqual(r2.body.Extra, [1]);
});

test('§4.1 Remove removes every occurrence of the listed values', async () => {
  const id = await createRecord(server, app, 'ArrRemove', { Tags: ['a', 'b', 'a', 'c', 'd'] });
  const r = await put('ArrRemove', id, { Tags: { __op: 'Remove', objects: ['a', 'd', 'zzz'] } });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body.Tags, ['b', 'c']);
  assert.deepEqual((await get('ArrRemove', id)).body.Tags, ['b', 'c']);
});

test('§4.1 Delete op removes the field value (absent afterwards)', async () => {
  const id = await createRecord(server, app, 'DelOp', { Note: 'temporary', Keep: 'yes' });
  const r = await put('DelOp', id, { Note: { __op: 'Delete' } });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(Object.keys(r.body).sort(), ['objectId', 'updatedAt']);
  const g = await get('DelOp', id);
  assert.equal(g.status, 200, g.text);
  assert.equal('Note' in g.body, false, `Note should be absent: ${g.text}`);
  assert.equal(g.body.Keep, 'yes');
  // The field stays declared as a String: a later write of another type is still refused.
  const bad = await put('DelOp', id, { Note: { __type: 'Date', iso: '2026-01-01T00:00:00.000Z' } });
  assert.equal(bad.status, 400, bad.text);
  assert.deepEqual(bad.body, mismatch('DelOp', 'Note', 'String', 'Date'));
});

test('§4.1 update operators: bad operands answer 107, unknown operators 108 (COMPATIBILITY)', async () => {
  const id = await createRecord(server, app, 'OpErrors', { Score: 1, Tags: ['x'] });
  const cases = [
    [{ Score: { __op: 'Increment', amount: 'ten' } }, 107, 'incrementing must provide a number'],
    [{ Tags: { __op: 'Add', objects: 'y' } }, 107, 'objects to add must be an array'],
    [{ Tags: { __op: 'AddUnique', objects: { y: 1 } } }, 107, 'objects to add must be an array'],
    [{ Tags: { __op: 'Remove', objects: 'x' } }, 107, 'objects to remove must be an array'],
    [{ Tags: { __op: 'Frobnicate' } }, 108, 'The Frobnicate operator is not supported yet.'],
  ];
  for (const [body, code, error] of cases) {
    const r = await put('OpErrors', id, body);
    assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
    assert.deepEqual(r.body, { code, error }, JSON.stringify(body));
  }
  const g = await get('OpErrors', id);
  assert.equal(g.body.Score, 1);
  assert.deepEqual(g.body.Tags, ['x']);
});

// ---------------------------------------------------------------------------------------------
// §2.2 field types are fixed after the first write

test('§2.2 type fixed after first write: a Date field given a string answers 111 expected Date but got String', async () => {
  const id = await createRecord(server, app, 'TypeDate', { Due: { __type: 'Date', iso: '2026-03-01T00:00:00.000Z' } });
  const u = await put('TypeDate', id, { Due: '2026-03-02' });
  assert.equal(u.status, 400, u.text);
  assert.deepEqual(u.body, mismatch('TypeDate', 'Due', 'Date', 'String'));
  const c = await post('TypeDate', { Due: '2026-03-02T00:00:00.000Z' });
  assert.equal(c.status, 400, c.text);
  assert.deepEqual(c.body, mismatch('TypeDate', 'Due', 'Date', 'String'));
  // Nothing changed: the one record still holds its Date.
  const all = await listAll(server, app, 'TypeDate');
  assert.equal(all.length, 1);
  assert.deepEqual(all[0].Due, { __type: 'Date', iso: '2026-03-01T00:00:00.000Z' });
});

test('§2.2 type fixed after first write: a Number field given a string answers 111', async () => {
  const id = await createRecord(server, app, 'TypeNumber', { Revenue: 100 });
  const u = await put('TypeNumber', id, { Revenue: 'a lot' });
  assert.equal(u.status, 400, u.text);
  assert.deepEqual(u.body, mismatch('TypeNumber', 'Revenue', 'Number', 'String'));
  const c = await post('TypeNumber', { Revenue: '100' });
  assert.equal(c.status, 400, c.text);
  assert.deepEqual(c.body, mismatch('TypeNumber', 'Revenue', 'Number', 'String'));
  assert.equal((await get('TypeNumber', id)).body.Revenue, 100);
});

test('§2.2 type fixed after first write: Boolean and Object fields refuse other types', async () => {
  const id = await createRecord(server, app, 'TypeMisc', { Active: true, Meta: { a: 1 } });
  const b = await put('TypeMisc', id, { Active: 1 });
  assert.equal(b.status, 400, b.text);
  assert.deepEqual(b.body, mismatch('TypeMisc', 'Active', 'Boolean', 'Number'));
  const o = await put('TypeMisc', id, { Meta: 'text' });
  assert.equal(o.status, 400, o.text);
  assert.deepEqual(o.body, mismatch('TypeMisc', 'Meta', 'Object', 'String'));
});

test('§2.2 a Pointer field given a bare objectId string answers 111 expected Pointer<T> but got String', async () => {
  const target = await createRecord(server, app, 'PtrContacts', { Name: 'c' });
  const id = await createRecord(server, app, 'PtrDeals', {
    Contact: { __type: 'Pointer', className: 'PtrContacts', objectId: target },
  });
  const u = await put('PtrDeals', id, { Contact: target });
  assert.equal(u.status, 400, u.text);
  assert.deepEqual(u.body, mismatch('PtrDeals', 'Contact', 'Pointer<PtrContacts>', 'String'));
  const c = await post('PtrDeals', { Contact: target });
  assert.equal(c.status, 400, c.text);
  assert.deepEqual(c.body, mismatch('PtrDeals', 'Contact', 'Pointer<PtrContacts>', 'String'));
  // A pointer to another class is a mismatch too.
  const other = await createRecord(server, app, 'PtrOther', { Name: 'o' });
  const w = await put('PtrDeals', id, { Contact: { __type: 'Pointer', className: 'PtrOther', objectId: other } });
  assert.equal(w.status, 400, w.text);
  assert.deepEqual(w.body, mismatch('PtrDeals', 'Contact', 'Pointer<PtrContacts>', 'Pointer<PtrOther>'));
  const g = await get('PtrDeals', id);
  assert.deepEqual(g.body.Contact, { __type: 'Pointer', className: 'PtrContacts', objectId: target });
  assert.equal((await listAll(server, app, 'PtrDeals')).length, 1);
});

test('§2.2 a number written to a String field is stored as a string', async () => {
  const id = await createRecord(server, app, 'StrCoerce', { Phone: '+47 555 0100' });
  const u = await put('StrCoerce', id, { Phone: 42 });
  assert.equal(u.status, 200, u.text);
  assert.equal((await get('StrCoerce', id)).body.Phone, '42');
  const id2 = await createRecord(server, app, 'StrCoerce', { Phone: 7.5 });
  assert.equal((await get('StrCoerce', id2)).body.Phone, '7.5');
});

test('§2.2 unknown __type or an unparseable Date iso answers 400 111 (COMPATIBILITY)', async () => {
  for (const value of [{ __type: 'Frob', x: 1 }, { __type: 'Date', iso: 'not a date' }]) {
    const r = await post('TypeUnknown', { V: value });
    assert.equal(r.status, 400, `${JSON.stringify(value)}: ${r.text}`);
    assert.equal(r.body.code, 111, r.text);
    assert.equal(typeof r.body.error, 'string');
  }
});

test('§4.1 createdAt/updatedAt in a body: a Date is ignored, anything else answers 111 (COMPATIBILITY)', async () => {
  const c = await post('OwnTimes', { createdAt: { __type: 'Date', iso: '2001-01-01T00:00:00.000Z' }, N: 1 });
  assert.equal(c.status, 201, c.text);
  assertRecentIso(c.body.createdAt, 'createdAt');
  const g = await get('OwnTimes', c.body.objectId);
  assert.equal(g.body.createdAt, c.body.createdAt);
  const bad = await post('OwnTimes', { createdAt: '2001-01-01T00:00:00.000Z' });
  assert.equal(bad.status, 400, bad.text);
  assert.deepEqual(bad.body, mismatch('OwnTimes', 'createdAt', 'Date', 'String'));
  const bad2 = await put('OwnTimes', c.body.objectId, { updatedAt: 5 });
  assert.equal(bad2.status, 400, bad2.text);
  assert.deepEqual(bad2.body, mismatch('OwnTimes', 'updatedAt', 'Date', 'Number'));
});

test('§2.2 null: a new field first written with null is not created; a declared field stores null (COMPATIBILITY)', async () => {
  const c = await post('Nulls', { Name: 'x', Ghost: null });
  assert.equal(c.status, 201, c.text);
  const g = await get('Nulls', c.body.objectId);
  assert.equal('Ghost' in g.body, false, g.text);
  const u = await put('Nulls', c.body.objectId, { Name: null });
  assert.equal(u.status, 200, u.text);
  const g2 = await get('Nulls', c.body.objectId);
  assert.ok('Name' in g2.body, g2.text);
  assert.equal(g2.body.Name, null);
  // A value written over the null, then deleted: the field is absent, no longer an explicit null.
  assert.equal((await put('Nulls', c.body.objectId, { Name: 'y' })).status, 200);
  assert.equal((await get('Nulls', c.body.objectId)).body.Name, 'y');
  assert.equal((await put('Nulls', c.body.objectId, { Name: { __op: 'Delete' } })).status, 200);
  const g3 = await get('Nulls', c.body.objectId);
  assert.equal('Name' in g3.body, false, g3.text);
});

// ---------------------------------------------------------------------------------------------
// §2.2 field names

test('§2.2 invalid field names answer 400 105 Invalid field name: <name>.', async () => {
  const id = await createRecord(server, app, 'Names', { Good_name1: 'ok' });
  const bad = ['1x', '_x', 'a-b', 'a b', 'a.b', 'a$b', '$set', 'Ünï', 'x'.repeat(64), ''];
  for (const name of bad) {
    const c = await post('Names', JSON.stringify({ [name]: 1 }));
    assert.equal(c.status, 400, `create ${JSON.stringify(name)}: ${c.text}`);
    assert.deepEqual(c.body, { code: 105, error: `Invalid field name: ${name}.` }, `create ${JSON.stringify(name)}`);
    const u = await put('Names', id, JSON.stringify({ [name]: 1 }));
    assert.equal(u.status, 400, `update ${JSON.stringify(name)}: ${u.text}`);
    assert.deepEqual(u.body, { code: 105, error: `Invalid field name: ${name}.` }, `update ${JSON.stringify(name)}`);
  }
  // 63 characters is the longest accepted name.
  const ok = await post('Names', { ['y'.repeat(63)]: 1 });
  assert.equal(ok.status, 201, ok.text);
  assert.equal((await listAll(server, app, 'Names')).length, 2);
});

// ---------------------------------------------------------------------------------------------
// §2.2 include

test('§2.2 GET with include=PointerField returns {"__type":"Object", className, objectId, ...target fields}', async () => {
  const cId = await createRecord(server, app, 'IncContacts', {
    Name: 'Ada', Born: { __type: 'Date', iso: '1815-12-10T00:00:00.000Z' },
  });
  const dId = await createRecord(server, app, 'IncDeals', {
    Title: 'Engine',
    Contact: { __type: 'Pointer', className: 'IncContacts', objectId: cId },
  });
  const contact = (await get('IncContacts', cId)).body;

  const plain = await get('IncDeals', dId);
  assert.deepEqual(plain.body.Contact, { __type: 'Pointer', className: 'IncContacts', objectId: cId });

  const inc = await get('IncDeals', dId, '?include=Contact');
  assert.equal(inc.status, 200, inc.text);
  assert.deepEqual(inc.body.Contact, { __type: 'Object', className: 'IncContacts', ...contact });
  assert.equal(inc.body.Title, 'Engine');

  const l = await list('IncDeals', '?include=Contact');
  assert.equal(l.status, 200, l.text);
  assert.equal(l.body.results.length, 1);
  assert.deepEqual(l.body.results[0].Contact, { __type: 'Object', className: 'IncContacts', ...contact });
});

// ---------------------------------------------------------------------------------------------
// §3.4 delete

test('§3.4 DELETE answers 200 {}; a later GET answers 404 {"code":101,"error":"Object not found."}', async () => {
  const id = await createRecord(server, app, 'DelRecords', { Name: 'bye' });
  const keep = await createRecord(server, app, 'DelRecords', { Name: 'stay' });
  const d = await del('DelRecords', id);
  assert.equal(d.status, 200, d.text);
  assert.deepEqual(d.body, {});
  const g = await get('DelRecords', id);
  assert.equal(g.status, 404, g.text);
  assert.deepEqual(g.body, NOT_FOUND);
  const again = await del('DelRecords', id);
  assert.equal(again.status, 404, again.text);
  assert.deepEqual(again.body, NOT_FOUND);
  const u = await put('DelRecords', id, { Name: 'zombie' });
  assert.equal(u.status, 404, u.text);
  assert.deepEqual(u.body, NOT_FOUND);
  const rest = await listAll(server, app, 'DelRecords');
  assert.deepEqual(rest.map((r) => r.objectId), [keep]);
});

test('§3.4 DELETE of a record another record points at answers 400 119 and the record still exists', async () => {
  const cId = await createRecord(server, app, 'RefContacts', { Name: 'pinned' });
  const dId = await createRecord(server, app, 'RefDeals', {
    Owner: { __type: 'Pointer', className: 'RefContacts', objectId: cId },
  });
  const d = await del('RefContacts', cId);
  assert.equal(d.status, 400, d.text);
  assert.deepEqual(d.body, {
    code: 119,
    error: `Pointer to Object ${cId} exists in table RefDeals in key Owner. Delete is not allowed.`,
  });
  const g = await get('RefContacts', cId);
  assert.equal(g.status, 200, g.text);
  assert.equal(g.body.Name, 'pinned');

  // Once the reference is gone the delete goes through.
  const u = await put('RefDeals', dId, { Owner: { __op: 'Delete' } });
  assert.equal(u.status, 200, u.text);
  const d2 = await del('RefContacts', cId);
  assert.equal(d2.status, 200, d2.text);
  assert.deepEqual(d2.body, {});
});

// ---------------------------------------------------------------------------------------------
// §4.1 objectId supplied by a master credential

test('§4.1 a master-key create may supply objectId; a duplicate answers 400 137', async () => {
  const custom = 'CustomIdentifier2024';
  const c = await post('OwnIds', { objectId: custom, Name: 'mine' });
  assert.equal(c.status, 201, c.text);
  assert.equal(c.body.objectId, custom);
  const g = await get('OwnIds', custom);
  assert.equal(g.status, 200, g.text);
  assert.equal(g.body.Name, 'mine');

  const dup = await post('OwnIds', { objectId: custom, Name: 'again' });
  assert.equal(dup.status, 400, dup.text);
  assert.deepEqual(dup.body, { code: 137, error: 'A duplicate value for a field with unique values was provided' });

  const viaApiKey = await post('OwnIds', { objectId: 'abc', Name: 'short' }, apiKeyHeaders(app));
  assert.equal(viaApiKey.status, 201, viaApiKey.text);
  assert.equal(viaApiKey.body.objectId, 'abc');

  const long = 'L'.repeat(64);
  const l = await post('OwnIds', { objectId: long });
  assert.equal(l.status, 201, l.text);
  const tooLong = await post('OwnIds', { objectId: 'L'.repeat(65) });
  assert.equal(tooLong.status, 400, tooLong.text);
  assert.deepEqual(tooLong.body, { code: 105, error: `Invalid objectId: ${'L'.repeat(65)}.` });

  const all = await listAll(server, app, 'OwnIds');
  assert.deepEqual(all.map((r) => r.objectId).sort(), [custom, long, 'abc'].sort());
  assert.equal(all.find((r) => r.objectId === custom).Name, 'mine');
});

// ---------------------------------------------------------------------------------------------
// §4.1 list

test('§4.1 list of a class that does not exist answers 200 {"results":[]}', async () => {
  const l = await list('NeverCreatedClass');
  assert.equal(l.status, 200, l.text);
  assert.deepEqual(l.body, { results: [] });
  const g = await get('NeverCreatedClass', 'abcdefghij');
  assert.equal(g.status, 404, g.text);
  assert.deepEqual(g.body, NOT_FOUND);
});

test('§4.1 list returns the created records; limit and skip page through them', async () => {
  const ids = [];
  for (let i = 0; i < 7; i++) ids.push(await createRecord(server, app, 'Paged', { Seq: i, Name: `r${i}` }));

  const all = await list('Paged');
  assert.equal(all.status, 200, all.text);
  assert.deepEqual(Object.keys(all.body), ['results']);
  assert.deepEqual(all.body.results.map((r) => r.objectId).sort(), [...ids].sort());
  for (const r of all.body.results) {
    assert.equal(r.Name, `r${r.Seq}`);
    assert.match(r.createdAt, ISO_MS);
    assert.match(r.updatedAt, ISO_MS);
  }

  const seqs = async (q) => {
    const r = await list('Paged', q);
    assert.equal(r.status, 200, `${q}: ${r.text}`);
    return r.body.results.map((x) => x.Seq);
  };
  assert.deepEqual(await seqs('?order=Seq'), [0, 1, 2, 3, 4, 5, 6]);
  assert.deepEqual(await seqs('?order=-Seq&limit=3'), [6, 5, 4]);
  assert.deepEqual(await seqs('?order=Seq&limit=2'), [0, 1]);
  assert.deepEqual(await seqs('?order=Seq&skip=5'), [5, 6]);
  assert.deepEqual(await seqs('?order=Seq&limit=2&skip=3'), [3, 4]);
  assert.deepEqual(await seqs('?order=Seq&skip=7'), []);
  assert.equal((await seqs('?limit=3')).length, 3);
  assert.deepEqual(await seqs('?limit=0'), []);
});

test('§4.2 a query parameter the spec does not support answers 400 102', async () => {
  await createRecord(server, app, 'QueryParams', { N: 1 });
  const r = await list('QueryParams', '?distinct=N');
  assert.equal(r.status, 400, r.text);
  assert.deepEqual(r.body, { code: 102, error: 'Invalid parameter for query: distinct' });
  const r2 = await list('QueryParams', '?bogus=1');
  assert.equal(r2.status, 400, r2.text);
  assert.deepEqual(r2.body, { code: 102, error: 'Invalid parameter for query: bogus' });
});

test('§7 an unknown route answers 404 {"error":"Cannot <METHOD> <path>"} (COMPATIBILITY)', async () => {
  const r = await request(server, 'GET', '/core/nowhere', { headers: M });
  assert.equal(r.status, 404, r.text);
  assert.deepEqual(r.body, { error: 'Cannot GET /core/nowhere' });
  const p = await request(server, 'PATCH', '/core/classes/Accounts', { headers: M, body: {} });
  assert.equal(p.status, 404, p.text);
  assert.deepEqual(p.body, { error: 'Cannot PATCH /core/classes/Accounts' });
});

// ---------------------------------------------------------------------------------------------
// §2.1 ACL

test('§2.1 ACL round-trips; an invalid ACL answers 400 123 (COMPATIBILITY)', async () => {
  const acl = {
    '*': { read: true },
    abcDEF1234: { read: true, write: true },
    'role:Sales': { read: true, write: true },
  };
  const c = await post('AclRecords', { Name: 'guarded', ACL: acl });
  assert.equal(c.status, 201, c.text);
  const g = await get('AclRecords', c.body.objectId);
  assert.equal(g.status, 200, g.text);
  assert.deepEqual(g.body.ACL, acl);

  const acl2 = { abcDEF1234: { read: true } };
  const u = await put('AclRecords', c.body.objectId, { ACL: acl2 });
  assert.equal(u.status, 200, u.text);
  assert.deepEqual((await get('AclRecords', c.body.objectId)).body.ACL, acl2);

  for (const bad of [{ '*': { read: 'yes' } }, { '*': true }, 'public', [1], { '*': { read: true, admin: true } }]) {
    const r = await post('AclRecords', { Name: 'bad', ACL: bad });
    assert.equal(r.status, 400, `${JSON.stringify(bad)}: ${r.text}`);
    assert.deepEqual(r.body, { code: 123, error: 'Invalid ACL.' }, JSON.stringify(bad));
  }
  assert.equal((await listAll(server, app, 'AclRecords')).length, 1);
});

// HTTP/1.1 pipelining over one connection: a create whose body is larger than the connection's
// read buffer, with the next two requests sent in the same write. The server reads ahead into its
// buffer and shrinks it after a large request; the bytes of the requests behind must survive that.
test('§4.1 pipelined requests behind a large create are all answered, in order', async () => {
  const big = JSON.stringify({ Name: 'large', Blob: 'b'.repeat(20_000) });
  const small = JSON.stringify({ Name: 'small' });
  const head = (method, p, body) => `${method} ${p} HTTP/1.1\r\nHost: ${HOST}:${server.port}\r\n` +
    `X-Core-Application-Id: ${app.appId}\r\nX-Core-Master-Key: ${app.masterKey}\r\n` +
    (body ? `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` : '') + '\r\n' +
    (body ?? '');
  const sock = net.createConnection({ host: HOST, port: server.port });
  await new Promise((resolve, reject) => { sock.once('connect', resolve); sock.once('error', reject); });
  let received = Buffer.alloc(0);
  // Complete responses parsed off `received` so far: [status, body text].
  const responses = () => {
    const out = [];
    let at = 0;
    for (;;) {
      const end = received.indexOf('\r\n\r\n', at);
      if (end < 0) return out;
      const headText = received.subarray(at, end).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(headText)?.[1] ?? 0);
      if (received.length < end + 4 + length) return out;
      out.push([Number(headText.split(' ')[1]), received.subarray(end + 4, end + 4 + length).toString('utf8')]);
      at = end + 4 + length;
    }
  };
  const three = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${responses().length} answers`)), 10_000);
    sock.on('data', (d) => {
      received = Buffer.concat([received, d]);
      if (responses().length >= 3) { clearTimeout(timer); resolve(responses()); }
    });
    sock.on('error', reject);
  });
  sock.write(head('POST', '/core/classes/Pipelined', big) + head('POST', '/core/classes/Pipelined', small) +
    head('GET', '/core/classes/Pipelined?order=createdAt'));
  const [created, second, listed] = await three;
  sock.destroy();
  assert.equal(created[0], 201, created[1]);
  assert.equal(second[0], 201, second[1]);
  assert.equal(listed[0], 200, listed[1]);
  const names = JSON.parse(listed[1]).results.map((r) => [r.Name, r.Blob?.length]);
  assert.deepEqual(names, [['large', 20_000], ['small', undefined]]);
});
