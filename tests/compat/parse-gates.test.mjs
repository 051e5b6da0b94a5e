// Issue 36: the Parse profile's gates that the stock SDK's own suite needed (docs/PROFILES.md),
// each flow run on an application with the spec's gates and on one with the Parse profile:
// anonymous users and linking, sign-up adding fields to `_User`, a user updating their own record.
// Fields that grant rights stay the keys' in both.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Parse, startCompat, stopAll, useApp, MASTER, rejectsWith, uniq, signUpWithKey, request } from './lib/compat.mjs';

let ctx, spec, parse;
before(async () => {
  ctx = await startCompat();
  spec = await ctx.newApp('crmd');
  parse = await ctx.newApp('parse');
});
after(stopAll);

const UNSUPPORTED = 252;

test('issue 36 anonymous users: AnonymousUtils.logIn signs a user up with a session; the same id signs the same user in again', async () => {
  await useApp(ctx.server, spec);
  await rejectsWith(Parse.AnonymousUtils.logIn(), Parse.Error.OPERATION_FORBIDDEN, 'Permission denied for action create on class _User.');

  await useApp(ctx.server, parse);
  const first = await Parse.AnonymousUtils.logIn();
  assert.match(first.id, /^[A-Za-z0-9]{10}$/);
  assert.match(first.getSessionToken(), /^r:[0-9a-f]{32}$/);
  assert.match(first.getUsername(), /^[A-Za-z0-9]{25}$/);
  assert.ok(Parse.AnonymousUtils.isLinked(first));
  assert.equal((await Parse.User.me(first.getSessionToken())).id, first.id);
  const id = first.get('authData').anonymous.id;

  await useApp(ctx.server, parse);
  const again = await Parse.User.logInWith('anonymous', { authData: { id } });
  assert.equal(again.id, first.id);
  assert.notEqual(again.getSessionToken(), first.getSessionToken());
  // The id is a credential: no read returns it, not even the master key's.
  const raw = await request(ctx.server, 'GET', `/parse/users/${first.id}`, {
    headers: { 'X-Parse-Application-Id': parse.appId, 'X-Parse-Master-Key': parse.masterKey },
  });
  assert.equal(raw.status, 200);
  assert.ok(!JSON.stringify(raw.body).includes(id), JSON.stringify(raw.body));
  assert.equal(raw.body.authData, undefined);
});

test('issue 36 anonymous users: any other provider answers 252, on sign-in and on link; the keys\' rights fields stay theirs', async () => {
  await useApp(ctx.server, parse);
  await rejectsWith(Parse.User.logInWith('facebook', { authData: { id: '1', access_token: 't' } }), UNSUPPORTED,
    'This authentication method is unsupported.');
  const user = await signUpWithKey(`${uniq('linker')}@example.com`);
  await rejectsWith(user.linkWith('google', { authData: { id: '1', access_token: 't' } }, { sessionToken: user.getSessionToken() }),
    UNSUPPORTED, 'This authentication method is unsupported.');
  // A malformed anonymous entry is no sign-in either.
  const h = { 'X-Parse-Application-Id': parse.appId, 'Content-Type': 'application/json' };
  const bad = await request(ctx.server, 'POST', '/parse/users', { headers: h, body: { authData: { anonymous: { id: 7 } } } });
  assert.deepEqual(bad.body, { code: UNSUPPORTED, error: 'This authentication method is unsupported.' });
  // Other rights fields, at sign-up: still the keys' alone.
  const verified = await request(ctx.server, 'POST', '/parse/users', {
    headers: h, body: { authData: { anonymous: { id: randomUUID() } }, emailVerified: true },
  });
  assert.deepEqual(verified.body, { code: 119, error: 'Permission denied for action create on class _User.' });
});

