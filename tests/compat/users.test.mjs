// Parse.User through the stock SDK: sign-up with a key (§4.7, §5.3), logIn, current, become, logOut
// and 209 (§5.5), the password policy (142), requestPasswordReset, the self-update rule (§4.7) and
// 206, Parse.Session.current; both gate settings. The Parse profile's open sign-up: profile.test.mjs.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Parse, useApp, MASTER, rejectsWith, signUpWithKey, PROFILES, compatSuite } from './lib/compat.mjs';

// The file's server and its two applications (one per profile), made before the first test.
const ctx = compatSuite();
const { apps } = ctx;

const SESSION_TOKEN = /^r:[0-9a-f]{32}$/;

// Gate-specific: the spec's gates (the Parse profile's answers are in profile.test.mjs).
describe('crmd gates only', () => {
  let app;
  before(() => { app = apps.crmd; });

  test('§4.7 §5.3 signUp without a key answers 119 Permission denied for action create on class _User.; no user is made', async () => {
    await useApp(ctx.server, app);
    const user = new Parse.User({ username: 'nokey@example.com', password: 'Passw0rd1' });
    await rejectsWith(user.signUp(), Parse.Error.OPERATION_FORBIDDEN, 'Permission denied for action create on class _User.');
    assert.equal(Parse.User.current(), null);
    assert.equal(await new Parse.Query(Parse.User).equalTo('username', 'nokey@example.com').count(MASTER), 0);
  });

  test('§4.7 signUp with the master key; a weak password answers 142 without naming the rule', async () => {
    await useApp(ctx.server, app);
    for (const weak of ['short1A', 'alllowercase1', 'ALLUPPERCASE1', 'NoDigitsHere']) {
      const u = new Parse.User({ username: `weak-${weak}`, password: weak });
      await rejectsWith(u.signUp(null, MASTER), Parse.Error.VALIDATION_ERROR, 'Password does not meet the Password Policy requirements.');
    }
    const ok = await signUpWithKey('bob@example.com', 'Abcdefg1');
    assert.match(ok.getSessionToken(), SESSION_TOKEN);
  });
});

