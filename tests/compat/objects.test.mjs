// Parse.Object through the stock SDK: create, fetch, save, destroy, every update operator (set,
// unset, increment, add, addUnique, remove), dirty/revert, saveAll/destroyAll (the SDK's /batch),
// Pointer, Date, Object and Array values. Every test runs with the spec's gates and with the Parse profile.
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import { Parse, useApp, MASTER, rejectsWith, PROFILES, compatSuite } from './lib/compat.mjs';

// The file's server and its two applications (one per profile), made before the first test.
const ctx = compatSuite();
const { apps } = ctx;

// Reads the object back in a fresh instance, so nothing comes from the SDK's local state.
async function reload(className, id) {
  return new Parse.Query(className).get(id, MASTER);
}

for (const profile of PROFILES) {
  describe(`${profile} gates`, () => {
    test('§4.1 save creates (objectId of 10, createdAt), fetch reads it back, destroy removes it (then 101)', async () => {
      await useApp(ctx.server, apps[profile]);
      const deal = new Parse.Object('Deal');
      deal.set({ Name: 'Acme', Total: 1200.5, Won: false, Tags: ['a', 'b'], Meta: { source: 'web', n: 1 } });
      await deal.save(null, MASTER);
      assert.match(deal.id, /^[A-Za-z0-9]{10}$/);
      assert.ok(deal.createdAt instanceof Date);
      assert.equal(deal.updatedAt.getTime(), deal.createdAt.getTime());

      const copy = Parse.Object.extend('Deal').createWithoutData(deal.id);
      await copy.fetch(MASTER);
      assert.equal(copy.get('Name'), 'Acme');
      assert.equal(copy.get('Total'), 1200.5);
      assert.equal(copy.get('Won'), false);
      assert.deepEqual(copy.get('Tags'), ['a', 'b']);
      assert.deepEqual(copy.get('Meta'), { source: 'web', n: 1 });

      await deal.destroy(MASTER);
      await rejectsWith(reload('Deal', deal.id), Parse.Error.OBJECT_NOT_FOUND, 'Object not found.');
    });

    test('§4.1 set changes only the fields sent; unset (Delete) removes a value', async () => {
      await useApp(ctx.server, apps[profile]);
      const deal = new Parse.Object('Deal', { Name: 'A', Stage: 'new', Note: 'keep me' });
      await deal.save(null, MASTER);
      const before = deal.updatedAt;
      deal.set('Stage', 'won');
      deal.unset('Name');
      await deal.save(null, MASTER);
      assert.ok(deal.updatedAt >= before);
      const back = await reload('Deal', deal.id);
      assert.equal(back.get('Stage'), 'won');
      assert.equal(back.get('Note'), 'keep me');
      assert.equal(back.has('Name'), false);
    });

    test('§4.1 increment, also negative; the save answers the new value and two clients\' increments add up', async () => {
      await useApp(ctx.server, apps[profile]);
      const counter = new Parse.Object('Counter', { n: 10 });
      await counter.save(null, MASTER);
      // A second instance of the same record, as another client would hold it.
      const other = Parse.Object.extend('Counter').createWithoutData(counter.id);
      counter.increment('n', 5);
      await counter.save(null, MASTER);
      assert.equal(counter.get('n'), 15);
      other.increment('n', -3);
      await other.save(null, MASTER);
      // The server's answer carries the resulting value, not the client's guess (which would be -3).
      assert.equal(other.get('n'), 12);
      counter.increment('n');
      await counter.save(null, MASTER);
      assert.equal(counter.get('n'), 13);
      assert.equal((await reload('Counter', counter.id)).get('n'), 13);
    });

    test('§4.1 add, addUnique (no duplicate) and remove on an Array', async () => {
      await useApp(ctx.server, apps[profile]);
      const list = new Parse.Object('Lists', { items: ['a', 'b'] });
      await list.save(null, MASTER);
      list.add('items', 'c');
      await list.save(null, MASTER);
      assert.deepEqual((await reload('Lists', list.id)).get('items'), ['a', 'b', 'c']);
      list.addUnique('items', 'a');
      list.addAllUnique('items', ['d', 'b']);
      await list.save(null, MASTER);
      assert.deepEqual((await reload('Lists', list.id)).get('items'), ['a', 'b', 'c', 'd']);
      list.remove('items', 'b');
      list.removeAll('items', ['d', 'zz']);
      await list.save(null, MASTER);
      assert.deepEqual((await reload('Lists', list.id)).get('items'), ['a', 'c']);
      // Operators on a field that does not exist yet start from nothing.
      list.add('fresh', 1);
      list.addUnique('fresh2', 2);
      await list.save(null, MASTER);
      const back = await reload('Lists', list.id);
      assert.deepEqual(back.get('fresh'), [1]);
      assert.deepEqual(back.get('fresh2'), [2]);
    });

    test('§2.2 Date, Pointer and Object values round-trip; fetchWithInclude expands a Pointer', async () => {
      await useApp(ctx.server, apps[profile]);
      const account = new Parse.Object('Accounts', { Name: 'Acme' });
      await account.save(null, MASTER);
      const when = new Date('2026-05-04T03:02:01.123Z');
      const task = new Parse.Object('Tasks', { Name: 'call', Date: when, AccountId: account, Data: { a: [1, { b: 2 }] } });
      await task.save(null, MASTER);
      const back = await reload('Tasks', task.id);
      assert.ok(back.get('Date') instanceof Date);
      assert.equal(back.get('Date').toISOString(), '2026-05-04T03:02:01.123Z');
      assert.equal(back.get('AccountId').id, account.id);
      assert.equal(back.get('AccountId').className, 'Accounts');
      assert.equal(back.get('AccountId').get('Name'), undefined, 'a Pointer without include carries no fields');
      assert.deepEqual(back.get('Data'), { a: [1, { b: 2 }] });

      const withAccount = Parse.Object.extend('Tasks').createWithoutData(task.id);
      await withAccount.fetchWithInclude('AccountId', MASTER);
      assert.equal(withAccount.get('AccountId').get('Name'), 'Acme');
    });

    test('§2.2 a value of another type than the field\'s answers 111 schema mismatch', async () => {
      await useApp(ctx.server, apps[profile]);
      const a = new Parse.Object('Typed', { when: new Date() });
      await a.save(null, MASTER);
      const b = new Parse.Object('Typed', { when: 'yesterday' });
      await rejectsWith(b.save(null, MASTER), Parse.Error.INCORRECT_TYPE, /schema mismatch for Typed\.when; expected Date but got String/);
    });

    test('dirty and revert are local: a reverted change is never sent', async () => {
      await useApp(ctx.server, apps[profile]);
      const o = new Parse.Object('Deal', { Name: 'orig' });
      await o.save(null, MASTER);
      assert.equal(o.dirty(), false);
      o.set('Name', 'changed');
      o.increment('Views');
      assert.equal(o.dirty('Name'), true);
      assert.deepEqual(o.dirtyKeys().sort(), ['Name', 'Views']);
      o.revert('Name');
      assert.equal(o.get('Name'), 'orig');
      await o.save(null, MASTER);
      const back = await reload('Deal', o.id);
      assert.equal(back.get('Name'), 'orig');
      assert.equal(back.get('Views'), 1);
    });

    test('§4.4 saveAll and destroyAll go through /batch with the API key', async () => {
      await useApp(ctx.server, apps[profile], { apiKey: true });
      const rows = [1, 2, 3, 4, 5].map((i) => new Parse.Object('Bulk', { i }));
      await Parse.Object.saveAll(rows);
      assert.ok(rows.every((r) => /^[A-Za-z0-9]{10}$/.test(r.id)));
      assert.equal(await new Parse.Query('Bulk').count(), 5);
      for (const r of rows) r.increment('i', 10);
      await Parse.Object.saveAll(rows);
      const values = (await new Parse.Query('Bulk').ascending('i').find()).map((r) => r.get('i'));
      assert.deepEqual(values, [11, 12, 13, 14, 15]);
      await Parse.Object.destroyAll(rows.slice(0, 3));
      assert.equal(await new Parse.Query('Bulk').count(), 2);
    });

    test('§4.4 destroyAll of a record that is gone reports that item only; the others are deleted', async () => {
      await useApp(ctx.server, apps[profile], { apiKey: true });
      const rows = [1, 2].map((i) => new Parse.Object('Bulk2', { i }));
      await Parse.Object.saveAll(rows);
      await rows[0].destroy();
      const err = await rejectsWith(Parse.Object.destroyAll(rows), Parse.Error.AGGREGATE_ERROR);
      assert.equal(err.errors.length, 1);
      assert.equal(err.errors[0].object.id, rows[0].id);
      assert.equal(err.errors[0].code, Parse.Error.OBJECT_NOT_FOUND);
      assert.equal(await new Parse.Query('Bulk2').count(), 0);
    });

    test('§4.4 an unsaved object a Pointer names is saved first (the SDK\'s batch); fetchAll reads several at once', async () => {
      await useApp(ctx.server, apps[profile]);
      const account = new Parse.Object('Accounts', { Name: 'made on the way' });
      const task = new Parse.Object('Tasks', { Name: 'follow up', AccountId: account });
      await task.save(null, MASTER);
      assert.match(account.id, /^[A-Za-z0-9]{10}$/);
      const back = await reload('Tasks', task.id);
      assert.equal(back.get('AccountId').id, account.id);
      const copies = [Parse.Object.extend('Tasks').createWithoutData(task.id), Parse.Object.extend('Accounts').createWithoutData(account.id)];
      await Parse.Object.fetchAll([copies[0]], MASTER);
      await Parse.Object.fetchAll([copies[1]], MASTER);
      assert.equal(copies[0].get('Name'), 'follow up');
      assert.equal(copies[1].get('Name'), 'made on the way');
    });

    test('§4.1 with the API key as the only credential: create, update, fetch, destroy', async () => {
      await useApp(ctx.server, apps[profile], { apiKey: true });
      const o = new Parse.Object('KeyMade', { Name: 'k' });
      await o.save();
      o.set('Name', 'k2');
      await o.save();
      const back = await new Parse.Query('KeyMade').get(o.id);
      assert.equal(back.get('Name'), 'k2');
      await o.destroy();
      await rejectsWith(new Parse.Query('KeyMade').get(o.id), Parse.Error.OBJECT_NOT_FOUND);
    });
  });
}