test('issue 36 account linking: a user links and unlinks an anonymous id on their own record; an id is one user\'s; another user\'s record answers 206', async () => {
  await useApp(ctx.server, parse);
  const owner = await signUpWithKey(`${uniq('owner')}@example.com`);
  const id = randomUUID();
  await owner.linkWith('anonymous', { authData: { id } }, { sessionToken: owner.getSessionToken() });
  await useApp(ctx.server, parse);
  assert.equal((await Parse.User.logInWith('anonymous', { authData: { id } })).id, owner.id, 'the linked id signs the owner in');

  // Another user cannot take the same id (Parse's 208), nor touch the owner's record.
  await useApp(ctx.server, parse);
  const other = await signUpWithKey(`${uniq('other')}@example.com`);
  await rejectsWith(other.linkWith('anonymous', { authData: { id } }, { sessionToken: other.getSessionToken() }),
    Parse.Error.ACCOUNT_ALREADY_LINKED, 'this auth is already used');
  const h = { 'X-Parse-Application-Id': parse.appId, 'X-Parse-Session-Token': other.getSessionToken(), 'Content-Type': 'application/json' };
  const theirs = await request(ctx.server, 'PUT', `/parse/users/${owner.id}`, { headers: h, body: { authData: { anonymous: null } } });
  assert.deepEqual(theirs.body, { code: 206, error: `Cannot modify user ${owner.id}.` });

  // Unlinked, the id is nobody's: signing in with it makes a new user.
  await useApp(ctx.server, parse);
  await owner._unlinkFrom('anonymous', { sessionToken: owner.getSessionToken() });
  await useApp(ctx.server, parse);
  const fresh = await Parse.User.logInWith('anonymous', { authData: { id } });
  assert.notEqual(fresh.id, owner.id);

  // With the spec's gates authData is a rights field: a user's own link answers 119.
  await useApp(ctx.server, spec);
  const specUser = await signUpWithKey(`${uniq('spec')}@example.com`);
  await rejectsWith(specUser.linkWith('anonymous', { authData: { id: randomUUID() } }, { sessionToken: specUser.getSessionToken() }),
    Parse.Error.OPERATION_FORBIDDEN, 'Permission denied for action update on class _User.');
});

test('issue 36 sign-up adding fields: a new Pointer and String at sign-up make the fields on the Parse profile; the spec\'s sign-up needs a key, which may', async () => {
  await useApp(ctx.server, parse);
  const child = new Parse.Object('Child', { Name: 'kid' });
  await child.save();
  const user = new Parse.User({ username: `${uniq('parent')}@example.com`, password: 'pw', child, nickname: 'P' });
  await user.signUp();
  const back = await new Parse.Query(Parse.User).get(user.id, MASTER);
  assert.equal(back.get('child').id, child.id);
  assert.equal(back.get('nickname'), 'P');
  const schema = await new Parse.Schema('_User').get();
  assert.deepEqual(schema.fields.child, { type: 'Pointer', targetClass: 'Child' });

  await useApp(ctx.server, spec);
  await rejectsWith(new Parse.User({ username: `${uniq('s')}@example.com`, password: 'Passw0rd1', nickname: 'S' }).signUp(),
    Parse.Error.OPERATION_FORBIDDEN, 'Permission denied for action create on class _User.');
  const keyed = await signUpWithKey(`${uniq('keyed')}@example.com`, 'Passw0rd1', { nickname: 'K' });
  assert.equal((await new Parse.Query(Parse.User).get(keyed.id, MASTER)).get('nickname'), 'K');
});

