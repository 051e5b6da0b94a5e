// Issue 36: Parse's GeoPoint and Polygon through the stock SDK, in every application (they are
// types, not a gate): save and fetch, `near` with a maximum distance and nearest first, count and
// skip with it, `withinGeoBox` (corners in either order), `withinPolygon`, `withinRadians`
// unsorted (`$centerSphere`), `polygonContains`, and the errors of bad geo input.
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import { Parse, compatSuite, useApp, rejectsWith, request, PROFILES } from './lib/compat.mjs';

const ctx = compatSuite({ seed: () => seed() });
const apps = ctx.apps;

const CITIES = [
  { name: 'Sacramento', at: [38.52, -121.5] },
  { name: 'Honolulu', at: [21.35, -157.93] },
  { name: 'San Francisco', at: [37.75, -122.68] },
  { name: 'Oakland', at: [37.8, -122.27] },
];
const SF = new Parse.GeoPoint(37.75, -122.68);

async function seed() {
  const rows = CITIES.map((c) => new Parse.Object('Places', { name: c.name, location: new Parse.GeoPoint(...c.at) }));
  const areas = [
    new Parse.Object('Areas', { name: 'unit', shape: new Parse.Polygon([[0, 0], [0, 1], [1, 1], [1, 0]]) }),
    new Parse.Object('Areas', { name: 'double', shape: new Parse.Polygon([[0, 0], [0, 2], [2, 2], [2, 0]]) }),
    new Parse.Object('Areas', { name: 'far', shape: new Parse.Polygon([[10, 10], [10, 15], [15, 15], [15, 10], [10, 10]]) }),
  ];
  await Parse.Object.saveAll([...rows, ...areas]);
}

const Q = (cls = 'Places') => new Parse.Query(cls);
const names = async (query) => (await query.find()).map((r) => r.get('name'));
const headers = (app) => ({ 'X-Parse-Application-Id': app.appId, 'X-Parse-Master-Key': app.masterKey });

for (const profile of PROFILES) {
  describe(`${profile} gates`, () => {
    before(async () => { await useApp(ctx.server, apps[profile], { apiKey: true }); });

    test('issue 36: a GeoPoint and a Polygon are saved and read back as written; the Polygon closed', async () => {
      const place = await Q().equalTo('name', 'Honolulu').first();
      const point = place.get('location');
      assert.ok(point instanceof Parse.GeoPoint);
      assert.deepEqual([point.latitude, point.longitude], [21.35, -157.93]);
      const area = await Q('Areas').equalTo('name', 'unit').first();
      assert.ok(area.get('shape') instanceof Parse.Polygon);
      assert.deepEqual(area.get('shape').coordinates, [[0, 0], [0, 1], [1, 1], [1, 0], [0, 0]]);
      // An open ring asks for the polygon it closes to.
      assert.deepEqual(await names(Q('Areas').equalTo('shape', new Parse.Polygon([[0, 0], [0, 1], [1, 1], [1, 0]]))), ['unit']);
      const schema = await request(ctx.server, 'GET', '/parse/schemas/Places', { headers: headers(apps[profile]) });
      assert.deepEqual(schema.body.fields.location, { type: 'GeoPoint' });
    });

    test('issue 36: near with a maximum distance, nearest first; count, skip and limit with it', async () => {
      assert.deepEqual(await names(Q().near('location', SF)), ['San Francisco', 'Oakland', 'Sacramento', 'Honolulu']);
      assert.deepEqual(await names(Q().withinKilometers('location', SF, 150)), ['San Francisco', 'Oakland', 'Sacramento']);
      assert.deepEqual(await names(Q().withinMiles('location', SF, 30)), ['San Francisco', 'Oakland']);
      assert.equal(await Q().withinKilometers('location', SF, 150).count(), 3);
      assert.deepEqual(await names(Q().withinKilometers('location', SF, 150).skip(1).limit(1)), ['Oakland']);
      // An order named by the query wins over distance.
      assert.deepEqual(await names(Q().near('location', SF).ascending('name')), ['Honolulu', 'Oakland', 'Sacramento', 'San Francisco']);
    });

    test('issue 36: withinGeoBox, with its corners in either order', async () => {
      const sw = new Parse.GeoPoint(37.7, -122.8), ne = new Parse.GeoPoint(37.9, -122.2);
      assert.deepEqual((await names(Q().withinGeoBox('location', sw, ne))).sort(), ['Oakland', 'San Francisco']);
      assert.deepEqual((await names(Q().withinGeoBox('location', ne, sw))).sort(), ['Oakland', 'San Francisco']);
    });

    test('issue 36: withinPolygon, a point on a corner included', async () => {
      const ring = [new Parse.GeoPoint(38.52, -121.5), new Parse.GeoPoint(37.75, -157.93), new Parse.GeoPoint(37.578072, -121.379914)];
      assert.deepEqual((await names(Q().withinPolygon('location', ring))).sort(), ['Oakland', 'Sacramento', 'San Francisco']);
      assert.deepEqual(await names(Q().withinPolygon('location', [[37.7, -122.8], [37.7, -122.5], [37.9, -122.5], [37.9, -122.8]])), ['San Francisco']);
    });

    test('issue 36: withinRadians unsorted is $centerSphere', async () => {
      const found = await names(Q().withinRadians('location', SF, 150 / 6371, false));
      assert.deepEqual(found.sort(), ['Oakland', 'Sacramento', 'San Francisco']);
      assert.deepEqual(await names(Q().withinKilometers('location', SF, 1, false)), ['San Francisco']);
    });

    test('issue 36: polygonContains finds the Polygons holding a point', async () => {
      const found = await names(Q('Areas').polygonContains('shape', new Parse.GeoPoint(0.5, 0.5)));
      assert.deepEqual(found.sort(), ['double', 'unit']);
      assert.deepEqual(await names(Q('Areas').polygonContains('shape', new Parse.GeoPoint(12, 12))), ['far']);
    });

    test('issue 36: bad geo input answers 107, a second GeoPoint field 111', async () => {
      const h = headers(apps[profile]);
      const bad = await request(ctx.server, 'POST', '/parse/classes/Places', { headers: h, body: { location: { __type: 'GeoPoint', latitude: 91, longitude: 0 } } });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.code, 107);
      assert.match(bad.body.error, /latitude/);
      await rejectsWith(Q().withinPolygon('location', []).find(), Parse.Error.INVALID_JSON);
      await rejectsWith(Q().withinPolygon('location', 1234).find(), Parse.Error.INVALID_JSON);
      await rejectsWith(Q('Areas').polygonContains('shape', 1234).find(), Parse.Error.INVALID_JSON);
      const second = new Parse.Object('Places', { name: 'twice', home: new Parse.GeoPoint(1, 1) });
      await rejectsWith(second.save(), Parse.Error.INCORRECT_TYPE,
        'currently, only one GeoPoint field may exist in an object. Adding home when location already exists.');
      const polygon = await request(ctx.server, 'POST', '/parse/classes/Areas', { headers: h, body: { shape: { __type: 'Polygon', coordinates: [[0, 0], [0, 1]] } } });
      assert.equal(polygon.body.code, 107);
    });
  });
}
