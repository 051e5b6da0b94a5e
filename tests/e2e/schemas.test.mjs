// §4.5 / §2.5 schema endpoints (Parse's body shapes), §4.6 aggregation, §4.9 generic functions.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, stopAll, request, masterHeaders, apiKeyHeaders, appHeaders, createRecord } from './lib/harness.mjs';

let server;
let app;
let M;
before(async () => {
  ({ server, app } = await setup());
  M = masterHeaders(app);
});
after(stopAll);

const schema = (method, cls, body, headers = M) => request(server, method, `/core/schemas/${cls}`, { headers, body });

test('§4.5 schema reads and writes need the master or an API key: app id alone and any session get 403', async () => {
  await createRecord(server, app, 'Guarded', { N: 1 });
  const u = await request(server, 'POST', '/core/users', { headers: M, body: { username: 'owner', password: 'Passw0rdA' } });
  const session = { ...appHeaders(app), 'X-Core-Session-Token': u.body.sessionToken };
  for (const headers of [appHeaders(app), session])
    for (const [method, path] of [['GET', '/core/schemas'], ['GET', '/core/schemas/Guarded'], ['PUT', '/core/schemas/Guarded'], ['POST', '/core/schemas/New1'], ['DELETE', '/core/schemas/Guarded']]) {
      const r = await request(server, method, path, { headers, body: method === 'GET' || method === 'DELETE' ? undefined : {} });
      assert.equal(r.status, 403, `${method} ${path}: ${r.text}`);
      assert.deepEqual(r.body, { error: 'unauthorized: master key is required' });
    }
  assert.equal((await request(server, 'GET', '/core/schemas/Guarded', { headers: apiKeyHeaders(app) })).status, 200);
});

test('§2.3 GET /core/schemas/<T> for an undefined class answers 400', async () => {
  const r = await schema('GET', 'NoSuchClass');
  assert.equal(r.status, 400);
  assert.deepEqual(r.body, { code: 103, error: 'Class NoSuchClass does not exist.' });
});

test('§2.5 POST /core/schemas/<T> creates a class with empty permissions for every operation; targetClass only on Pointer/Relation', async () => {
  const r = await schema('POST', 'Made', { className: 'Made', fields: { Title: { type: 'String' }, Owner: { type: 'Pointer', targetClass: '_User' }, Amount: { type: 'Number' } } });
  assert.equal(r.status, 200, r.text);
  for (const op of ['find', 'get', 'create', 'update', 'delete']) assert.deepEqual(r.body.classLevelPermissions[op], {}, op);
  assert.deepEqual(r.body.fields.Owner, { type: 'Pointer', targetClass: '_User' });
  assert.deepEqual(r.body.fields.Title, { type: 'String' });
  assert.deepEqual(r.body.triggers, []);
  assert.equal('timeline' in r.body, false);
  const again = await schema('POST', 'Made', {});
  assert.deepEqual(again.body, { code: 103, error: 'Class Made already exists.' });
  // Nobody but keys until permissions are opened.
  const u = await request(server, 'POST', '/core/users', { headers: M, body: { username: 'reader', password: 'Passw0rdA' } });
  const read = await request(server, 'GET', '/core/classes/Made', { headers: { ...appHeaders(app), 'X-Core-Session-Token': u.body.sessionToken } });
  assert.equal(read.body.code, 119);
});

