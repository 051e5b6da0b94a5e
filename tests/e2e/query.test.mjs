// Query language of GET /core/classes/{Table} (spec §2.2 wire formats in `where`, §4.2 parameters
// and encoding, §4.3 operators, §7 errors, §8 limits; issue 3) against the real crmd binary.
// One server and one application for the file; each group of tests uses its own classes, created
// with the master key (anonymous writes are refused by design).
// Paging, count on large classes and the (createdAt, objectId) cursor live in query-paging.test.mjs.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  setup, stopAll, request, rawRequest, masterHeaders, apiKeyHeaders, createRecord, listAll,
  assertHealthy, sleep,
} from './lib/harness.mjs';

let server;
let app;
let M; // master-key headers

const INTERNAL = { code: 1, message: 'Internal server error.' };
const invalidParam = (name) => ({ code: 102, error: `Invalid parameter for query: ${name}` });
const badConstraint = (op) => ({ code: 107, error: `bad constraint: ${op}` });

const ptr = (className, objectId) => ({ __type: 'Pointer', className, objectId });
const date = (iso) => ({ __type: 'Date', iso });

const list = (cls, query = '', headers = M) => request(server, 'GET', `/core/classes/${cls}${query}`, { headers });
const whereQ = (where) => `where=${encodeURIComponent(typeof where === 'string' ? where : JSON.stringify(where))}`;
// GET /core/classes/<cls>?where=<where>&<extra>
const find = (cls, where, extra = '', headers = M) =>
  list(cls, `?${whereQ(where)}${extra ? `&${extra}` : ''}`, headers);

const sorted = (xs) => [...xs].sort();

// The Names of the records matching `where` (sorted); asserts 200 {"results":[...]} and nothing else.
async function names(cls, where, extra = '') {
  const r = await find(cls, where, extra);
  const label = `${cls} where=${JSON.stringify(where)} ${extra}`;
  assert.equal(r.status, 200, `${label}: ${r.text.slice(0, 300)}`);
  assert.deepEqual(Object.keys(r.body), ['results'], `${label}: ${r.text.slice(0, 300)}`);
  return sorted(r.body.results.map((x) => x.Name));
}

async function expectNames(cls, where, expected, extra = '') {
  assert.deepEqual(await names(cls, where, extra), sorted(expected), `${cls} where=${JSON.stringify(where)} ${extra}`);
}

function expectError(r, status, body, label = '') {
  assert.equal(r.status, status, `${label}: ${r.text.slice(0, 300)}`);
  assert.deepEqual(r.body, body, label);
}

// 4xx with a numeric code, and nothing that looks like an SQL error.
function expectClientError(r, label, codes) {
  assert.ok(r.status >= 400 && r.status < 500, `${label}: expected 4xx, got ${r.status} ${r.text.slice(0, 300)}`);
  assert.equal(typeof r.body?.code, 'number', `${label}: ${r.text.slice(0, 300)}`);
  if (codes) assert.ok(codes.includes(r.body.code), `${label}: code ${r.body.code} not in ${codes}: ${r.text.slice(0, 300)}`);
  assert.equal(/sqlite|syntax error|SQL logic/i.test(r.text), false, `${label}: ${r.text.slice(0, 300)}`);
}

// Raw HTTP GET with the master key: the request target goes out byte for byte.
const rawGet = (target) => rawRequest(server,
  `GET ${target} HTTP/1.1\r\nX-Core-Application-Id: ${app.appId}\r\nX-Core-Master-Key: ${app.masterKey}`,
  Buffer.alloc(0), { timeoutMs: 10_000 });

// Creates records one after the other (a few ms apart, so createdAt is strictly increasing);
// returns [{objectId, createdAt}] in order.
async function createSeq(cls, bodies) {
  const out = [];
  for (const body of bodies) {
    const r = await request(server, 'POST', `/core/classes/${cls}`, { headers: M, body });
    assert.equal(r.status, 201, `create ${cls}: ${r.text}`);
    out.push(r.body);
    await sleep(3);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Shared data: QOps (scalars, arrays, dates), QStatuses <- QAccounts <- QTasks (pointers).

let ops; // {Alpha: {objectId, createdAt}, ...}
let statuses; // {Active, Lost}
let accounts; // {Acme, Birch, Cedar}
let tasks; // {t1..t5}

before(async () => {
  ({ server, app } = await setup());
  M = masterHeaders(app);

  const opsRows = [
    { Name: 'Alpha', Score: 10, City: 'Oslo', Tags: ['a', 'b'], Active: true, Due: date('2024-01-01T00:00:00.000Z') },
    { Name: 'Beta', Score: 20, City: 'Paris', Tags: ['b', 'c'], Active: false, Due: date('2024-06-01T00:00:00.000Z') },
    { Name: 'Gamma', Score: 30, City: 'Oslo', Tags: ['c'], Active: true, Due: date('2025-01-01T00:00:00.000Z') },
    { Name: 'delta', Score: 40, City: 'Rome', Tags: [], Active: false, Due: date('2025-06-01T00:00:00.000Z') },
    { Name: 'Epsilon', Score: 50, Tags: ['a', 'b', 'c', 'd'] }, // no City, Active, Due
  ];
  const created = await createSeq('QOps', opsRows);
  ops = Object.fromEntries(opsRows.map((r, i) => [r.Name, created[i]]));

  statuses = {};
  for (const n of ['Active', 'Lost']) statuses[n] = await createRecord(server, app, 'QStatuses', { Name: n });
  accounts = {};
  accounts.Acme = await createRecord(server, app, 'QAccounts', { Name: 'Acme', City: 'Oslo', Phone: '111', StatusId: ptr('QStatuses', statuses.Active) });
  accounts.Birch = await createRecord(server, app, 'QAccounts', { Name: 'Birch', City: 'Paris', Phone: '222', StatusId: ptr('QStatuses', statuses.Lost) });
  accounts.Cedar = await createRecord(server, app, 'QAccounts', { Name: 'Cedar', City: 'Oslo', Phone: '333', StatusId: ptr('QStatuses', statuses.Lost) });
  tasks = {};
  for (const [n, acc, owner] of [['t1', 'Acme', 'Birch'], ['t2', 'Acme', 'Cedar'], ['t3', 'Birch', 'Acme'], ['t4', 'Cedar', 'Acme'], ['t5', 'Cedar', 'Birch']]) {
    tasks[n] = await createRecord(server, app, 'QTasks', {
      Name: n, AccountId: ptr('QAccounts', accounts[acc]), OwnerId: ptr('QAccounts', accounts[owner]),
    });
  }
});
after(stopAll);

const ALL_OPS = ['Alpha', 'Beta', 'Gamma', 'delta', 'Epsilon'];

// ---------------------------------------------------------------------------------------------
// §4.2 parameters

test('§4.2 where: URL-encoded JSON filter; an empty where returns every record', async () => {
  await expectNames('QOps', {}, ALL_OPS);
  await expectNames('QOps', { Name: 'Beta' }, ['Beta']);
  await expectNames('QOps', { Name: 'Nobody' }, []);
  const r = await find('QOps', { Name: 'Beta' });
  assert.equal(r.status, 200, r.text);
  const one = await request(server, 'GET', `/core/classes/QOps/${ops.Beta.objectId}`, { headers: M });
  assert.deepEqual(r.body, { results: [one.body] }, 'a where result is the full record, as GET returns it');
});

test('§4.2 where: several keys at one level combine with AND', async () => {
  await expectNames('QOps', { City: 'Oslo' }, ['Alpha', 'Gamma']);
  await expectNames('QOps', { City: 'Oslo', Score: { $gt: 10 } }, ['Gamma']);
  await expectNames('QOps', { City: 'Oslo', Name: 'Beta' }, []);
  await expectNames('QOps', { Score: { $gt: 10, $lt: 40 } }, ['Beta', 'Gamma']);
});

test('§4.2 where works with the API key as with the master key', async () => {
  const r = await find('QOps', { City: 'Oslo' }, 'order=Score', apiKeyHeaders(app));
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body.results.map((x) => x.Name), ['Alpha', 'Gamma']);
});

test('§2.2 a where on a class that does not exist answers 200 {"results":[]}', async () => {
  const r = await find('QNeverCreated', { Name: 'x' });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { results: [] });
});

