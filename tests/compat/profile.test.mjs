// The spec's gates against the Parse profile (docs/PROFILES.md), each flow through the stock SDK on
// both: anonymous creates (§4.1 CAPTCHA), sign-up (§4.7), the password policy (§4.7), clients creating
// classes (§2.5), dotted keys (§2.2), and `crmd app set` switching one gate of a running application.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Parse, startCompat, stopAll, useApp, MASTER, rejectsWith, uniq, openClass, cliJson, PARSE_GATES, SPEC_GATES } from './lib/compat.mjs';

let ctx, spec, parse;
before(async () => {
  ctx = await startCompat();
  spec = await ctx.newApp('crmd');
  parse = await ctx.newApp('parse');
});
after(stopAll);

async function keyMadeOpenClass(app, prefix) {
  await useApp(ctx.server, app);
  const cls = uniq(prefix);
  await new Parse.Object(cls, { Name: 'seed' }).save(null, MASTER);
  await openClass(cls);
  await useApp(ctx.server, app);
  return cls;
}

test('§4.1 anonymous save: the spec\'s gates answer the CAPTCHA 119 even on a class open to all; the Parse profile lets the CLP decide', async () => {
  const specCls = await keyMadeOpenClass(spec, 'Leads');
  await rejectsWith(new Parse.Object(specCls, { Name: 'anon' }).save(), Parse.Error.OPERATION_FORBIDDEN, 'This action is not allowed without a valid CAPTCHA');
  assert.equal(await new Parse.Query(specCls).count(MASTER), 1);

  const parseCls = await keyMadeOpenClass(parse, 'Leads');
  const lead = new Parse.Object(parseCls, { Name: 'anon' });
  await lead.save();
  assert.match(lead.id, /^[A-Za-z0-9]{10}$/);
  assert.equal((await new Parse.Query(parseCls).get(lead.id)).get('Name'), 'anon');
  // The same doors decide: a class whose CLP refuses create refuses the anonymous save too.
  await useApp(ctx.server, parse);
  const closed = new Parse.Schema(parseCls);
  closed.setCLP({ find: { '*': true }, get: { '*': true }, count: { '*': true }, create: {}, update: {}, delete: {}, addField: {} });
  await closed.update();
  await rejectsWith(new Parse.Object(parseCls, { Name: 'anon2' }).save(), Parse.Error.OPERATION_FORBIDDEN, `Permission denied for action create on class ${parseCls}.`);
});

test('§4.7 signUp without a key: refused with the spec\'s gates (119); open in the Parse profile, with a session', async () => {
  await useApp(ctx.server, spec);
  await rejectsWith(new Parse.User({ username: 'open@example.com', password: 'Passw0rd1' }).signUp(), Parse.Error.OPERATION_FORBIDDEN,
    'Permission denied for action create on class _User.');
  await useApp(ctx.server, parse);
  const user = new Parse.User({ username: 'open@example.com', password: 'Passw0rd1' });
  await user.signUp();
  assert.match(user.getSessionToken(), /^r:[0-9a-f]{32}$/);
  assert.equal(Parse.User.current().id, user.id);
  // Unique usernames still hold (202).
  await useApp(ctx.server, parse);
  await rejectsWith(new Parse.User({ username: 'open@example.com', password: 'Other1234' }).signUp(), Parse.Error.USERNAME_TAKEN);
});

test('§4.7 password policy: 142 with the spec\'s gates, any non-empty password with the Parse profile', async () => {
  await useApp(ctx.server, spec);
  await rejectsWith(new Parse.User({ username: 'weak@example.com', password: 'abc' }).signUp(null, MASTER), Parse.Error.VALIDATION_ERROR,
    'Password does not meet the Password Policy requirements.');
  await useApp(ctx.server, parse);
  const weak = new Parse.User({ username: 'weak@example.com', password: 'abc' });
  await weak.signUp();
  await useApp(ctx.server, parse);
  assert.equal((await Parse.User.logIn('weak@example.com', 'abc')).id, weak.id);
  await Parse.User.logOut();
});

test('§2.5 a client\'s first save into a new class: refused with the spec\'s gates; the Parse profile creates it open to all', async () => {
  await useApp(ctx.server, spec);
  const specUser = new Parse.User({ username: 'maker@example.com', password: 'Passw0rd1' });
  await specUser.signUp(null, MASTER);
  const specCls = uniq('ClientMade');
  const err = await rejectsWith(new Parse.Object(specCls, { Name: 'x' }).save(null, { sessionToken: specUser.getSessionToken() }), Parse.Error.OPERATION_FORBIDDEN);
  assert.match(err.message, /Permission denied for action create|not allowed/);
  await rejectsWith(new Parse.Schema(specCls).get(), Parse.Error.INVALID_CLASS_NAME);

  await useApp(ctx.server, parse);
  const user = new Parse.User({ username: 'maker@example.com', password: 'Passw0rd1' });
  await user.signUp();
  const cls = uniq('ClientMade');
  const row = new Parse.Object(cls, { Name: 'x', Score: 3 });
  await row.save();
  const schema = await new Parse.Schema(cls).get();
  for (const op of ['find', 'get', 'count', 'create', 'update', 'delete', 'addField']) {
    assert.deepEqual(schema.classLevelPermissions[op], { '*': true }, op);
  }
  await Parse.User.logOut();
  assert.equal((await new Parse.Query(cls).get(row.id)).get('Score'), 3);
});

