// Parse.Config and Parse.Cloud.run through the stock SDK: Config.get/save under --prefix parse are
// the `Config` class's flag rows (§4.9); anonymous reads are refused (§4.9, Parse allows them);
// masterKeyOnly params; Parse.Cloud.run answers 141 function not found (§4.9). Both gate settings.
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import { Parse, useApp, MASTER, rejectsWith, signUpWithKey, uniq, PROFILES, compatSuite } from './lib/compat.mjs';

// The file's server and its two applications (one per profile), made before the first test.
const ctx = compatSuite();
const { apps } = ctx;

for (const profile of PROFILES) {
  describe(`${profile} gates`, () => {
    test('§4.9 Config.save (master key) writes one Config row per param, {Name, Value:{Name: v}}; Config.get reads them back', async () => {
      await useApp(ctx.server, apps[profile]);
      assert.deepEqual((await Parse.Config.get(MASTER)).attributes, {});
      await Parse.Config.save({ WelcomeText: 'hello', MaxSeats: 12, Limits: { daily: 5 }, Beta: false });
      const config = await Parse.Config.get(MASTER);
      assert.deepEqual(config.attributes, { WelcomeText: 'hello', MaxSeats: 12, Limits: { daily: 5 }, Beta: false });
      assert.equal(config.get('MaxSeats'), 12);
      const rows = await new Parse.Query('Config').ascending('Name').find(MASTER);
      assert.deepEqual(rows.map((r) => [r.get('Name'), r.get('Value')]), [
        ['Beta', { Beta: false }], ['Limits', { Limits: { daily: 5 } }], ['MaxSeats', { MaxSeats: 12 }], ['WelcomeText', { WelcomeText: 'hello' }],
      ]);
      // Saving again replaces a param's value, it does not add a second row.
      await Parse.Config.save({ MaxSeats: 20 });
      assert.equal((await Parse.Config.get(MASTER)).get('MaxSeats'), 20);
      assert.equal(await new Parse.Query('Config').equalTo('Name', 'MaxSeats').count(MASTER), 1);
      // {__op: Delete} removes a param.
      await Parse.Config.save({ Beta: { __op: 'Delete' } });
      assert.equal((await Parse.Config.get(MASTER)).get('Beta'), undefined);
      assert.equal(await new Parse.Query('Config').equalTo('Name', 'Beta').count(MASTER), 0);
    });

    test('§4.9 a flag row written through the record API is a Config param', async () => {
      await useApp(ctx.server, apps[profile]);
      await new Parse.Object('Config', { Name: 'AcceptWebToTable', Value: { AcceptWebToTable: true } }).save(null, MASTER);
      assert.equal((await Parse.Config.get(MASTER)).get('AcceptWebToTable'), true);
    });

    test('§4.9 anonymous Config.get is refused (101; Parse answers anyone); a logged-in user reads the params', async () => {
      await useApp(ctx.server, apps[profile]);
      await Parse.Config.save({ Motto: 'sell more' });
      await signUpWithKey(`${uniq('reader')}@example.com`);
      const token = Parse.User.current().getSessionToken();
      await useApp(ctx.server, apps[profile]);
      await rejectsWith(Parse.Config.get(), [Parse.Error.OBJECT_NOT_FOUND, Parse.Error.OPERATION_FORBIDDEN], /user needs to be authenticated|Permission denied/);
      await Parse.User.become(token);
      assert.equal((await Parse.Config.get()).get('Motto'), 'sell more');
      await Parse.User.logOut();
    });

    test('Config.save with masterKeyOnly: the param is read by the master key only, as Parse Server does', async () => {
      await useApp(ctx.server, apps[profile]);
      await Parse.Config.save({ PublicNote: 'hi', PartnerSecret: 's3cr3t' }, { PartnerSecret: true });
      assert.equal((await Parse.Config.get(MASTER)).get('PartnerSecret'), 's3cr3t');
      await signUpWithKey(`${uniq('peek')}@example.com`);
      const seen = await Parse.Config.get();
      assert.equal(seen.get('PublicNote'), 'hi');
      assert.equal(seen.get('PartnerSecret'), undefined, 'a masterKeyOnly param must not reach a session');
      await Parse.User.logOut();
    });

    test('§4.9 Parse.Cloud.run answers 141 function not found, for any name and any credential', async () => {
      await useApp(ctx.server, apps[profile]);
      await rejectsWith(Parse.Cloud.run('hello'), Parse.Error.SCRIPT_FAILED, 'function not found');
      await rejectsWith(Parse.Cloud.run('getlead', { PhoneNumber: '555' }, MASTER), Parse.Error.SCRIPT_FAILED, 'function not found');
      await useApp(ctx.server, apps[profile], { apiKey: true });
      await rejectsWith(Parse.Cloud.run('web2table', { table: 'Sales' }), Parse.Error.SCRIPT_FAILED, 'function not found');
    });
  });
}