test('issue 36 self-update: 119 with the spec\'s gates (§4.7); the Parse profile lets a user change their own record, names and password, never a rights field', async () => {
  await useApp(ctx.server, spec);
  const specUser = await signUpWithKey(`${uniq('self')}@example.com`);
  specUser.set('language', 'he');
  await rejectsWith(specUser.save(null, { sessionToken: specUser.getSessionToken() }), Parse.Error.OPERATION_FORBIDDEN,
    'Permission denied for action update on class _User.');

  await useApp(ctx.server, parse);
  const name = `${uniq('self')}@example.com`;
  const user = new Parse.User({ username: name, password: 'pw', email: name });
  await user.signUp();
  const verify = Parse.User.createWithoutData(user.id);
  verify.set('emailVerified', true);
  await verify.save(null, MASTER);
  user.set('language', 'he');
  user.set('hobby', 'chess');  // a new field too
  await user.save();
  user.setUsername(`renamed-${name}`);
  user.setEmail(`renamed-${name}`);
  await user.save();
  // A password change keeps the session it was made with and ends the others.
  await useApp(ctx.server, parse);
  const elsewhere = await Parse.User.logIn(name.replace(/^/, 'renamed-'), 'pw');
  const otherToken = elsewhere.getSessionToken();
  await useApp(ctx.server, parse);
  await Parse.User.become(user.getSessionToken());
  const me = Parse.User.current();
  me.setPassword('new-pw');
  await me.save();
  assert.equal((await Parse.User.me(user.getSessionToken())).id, user.id);
  await rejectsWith(Parse.User.me(otherToken), Parse.Error.INVALID_SESSION_TOKEN);
  const stored = await new Parse.Query(Parse.User).get(user.id, MASTER);
  assert.deepEqual([stored.get('username'), stored.get('language'), stored.get('hobby')], [`renamed-${name}`, 'he', 'chess']);
  assert.equal(stored.get('emailVerified'), false, 'an address a user set themselves is not a verified one');
  await useApp(ctx.server, parse);
  assert.equal((await Parse.User.logIn(`renamed-${name}`, 'new-pw')).id, user.id);

  // Rights fields stay the keys' (issue 31 #3), and another user's record answers 206.
  await Parse.User.become(user.getSessionToken());
  for (const [field, value] of [['emailVerified', true], ['active', false], ['permissions', ['admin']]]) {
    const again = Parse.User.current();
    again.set(field, value);
    await rejectsWith(again.save(), Parse.Error.OPERATION_FORBIDDEN, 'Permission denied for action update on class _User.');
    again.revert();
  }
  const other = await signUpWithKey(`${uniq('victim')}@example.com`);
  const h = { 'X-Parse-Application-Id': parse.appId, 'X-Parse-Session-Token': user.getSessionToken(), 'Content-Type': 'application/json' };
  const theirs = await request(ctx.server, 'PUT', `/parse/users/${other.id}`, { headers: h, body: { language: 'x' } });
  assert.deepEqual(theirs.body, { code: 206, error: `Cannot modify user ${other.id}.` });
});

function keyHeaders(app) {
  return { 'X-Parse-Application-Id': app.appId, 'X-Parse-Master-Key': app.masterKey, 'Content-Type': 'application/json' };
}

test('issue 36 DELETE /schemas/_Role: the spec\'s gates keep system classes; the Parse profile drops an empty one, which comes back as first defined; _User never', async () => {
  await useApp(ctx.server, spec);
  await rejectsWith(new Parse.Schema('_Role').delete(), Parse.Error.INVALID_SCHEMA_OPERATION, 'Class _Role is a system class and cannot be dropped.');

  await useApp(ctx.server, parse);
  const custom = new Parse.Schema('_Role');
  custom.addString('label');
  await custom.update();
  await new Parse.Schema('_Role').delete();
  const back = await new Parse.Schema('_Role').get();
  assert.equal(back.fields.label, undefined, 'the custom field went with the class');
  assert.deepEqual(back.fields.users, { type: 'Relation', targetClass: '_User' });
  // It works as before: a role, and its name rule.
  const role = new Parse.Role(uniq('Admins'), new Parse.ACL());
  await role.save(null, MASTER);
  await rejectsWith(new Parse.Schema('_Role').delete(), Parse.Error.INVALID_SCHEMA_OPERATION,
    'Class _Role is not empty, contains 1 objects, cannot drop schema.');
  await rejectsWith(new Parse.Schema('_User').delete(), Parse.Error.INVALID_SCHEMA_OPERATION, 'Class _User is a system class and cannot be dropped.');
});