test('§4.2 keys: projection; objectId, createdAt and updatedAt are always returned', async () => {
  const r = await find('QOps', { Name: 'Alpha' }, 'keys=Name');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, {
    results: [{ objectId: ops.Alpha.objectId, createdAt: ops.Alpha.createdAt, updatedAt: ops.Alpha.createdAt, Name: 'Alpha' }],
  });

  const two = await find('QOps', {}, 'keys=Score,City&order=Score');
  assert.equal(two.status, 200, two.text);
  assert.equal(two.body.results.length, 5);
  for (const row of two.body.results) {
    const expectedKeys = ['City', 'Score', 'createdAt', 'objectId', 'updatedAt'].filter((k) => k !== 'City' || row.Score !== 50);
    assert.deepEqual(Object.keys(row).sort(), expectedKeys, JSON.stringify(row));
  }
  assert.deepEqual(two.body.results.map((x) => x.City), ['Oslo', 'Paris', 'Oslo', 'Rome', undefined]);

  // Only the always-returned fields, and a field the class does not have (ignored).
  const bare = await find('QOps', { Name: 'Beta' }, 'keys=objectId');
  assert.equal(bare.status, 200, bare.text);
  assert.deepEqual(Object.keys(bare.body.results[0]).sort(), ['createdAt', 'objectId', 'updatedAt']);
  const unknown = await find('QOps', { Name: 'Beta' }, 'keys=NoSuchField,Name');
  assert.equal(unknown.status, 200, unknown.text);
  assert.deepEqual(Object.keys(unknown.body.results[0]).sort(), ['Name', 'createdAt', 'objectId', 'updatedAt']);
});

test('§4.2 include: a comma list expands several Pointer fields', async () => {
  const acme = (await request(server, 'GET', `/core/classes/QAccounts/${accounts.Acme}`, { headers: M })).body;
  const birch = (await request(server, 'GET', `/core/classes/QAccounts/${accounts.Birch}`, { headers: M })).body;
  const r = await find('QTasks', { Name: 't1' }, 'include=AccountId,OwnerId');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.results.length, 1);
  const t = r.body.results[0];
  assert.deepEqual(t.AccountId, { __type: 'Object', className: 'QAccounts', ...acme });
  assert.deepEqual(t.OwnerId, { __type: 'Object', className: 'QAccounts', ...birch });
  // Without include both stay Pointers.
  const plain = await find('QTasks', { Name: 't1' });
  assert.deepEqual(plain.body.results[0].AccountId, ptr('QAccounts', accounts.Acme));
  assert.deepEqual(plain.body.results[0].OwnerId, ptr('QAccounts', accounts.Birch));
});

test('§4.2 include: multi-level AccountId.StatusId expands both levels', async () => {
  const cedar = (await request(server, 'GET', `/core/classes/QAccounts/${accounts.Cedar}`, { headers: M })).body;
  const lost = (await request(server, 'GET', `/core/classes/QStatuses/${statuses.Lost}`, { headers: M })).body;
  const r = await find('QTasks', { Name: 't4' }, 'include=AccountId.StatusId');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.results.length, 1);
  assert.deepEqual(r.body.results[0].AccountId, {
    __type: 'Object', className: 'QAccounts', ...cedar,
    StatusId: { __type: 'Object', className: 'QStatuses', ...lost },
  });
  // OwnerId was not asked for.
  assert.deepEqual(r.body.results[0].OwnerId, ptr('QAccounts', accounts.Acme));
});

// Issue 23: Parse expands the Pointers of an Array field named by include, and `include=*` names
// every Pointer and Array field of the class (one level).
test('issue 23 §4.2 include of an Array of Pointers expands each, under the target\'s ACL and CLP; include=*', async () => {
  const tag = async (Name, extra = {}) => ptr('ITags', await createRecord(server, app, 'ITags', { Name, ...extra }));
  const red = await tag('red');
  const blue = await tag('blue');
  const secret = await tag('secret', { ACL: {} });
  const account = ptr('QAccounts', accounts.Acme);
  const note = await createRecord(server, app, 'INotes', {
    Name: 'n1', Tags: [red, blue, secret, ptr('ITags', 'missingid0'), 'plain', 7, account], Main: red, Account: account,
  });
  const acme = (await request(server, 'GET', `/core/classes/QAccounts/${accounts.Acme}`, { headers: M })).body;
  const full = async (p) => ({ __type: 'Object', className: p.className,
    ...(await request(server, 'GET', `/core/classes/${p.className}/${p.objectId}`, { headers: M })).body });
  const [redObj, blueObj, secretObj] = [await full(red), await full(blue), await full(secret)];
  const accountObj = { __type: 'Object', className: 'QAccounts', ...acme };

  const one = await find('INotes', { Name: 'n1' }, 'include=Tags');
  assert.equal(one.status, 200, one.text);
  assert.deepEqual(one.body.results[0].Tags, [redObj, blueObj, secretObj, ptr('ITags', 'missingid0'), 'plain', 7, accountObj]);
  assert.deepEqual(one.body.results[0].Main, red);  // not asked for
  const byId = await request(server, 'GET', `/core/classes/INotes/${note}?include=Tags`, { headers: M });
  assert.deepEqual(byId.body.Tags, one.body.results[0].Tags);
  // One level deeper through the array: the accounts' StatusId.
  const deep = await find('INotes', { Name: 'n1' }, 'include=Tags.StatusId');
  assert.equal(deep.body.results[0].Tags[6].StatusId.__type, 'Object');

  const all = await find('INotes', { Name: 'n1' }, 'include=*');
  assert.equal(all.status, 200, all.text);
  const n = all.body.results[0];
  assert.deepEqual(n.Tags, one.body.results[0].Tags);
  assert.deepEqual(n.Main, redObj);
  assert.deepEqual(n.Account, accountObj);
  assert.deepEqual(n.Account.StatusId, acme.StatusId);  // one level only
  const allById = await request(server, 'GET', `/core/classes/INotes/${note}?include=*`, { headers: M });
  assert.deepEqual(allById.body, n);
  expectError(await find('INotes', { Name: 'n1' }, 'include=Tags.*'), 400, invalidParam('include'));

  // A session sees only what it may read: the hidden tag stays a Pointer; a closed class, all of them.
  const username = `inc${Date.now()}@example.test`;
  const user = await request(server, 'POST', '/core/users', { headers: M, body: { username, password: 'Passw0rdX', email: username } });
  assert.equal(user.status, 201, user.text);
  const open = { '*': true };
  for (const cls of ['INotes', 'ITags']) {
    const r = await request(server, 'PUT', `/core/schemas/${cls}`, { headers: M, body: { classLevelPermissions: { find: open, get: open } } });
    assert.equal(r.status, 200, r.text);
  }
  const S = { 'X-Core-Application-Id': app.appId, 'X-Core-Session-Token': user.body.sessionToken };
  const seen = await find('INotes', { Name: 'n1' }, 'include=Tags', S);
  assert.equal(seen.status, 200, seen.text);
  assert.deepEqual(seen.body.results[0].Tags.slice(0, 4), [redObj, blueObj, secret, ptr('ITags', 'missingid0')]);
  const closed = await request(server, 'PUT', '/core/schemas/ITags', { headers: M, body: { classLevelPermissions: { get: {} } } });
  assert.equal(closed.status, 200, closed.text);
  const none = await find('INotes', { Name: 'n1' }, 'include=*', S);
  assert.deepEqual(none.body.results[0].Tags.slice(0, 3), [red, blue, secret]);
  assert.deepEqual(none.body.results[0].Main, red);
});

