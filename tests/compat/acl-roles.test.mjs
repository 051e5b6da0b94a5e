// Parse.ACL and Parse.Role through the stock SDK (§2.1, §2.4, §2.5): per-user and public ACLs, role
// ACLs, role hierarchies (a role in another role's `roles` inherits its rights), CLPs granted to a
// role with Parse.Schema, and a user's roles found by relation equality. Both gate settings.
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import { Parse, useApp, MASTER, rejectsWith, signUpWithKey, openClass, uniq, PROFILES, compatSuite } from './lib/compat.mjs';

// The file's server and its two applications (one per profile), made before the first test.
const ctx = compatSuite();
const { apps } = ctx;

// Users made with the master key, each with a session of its own (no SDK current user left behind).
async function users(app, ...names) {
  await useApp(ctx.server, app);
  const out = {};
  for (const n of names) {
    const u = await signUpWithKey(`${uniq(n)}@example.com`);
    out[n] = { user: u, token: u.getSessionToken() };
  }
  await useApp(ctx.server, app);
  return out;
}
const as = (who) => ({ sessionToken: who.token });

// A class made by the master key and opened to every session through the schema API (§2.5).
async function openedClass(app, prefix) {
  await useApp(ctx.server, app);
  const cls = uniq(prefix);
  const seedRow = new Parse.Object(cls, { Name: 'seed' });
  await seedRow.save(null, MASTER);
  await seedRow.destroy(MASTER);
  await openClass(cls);
  return cls;
}

async function makeRole(name, { users: members = [], roles = [] } = {}) {
  const acl = new Parse.ACL();
  acl.setPublicReadAccess(true);
  const role = new Parse.Role(name, acl);
  for (const m of members) role.getUsers().add(m.user);
  for (const r of roles) role.getRoles().add(r);
  await role.save(null, MASTER);
  return role;
}