test('issue 36 Parse\'s other names (parseNames): POST /config, verifyPassword, loginAs, a JSON answer to DELETE /files, _created_at in where, classLevelPermissions null', async () => {
  // The spec's gates: none of these names exist.
  const S = keyHeaders(spec);
  for (const [method, path] of [['POST', '/parse/config'], ['GET', '/parse/verifyPassword'], ['POST', '/parse/loginAs']]) {
    const r = await request(ctx.server, method, path, { headers: S, body: method === 'GET' ? undefined : {} });
    assert.deepEqual([r.status, r.body], [404, { error: `Cannot ${method} ${path}` }]);
  }
  const specUpload = await request(ctx.server, 'POST', '/parse/files/a.txt', { headers: { 'X-Parse-Application-Id': spec.appId, 'Content-Type': 'text/plain' }, body: 'hello' });
  const specDelete = await request(ctx.server, 'DELETE', `/parse/files/${specUpload.body.name}`, { headers: S });
  assert.deepEqual([specDelete.status, specDelete.text], [200, ''], 'spec §4.8: 200 with an empty body');
  const specWhere = await request(ctx.server, 'GET', `/parse/classes/_User?where=${encodeURIComponent(JSON.stringify({ _created_at: { $exists: true } }))}`, { headers: S });
  assert.equal(specWhere.body.code, Parse.Error.INVALID_KEY_NAME);

  const P = keyHeaders(parse);
  await useApp(ctx.server, parse);
  // POST /config is PUT /config: the keys' alone.
  const posted = await request(ctx.server, 'POST', '/parse/config', { headers: P, body: { params: { greeting: 'hi' } } });
  assert.deepEqual(posted.body, { result: true });
  assert.equal((await Parse.Config.get({ useMasterKey: true })).get('greeting'), 'hi');
  const anonymous = await request(ctx.server, 'POST', '/parse/config', { headers: { 'X-Parse-Application-Id': parse.appId, 'Content-Type': 'application/json' }, body: { params: { greeting: 'no' } } });
  assert.deepEqual([anonymous.status, anonymous.body], [403, { error: 'unauthorized: master key is required' }]);

  // verifyPassword: the user without a session; a wrong password counts as a failed login.
  const name = `${uniq('verify')}@example.com`;
  const user = await signUpWithKey(name, 'right-pw');
  const verified = await Parse.User.verifyPassword(name, 'right-pw');
  assert.equal(verified.objectId, user.id);
  assert.equal(verified.sessionToken, undefined);
  const posting = await request(ctx.server, 'POST', '/parse/verifyPassword', { headers: { 'X-Parse-Application-Id': parse.appId, 'Content-Type': 'application/json' }, body: { username: name, password: 'right-pw' } });
  assert.equal(posting.body.objectId, user.id);
  assert.equal(posting.body.sessionToken, undefined);
  await rejectsWith(Parse.User.verifyPassword(name, 'wrong'), Parse.Error.OBJECT_NOT_FOUND, 'Invalid username/password.');
  const counted = await new Parse.Query(Parse.User).get(user.id, MASTER);
  assert.equal(counted.get('last_success_login') instanceof Date, true);

  // loginAs: a session for the user, the keys' alone.
  const as = await request(ctx.server, 'POST', '/parse/loginAs', { headers: P, body: { userId: user.id } });
  assert.equal(as.status, 200, as.text);
  assert.equal(as.body.objectId, user.id);
  assert.equal((await Parse.User.me(as.body.sessionToken)).id, user.id);
  const asUser = await request(ctx.server, 'POST', '/parse/loginAs', { headers: { 'X-Parse-Application-Id': parse.appId, 'X-Parse-Session-Token': as.body.sessionToken, 'Content-Type': 'application/json' }, body: { userId: user.id } });
  assert.deepEqual([asUser.status, asUser.body], [403, { error: 'unauthorized: master key is required' }]);
  const nobody = await request(ctx.server, 'POST', '/parse/loginAs', { headers: P, body: { userId: 'nobody1234' } });
  assert.deepEqual([nobody.status, nobody.body], [404, { code: 101, error: 'user not found' }]);

  // Parse.File destroy reads the answer as JSON.
  const file = new Parse.File('note.txt', { base64: Buffer.from('hello').toString('base64') });
  await file.save();
  await file.destroy({ useMasterKey: true });
  // A file that is not there: Parse's 153 (the spec's gate answers the same as for one that is).
  await assert.rejects(new Parse.File('never-saved.txt', { uri: 'http://127.0.0.1:9/none' }).destroy({ useMasterKey: true }),
    (e) => e.code === Parse.Error.FILE_DELETE_ERROR && e.message === 'Could not delete file.');
  const specMissing = await request(ctx.server, 'DELETE', '/parse/files/never-saved.txt', { headers: S });
  assert.deepEqual([specMissing.status, specMissing.text], [200, ''], 'spec §4.8: a name that does not exist answers the same');

  // A 500 carries `error` for the SDK beside the spec's `message` (a $text without a text index).
  const textless = uniq('Textless');
  await new Parse.Object(textless, { Name: 'coffee' }).save(null, MASTER);
  await assert.rejects(new Parse.Query(textless).fullText('Name', 'coffee').find(MASTER),
    (e) => e.code === 1 && e.message === 'Internal server error.');
  const textWhere = `where=${encodeURIComponent(JSON.stringify({ Name: { $text: { $search: { $term: 'coffee' } } } }))}`;
  const parseText = await request(ctx.server, 'GET', `/parse/classes/${textless}?${textWhere}`, { headers: P });
  assert.deepEqual([parseText.status, parseText.body], [500, { code: 1, message: 'Internal server error.', error: 'Internal server error.' }]);
  const specText = await request(ctx.server, 'GET', `/parse/classes/_User?where=${encodeURIComponent(JSON.stringify({ username: { $text: { $search: { $term: 'x' } } } }))}`, { headers: S });
  assert.deepEqual([specText.status, specText.body], [500, { code: 1, message: 'Internal server error.' }], 'the spec\'s 500 as written');

  // _created_at / _updated_at are createdAt / updatedAt in a where.
  const cls = uniq('Dated');
  const row = new Parse.Object(cls, { n: 1 });
  await row.save(null, MASTER);
  const since = { __type: 'Date', iso: new Date(row.createdAt.getTime() - 1).toISOString() };
  for (const field of ['_created_at', '_updated_at']) {
    const r = await request(ctx.server, 'GET', `/parse/classes/${cls}?where=${encodeURIComponent(JSON.stringify({ [field]: { $gt: since } }))}`, { headers: P });
    assert.deepEqual(r.body.results.map((x) => x.objectId), [row.id], field);
  }
  // ... and in an order (the SDK's suite sorts by them); the spec's gates keep 105.
  const later = new Parse.Object(cls, { n: 2 });
  await later.save(null, MASTER);
  for (const [order, expected] of [['_created_at', [row.id, later.id]], ['-_created_at', [later.id, row.id]], ['-_updated_at', [later.id, row.id]]]) {
    const r = await request(ctx.server, 'GET', `/parse/classes/${cls}?order=${order}`, { headers: P });
    assert.deepEqual(r.body.results?.map((x) => x.objectId), expected, `${order}: ${r.text}`);
  }
  const specOrder = await request(ctx.server, 'GET', `/parse/classes/${cls}?order=_created_at`, { headers: S });
  assert.deepEqual(specOrder.body, { code: 105, error: 'Invalid field name: _created_at.' });
  // Parse's SDK asks /parse/health before it sends a queued save (EventuallyQueue).
  const health = await request(ctx.server, 'GET', '/parse/health', { headers: { 'X-Parse-Application-Id': parse.appId } });
  assert.deepEqual([health.status, health.body], [200, { status: 'ok' }]);

  // classLevelPermissions null: back to the permissions of a class made without any.
  const schema = new Parse.Schema(cls);
  schema.setCLP({ find: {}, get: {}, count: {}, create: {}, update: {}, delete: {}, addField: {} });
  await schema.update();
  const reset = await request(ctx.server, 'PUT', `/parse/schemas/${cls}`, { headers: P, body: { classLevelPermissions: null } });
  assert.equal(reset.status, 200, reset.text);
  assert.deepEqual(reset.body.classLevelPermissions.find, { '*': true });
  const specNull = await request(ctx.server, 'PUT', '/parse/schemas/_Role', { headers: S, body: { classLevelPermissions: null } });
  assert.equal(specNull.body.code, 107, 'the spec\'s gates: permissions must be an object');
});