test('§4.2 keys: a dotted key AccountId.Name with include=AccountId limits the included object\'s fields', async () => {
  const acme = (await request(server, 'GET', `/core/classes/QAccounts/${accounts.Acme}`, { headers: M })).body;
  const r = await find('QTasks', { Name: 't2' }, 'keys=AccountId.Name&include=AccountId');
  assert.equal(r.status, 200, r.text);
  const t2 = (await request(server, 'GET', `/core/classes/QTasks/${tasks.t2}`, { headers: M })).body;
  assert.deepEqual(r.body, {
    results: [{
      objectId: tasks.t2,
      createdAt: t2.createdAt,
      updatedAt: t2.updatedAt,
      AccountId: {
        __type: 'Object', className: 'QAccounts',
        objectId: accounts.Acme, createdAt: acme.createdAt, updatedAt: acme.updatedAt, Name: 'Acme',
      },
    }],
  });

  // A plain key next to the dotted one; the included object still carries only Name and City.
  const r2 = await find('QTasks', { Name: 't2' }, 'keys=Name,AccountId.Name,AccountId.City&include=AccountId');
  assert.equal(r2.status, 200, r2.text);
  const row = r2.body.results[0];
  assert.deepEqual(Object.keys(row).sort(), ['AccountId', 'Name', 'createdAt', 'objectId', 'updatedAt']);
  assert.deepEqual(Object.keys(row.AccountId).sort(), ['City', 'Name', '__type', 'className', 'createdAt', 'objectId', 'updatedAt']);
  assert.equal(row.AccountId.City, 'Oslo');
});

test('§4.2 keys: a two-level dotted key limits the fields at the second include level', async () => {
  const r = await find('QTasks', { Name: 't3' }, 'keys=Name,AccountId.StatusId.Name&include=AccountId.StatusId');
  assert.equal(r.status, 200, r.text);
  const row = r.body.results[0];
  assert.deepEqual(Object.keys(row).sort(), ['AccountId', 'Name', 'createdAt', 'objectId', 'updatedAt']);
  assert.deepEqual(Object.keys(row.AccountId).sort(), ['StatusId', '__type', 'className', 'createdAt', 'objectId', 'updatedAt']);
  assert.equal(row.AccountId.objectId, accounts.Birch);
  assert.deepEqual(Object.keys(row.AccountId.StatusId).sort(), ['Name', '__type', 'className', 'createdAt', 'objectId', 'updatedAt']);
  assert.equal(row.AccountId.StatusId.Name, 'Lost');
  assert.equal(row.AccountId.StatusId.objectId, statuses.Lost);
});

test('§4.2 order: several fields, a leading - sorts descending', async () => {
  const rows = [['Oslo', 5, 'o5'], ['Oslo', 9, 'o9'], ['Bergen', 1, 'b1'], ['Paris', 9, 'p9'], ['Bergen', 7, 'b7'], ['Oslo', 1, 'o1']];
  await createSeq('QOrder', rows.map(([City, Score, Name]) => ({ City, Score, Name })));
  const order = async (q) => {
    const r = await list('QOrder', `?${q}`);
    assert.equal(r.status, 200, `${q}: ${r.text}`);
    return r.body.results.map((x) => x.Name);
  };
  assert.deepEqual(await order('order=City,-Score'), ['b7', 'b1', 'o9', 'o5', 'o1', 'p9']);
  assert.deepEqual(await order('order=-Score,City'), ['o9', 'p9', 'b7', 'o5', 'b1', 'o1']);
  assert.deepEqual(await order('order=-City,Score'), ['p9', 'o1', 'o5', 'o9', 'b1', 'b7']);
  assert.deepEqual(await order('order=Name'), ['b1', 'b7', 'o1', 'o5', 'o9', 'p9']);
  assert.deepEqual(await order('order=-Name'), ['p9', 'o9', 'o5', 'o1', 'b7', 'b1']);
  assert.deepEqual(await order('order=createdAt'), rows.map((x) => x[2]));
  assert.deepEqual(await order('order=-createdAt'), rows.map((x) => x[2]).reverse());
  assert.deepEqual(await order('order=City,-Score&skip=2&limit=3'), ['o9', 'o5', 'o1']);
  assert.deepEqual(await order(`${whereQ({ City: { $ne: 'Paris' } })}&order=-Score,Name&limit=4`), ['o9', 'b7', 'o5', 'b1']);
});

test('§4.2 limit and skip with a where; limit=0 returns no rows', async () => {
  const page = async (q) => {
    const r = await find('QOps', { Score: { $gte: 20 } }, q);
    assert.equal(r.status, 200, `${q}: ${r.text}`);
    assert.deepEqual(Object.keys(r.body), ['results'], q);
    return r.body.results.map((x) => x.Name);
  };
  assert.deepEqual(await page('order=Score'), ['Beta', 'Gamma', 'delta', 'Epsilon']);
  assert.deepEqual(await page('order=Score&limit=2'), ['Beta', 'Gamma']);
  assert.deepEqual(await page('order=Score&limit=2&skip=2'), ['delta', 'Epsilon']);
  assert.deepEqual(await page('order=Score&skip=3'), ['Epsilon']);
  assert.deepEqual(await page('order=Score&skip=4'), []);
  assert.deepEqual(await page('limit=0'), []);
});

test('§4.2 count=1 adds the total of the where, independent of limit and skip; count=0 adds nothing', async () => {
  const r = await find('QOps', { Score: { $gte: 20 } }, 'count=1&limit=2&order=Score');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(Object.keys(r.body).sort(), ['count', 'results']);
  assert.equal(r.body.count, 4);
  assert.deepEqual(r.body.results.map((x) => x.Name), ['Beta', 'Gamma']);

  const skipped = await find('QOps', { Score: { $gte: 20 } }, 'count=1&skip=3');
  assert.equal(skipped.status, 200, skipped.text);
  assert.equal(skipped.body.count, 4);
  assert.equal(skipped.body.results.length, 1);

  const only = await find('QOps', { City: 'Oslo' }, 'count=1&limit=0');
  assert.equal(only.status, 200, only.text);
  assert.deepEqual(only.body, { results: [], count: 2 });

  const none = await find('QOps', { City: 'Nowhere' }, 'count=1');
  assert.equal(none.status, 200, none.text);
  assert.deepEqual(none.body, { results: [], count: 0 });

  const zero = await find('QOps', { City: 'Oslo' }, 'count=0');
  assert.equal(zero.status, 200, zero.text);
  assert.deepEqual(Object.keys(zero.body), ['results']);
  assert.equal(zero.body.results.length, 2);
});

test('§4.2 unsupported parameters distinct, readPreference, match answer 400 102 Invalid parameter for query: <name>', async () => {
  for (const [name, value] of [['distinct', 'Name'], ['readPreference', 'PRIMARY'], ['match', '%7B%7D'], ['bogus', '1']]) {
    const alone = await list('QOps', `?${name}=${value}`);
    expectError(alone, 400, invalidParam(name), name);
    const withWhere = await find('QOps', { Name: 'Alpha' }, `${name}=${value}`);
    expectError(withWhere, 400, invalidParam(name), `${name} with where`);
  }
});

// ---------------------------------------------------------------------------------------------
// §4.3 operators

test('§4.3 bare value equals (String, Number, Boolean)', async () => {
  await expectNames('QOps', { Name: 'Gamma' }, ['Gamma']);
  await expectNames('QOps', { Name: 'gamma' }, []);
  await expectNames('QOps', { Score: 40 }, ['delta']);
  await expectNames('QOps', { Active: true }, ['Alpha', 'Gamma']);
  await expectNames('QOps', { Active: false }, ['Beta', 'delta']);
});

test('§4.3 $lt, $lte, $gt, $gte on a Number field', async () => {
  await expectNames('QOps', { Score: { $lt: 30 } }, ['Alpha', 'Beta']);
  await expectNames('QOps', { Score: { $lte: 30 } }, ['Alpha', 'Beta', 'Gamma']);
  await expectNames('QOps', { Score: { $gt: 30 } }, ['delta', 'Epsilon']);
  await expectNames('QOps', { Score: { $gte: 30 } }, ['Gamma', 'delta', 'Epsilon']);
  await expectNames('QOps', { Score: { $gt: 25.5, $lte: 40 } }, ['Gamma', 'delta']);
  await expectNames('QOps', { Score: { $gt: 50 } }, []);
});

