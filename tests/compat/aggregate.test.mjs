// query.aggregate and query.distinct through the stock SDK (GET /parse/aggregate/<Class>, §4.6 and
// COMPATIBILITY): $match, $group ($sum, $avg, $min, $max), $sort, $skip, $limit, $project, $count;
// distinct with a where; a session needs find (and count for totals); anonymous 119. Both gate settings.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Parse, compatSuite, useApp, MASTER, rejectsWith, signUpWithKey, uniq, PROFILES } from './lib/compat.mjs';

const ctx = compatSuite({
  seed: () => Parse.Object.saveAll([
    { Name: 'a', Stage: 'won', Total: 100, Region: 'north' },
    { Name: 'b', Stage: 'won', Total: 300, Region: 'south' },
    { Name: 'c', Stage: 'lost', Total: 50, Region: 'north' },
    { Name: 'd', Stage: 'open', Total: 20, Region: 'north' },
    { Name: 'e', Stage: 'open', Total: 30 },
  ].map((r) => new Parse.Object('Sales', r))),
});
const apps = ctx.apps;

const byId = (rows) => [...rows].sort((x, y) => String(x.objectId).localeCompare(String(y.objectId)));

for (const profile of PROFILES) {
  describe(`${profile} gates`, () => {
    test('§4.6 $group by a field with $sum, $avg, $min, $max: the group key comes back as objectId', async () => {
      await useApp(ctx.server, apps[profile]);
      const rows = await new Parse.Query('Sales').aggregate([
        { $group: { _id: '$Stage', n: { $sum: 1 }, total: { $sum: '$Total' }, avg: { $avg: '$Total' }, min: { $min: '$Total' }, max: { $max: '$Total' } } },
      ]);
      assert.deepEqual(byId(rows), [
        { objectId: 'lost', n: 1, total: 50, avg: 50, min: 50, max: 50 },
        { objectId: 'open', n: 2, total: 50, avg: 25, min: 20, max: 30 },
        { objectId: 'won', n: 2, total: 400, avg: 200, min: 100, max: 300 },
      ]);
    });

    test('§4.6 $match then $group with _id null; $match and $sort, $skip, $limit, $project without $group is a find', async () => {
      await useApp(ctx.server, apps[profile]);
      const north = await new Parse.Query('Sales').aggregate([
        { $match: { Region: 'north', Total: { $gte: 30 } } },
        { $group: { _id: null, total: { $sum: '$Total' } } },
      ]);
      assert.deepEqual(north, [{ objectId: null, total: 150 }]);
      const page = await new Parse.Query('Sales').aggregate([
        { $match: { Stage: { $in: ['won', 'open'] } } }, { $sort: { Total: -1 } }, { $skip: 1 }, { $limit: 2 }, { $project: { Name: 1 } },
      ]);
      assert.deepEqual(page.map((r) => r.Name), ['a', 'e']);
      assert.ok(page.every((r) => r.Total === undefined && typeof r.objectId === 'string'));
      const counted = await new Parse.Query('Sales').aggregate([{ $match: { Stage: 'open' } }, { $count: 'howMany' }]);
      assert.deepEqual(counted, [{ howMany: 2 }]);
    });

    test('§4.6 a single stage object is taken as the pipeline', async () => {
      await useApp(ctx.server, apps[profile]);
      const rows = await new Parse.Query('Sales').aggregate({ $group: { _id: '$Region', n: { $sum: 1 } } });
      assert.deepEqual(byId(rows), byId([{ objectId: 'north', n: 3 }, { objectId: 'south', n: 1 }, { objectId: null, n: 1 }]));
    });

    test('§4.6 distinct: the values of a field, with the query\'s where', async () => {
      await useApp(ctx.server, apps[profile]);
      assert.deepEqual((await new Parse.Query('Sales').distinct('Stage')).sort(), ['lost', 'open', 'won']);
      assert.deepEqual((await new Parse.Query('Sales').equalTo('Region', 'north').distinct('Stage')).sort(), ['lost', 'open', 'won']);
      assert.deepEqual((await new Parse.Query('Sales').greaterThan('Total', 60).distinct('Region')).sort(), ['north', 'south']);
      assert.deepEqual(await new Parse.Query('NoSuchClass').distinct('x'), []);
    });

    test('§4.6 with a session: find (and count for $group) decide; anonymous gets 119 whatever the permissions', async () => {
      await useApp(ctx.server, apps[profile]);
      const cls = uniq('Pipeline');
      await Parse.Object.saveAll([1, 2, 3].map((i) => new Parse.Object(cls, { i, k: i % 2 })), MASTER);
      const schema = new Parse.Schema(cls);
      schema.setCLP({ find: { '*': true }, get: { '*': true }, count: {}, create: {}, update: {}, delete: {}, addField: {} });
      await schema.update();
      const user = await signUpWithKey(`${uniq('agg')}@example.com`);
      const session = { useMasterKey: false, sessionToken: user.getSessionToken() };
      const rows = await new Parse.Query(cls).aggregate([{ $match: { k: 1 } }, { $project: { i: 1 } }], session);
      assert.deepEqual(rows.map((r) => r.i).sort(), [1, 3]);
      // COMPATIBILITY §4.6: a total needs the count permission, as count=1 does.
      await rejectsWith(new Parse.Query(cls).aggregate([{ $group: { _id: null, n: { $sum: 1 } } }], session), Parse.Error.OPERATION_FORBIDDEN);
      await useApp(ctx.server, apps[profile]);
      await rejectsWith(new Parse.Query(cls).aggregate([{ $match: { k: 1 } }], { useMasterKey: false }), Parse.Error.OPERATION_FORBIDDEN);
    });
  });
}