test('issue 36 redirectClassNameForKey (parseNames): a relation query whose class the SDK does not know reads the relation\'s class; 102 with the spec\'s gates', async () => {
  for (const app of [spec, parse]) {
    await useApp(ctx.server, app);
    const kids = [new Parse.Object('Kid', { n: 1 }), new Parse.Object('Kid', { n: 2 }), new Parse.Object('Kid', { n: 3 })];
    await Parse.Object.saveAll(kids, MASTER);
    const parent = new Parse.Object('Parent');
    parent.relation('kids').add(kids.slice(0, 2));
    await parent.save(null, MASTER);
    // The SDK's relation query when it does not know the relation's class (ParseRelation.query()).
    const where = { $relatedTo: { object: { __type: 'Pointer', className: 'Parent', objectId: parent.id }, key: 'kids' } };
    const r = await request(ctx.server, 'GET', `/parse/classes/Parent?redirectClassNameForKey=kids&where=${encodeURIComponent(JSON.stringify(where))}`, { headers: keyHeaders(app) });
    if (app === spec) {
      assert.deepEqual(r.body, { code: Parse.Error.INVALID_QUERY, error: 'Invalid parameter for query: redirectClassNameForKey' });
      continue;
    }
    assert.equal(r.body.className, 'Kid');
    assert.deepEqual(r.body.results.map((k) => k.className), ['Kid', 'Kid'], 'each result names its class too');
    const found = r.body.results.map((k) => Parse.Object.fromJSON({ ...k, className: r.body.className }));
    assert.deepEqual(found.map((k) => [k.className, k.get('n')]).sort(), [['Kid', 1], ['Kid', 2]]);
    // The SDK's get() on the relation of a parent it has not fetched: first() reads the result's class.
    const unfetched = new Parse.Object('Parent');
    unfetched.id = parent.id;
    const kid = await unfetched.relation('kids').query().get(kids[0].id, MASTER);
    assert.deepEqual([kid.className, kid.get('n')], ['Kid', 1]);
  }
});