test('§4.3 $lt and $gte on a String field compare strings', async () => {
  await expectNames('QOps', { Name: { $lt: 'C' } }, ['Alpha', 'Beta']);
  await expectNames('QOps', { City: { $gte: 'P' } }, ['Beta', 'delta']);
});

test('§4.3 $ne: not equal; records lacking the field match (Parse)', async () => {
  await expectNames('QOps', { City: { $ne: 'Oslo' } }, ['Beta', 'delta', 'Epsilon']);
  await expectNames('QOps', { Score: { $ne: 10 } }, ['Beta', 'Gamma', 'delta', 'Epsilon']);
  await expectNames('QOps', { Active: { $ne: true } }, ['Beta', 'delta', 'Epsilon']);
});

test('§4.3 $in and $nin; $nin matches records lacking the field (Parse on MongoDB)', async () => {
  await expectNames('QOps', { Score: { $in: [10, 30, 99] } }, ['Alpha', 'Gamma']);
  await expectNames('QOps', { City: { $in: ['Paris', 'Rome'] } }, ['Beta', 'delta']);
  await expectNames('QOps', { City: { $in: [] } }, []);
  await expectNames('QOps', { City: { $nin: ['Oslo', 'Paris'] } }, ['delta', 'Epsilon']);
  await expectNames('QOps', { Score: { $nin: [10, 20] } }, ['Gamma', 'delta', 'Epsilon']);
});

test('§4.3 $exists on a field some records lack', async () => {
  await expectNames('QOps', { City: { $exists: true } }, ['Alpha', 'Beta', 'Gamma', 'delta']);
  await expectNames('QOps', { City: { $exists: false } }, ['Epsilon']);
  await expectNames('QOps', { Due: { $exists: false } }, ['Epsilon']);
});

test('§4.3 $exists: a field explicitly set to null counts as present; "" matches neither true nor false', async () => {
  // The String field is declared by the first record; null is stored explicitly afterwards.
  await createSeq('QExists', [
    { Name: 'set', F: 'x' },
    { Name: 'null', F: null },
    { Name: 'empty', F: '' },
    { Name: 'absent' },
  ]);
  const nullRec = (await find('QExists', { Name: 'null' })).body.results[0];
  assert.ok('F' in nullRec && nullRec.F === null, `the null record carries "F": null: ${JSON.stringify(nullRec)}`);

  await expectNames('QExists', { F: { $exists: true } }, ['set', 'null']);
  await expectNames('QExists', { F: { $exists: false } }, ['absent']);
  await expectNames('QExists', { F: '' }, ['empty']);
  await expectNames('QExists', { F: 'x' }, ['set']);
});

test('§4.3 $exists: {"$in":[null,""]} finds the null and the "" records (and records lacking the field)', async () => {
  await expectNames('QExists', { F: { $in: [null, ''] } }, ['null', 'empty', 'absent']);
  await expectNames('QExists', { F: { $in: [''] } }, ['empty']);
});

test('§4.3 null in equality, $eq, $ne and $nin follows Parse/Mongo: null matches null and absent', async () => {
  await expectNames('QExists', { F: null }, ['null', 'absent']);
  await expectNames('QExists', { F: { $eq: null } }, ['null', 'absent']);
  await expectNames('QExists', { F: { $ne: null } }, ['set', 'empty']);
  await expectNames('QExists', { F: { $nin: [null] } }, ['set', 'empty']);
  await expectNames('QExists', { F: { $ne: '' } }, ['set', 'null', 'absent']);
});

test('§4.3 $regex, with $options "i"', async () => {
  await expectNames('QOps', { Name: { $regex: '^[A-G]' } }, ['Alpha', 'Beta', 'Epsilon', 'Gamma']);
  await expectNames('QOps', { Name: { $regex: 'ta$' } }, ['Beta', 'delta']);
  await expectNames('QOps', { Name: { $regex: '^D' } }, []);
  await expectNames('QOps', { Name: { $regex: '^D', $options: 'i' } }, ['delta']);
  await expectNames('QOps', { Name: { $regex: 'MM', $options: 'i' } }, ['Gamma']);
  await expectNames('QOps', { City: { $regex: '^o' , $options: 'i' } }, ['Alpha', 'Gamma']);
  await expectNames('QOps', { Name: { $regex: 'a.p' } }, []);
  await expectNames('QOps', { Name: { $regex: 'lph' } }, ['Alpha']);
});

test('issue 23 §4.3 $options takes Parse\'s flags i, m, s and x; any other answers 102, on any class', async () => {
  await expectNames('QOps', { Name: { $regex: 'l p h # the first', $options: 'x' } }, ['Alpha']);
  await expectNames('QOps', { Name: { $regex: 'AL PHA', $options: 'xi' } }, ['Alpha']);
  await expectNames('QOps', { Name: { $regex: '^[ ]', $options: 'x' } }, []);  // a space in a class stays
  await expectNames('QOps', { Name: { $regex: 'a\\ ', $options: 'x' } }, []);  // so does an escaped one
  await expectNames('QOps', { Name: { $regex: '^d.l', $options: 'ims' } }, ['delta']);
  for (const cls of ['QOps', 'QNeverCreated']) {
    for (const options of ['some invalid thing', 'u', 'ig']) {
      const r = await find(cls, { Name: { $regex: 'FootBall', $options: options } });
      expectError(r, 400, { code: 102, error: `Bad $options value for query: ${options}` }, `${cls} ${options}`);
    }
  }
  // The rest of a where on a class that does not exist is checked as well.
  expectError(await find('QNeverCreated', { Name: { $bogus: 1 } }), 400, badConstraint('$bogus'));
});

test('§4.3 $regex runs on RE2: (a+)+$ against 30,000 a\'s and ! answers 200', async () => {
  await createRecord(server, app, 'QRegex', { Name: `${'a'.repeat(30_000)}!` });
  await createRecord(server, app, 'QRegex', { Name: 'aaa' });
  await createRecord(server, app, 'QRegex', { Name: 'bbb' });
  const r = await find('QRegex', { Name: { $regex: '(a+)+$' } });
  assert.equal(r.status, 200, r.text.slice(0, 300));
  assert.deepEqual(r.body.results.map((x) => x.Name), ['aaa']);
  const r2 = await find('QRegex', { Name: { $regex: '^(a|aa)+$' } });
  assert.equal(r2.status, 200, r2.text.slice(0, 300));
  assert.deepEqual(r2.body.results.map((x) => x.Name), ['aaa']);
});

test('§4.3 array field: bare equality with a scalar matches arrays containing it; $all needs all', async () => {
  await expectNames('QOps', { Tags: 'b' }, ['Alpha', 'Beta', 'Epsilon']);
  await expectNames('QOps', { Tags: 'd' }, ['Epsilon']);
  await expectNames('QOps', { Tags: 'z' }, []);
  await expectNames('QOps', { Tags: { $all: ['b', 'c'] } }, ['Beta', 'Epsilon']);
  await expectNames('QOps', { Tags: { $all: ['a'] } }, ['Alpha', 'Epsilon']);
  await expectNames('QOps', { Tags: { $all: ['a', 'b', 'c', 'd'] } }, ['Epsilon']);
  await expectNames('QOps', { Tags: { $all: ['a', 'z'] } }, []);
});

test('§4.3 $containedBy: every element of the array is in the list', async () => {
  await expectNames('QOps', { Tags: { $containedBy: ['a', 'b', 'c'] } }, ['Alpha', 'Beta', 'Gamma', 'delta']);
  await expectNames('QOps', { Tags: { $containedBy: ['c'] } }, ['Gamma', 'delta']);
  await expectNames('QOps', { Tags: { $containedBy: [] } }, ['delta']);
});