for (const profile of PROFILES) {
  describe(`${profile} gates`, () => {
    test('§2.1 a private ACL: only its user reads and writes; others get an empty find and 101', async () => {
      const app = apps[profile];
      const cls = await openedClass(app, 'Private');
      const { ann, bob } = await users(app, 'ann', 'bob');
      const mine = new Parse.Object(cls, { Name: 'ann only' });
      mine.setACL(new Parse.ACL(ann.user));
      await mine.save(null, as(ann));
      // §2.1 a session's create sets createdBy.
      const back = await new Parse.Query(cls).get(mine.id, as(ann));
      assert.equal(back.get('createdBy').id, ann.user.id);
      assert.equal(back.getACL().getReadAccess(ann.user.id), true);
      assert.equal(back.getACL().getPublicReadAccess(), false);

      assert.deepEqual(await new Parse.Query(cls).find(as(bob)), []);
      assert.equal(await new Parse.Query(cls).count(as(bob)), 0);
      await rejectsWith(new Parse.Query(cls).get(mine.id, as(bob)), Parse.Error.OBJECT_NOT_FOUND, 'Object not found.');
      const theirs = Parse.Object.extend(cls).createWithoutData(mine.id);
      theirs.set('Name', 'bob was here');
      await rejectsWith(theirs.save(null, as(bob)), Parse.Error.OBJECT_NOT_FOUND);
      await rejectsWith(theirs.destroy(as(bob)), Parse.Error.OBJECT_NOT_FOUND);
      assert.equal((await new Parse.Query(cls).get(mine.id, MASTER)).get('Name'), 'ann only');
    });

    test('§2.1 public read, owner write: others read but cannot change it', async () => {
      const app = apps[profile];
      const cls = await openedClass(app, 'Public');
      const { ann, bob } = await users(app, 'ann', 'bob');
      const acl = new Parse.ACL(ann.user);
      acl.setPublicReadAccess(true);
      const post = new Parse.Object(cls, { Name: 'hello' });
      post.setACL(acl);
      await post.save(null, as(ann));
      assert.equal((await new Parse.Query(cls).get(post.id, as(bob))).get('Name'), 'hello');
      const edit = Parse.Object.extend(cls).createWithoutData(post.id);
      edit.set('Name', 'changed');
      await rejectsWith(edit.save(null, as(bob)), Parse.Error.OBJECT_NOT_FOUND);
      edit.set('Name', 'changed by ann');
      await edit.save(null, as(ann));
      assert.equal((await new Parse.Query(cls).get(post.id, as(bob))).get('Name'), 'changed by ann');
    });

    test('§2.1 a role ACL: members of the role read, others do not; removing a member takes it away', async () => {
      const app = apps[profile];
      const cls = await openedClass(app, 'RoleAcl');
      const { ann, bob, cid } = await users(app, 'ann', 'bob', 'cid');
      const editors = uniq('Editors');
      const role = await makeRole(editors, { users: [ann, bob] });
      const doc = new Parse.Object(cls, { Name: 'for editors' });
      const acl = new Parse.ACL();
      acl.setRoleReadAccess(editors, true);
      acl.setRoleWriteAccess(role, true);
      doc.setACL(acl);
      await doc.save(null, MASTER);

      assert.equal((await new Parse.Query(cls).find(as(ann))).length, 1);
      assert.equal((await new Parse.Query(cls).find(as(bob))).length, 1);
      assert.deepEqual(await new Parse.Query(cls).find(as(cid)), []);
      const byBob = Parse.Object.extend(cls).createWithoutData(doc.id);
      byBob.set('Name', 'edited by bob');
      await byBob.save(null, as(bob));

      role.getUsers().remove(bob.user);
      await role.save(null, MASTER);
      assert.deepEqual(await new Parse.Query(cls).find(as(bob)), []);
      assert.equal((await new Parse.Query(cls).first(as(ann))).get('Name'), 'edited by bob');
    });

    test('§2.5 role hierarchy: a user in role Team, Team in Readers\' roles, Readers in Staff\'s roles: the user reads what Staff may; not the reverse', async () => {
      const app = apps[profile];
      const cls = await openedClass(app, 'Hier');
      const { member, boss, outsider } = await users(app, 'member', 'boss', 'outsider');
      const team = await makeRole(uniq('Team'), { users: [member] });
      const readers = await makeRole(uniq('Readers'), { roles: [team] });
      const staff = await makeRole(uniq('Staff'), { users: [boss], roles: [readers] });

      const forStaff = new Parse.Object(cls, { Name: 'staff' });
      const staffAcl = new Parse.ACL();
      staffAcl.setRoleReadAccess(staff, true);
      forStaff.setACL(staffAcl);
      const forTeam = new Parse.Object(cls, { Name: 'team' });
      const teamAcl = new Parse.ACL();
      teamAcl.setRoleReadAccess(team, true);
      forTeam.setACL(teamAcl);
      await Parse.Object.saveAll([forStaff, forTeam], MASTER);

      const seen = async (who) => (await new Parse.Query(cls).find(as(who))).map((r) => r.get('Name')).sort();
      assert.deepEqual(await seen(member), ['staff', 'team']);
      assert.deepEqual(await seen(boss), ['staff']);
      assert.deepEqual(await seen(outsider), []);
    });

    test('§2.5 a CLP granted to a role with Parse.Schema: members find and create; others get 119', async () => {
      const app = apps[profile];
      await useApp(ctx.server, app);
      const cls = uniq('Sales');
      await new Parse.Object(cls, { Name: 'seed' }).save(null, MASTER);
      const { rep, other } = await users(app, 'rep', 'other');
      const sales = uniq('SalesTeam');
      await makeRole(sales, { users: [rep] });
      const schema = new Parse.Schema(cls);
      const grant = { [`role:${sales}`]: true };
      schema.setCLP({ find: grant, get: grant, count: grant, create: grant, update: grant, delete: grant, addField: {} });
      await schema.update();

      assert.equal((await new Parse.Query(cls).find(as(rep))).length, 1);
      await new Parse.Object(cls, { Name: 'by rep' }).save(null, as(rep));
      assert.equal(await new Parse.Query(cls).count(as(rep)), 2);
      await rejectsWith(new Parse.Query(cls).find(as(other)), Parse.Error.OPERATION_FORBIDDEN, `Permission denied for action find on class ${cls}.`);
      await rejectsWith(new Parse.Object(cls, { Name: 'x' }).save(null, as(other)), Parse.Error.OPERATION_FORBIDDEN, `Permission denied for action create on class ${cls}.`);
      // addField: {} refuses a write that adds a field, even to a member.
      await rejectsWith(new Parse.Object(cls, { Name: 'y', Extra: 1 }).save(null, as(rep)), Parse.Error.OPERATION_FORBIDDEN);
    });

    test('§2.4 a user\'s roles: Parse.Query(Parse.Role).equalTo("users", user) (relation equality)', async () => {
      const app = apps[profile];
      const { ann, bob } = await users(app, 'ann', 'bob');
      const r1 = uniq('One');
      const r2 = uniq('Two');
      await makeRole(r1, { users: [ann] });
      await makeRole(r2, { users: [ann, bob] });
      const annRoles = await new Parse.Query(Parse.Role).equalTo('users', ann.user).find(MASTER);
      assert.deepEqual(annRoles.map((r) => r.getName()).sort(), [r1, r2].sort());
      const bobRoles = await new Parse.Query(Parse.Role).equalTo('users', bob.user).find(MASTER);
      assert.deepEqual(bobRoles.map((r) => r.getName()), [r2]);
      const either = await new Parse.Query(Parse.Role).containedIn('users', [bob.user]).find(MASTER);
      assert.deepEqual(either.map((r) => r.getName()), [r2]);
    });

    test('§2.4 a role name is unique and fixed; the role\'s users are a Relation readable with the SDK', async () => {
      await useApp(ctx.server, apps[profile]);
      const { ann } = await users(apps[profile], 'ann');
      const name = uniq('Uniq');
      const role = await makeRole(name, { users: [ann] });
      const members = await role.getUsers().query().find(MASTER);
      assert.deepEqual(members.map((u) => u.id), [ann.user.id]);
      const dup = new Parse.Role(name, new Parse.ACL());
      await rejectsWith(dup.save(null, MASTER), Parse.Error.DUPLICATE_VALUE, `Cannot add duplicate role name of ${name}.`);
      assert.equal(await new Parse.Query(Parse.Role).equalTo('name', name).count(MASTER), 1);
    });
  });
}