test('§2.5 a class a key creates: closed to sessions with the spec\'s gates (119), open with the Parse profile', async () => {
  for (const [app, open] of [[spec, false], [parse, true]]) {
    await useApp(ctx.server, app);
    const cls = uniq('KeyMade');
    await new Parse.Object(cls, { Name: 'k' }).save(null, MASTER);
    const user = new Parse.User({ username: `${uniq('s')}@example.com`, password: 'Passw0rd1' });
    await user.signUp(null, MASTER);
    const asUser = { sessionToken: user.getSessionToken() };
    if (open) assert.equal((await new Parse.Query(cls).find(asUser)).length, 1);
    else await rejectsWith(new Parse.Query(cls).find(asUser), Parse.Error.OPERATION_FORBIDDEN, `Permission denied for action find on class ${cls}.`);
  }
});

test('§2.2 dotted keys: 105 with the spec\'s gates; set, increment and unset inside an Object field with the Parse profile', async () => {
  await useApp(ctx.server, spec);
  const specRow = new Parse.Object('Prefs', { settings: { theme: 'dark', size: 10 } });
  await specRow.save(null, MASTER);
  specRow.set('settings.theme', 'light');
  await rejectsWith(specRow.save(null, MASTER), Parse.Error.INVALID_KEY_NAME, 'Invalid field name: settings.theme.');

  await useApp(ctx.server, parse);
  const row = new Parse.Object('Prefs', { settings: { theme: 'dark', size: 10, old: true }, plain: 'x' });
  await row.save(null, MASTER);
  row.set('settings.theme', 'light');
  row.increment('settings.size', 5);
  row.unset('settings.old');
  row.set('settings.nested.added', 1);
  await row.save(null, MASTER);
  const back = await new Parse.Query('Prefs').get(row.id, MASTER);
  assert.deepEqual(back.get('settings'), { theme: 'light', size: 15, nested: { added: 1 } });
  // A dotted key into a field that is not an Object is a schema mismatch (111).
  row.set('plain.inner', 1);
  await rejectsWith(row.save(null, MASTER), Parse.Error.INCORRECT_TYPE);
});

test('issue 36 dotted Increment two levels deep, repeated: the save answers each new sum, so the SDK\'s object and the stored one agree', async () => {
  await useApp(ctx.server, parse);
  const row = new Parse.Object('Nested', { objectField: { foo: { bar: 5, keep: 'x' }, top: 1 } });
  await row.save(null, MASTER);
  for (const expected of [20, 35, 50]) {
    row.increment('objectField.foo.bar', 15);
    assert.equal(row.get('objectField').foo.bar, expected);
    await row.save(null, MASTER);
    assert.equal(row.get('objectField').foo.bar, expected, 'after the save');
  }
  row.increment('objectField.top', 2);
  row.increment('objectField.foo.bar', -10);
  await row.save(null, MASTER);
  assert.deepEqual([row.get('objectField').top, row.get('objectField').foo.bar], [3, 40]);
  const back = await new Parse.Query('Nested').get(row.id, MASTER);
  assert.deepEqual(back.get('objectField'), { foo: { bar: 40, keep: 'x' }, top: 3 });
});

test('a Parse app with no key at all works on the Parse profile: sign up, save with an ACL, query, log out, log in', async () => {
  await useApp(ctx.server, parse);
  const me = new Parse.User({ username: 'solo@example.com', password: 'pw' });
  await me.signUp();
  const note = new Parse.Object(uniq('Notes'), { Text: 'mine' });
  note.setACL(new Parse.ACL(me));
  await note.save();
  assert.equal((await new Parse.Query(note.className).find()).length, 1);
  await Parse.User.logOut();
  assert.deepEqual(await new Parse.Query(note.className).find(), []);
  await Parse.User.logIn('solo@example.com', 'pw');
  const mine = await new Parse.Query(note.className).first();
  assert.equal(mine.get('Text'), 'mine');
  mine.set('Text', 'edited');
  await mine.save();
  await Parse.User.logOut();
});

test('crmd app set switches one gate of a running application; the others stay', async () => {
  const app = await ctx.newApp('parse');
  const cls = await keyMadeOpenClass(app, 'Switch');
  await new Parse.Object(cls, { Name: 'before' }).save();
  const changed = cliJson(['app', 'set', '--data', ctx.dataDir, '--app', app.appId, '--captcha', 'on']);
  assert.deepEqual(changed, { appId: app.appId, gates: { ...PARSE_GATES, captcha: 'on' } });
  // A running server follows within about a second (docs/PROFILES.md): bounded poll.
  let last;
  for (let i = 0; i < 100; i++) {
    try {
      await new Parse.Object(cls, { Name: 'probe' }).save();
      last = 'saved';
    } catch (e) {
      last = e;
      if (e.code === Parse.Error.OPERATION_FORBIDDEN) break;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(last?.message, 'This action is not allowed without a valid CAPTCHA');
  // Sign-up is still open.
  const user = new Parse.User({ username: `${uniq('after')}@example.com`, password: 'pw' });
  await user.signUp();
  await Parse.User.logOut();
  const back = cliJson(['app', 'set', '--data', ctx.dataDir, '--app', app.appId, '--profile', 'crmd']);
  assert.deepEqual(back.gates, SPEC_GATES);
});