test('§4.3 $eq', async () => {
  await expectNames('QOps', { Score: { $eq: 20 } }, ['Beta']);
  await expectNames('QOps', { City: { $eq: 'Oslo' } }, ['Alpha', 'Gamma']);
  await expectNames('QOps', { Active: { $eq: false } }, ['Beta', 'delta']);
});

test('§4.3 $and, $nor and top-level $or', async () => {
  await expectNames('QOps', { $and: [{ Score: { $gt: 10 } }, { City: 'Oslo' }] }, ['Gamma']);
  await expectNames('QOps', { $and: [{ Score: { $gte: 20 } }, { Score: { $lte: 40 } }] }, ['Beta', 'Gamma', 'delta']);
  await expectNames('QOps', { $or: [{ City: 'Paris' }, { Score: { $gte: 40 } }] }, ['Beta', 'delta', 'Epsilon']);
  await expectNames('QOps', { $or: [{ Name: 'Alpha' }, { Name: 'Alpha' }] }, ['Alpha']);
  await expectNames('QOps', { $or: [{ City: 'Oslo' }], Score: { $gt: 10 } }, ['Gamma']);
  await expectNames('QOps', { $nor: [{ City: 'Oslo' }, { Score: { $gt: 35 } }] }, ['Beta']);
  await expectNames('QOps', { $nor: [{ Name: 'Nobody' }] }, ALL_OPS);
});

test('§4.3 $inQuery and $notInQuery on a Pointer field', async () => {
  const inOslo = { className: 'QAccounts', where: { City: 'Oslo' } };
  await expectNames('QTasks', { AccountId: { $inQuery: inOslo } }, ['t1', 't2', 't4', 't5']);
  await expectNames('QTasks', { AccountId: { $notInQuery: inOslo } }, ['t3']);
  await expectNames('QTasks', { OwnerId: { $inQuery: { className: 'QAccounts', where: { Name: 'Acme' } } } }, ['t3', 't4']);
  await expectNames('QTasks', { AccountId: { $inQuery: { className: 'QAccounts', where: { City: 'Nowhere' } } } }, []);
  await expectNames('QTasks', { AccountId: { $notInQuery: { className: 'QAccounts', where: { City: 'Nowhere' } } } }, ['t1', 't2', 't3', 't4', 't5']);
  // A nested sub-query: tasks of accounts whose status is Lost.
  await expectNames('QTasks', {
    AccountId: { $inQuery: { className: 'QAccounts', where: { StatusId: { $inQuery: { className: 'QStatuses', where: { Name: 'Lost' } } } } } },
  }, ['t3', 't4', 't5']);
  // Combined with another constraint.
  await expectNames('QTasks', { AccountId: { $inQuery: inOslo }, OwnerId: ptr('QAccounts', accounts.Birch) }, ['t1', 't5']);
});

test('§4.3 $select and $dontSelect compare a scalar field to a key of a sub-query (Parse\'s shape)', async () => {
  for (const [Name, Country] of [['Oslo', 'NO'], ['Bergen', 'NO'], ['Paris', 'FR']]) {
    await createRecord(server, app, 'QCities', { Name, Country });
  }
  for (const [Name, City] of [['a1', 'Oslo'], ['a2', 'Bergen'], ['a3', 'Paris'], ['a4', 'Rome']]) {
    await createRecord(server, app, 'QSelAccounts', { Name, City });
  }
  const norway = { query: { className: 'QCities', where: { Country: 'NO' } }, key: 'Name' };
  await expectNames('QSelAccounts', { City: { $select: norway } }, ['a1', 'a2']);
  await expectNames('QSelAccounts', { City: { $dontSelect: norway } }, ['a3', 'a4']);
  const all = { query: { className: 'QCities', where: {} }, key: 'Name' };
  await expectNames('QSelAccounts', { City: { $select: all } }, ['a1', 'a2', 'a3']);
  await expectNames('QSelAccounts', { City: { $dontSelect: all } }, ['a4']);
  const none = { query: { className: 'QCities', where: { Country: 'XX' } }, key: 'Name' };
  await expectNames('QSelAccounts', { City: { $select: none } }, []);
  await expectNames('QSelAccounts', { City: { $select: norway }, Name: 'a2' }, ['a2']);
});

test('§4.3 $text without a text index answers 500 {"code":1,"message":"Internal server error."}', async () => {
  await createRecord(server, app, 'QNoText', { Name: 'a word here' });
  const r = await find('QNoText', { Name: { $text: { $search: { $term: 'word' } } } });
  expectError(r, 500, INTERNAL, '$text without index');
});

test('§4.3 $text: a text index declared with PUT /core/schemas finds word matches, case-insensitive, old records included', async () => {
  // Created before the index exists.
  await createSeq('QText', [{ Name: 'A WORD apart', City: 'word' }, { Name: 'swordfish' }]);
  const before = await find('QText', { Name: { $text: { $search: { $term: 'word' } } } });
  expectError(before, 500, INTERNAL, '$text before the index');

  const idx = await request(server, 'PUT', '/core/schemas/QText', { headers: M, body: { indexes: { name_text: { Name: 'text' } } } });
  assert.equal(idx.status, 200, idx.text);

  await createSeq('QText', [{ Name: 'word' }, { Name: 'the word.' }, { Name: 'nothing here' }, { Name: 'Wordy' }, { Name: 'Word' }]);
  await expectNames('QText', { Name: { $text: { $search: { $term: 'word' } } } }, ['A WORD apart', 'word', 'the word.', 'Word']);
  await expectNames('QText', { Name: { $text: { $search: { $term: 'WORD' } } } }, ['A WORD apart', 'word', 'the word.', 'Word']);
  await expectNames('QText', { Name: { $text: { $search: { $term: 'apart' } } } }, ['A WORD apart']);
  await expectNames('QText', { Name: { $text: { $search: { $term: 'zebra' } } } }, []);
  // With another constraint.
  await expectNames('QText', { Name: { $text: { $search: { $term: 'word' } } }, City: 'word' }, ['A WORD apart']);
  // The index covers Name only: City still has none.
  const city = await find('QText', { City: { $text: { $search: { $term: 'word' } } } });
  expectError(city, 500, INTERNAL, '$text on a field without an index');
});

test('§4.3 $text with a string $search answers 400 102 bad $text: $search, should be object', async () => {
  await createRecord(server, app, 'QText2', { Name: 'word' });
  const idx = await request(server, 'PUT', '/core/schemas/QText2', { headers: M, body: { indexes: { name_text: { Name: 'text' } } } });
  assert.equal(idx.status, 200, idx.text);
  const r = await find('QText2', { Name: { $text: { $search: 'word' } } });
  expectError(r, 400, { code: 102, error: 'bad $text: $search, should be object' }, 'string $search');
});

test('§4.3 $text: terms with FTS query syntax (quotes, NEAR, *, parentheses, -) are words, never an error', async () => {
  await createSeq('QText4', [{ Name: 'big word here' }, { Name: 'x*y' }, { Name: 'nothing' }]);
  const idx = await request(server, 'PUT', '/core/schemas/QText4', { headers: M, body: { indexes: { name_text: { Name: 'text' } } } });
  assert.equal(idx.status, 200, idx.text);
  for (const term of ['word"', '"word', 'NEAR(word big)', 'wo*', '*', '(', ')', '-word', 'AND', 'OR', 'NOT word', 'Name:word', '^word', "word'; DROP TABLE QText4; --", '']) {
    const r = await find('QText4', { Name: { $text: { $search: { $term: term } } } });
    assert.equal(r.status, 200, `$term ${JSON.stringify(term)}: ${r.text}`);
    assert.ok(Array.isArray(r.body.results), `$term ${JSON.stringify(term)}`);
  }
  assert.equal((await listAll(server, app, 'QText4')).length, 3);
});