test('§4.5 PUT adds fields, deletes a field with {"__op":"Delete"} (data too), sets classLevelPermissions and indexes', async () => {
  await schema('POST', 'Editable', { fields: { A: { type: 'String' } } });
  const id = await createRecord(server, app, 'Editable', { A: 'x' });
  const added = await schema('PUT', 'Editable', { fields: { B: { type: 'Number' }, C: { type: 'Date' } }, indexes: { b_1: { B: 1 } }, classLevelPermissions: { find: { '*': true } } });
  assert.equal(added.status, 200, added.text);
  assert.deepEqual(added.body.fields.B, { type: 'Number' });
  assert.deepEqual(added.body.indexes.b_1, { B: 1 });
  assert.deepEqual(added.body.classLevelPermissions.find, { '*': true });
  const exists = await schema('PUT', 'Editable', { fields: { A: { type: 'String' } } });
  assert.deepEqual(exists.body, { code: 255, error: 'Field A exists, cannot update.' });
  const removed = await schema('PUT', 'Editable', { fields: { A: { __op: 'Delete' } } });
  assert.equal(removed.status, 200, removed.text);
  assert.equal('A' in removed.body.fields, false);
  const got = await request(server, 'GET', `/core/classes/Editable/${id}`, { headers: M });
  assert.equal('A' in got.body, false);
  const again = await schema('PUT', 'Editable', { fields: { A: { __op: 'Delete' } } });
  assert.deepEqual(again.body, { code: 255, error: 'Field A does not exist, cannot update.' });
  // The field may come back with another type: it is gone.
  const readd = await schema('PUT', 'Editable', { fields: { A: { type: 'Number' } } });
  assert.equal(readd.status, 200, readd.text);
});

test('§4.5 DELETE drops an empty class only', async () => {
  await schema('POST', 'Droppable', { fields: { A: { type: 'String' } } });
  const id = await createRecord(server, app, 'Droppable', { A: 'x' });
  const full = await schema('DELETE', 'Droppable');
  assert.deepEqual(full.body, { code: 255, error: 'Class Droppable is not empty, contains 1 objects, cannot drop schema.' });
  await request(server, 'DELETE', `/core/classes/Droppable/${id}`, { headers: M });
  const dropped = await schema('DELETE', 'Droppable');
  assert.equal(dropped.status, 200, dropped.text);
  assert.equal((await schema('GET', 'Droppable')).status, 400);
  assert.equal((await schema('DELETE', '_User')).status, 400);
});

test('SECURITY hostile schema input: each a clear 4xx and the schema unchanged', async () => {
  await schema('POST', 'Hostile', { fields: { A: { type: 'String' } } });
  const before = (await schema('GET', 'Hostile')).body;
  const many = {};
  for (let i = 0; i < 10000; i++) many[`f${i}`] = { type: 'String' };
  const cases = [
    { fields: { X: { type: 'Bogus' } } },
    { fields: { X: { type: 'Pointer' } } },
    { fields: { 'a; DROP TABLE Hostile': { type: 'String' } } },
    { fields: { X: { type: 'Pointer', targetClass: 'x"; DROP TABLE y; --' } } },
    { fields: many },
    { classLevelPermissions: { destroy: { '*': true } } },
    { classLevelPermissions: { find: { '*': 'yes' } } },
    { indexes: { i: { Nope: 1 } } },
    { className: 'Other' },
  ];
  for (const body of cases) {
    const r = await schema('PUT', 'Hostile', body);
    assert.ok(r.status >= 400 && r.status < 500, `${JSON.stringify(body).slice(0, 80)}: ${r.status} ${r.text.slice(0, 200)}`);
    assert.equal(typeof r.body.code, 'number');
  }
  const badName = await request(server, 'POST', `/core/schemas/${encodeURIComponent('Bad; DROP TABLE x')}`, { headers: M, body: {} });
  assert.equal(badName.status, 400);
  assert.deepEqual((await schema('GET', 'Hostile')).body, before);
});