// The same under both gate settings.
for (const profile of PROFILES) {
  describe(`${profile} gates`, () => {
    let app;
    before(() => { app = apps[profile]; });

    test('§4.7 signUp with the API key: the user and a session token; current() is the new user', async () => {
      await useApp(ctx.server, app, { apiKey: true });
      const user = new Parse.User({ username: 'ann@example.com', password: 'Passw0rd1', email: 'ann@example.com', name: 'Ann' });
      await user.signUp();
      assert.match(user.id, /^[A-Za-z0-9]{10}$/);
      assert.match(user.getSessionToken(), SESSION_TOKEN);
      assert.equal(Parse.User.current().id, user.id);
      assert.equal(user.get('password'), undefined);
      // §7 202: the username is unique.
      const again = new Parse.User({ username: 'ann@example.com', password: 'Passw0rd1' });
      await rejectsWith(again.signUp(), Parse.Error.USERNAME_TAKEN, 'Account already exists for this username.');
    });

    test('§4.7 logIn with the application id only: the user object of §4.7 and a new session; current() follows', async () => {
      await useApp(ctx.server, app);
      await signUpWithKey('carl@example.com', 'Passw0rd1', { email: 'carl@example.com' });
      await useApp(ctx.server, app);
      const user = await Parse.User.logIn('carl@example.com', 'Passw0rd1');
      assert.match(user.getSessionToken(), SESSION_TOKEN);
      assert.equal(user.get('username'), 'carl@example.com');
      assert.equal(user.get('email'), 'carl@example.com');
      assert.ok(user.get('last_success_login') instanceof Date);
      assert.equal(user.get('_failed_login_count'), 0);
      // §4.7 lists every field: name, createdBy and updatedBy are there, null, when the user has none.
      for (const key of ['name', 'createdBy', 'updatedBy']) assert.equal(user.attributes[key], null, `login answer has ${key}: null`);
      // A user made without an ACL gets Parse's: public read, the user's own read and write.
      assert.equal(user.getACL().getPublicReadAccess(), true);
      assert.equal(user.getACL().getPublicWriteAccess(), false);
      assert.equal(user.getACL().getWriteAccess(user.id), true);
      assert.equal(user.get('password'), undefined);
      assert.equal(Parse.User.current().id, user.id);
      assert.equal(Parse.User.current().getSessionToken(), user.getSessionToken());
      // The user reads their own record with their session.
      const self = await Parse.User.current().fetch();
      assert.equal(self.get('email'), 'carl@example.com');
      await Parse.User.logOut();
      assert.equal(Parse.User.current(), null);
    });

    test('§7 logIn with a wrong password or an unknown user answers 101 Invalid username/password.', async () => {
      await useApp(ctx.server, app);
      await signUpWithKey('dora@example.com');
      await useApp(ctx.server, app);
      await rejectsWith(Parse.User.logIn('dora@example.com', 'Wr0ngPassword'), Parse.Error.OBJECT_NOT_FOUND, 'Invalid username/password.');
      await rejectsWith(Parse.User.logIn('nobody@example.com', 'Passw0rd1'), Parse.Error.OBJECT_NOT_FOUND, 'Invalid username/password.');
      assert.equal(Parse.User.current(), null);
    });

    test('§5.5 become(token) restores the user; after logOut the old token answers 209 invalid session token', async () => {
      await useApp(ctx.server, app);
      await signUpWithKey('eve@example.com');
      await useApp(ctx.server, app);
      const first = await Parse.User.logIn('eve@example.com', 'Passw0rd1');
      const token = first.getSessionToken();
      await useApp(ctx.server, app); // a new process: nothing remembered
      const again = await Parse.User.become(token);
      assert.equal(again.id, first.id);
      assert.equal(again.get('username'), 'eve@example.com');
      assert.equal(Parse.User.current().id, first.id);
      const me = await Parse.User.me(token);
      assert.equal(me.id, first.id);

      // Another session of the same user is not touched by this logout.
      const second = await Parse.User.logIn('eve@example.com', 'Passw0rd1');
      const otherToken = second.getSessionToken();
      assert.notEqual(otherToken, token);
      await useApp(ctx.server, app);
      await Parse.User.become(token);
      await Parse.User.logOut();
      assert.equal(Parse.User.current(), null);
      await rejectsWith(Parse.User.become(token), Parse.Error.INVALID_SESSION_TOKEN, 'invalid session token');
      await rejectsWith(Parse.User.become('r:00000000000000000000000000000000'), Parse.Error.INVALID_SESSION_TOKEN, 'invalid session token');
      assert.equal((await Parse.User.become(otherToken)).id, first.id);
      await Parse.User.logOut();
    });

    test('§4.7 Parse.Session.current() is the caller\'s session, with the installation id the SDK sent', async () => {
      await useApp(ctx.server, app);
      await signUpWithKey('fay@example.com');
      await useApp(ctx.server, app);
      const user = await Parse.User.logIn('fay@example.com', 'Passw0rd1');
      const session = await Parse.Session.current();
      assert.equal(session.getSessionToken(), user.getSessionToken());
      assert.equal(session.get('user').id, user.id);
      const installationId = await Parse.CoreManager.getInstallationController().currentInstallationId();
      assert.equal(session.get('installationId'), installationId);
      await Parse.User.logOut();
    });

    test('§2.6 _Session: the schema lists Parse\'s fields; rows read with the master key never carry the token', async () => {
      await useApp(ctx.server, app);
      const user = await signUpWithKey('lea@example.com');
      const schema = await new Parse.Schema('_Session').get();
      assert.deepEqual(schema.fields.sessionToken, { type: 'String' });
      assert.deepEqual(schema.fields.expiresAt, { type: 'Date' });
      assert.deepEqual(schema.fields.user, { type: 'Pointer', targetClass: '_User' });
      assert.deepEqual(schema.fields.createdWith, { type: 'Object' });
      assert.deepEqual(schema.fields.installationId, { type: 'String' });
      const rows = await new Parse.Query(Parse.Session).equalTo('user', user).find(MASTER);
      assert.equal(rows.length, 1);
      assert.equal(rows[0].get('sessionToken'), undefined);
      assert.ok(rows[0].get('expiresAt') instanceof Date);
    });

    test('§4.7 requestPasswordReset answers the same success for a known and an unknown address', async () => {
      await useApp(ctx.server, app);
      await signUpWithKey('gus@example.com', 'Passw0rd1', { email: 'gus@example.com' });
      await useApp(ctx.server, app);
      await Parse.User.requestPasswordReset('gus@example.com');
      await Parse.User.requestPasswordReset('nobody-here@example.com');
    });

    test('§4.7 a user cannot save their own record (119; the Parse profile\'s selfUpdate gate allows it, issue 36); another user\'s session gets 206; the master key can', async () => {
      await useApp(ctx.server, app);
      const other = await signUpWithKey('hal@example.com');
      await signUpWithKey('ida@example.com');
      await useApp(ctx.server, app);
      const me = await Parse.User.logIn('ida@example.com', 'Passw0rd1');
      me.set('phone', '555-0100');
      if (profile === 'parse') await me.save();
      else await rejectsWith(me.save(), Parse.Error.OPERATION_FORBIDDEN, 'Permission denied for action update on class _User.');
      const hal = Parse.User.createWithoutData(other.id);
      hal.set('phone', '555-0199');
      await rejectsWith(hal.save(null, { sessionToken: me.getSessionToken() }), Parse.Error.SESSION_MISSING, `Cannot modify user ${other.id}.`);
      me.revert();
      await Parse.User.logOut();

      await useApp(ctx.server, app);
      const byMaster = Parse.User.createWithoutData(me.id);
      byMaster.set('phone', '555-0100');
      byMaster.set('job', 'sales');
      await byMaster.save(null, MASTER);
      const back = await new Parse.Query(Parse.User).get(me.id, MASTER);
      assert.equal(back.get('phone'), '555-0100');
      assert.equal(back.get('job'), 'sales');
      assert.equal(back.get('password'), undefined);
    });

    test('§3.1 active:false set with the master key blocks logIn (101 User is not active.); true allows it again', async () => {
      await useApp(ctx.server, app);
      const user = await signUpWithKey('jon@example.com');
      user.set('active', false);
      await user.save(null, MASTER);
      await useApp(ctx.server, app);
      await rejectsWith(Parse.User.logIn('jon@example.com', 'Passw0rd1'), Parse.Error.OBJECT_NOT_FOUND, 'User is not active.');
      const u = Parse.User.createWithoutData(user.id);
      u.set('active', true);
      await u.save(null, MASTER);
      assert.equal((await Parse.User.logIn('jon@example.com', 'Passw0rd1')).id, user.id);
      await Parse.User.logOut();
    });

    test('§4.7 reading _User: anonymous is refused, a session reads, the master key reads; password never', async () => {
      await useApp(ctx.server, app);
      await signUpWithKey('kim@example.com');
      await useApp(ctx.server, app);
      // The code depends on the application's permission settings (§4.7): 101 or 119.
      await rejectsWith(new Parse.Query(Parse.User).find(), [Parse.Error.OBJECT_NOT_FOUND, Parse.Error.OPERATION_FORBIDDEN]);
      await Parse.User.logIn('kim@example.com', 'Passw0rd1');
      const seen = await new Parse.Query(Parse.User).equalTo('username', 'kim@example.com').find();
      assert.equal(seen.length, 1);
      assert.equal(seen[0].get('password'), undefined);
      await Parse.User.logOut();
    });
  });
}