test('§4.3 $text in a class that declares a field named rowid: matches, updates and deletes follow the records, not that field', async () => {
  // The field's values are other rows' row numbers: an index keyed on it would find the wrong rows.
  const ids = await createSeq('QTextRowid', [{ rowid: 3, Name: 'alpha word' }, { rowid: 1, Name: 'beta' }, { rowid: 2, Name: 'gamma word' }]);
  const idx = await request(server, 'PUT', '/core/schemas/QTextRowid', { headers: M, body: { indexes: { name_text: { Name: 'text' } } } });
  assert.equal(idx.status, 200, idx.text);
  const term = { Name: { $text: { $search: { $term: 'word' } } } };
  await expectNames('QTextRowid', term, ['alpha word', 'gamma word']);
  const u = await request(server, 'PUT', `/core/classes/QTextRowid/${ids[1].objectId}`, { headers: M, body: { Name: 'beta word', rowid: 7 } });
  assert.equal(u.status, 200, u.text);
  const d = await request(server, 'DELETE', `/core/classes/QTextRowid/${ids[0].objectId}`, { headers: M });
  assert.equal(d.status, 200, d.text);
  await createSeq('QTextRowid', [{ rowid: 2, Name: 'delta word' }]);
  await expectNames('QTextRowid', term, ['beta word', 'gamma word', 'delta word']);
});

test('§4.3 $text follows updates and deletes of indexed records', async () => {
  const ids = await createSeq('QText3', [{ Name: 'plain' }, { Name: 'orange word' }, { Name: 'another word' }]);
  const idx = await request(server, 'PUT', '/core/schemas/QText3', { headers: M, body: { indexes: { name_text: { Name: 'text' } } } });
  assert.equal(idx.status, 200, idx.text);
  const term = { Name: { $text: { $search: { $term: 'word' } } } };
  await expectNames('QText3', term, ['orange word', 'another word']);
  const u1 = await request(server, 'PUT', `/core/classes/QText3/${ids[0].objectId}`, { headers: M, body: { Name: 'now a word' } });
  assert.equal(u1.status, 200, u1.text);
  const u2 = await request(server, 'PUT', `/core/classes/QText3/${ids[1].objectId}`, { headers: M, body: { Name: 'orange' } });
  assert.equal(u2.status, 200, u2.text);
  const d = await request(server, 'DELETE', `/core/classes/QText3/${ids[2].objectId}`, { headers: M });
  assert.equal(d.status, 200, d.text);
  await expectNames('QText3', term, ['now a word']);
  await expectNames('QText3', { Name: { $text: { $search: { $term: 'orange' } } } }, ['orange']);
  const u3 = await request(server, 'PUT', `/core/classes/QText3/${ids[0].objectId}`, { headers: M, body: { Name: { __op: 'Delete' } } });
  assert.equal(u3.status, 200, u3.text);
  await expectNames('QText3', term, []);
});

// ---------------------------------------------------------------------------------------------
// §2.2 / §4.3 Pointer and Date wire formats in where

test('§4.3 a Pointer filter takes the full Pointer object; a bare id string matches nothing (200 empty)', async () => {
  await expectNames('QTasks', { AccountId: ptr('QAccounts', accounts.Cedar) }, ['t4', 't5']);
  await expectNames('QTasks', { AccountId: ptr('QAccounts', 'NoSuchId01') }, []);
  await expectNames('QTasks', { AccountId: { $in: [ptr('QAccounts', accounts.Acme), ptr('QAccounts', accounts.Birch)] } }, ['t1', 't2', 't3']);
  await expectNames('QTasks', { AccountId: { $ne: ptr('QAccounts', accounts.Acme) } }, ['t3', 't4', 't5']);
  await expectNames('QTasks', { AccountId: { $exists: true } }, ['t1', 't2', 't3', 't4', 't5']);
  const bare = await find('QTasks', { AccountId: accounts.Cedar });
  assert.equal(bare.status, 200, bare.text);
  assert.deepEqual(bare.body, { results: [] });
  const bareIn = await find('QTasks', { AccountId: { $in: [accounts.Cedar] } });
  assert.equal(bareIn.status, 200, bareIn.text);
  assert.deepEqual(bareIn.body, { results: [] });
});

test('§2.2 a Date filter takes the Date object; a flat ISO string matches nothing', async () => {
  await expectNames('QOps', { Due: { $lt: date('2025-01-01T00:00:00.000Z') } }, ['Alpha', 'Beta']);
  await expectNames('QOps', { Due: { $gte: date('2025-01-01T00:00:00.000Z') } }, ['Gamma', 'delta']);
  await expectNames('QOps', { Due: date('2024-06-01T00:00:00.000Z') }, ['Beta']);
  await expectNames('QOps', { Due: { $gt: date('2024-01-01T00:00:00.000Z'), $lte: date('2025-01-01T00:00:00.000Z') } }, ['Beta', 'Gamma']);
  await expectNames('QOps', { Due: { $in: [date('2024-06-01T00:00:00.000Z'), date('2025-06-01T00:00:00.000Z')] } }, ['Beta', 'delta']);
  await expectNames('QOps', { Due: { $ne: date('2024-06-01T00:00:00.000Z') } }, ['Alpha', 'Gamma', 'delta', 'Epsilon']);
  for (const where of [
    { Due: '2024-06-01T00:00:00.000Z' },
    { Due: { $lt: '2025-01-01T00:00:00.000Z' } },
    { Due: { $gte: '2000-01-01T00:00:00.000Z' } },
  ]) {
    const r = await find('QOps', where);
    assert.equal(r.status, 200, `${JSON.stringify(where)}: ${r.text}`);
    assert.deepEqual(r.body, { results: [] }, JSON.stringify(where));
  }
});

test('§2.2 createdAt and updatedAt filters take the Date object too; a flat string matches nothing', async () => {
  await expectNames('QOps', { createdAt: date(ops.Beta.createdAt) }, ['Beta']);
  await expectNames('QOps', { createdAt: { $gt: date(ops.Gamma.createdAt) } }, ['delta', 'Epsilon']);
  await expectNames('QOps', { createdAt: { $lte: date(ops.Beta.createdAt) } }, ['Alpha', 'Beta']);
  await expectNames('QOps', { updatedAt: { $gte: date(ops.Alpha.createdAt) } }, ALL_OPS);
  await expectNames('QOps', { updatedAt: { $lt: date('2000-01-01T00:00:00.000Z') } }, []);
  for (const where of [
    { createdAt: ops.Beta.createdAt },
    { createdAt: { $gt: '2000-01-01T00:00:00.000Z' } },
    { updatedAt: { $lte: new Date(Date.now() + 3_600_000).toISOString() } },
  ]) {
    const r = await find('QOps', where);
    assert.equal(r.status, 200, `${JSON.stringify(where)}: ${r.text}`);
    assert.deepEqual(r.body, { results: [] }, JSON.stringify(where));
  }
});

test('§4.3 objectId filters: equality, $in, $gt', async () => {
  await expectNames('QOps', { objectId: ops.Gamma.objectId }, ['Gamma']);
  await expectNames('QOps', { objectId: { $in: [ops.Alpha.objectId, ops.delta.objectId, 'NoSuchId01'] } }, ['Alpha', 'delta']);
  const ids = ALL_OPS.map((n) => [ops[n].objectId, n]).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  await expectNames('QOps', { objectId: { $gt: ids[2][0] } }, [ids[3][1], ids[4][1]]);
});

// ---------------------------------------------------------------------------------------------
// crmd's decisions (issue 3)