// Issue 23: Parse Server's field options. `defaultValue` fills a create that leaves the field out
// (and is answered, as Parse answers it); `required` refuses an empty value (Parse: 142).
test('issue 23 §4.5 schema required and defaultValue are stored, returned, and honoured by writes', async () => {
  const ptr = { __type: 'Pointer', className: '_User', objectId: 'abcdefghij' };
  const made = await schema('POST', 'Opts', { fields: {
    Stage: { type: 'String', required: true, defaultValue: 'new' },
    Title: { type: 'String', required: true },
    Score: { type: 'Number', defaultValue: 10 },
    Owner: { type: 'Pointer', targetClass: '_User', defaultValue: ptr },
    Plain: { type: 'String', required: false },
  } });
  assert.equal(made.status, 200, made.text);
  const expected = {
    Stage: { type: 'String', required: true, defaultValue: 'new' },
    Title: { type: 'String', required: true },
    Score: { type: 'Number', defaultValue: 10 },
    Owner: { type: 'Pointer', targetClass: '_User', defaultValue: ptr },
    Plain: { type: 'String' },
  };
  for (const [name, spec] of Object.entries(expected)) assert.deepEqual(made.body.fields[name], spec, name);
  const read = await schema('GET', 'Opts');
  for (const [name, spec] of Object.entries(expected)) assert.deepEqual(read.body.fields[name], spec, name);

  const create = (body) => request(server, 'POST', '/core/classes/Opts', { headers: M, body });
  const ok = await create({ Title: 't' });
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.body.Stage, 'new');
  assert.equal(ok.body.Score, 10);
  const got = await request(server, 'GET', `/core/classes/Opts/${ok.body.objectId}`, { headers: M });
  assert.equal(got.body.Stage, 'new');
  assert.equal(got.body.Score, 10);
  assert.deepEqual(got.body.Owner, ptr);
  // A value sent wins over the default; a Delete on create takes the default.
  const own = await create({ Title: 't', Stage: 'won', Score: { __op: 'Delete' } });
  assert.equal(own.status, 201, own.text);
  const ownRead = await request(server, 'GET', `/core/classes/Opts/${own.body.objectId}`, { headers: M });
  assert.equal(ownRead.body.Stage, 'won');
  assert.equal(ownRead.body.Score, 10);

  const required = { code: 142, error: 'Title is required' };
  for (const body of [{}, { Title: null }, { Title: '' }, { Title: { __op: 'Delete' } }]) {
    const r = await create(body);
    assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
    assert.deepEqual(r.body, required);
  }
  // A required field with a default: null and "" are refused, not defaulted (Parse).
  const nullStage = await create({ Title: 't', Stage: null });
  assert.deepEqual([nullStage.status, nullStage.body], [400, { code: 142, error: 'Stage is required' }]);

  const update = (body) => request(server, 'PUT', `/core/classes/Opts/${ok.body.objectId}`, { headers: M, body });
  assert.equal((await update({ Score: 3 })).status, 200);  // an update that leaves the field alone
  for (const body of [{ Title: null }, { Title: '' }, { Title: { __op: 'Delete' } }]) {
    const r = await update(body);
    assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
    assert.deepEqual(r.body, required);
  }
  assert.equal((await request(server, 'GET', `/core/classes/Opts/${ok.body.objectId}`, { headers: M })).body.Title, 't');

  // Options come with a field added by PUT, and go with a field deleted.
  const added = await schema('PUT', 'Opts', { fields: { Flag: { type: 'Boolean', defaultValue: false }, Plain: { __op: 'Delete' } } });
  assert.equal(added.status, 200, added.text);
  assert.deepEqual(added.body.fields.Flag, { type: 'Boolean', defaultValue: false });
  const flagged = await create({ Title: 'f' });
  assert.equal(flagged.body.Flag, false);
});

test('issue 23 §4.5 a defaultValue of another type, or options on a Relation, answer 111 and change nothing', async () => {
  const cases = [
    [{ N: { type: 'Number', defaultValue: 'ten' } }, 'schema mismatch for BadOpts.N default value; expected Number but got String'],
    [{ S: { type: 'String', defaultValue: 5 } }, 'schema mismatch for BadOpts.S default value; expected String but got Number'],
    [{ P: { type: 'Pointer', targetClass: '_User', defaultValue: { __type: 'Pointer', className: '_Role', objectId: 'abcdefghij' } } },
      'schema mismatch for BadOpts.P default value; expected Pointer<_User> but got Pointer<_Role>'],
    [{ R: { type: 'Relation', targetClass: '_User', defaultValue: { __type: 'Relation', className: '_User' } } },
      "The 'default value' option is not applicable for Relation<_User>"],
    [{ R: { type: 'Relation', targetClass: '_User', required: true } }, "The 'required' option is not applicable for Relation<_User>"],
  ];
  for (const [fields, error] of cases) {
    const r = await schema('POST', 'BadOpts', { fields });
    assert.equal(r.status, 400, r.text);
    assert.deepEqual(r.body, { code: 111, error });
  }
  assert.equal((await schema('GET', 'BadOpts')).status, 400);
  const bad = await schema('POST', 'BadOpts', { fields: { D: { type: 'Date', defaultValue: { __type: 'Date', iso: 'not a date' } } } });
  assert.equal(bad.status, 400, bad.text);
  assert.equal(bad.body.code, 111);
});