test('issue 36 Bytes (parseNames): a {__type:"Bytes"} value makes a Bytes field and reads back as written; 111 with the spec\'s gates', async () => {
  const bytes = { __type: 'Bytes', base64: Buffer.from('crmd bytes').toString('base64') };
  await useApp(ctx.server, spec);
  await rejectsWith(new Parse.Object(uniq('Blob'), { data: bytes }).save(null, MASTER), Parse.Error.INCORRECT_TYPE);
  const specSchema = await request(ctx.server, 'POST', `/parse/schemas/${uniq('Blob')}`, { headers: keyHeaders(spec), body: { fields: { data: { type: 'Bytes' } } } });
  assert.equal(specSchema.body.code, Parse.Error.INCORRECT_TYPE);

  await useApp(ctx.server, parse);
  const cls = uniq('Blob');
  const row = new Parse.Object(cls, { data: bytes });
  await row.save(null, MASTER);
  const back = await new Parse.Query(cls).get(row.id, MASTER);
  assert.deepEqual(back.get('data'), bytes);
  assert.deepEqual((await new Parse.Schema(cls).get()).fields.data, { type: 'Bytes' });
  assert.equal((await new Parse.Query(cls).equalTo('data', bytes).find(MASTER)).length, 1);
  await rejectsWith(new Parse.Object(cls, { data: 'text' }).save(null, MASTER), Parse.Error.INCORRECT_TYPE,
    `schema mismatch for ${cls}.data; expected Bytes but got String`);
});