test('§4.2 count agrees with the rows returned for every kind of constraint', async () => {
  const cases = [
    ['QOps', {}], ['QOps', { City: 'Oslo' }], ['QOps', { Score: { $gte: 20, $lt: 50 } }], ['QOps', { City: { $ne: 'Oslo' } }],
    ['QOps', { City: { $nin: ['Oslo'] } }], ['QOps', { City: { $exists: false } }], ['QOps', { Name: { $regex: 'a$', $options: 'i' } }],
    ['QOps', { Tags: 'b' }], ['QOps', { Tags: { $all: ['b', 'c'] } }], ['QOps', { Tags: { $containedBy: ['a', 'b', 'c'] } }],
    ['QOps', { $or: [{ City: 'Paris' }, { Score: { $gte: 40 } }] }], ['QOps', { $nor: [{ City: 'Oslo' }] }],
    ['QOps', { Due: { $lt: date('2025-01-01T00:00:00.000Z') } }], ['QOps', { NoSuchField: { $exists: false } }],
    ['QTasks', { AccountId: { $inQuery: { className: 'QAccounts', where: { City: 'Oslo' } } } }],
    ['QTasks', { AccountId: { $notInQuery: { className: 'QAccounts', where: { City: 'Oslo' } } } }],
    ['QTasks', { AccountId: ptr('QAccounts', accounts.Cedar) }],
  ];
  for (const [cls, where] of cases) {
    const r = await find(cls, where, 'count=1&limit=1000');
    assert.equal(r.status, 200, `${JSON.stringify(where)}: ${r.text}`);
    assert.equal(r.body.count, r.body.results.length, `count of ${JSON.stringify(where)}`);
    const only = await find(cls, where, 'count=1&limit=0');
    assert.deepEqual(only.body, { results: [], count: r.body.results.length }, `count-only ${JSON.stringify(where)}`);
  }
});

test('§4.3 (decision) a comparison against a value of the wrong type matches nothing: 200 empty', async () => {
  for (const where of [
    { Score: { $gt: '5' } },
    { Score: { $lt: '99' } },
    { Score: '10' },
    { Score: { $in: ['10', '20'] } },
    { Active: 'true' },
    { Name: { $gt: 5 } },
    { Due: { $gt: 5 } },
    { AccountId: 5 },
  ]) {
    const cls = 'AccountId' in where ? 'QTasks' : 'QOps';
    const r = await find(cls, where);
    assert.equal(r.status, 200, `${JSON.stringify(where)}: ${r.text}`);
    assert.deepEqual(r.body, { results: [] }, JSON.stringify(where));
  }
});

test('§4.3 (decision) $regex on a non-String field answers 400 102', async () => {
  for (const [cls, where] of [
    ['QOps', { Score: { $regex: '^1' } }],
    ['QOps', { Active: { $regex: 'true' } }],
    ['QOps', { Due: { $regex: '2024' } }],
    ['QTasks', { AccountId: { $regex: 'a' } }],
  ]) {
    const r = await find(cls, where);
    assert.equal(r.status, 400, `${JSON.stringify(where)}: ${r.text}`);
    assert.equal(r.body.code, 102, `${JSON.stringify(where)}: ${r.text}`);
    assert.equal(typeof r.body.error, 'string');
    assert.deepEqual(Object.keys(r.body).sort(), ['code', 'error']);
  }
});

test('§4.3 (decision) a field the class does not have behaves as absent everywhere', async () => {
  await expectNames('QOps', { NoSuchField: 'x' }, []);
  await expectNames('QOps', { NoSuchField: 5 }, []);
  await expectNames('QOps', { NoSuchField: { $exists: false } }, ALL_OPS);
  await expectNames('QOps', { NoSuchField: { $exists: true } }, []);
  await expectNames('QOps', { NoSuchField: { $ne: 'x' } }, ALL_OPS);
  await expectNames('QOps', { NoSuchField: { $in: ['x', 'y'] } }, []);
  await expectNames('QOps', { NoSuchField: { $gt: 1 } }, []);
  await expectNames('QOps', { NoSuchField: { $exists: false }, City: 'Oslo' }, ['Alpha', 'Gamma']);
});

// ---------------------------------------------------------------------------------------------
// §4.3 / §7 constraint errors

test('§4.3 $or below the top level answers 400 {"code":107,"error":"bad constraint: $or"}', async () => {
  for (const where of [
    { Name: { $or: [{ $eq: 'Alpha' }, { $eq: 'Beta' }] } },
    { Name: { $or: ['Alpha', 'Beta'] } },
    { Score: { $gt: 1, $or: [{ $lt: 5 }] } },
  ]) {
    expectError(await find('QOps', where), 400, badConstraint('$or'), JSON.stringify(where));
  }
});

test('§4.3 an unknown field operator $foo answers 400 {"code":107,"error":"bad constraint: $foo"}', async () => {
  expectError(await find('QOps', { Name: { $foo: 1 } }), 400, badConstraint('$foo'), '$foo');
  expectError(await find('QOps', { Name: { $exists: true, $bar: 'x' } }), 400, badConstraint('$bar'), '$bar');
  expectError(await find('QOps', { Score: { $where: 'sleep(1000)' } }), 400, badConstraint('$where'), '$where');
});

test('§7 malformed operator values and a where that is not an object answer 400 with a code, never 500', async () => {
  for (const where of [
    '{"Score":{"$in":5}}', '{"City":{"$nin":"Oslo"}}', '{"City":{"$exists":"yes"}}', '{"Tags":{"$all":"a"}}',
    '{"Tags":{"$containedBy":"a"}}', '{"Name":{"$regex":"("}}', '{"Name":{"$regex":5}}',
    '{"Name":{"$regex":"a","$options":"q"}}', '{"$or":{}}', '{"$and":5}', '{"$nor":"x"}', '{"$foo":1}',
    '{"Name":{"$inQuery":{"where":{}}}}', '{"Name":{"$select":{"key":"Name"}}}',
    '[1]', '5', '"x"', 'null', 'true',
  ]) {
    const r = await find('QOps', where);
    assert.equal(r.status, 400, `${where}: ${r.text}`);
    assert.equal(typeof r.body.code, 'number', `${where}: ${r.text}`);
    assert.equal(typeof r.body.error, 'string', `${where}: ${r.text}`);
  }
  await assertHealthy(server);
});

// ---------------------------------------------------------------------------------------------
// §4.2 encoding of where (raw bytes)

test('§4.2 a where that is not valid JSON answers 500 {"code":1,"message":"Internal server error."}', async () => {
  for (const text of ['{"Name":', 'notjson', '{Name:"Alpha"}', "{'Name':'Alpha'}", '{"Name":"Alpha"}}']) {
    expectError(await find('QOps', text), 500, INTERNAL, text);
  }
  const raw = await rawGet(`/core/classes/QOps?where=${encodeURIComponent('{"Name":"Alp')}`);
  expectError(raw, 500, INTERNAL, 'raw invalid where');
});

test('§4.2 an unencoded + in a where value is a space: a+b finds "a b", not "a+b"', async () => {
  await createRecord(server, app, 'QPlus', { Name: 'a b' });
  await createRecord(server, app, 'QPlus', { Name: 'a+b' });
  const literalPlus = await rawGet(`/core/classes/QPlus?where=${encodeURIComponent('{"Name":"a')}+${encodeURIComponent('b"}')}`);
  assert.equal(literalPlus.status, 200, literalPlus.text);
  assert.deepEqual(literalPlus.body.results.map((x) => x.Name), ['a b']);
  const encodedPlus = await rawGet(`/core/classes/QPlus?where=${encodeURIComponent('{"Name":"a+b"}')}`);
  assert.equal(encodedPlus.status, 200, encodedPlus.text);
  assert.deepEqual(encodedPlus.body.results.map((x) => x.Name), ['a+b']);
  // The usual case: a + where the client meant a plus sign matches nothing.
  await createRecord(server, app, 'QPlus', { Name: '+972' });
  const phone = await rawGet(`/core/classes/QPlus?where=${encodeURIComponent('{"Name":"')}+972${encodeURIComponent('"}')}`);
  assert.equal(phone.status, 200, phone.text);
  assert.deepEqual(phone.body, { results: [] });
});

test('§4.2 an unencoded & inside the where value answers 400 102', async () => {
  await createRecord(server, app, 'QAmp', { Name: 'R&D' });
  const r = await rawGet(`/core/classes/QAmp?where=${encodeURIComponent('{"Name":"R')}&${encodeURIComponent('D"}')}`);
  expectError(r, 400, invalidParam('D"}'), 'unencoded &');
  const ok = await rawGet(`/core/classes/QAmp?where=${encodeURIComponent('{"Name":"R&D"}')}`);
  assert.equal(ok.status, 200, ok.text);
  assert.deepEqual(ok.body.results.map((x) => x.Name), ['R&D']);
});