test('§4.6 classes-aggregate groups with count and sum for a key or a permitted session; anonymous → 119; /core/aggregate → 404', async () => {
  for (const [city, amount] of [['Haifa', 10], ['Haifa', 5], ['Eilat', 7]]) await createRecord(server, app, 'Deals', { City: city, Amount: amount });
  const pipeline = encodeURIComponent(JSON.stringify([
    { $group: { _id: '$City', total: { $sum: '$Amount' }, n: { $sum: 1 } } },
    { $sort: { total: -1 } },
  ]));
  const r = await request(server, 'GET', `/core/classes-aggregate/Deals?pipeline=${pipeline}`, { headers: apiKeyHeaders(app) });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body.results, [{ objectId: 'Haifa', total: 15, n: 2 }, { objectId: 'Eilat', total: 7, n: 1 }]);

  const matched = await request(server, 'GET', `/core/classes-aggregate/Deals?match=${encodeURIComponent('{"City":"Haifa"}')}&group=${encodeURIComponent('{"_id":null,"avg":{"$avg":"$Amount"},"max":{"$max":"$Amount"}}')}`, { headers: M });
  assert.deepEqual(matched.body.results, [{ objectId: null, avg: 7.5, max: 10 }]);
  const distinct = await request(server, 'GET', '/core/classes-aggregate/Deals?distinct=City', { headers: M });
  assert.deepEqual([...distinct.body.results].sort(), ['Eilat', 'Haifa']);

  const u = await request(server, 'POST', '/core/users', { headers: M, body: { username: 'aggregator', password: 'Passw0rdA' } });
  const session = { ...appHeaders(app), 'X-Core-Session-Token': u.body.sessionToken };
  // A class a key's write makes starts closed (issue 17 #4): a session is permitted once it is opened.
  const closed = await request(server, 'GET', `/core/classes-aggregate/Deals?pipeline=${pipeline}`, { headers: session });
  assert.equal(closed.status, 400, closed.text);
  const opened = await request(server, 'PUT', '/core/schemas/Deals', { headers: M, body: { classLevelPermissions: { find: { '*': true }, count: { '*': true } } } });
  assert.equal(opened.status, 200, opened.text);
  assert.equal((await request(server, 'GET', `/core/classes-aggregate/Deals?pipeline=${pipeline}`, { headers: session })).status, 200);

  const anonymous = await request(server, 'GET', `/core/classes-aggregate/Deals?pipeline=${pipeline}`, { headers: appHeaders(app) });
  assert.equal(anonymous.status, 400);
  assert.deepEqual(anonymous.body, { code: 119, error: 'Permission denied for action find on class Deals.' });
  assert.equal((await request(server, 'GET', '/core/aggregate/Deals', { headers: M })).status, 404);
  const secret = await request(server, 'GET', `/core/classes-aggregate/_User?distinct=password`, { headers: M });
  assert.equal(secret.status, 400);
});

test('§4.9 POST /core/functions/<any name> → {"code":141,"error":"function not found"}', async () => {
  for (const name of ['getlead', 'anything', 'web2table']) {
    const r = await request(server, 'POST', `/core/functions/${name}`, { headers: M, body: {} });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { code: 141, error: 'function not found' });
  }
});
