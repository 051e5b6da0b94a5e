// Parse.Schema through the stock SDK (§2.5, §4.5): all, get, save with every field type the spec
// has, required/defaultValue, addField via update, deleteField, CLPs, indexes, purge (under
// --prefix parse), delete. The SDK always sends the master key for these. Both gate settings.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Parse, useApp, MASTER, rejectsWith, uniq, PROFILES, compatSuite } from './lib/compat.mjs';

// The file's server and its two applications (one per profile), made before the first test.
const ctx = compatSuite();
const { apps } = ctx;

const COMMON = ['objectId', 'createdAt', 'updatedAt', 'ACL', 'createdBy', 'updatedBy'];

for (const profile of PROFILES) {
  describe(`${profile} gates`, () => {
    test('§4.5 Schema.save creates a class with the spec\'s field types; get reads it back; all lists it', async () => {
      await useApp(ctx.server, apps[profile]);
      const cls = uniq('Products');
      const schema = new Parse.Schema(cls);
      schema.addString('Name').addNumber('Price').addBoolean('Active').addDate('Launch').addArray('Tags')
        .addObject('Meta').addPointer('Owner', '_User').addRelation('Fans', '_User').addFile('Image').addField('Body', 'String');
      const saved = await schema.save();
      assert.equal(saved.className, cls);
      const got = await new Parse.Schema(cls).get();
      assert.deepEqual(Object.keys(got.fields).sort(), [...COMMON, 'Name', 'Price', 'Active', 'Launch', 'Tags', 'Meta', 'Owner', 'Fans', 'Image', 'Body'].sort());
      assert.deepEqual(got.fields.Owner, { type: 'Pointer', targetClass: '_User' });
      assert.deepEqual(got.fields.Fans, { type: 'Relation', targetClass: '_User' });
      assert.equal(got.fields.Price.type, 'Number');
      assert.equal(got.fields.Image.type, 'File');
      // §2.5: a class made through the schema endpoint without permissions is closed to everyone
      // (the spec's gates); the Parse profile gives Parse's open default.
      const expectedOpen = profile === 'parse' ? { '*': true } : {};
      assert.deepEqual(got.classLevelPermissions.find, expectedOpen);
      assert.deepEqual(got.classLevelPermissions.create, expectedOpen);
      const all = await Parse.Schema.all();
      assert.ok(all.some((s) => s.className === cls));
      for (const system of ['_User', '_Role', '_Session']) assert.ok(all.some((s) => s.className === system), system);
    });

    test('§4.5 update adds fields and deleteField removes one (its values go with it)', async () => {
      await useApp(ctx.server, apps[profile]);
      const cls = uniq('Leads');
      const row = new Parse.Object(cls, { Name: 'a', Temp: 'x' });
      await row.save(null, MASTER);
      const schema = new Parse.Schema(cls);
      schema.addString('Source').addNumber('Rank');
      const updated = await schema.update();
      assert.ok(updated.fields.Source && updated.fields.Rank);
      const drop = new Parse.Schema(cls);
      drop.deleteField('Temp');
      const after = await drop.update();
      assert.equal(after.fields.Temp, undefined);
      const back = await new Parse.Query(cls).get(row.id, MASTER);
      assert.equal(back.get('Name'), 'a');
      assert.equal(back.has('Temp'), false);
      // An existing field cannot be added again with another type (§2.2: the type is fixed).
      const clash = new Parse.Schema(cls);
      clash.addNumber('Name');
      await rejectsWith(clash.update(), Parse.Error.INVALID_SCHEMA_OPERATION, 'Field Name exists, cannot update.');
    });

    test('§4.5 required and defaultValue: a create without the field gets the default; an explicit null is refused (142)', async () => {
      await useApp(ctx.server, apps[profile]);
      const cls = uniq('Tickets');
      const schema = new Parse.Schema(cls);
      schema.addString('Title', { required: true }).addString('Status', { required: true, defaultValue: 'open' }).addNumber('Priority', { defaultValue: 3 });
      await schema.save();
      const got = await new Parse.Schema(cls).get();
      assert.deepEqual(got.fields.Status, { type: 'String', required: true, defaultValue: 'open' });
      const t = new Parse.Object(cls, { Title: 'printer on fire' });
      await t.save(null, MASTER);
      assert.equal(t.get('Status'), 'open');
      assert.equal(t.get('Priority'), 3);
      await rejectsWith(new Parse.Object(cls, { Status: 'new' }).save(null, MASTER), Parse.Error.VALIDATION_ERROR, 'Title is required');
      await rejectsWith(new Parse.Object(cls, { Title: 'x', Status: null }).save(null, MASTER), Parse.Error.VALIDATION_ERROR, 'Status is required');
      // A default of the wrong type is refused (111).
      const bad = new Parse.Schema(uniq('BadDefault'));
      bad.addNumber('N', { defaultValue: 'three' });
      await rejectsWith(bad.save(), Parse.Error.INCORRECT_TYPE);
    });

    test('§2.5 setCLP with Parse.Schema: requiresAuthentication and per-user grants are stored and read back', async () => {
      await useApp(ctx.server, apps[profile]);
      const cls = uniq('Clp');
      await new Parse.Object(cls, { Name: 'x' }).save(null, MASTER);
      const schema = new Parse.Schema(cls);
      const clp = {
        find: { requiresAuthentication: true }, get: { requiresAuthentication: true }, count: { '*': true },
        create: { 'role:Writers': true }, update: { 'role:Writers': true }, delete: {}, addField: {},
      };
      schema.setCLP(clp);
      await schema.update();
      const got = (await new Parse.Schema(cls).get()).classLevelPermissions;
      for (const op of Object.keys(clp)) assert.deepEqual(got[op], clp[op], op);
      // requiresAuthentication: anonymous find refused with 101 user needs to be authenticated (§7).
      await useApp(ctx.server, apps[profile]);
      await rejectsWith(new Parse.Query(cls).find(), Parse.Error.OBJECT_NOT_FOUND, 'user needs to be authenticated');
    });

    test('§4.5 indexes: addIndex and deleteIndex through update', async () => {
      await useApp(ctx.server, apps[profile]);
      const cls = uniq('Indexed');
      await new Parse.Object(cls, { City: 'Oslo', Score: 1 }).save(null, MASTER);
      const schema = new Parse.Schema(cls);
      schema.addIndex('city_score', { City: 1, Score: -1 });
      const withIndex = await schema.update();
      assert.deepEqual(withIndex.indexes.city_score, { City: 1, Score: -1 });
      const drop = new Parse.Schema(cls);
      drop.deleteIndex('city_score');
      const without = await drop.update();
      assert.equal(without.indexes?.city_score, undefined);
    });

    test('§4.5 purge deletes every record and keeps the class; delete then removes the empty class (get: 103)', async () => {
      await useApp(ctx.server, apps[profile]);
      const cls = uniq('Temp');
      const rows = [1, 2, 3].map((i) => new Parse.Object(cls, { i }));
      await Parse.Object.saveAll(rows, MASTER);
      // Parse refuses to drop a class that still holds records.
      await rejectsWith(new Parse.Schema(cls).delete(), Parse.Error.INVALID_SCHEMA_OPERATION,
        `Class ${cls} is not empty, contains 3 objects, cannot drop schema.`);
      await new Parse.Schema(cls).purge();
      assert.equal(await new Parse.Query(cls).count(MASTER), 0);
      assert.ok((await new Parse.Schema(cls).get()).fields.i);
      await new Parse.Schema(cls).delete();
      await rejectsWith(new Parse.Schema(cls).get(), Parse.Error.INVALID_CLASS_NAME, `Class ${cls} does not exist.`);
    });

    test('issue 36: Parse.Schema makes GeoPoint and Polygon fields; a second GeoPoint answers 111', async () => {
      await useApp(ctx.server, apps[profile]);
      const cls = uniq('Geo');
      const geo = new Parse.Schema(cls);
      geo.addGeoPoint('Location');
      geo.addPolygon('Area');
      await geo.save();
      const got = await new Parse.Schema(cls).get();
      assert.deepEqual([got.fields.Location, got.fields.Area], [{ type: 'GeoPoint' }, { type: 'Polygon' }]);
      const second = new Parse.Schema(cls);
      second.addGeoPoint('Home');
      await rejectsWith(second.update(), Parse.Error.INCORRECT_TYPE,
        'currently, only one GeoPoint field may exist in an object. Adding Home when Location already exists.');
    });

    test('§5.2 the SDK configured with an API key (REQUEST_HEADERS) and the master key: Parse.Schema (always useMasterKey) works', async () => {
      // Both credentials are the application's own; either one alone may read and change schemas (§5.3).
      await useApp(ctx.server, apps[profile], { apiKey: true });
      const cls = uniq('BothKeys');
      await new Parse.Object(cls, { Name: 'x' }).save();
      const got = await new Parse.Schema(cls).get();
      assert.equal(got.className, cls);
    });
  });
}