test('issue 36 $lookup (parseNames): a last stage joins records of another class read as the caller (its CLP and ACLs); 102 with the spec\'s gates', async () => {
  const pipelineOf = (from) => [{ $match: { Name: { $exists: true } } }, { $lookup: { from, localField: 'Owner', foreignField: '_id', as: 'owners' } }];
  await useApp(ctx.server, spec);
  await rejectsWith(new Parse.Query(uniq('Deal')).aggregate(pipelineOf('Person')), Parse.Error.INVALID_QUERY, 'Unsupported pipeline stage: $lookup');

  await useApp(ctx.server, parse);
  const people = uniq('Person'), deals = uniq('Deal');
  const ann = new Parse.Object(people, { Name: 'Ann' });
  const hidden = new Parse.Object(people, { Name: 'Hidden' });
  hidden.setACL(new Parse.ACL());  // no one but the keys
  await Parse.Object.saveAll([ann, hidden], MASTER);
  await Parse.Object.saveAll([
    new Parse.Object(deals, { Name: 'd1', Owner: ann }),
    new Parse.Object(deals, { Name: 'd2', Owner: hidden }),
    new Parse.Object(deals, { Name: 'd3' }),
  ], MASTER);
  const byKey = await new Parse.Query(deals).aggregate(pipelineOf(people));
  const owners = Object.fromEntries(byKey.map((d) => [d.Name, d.owners.map((o) => o.Name)]));
  assert.deepEqual(owners, { d1: ['Ann'], d2: ['Hidden'], d3: [] });

  // A user sees through a lookup only what a query of the joined class shows them.
  const user = await signUpWithKey(`${uniq('agg')}@example.com`);
  const h = { 'X-Parse-Application-Id': parse.appId, 'X-Parse-Session-Token': user.getSessionToken() };
  const asUser = await request(ctx.server, 'GET', `/parse/aggregate/${deals}?pipeline=${encodeURIComponent(JSON.stringify(pipelineOf(people)))}`, { headers: h });
  assert.equal(asUser.status, 200, asUser.text);
  assert.deepEqual(Object.fromEntries(asUser.body.results.map((d) => [d.Name, d.owners.map((o) => o.Name)])), { d1: ['Ann'], d2: [], d3: [] });
  const closed = new Parse.Schema(people);
  closed.setCLP({ find: {}, get: {}, count: {}, create: {}, update: {}, delete: {}, addField: {} });
  await closed.update();
  const refused = await request(ctx.server, 'GET', `/parse/aggregate/${deals}?pipeline=${encodeURIComponent(JSON.stringify(pipelineOf(people)))}`, { headers: h });
  assert.deepEqual(refused.body, { code: 119, error: `Permission denied for action find on class ${people}.` });
});

test('issue 36 installations: an installation saves, updates and fetches its own _Installation row; others see nothing of it; the spec\'s gates refuse', async () => {
  await useApp(ctx.server, spec);
  const specInstallation = await Parse.Installation.currentInstallation();
  specInstallation.set('deviceType', 'web');
  await rejectsWith(specInstallation.save(), Parse.Error.OPERATION_FORBIDDEN);

  await useApp(ctx.server, parse);
  const mine = await Parse.Installation.currentInstallation();
  const id = mine.get('installationId');
  assert.match(id, /^[0-9a-f-]{36}$/);
  mine.set('deviceType', 'web');
  await mine.save();
  assert.match(mine.id, /^[A-Za-z0-9]{10}$/);
  mine.set('channels', ['news']);
  await mine.save();
  await mine.fetch();
  assert.deepEqual(mine.get('channels'), ['news']);
  const stored = await new Parse.Query(Parse.Installation).find(MASTER);
  assert.deepEqual(stored.map((i) => [i.id, i.get('installationId'), i.get('channels')]), [[mine.id, id, ['news']]]);

  const as = (installationId) => ({ 'X-Parse-Application-Id': parse.appId, 'X-Parse-Installation-Id': installationId, 'Content-Type': 'application/json' });
  const other = randomUUID();
  // Another installation neither reads, changes nor lists it, nor makes a row in another's name.
  assert.equal((await request(ctx.server, 'GET', `/parse/classes/_Installation/${mine.id}`, { headers: as(other) })).body.code, 101);
  assert.equal((await request(ctx.server, 'PUT', `/parse/classes/_Installation/${mine.id}`, { headers: as(other), body: { channels: [] } })).body.code, 101);
  assert.deepEqual((await request(ctx.server, 'GET', '/parse/classes/_Installation', { headers: as(id) })).body,
    { code: 119, error: 'Permission denied for action find on class _Installation.' });
  assert.equal((await request(ctx.server, 'POST', '/parse/classes/_Installation', { headers: as(other), body: { installationId: id, deviceType: 'web' } })).body.code, 119);
  // Its own row: never its id, never its ACL, never deleted but by the keys.
  const renamed = await request(ctx.server, 'PUT', `/parse/classes/_Installation/${mine.id}`, { headers: as(id), body: { installationId: other } });
  assert.deepEqual(renamed.body, { code: 136, error: 'installationId may not be changed in this operation' });
  assert.equal((await request(ctx.server, 'PUT', `/parse/classes/_Installation/${mine.id}`, { headers: as(id), body: { ACL: { '*': { read: true } } } })).body.code, 119);
  assert.equal((await request(ctx.server, 'DELETE', `/parse/classes/_Installation/${mine.id}`, { headers: as(id) })).body.code, 119);
});