test('§4.2 an unencoded # in the where value answers 500 code 1', async () => {
  await createRecord(server, app, 'QHash', { Name: 'No#1' });
  const r = await rawGet(`/core/classes/QHash?where=${encodeURIComponent('{"Name":"No')}#${encodeURIComponent('1"}')}`);
  expectError(r, 500, INTERNAL, 'unencoded #');
  const ok = await rawGet(`/core/classes/QHash?where=${encodeURIComponent('{"Name":"No#1"}')}`);
  assert.equal(ok.status, 200, ok.text);
  assert.deepEqual(ok.body.results.map((x) => x.Name), ['No#1']);
});

// ---------------------------------------------------------------------------------------------
// Hostile where, keys and order

// A where URL-encoded as §4.2 asks; `$`, `:` and `,` may stay as they are (RFC 3986 query characters).
const encodeWhere = (text) => encodeURIComponent(text).replaceAll('%24', '$').replaceAll('%3A', ':').replaceAll('%2C', ',');
// crmd's header block limit (COMPATIBILITY §8) also bounds the request line.
const HEADER_LIMIT = 16 * 1024;

test('SECURITY exhaustion: where nesting 1,000 deep answers 4xx with a code, never 500', async () => {
  // 1,000 nested arrays in a value (6 bytes a level encoded) fit in a request line under the header
  // limit, so the where parser (not the header limit) is what answers.
  const arrays = `{"Tags":${'['.repeat(1000)}"a"${']'.repeat(1000)}}`;
  const inArrays = `{"Tags":{"$in":${'['.repeat(1000)}"a"${']'.repeat(1000)}}}`;
  let obj = '1';
  for (let i = 0; i < 600; i++) obj = `{"a":${obj}}`;
  obj = `{"Meta":${obj}}`;
  // Operator nesting costs 24 bytes a level encoded: 600 levels is what a request line carries.
  let and = '{"N":1}';
  for (let i = 0; i < 600; i++) and = `{"$and":[${and}]}`;
  let nor = '{"N":1}';
  for (let i = 0; i < 600; i++) nor = `{"$nor":[${nor}]}`;
  let or = '{"N":1}';
  for (let i = 0; i < 600; i++) or = `{"$or":[${or}]}`;
  for (const [label, where] of [['arrays 1,000 deep', arrays], ['$in arrays 1,000 deep', inArrays], ['object value 600 deep', obj],
    ['$and 600 deep', and], ['$nor 600 deep', nor], ['$or 600 deep', or]]) {
    const url = `/core/classes/QOps?where=${encodeWhere(where)}`;
    assert.ok(url.length < HEADER_LIMIT - 600, `${label}: URL of ${url.length} bytes stays under the header limit`);
    const r = await request(server, 'GET', url, { headers: M });
    assert.notEqual(r.status, 431, `${label}: the header limit answered, not the query`);
    assert.notEqual(r.body?.error, 'Invalid request target.', `${label}: the URL parser answered, not the query`);
    expectClientError(r, label);
  }
  await assertHealthy(server);
});

test('SECURITY exhaustion: $in with 100,000 values answers 200 with the right rows or a clean 4xx', async () => {
  await createRecord(server, app, 'QBigIn', { Name: 'n7', N: 7 });
  await createRecord(server, app, 'QBigIn', { Name: 'n99999', N: 99_999 });
  await createRecord(server, app, 'QBigIn', { Name: 'n200000', N: 200_000 });
  const values = Array.from({ length: 100_000 }, (_, i) => i);
  // Raw, so a server that refuses the 600 KB request line early still gets its answer read.
  const r = await rawGet(`/core/classes/QBigIn?where=${encodeWhere(JSON.stringify({ N: { $in: values } }))}`);
  if (r.status === 200) {
    assert.deepEqual(sorted(r.body.results.map((x) => x.Name)), ['n7', 'n99999']);
  } else {
    expectClientError(r, '$in of 100,000 values');
  }
  // A $in as large as a request line carries under the header limit is served exactly.
  const fits = Array.from({ length: 1500 }, (_, i) => i * 40 + 7);
  const url = `/core/classes/QBigIn?where=${encodeWhere(JSON.stringify({ N: { $in: fits } }))}`;
  assert.ok(url.length < HEADER_LIMIT - 600, `URL of ${url.length} bytes`);
  const r2 = await request(server, 'GET', url, { headers: M });
  assert.equal(r2.status, 200, r2.text.slice(0, 300));
  assert.deepEqual(r2.body.results.map((x) => x.Name), ['n7']);
  await assertHealthy(server);
});

test('SECURITY injection: SQL in where field names, keys, order and sub-query names answers 4xx (105 or 102); the table is intact', async () => {
  for (let i = 0; i < 3; i++) await createRecord(server, app, 'Accounts', { Name: `acc${i}`, Score: i });
  const before = await listAll(server, app, 'Accounts');
  const evil = 'Name"; DROP TABLE Accounts; --';
  const cases = [
    ['where field', find('Accounts', { [evil]: 'x' })],
    ['where field with operator', find('Accounts', { [evil]: { $exists: true } })],
    ['where field in $or', find('Accounts', { $or: [{ [evil]: 1 }] })],
    ['where quote', find('Accounts', { "Name' OR '1'='1": 'x' })],
    ['where paren', find('Accounts', { 'Name) OR (1=1': 'x' })],
    ['keys', list('Accounts', `?keys=${encodeURIComponent(evil)}`)],
    ['keys list', list('Accounts', `?keys=${encodeURIComponent(`Name,${evil}`)}`)],
    ['keys dotted', list('Accounts', `?keys=${encodeURIComponent(`Owner.${evil}`)}&include=Owner`)],
    ['order', list('Accounts', `?order=${encodeURIComponent(evil)}`)],
    ['order desc', list('Accounts', `?order=${encodeURIComponent(`-${evil}`)}`)],
  ];
  for (const [label, pending] of cases) {
    expectClientError(await pending, label, [105, 102]);
  }
  // Sub-query class names and values never reach SQL as text.
  for (const [label, where] of [
    ['$inQuery className', { Owner: { $inQuery: { className: 'Accounts; DROP TABLE Accounts', where: {} } } }],
    ['$notInQuery className', { Owner: { $notInQuery: { className: 'Accounts"--', where: {} } } }],
    ['$dontSelect className', { Name: { $dontSelect: { query: { className: "Accounts' --", where: {} }, key: 'Name' } } }],
  ]) {
    expectClientError(await find('Accounts', where), label);
  }
  for (const where of [
    { Name: "x' OR '1'='1" },
    { Name: { $regex: ".*'; DROP TABLE Accounts; --" } },
    { Name: { $in: ["') OR 1=1 --", 'x"); DROP TABLE Accounts; --'] } },
  ]) {
    const r = await find('Accounts', where);
    assert.equal(r.status, 200, `${JSON.stringify(where)}: ${r.text}`);
    assert.deepEqual(r.body, { results: [] }, JSON.stringify(where));
  }
  await assertHealthy(server);
  assert.deepEqual(await listAll(server, app, 'Accounts'), before, 'Accounts intact');
});

test('SECURITY injection: SQL in the key of $select/$dontSelect is a field name like any other: 4xx (105 or 102)', async () => {
  for (let i = 0; i < 2; i++) await createRecord(server, app, 'SelInj', { Name: `s${i}` });
  const before = await listAll(server, app, 'SelInj');
  const evil = 'Name"; DROP TABLE SelInj; --';
  for (const op of ['$select', '$dontSelect']) {
    const r = await find('SelInj', { Name: { [op]: { query: { className: 'SelInj', where: {} }, key: evil } } });
    expectClientError(r, `${op} key`, [105, 102]);
  }
  await assertHealthy(server);
  assert.deepEqual(await listAll(server, app, 'SelInj'), before, 'SelInj intact');
});
