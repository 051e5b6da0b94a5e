// Shared set-up of the compatibility tests: one crmd server per test file under `--prefix parse`,
// applications with the spec's gates or with the Parse profile, and the stock Parse SDK pointed at
// them. Only configuration is used (serverURL, keys, REQUEST_HEADERS): no adapter, no patched transport.
import path from 'node:path';
import assert from 'node:assert/strict';
import Parse from 'parse/node';
import { before, after } from 'node:test';
import { makeDataDir, cliJson, startServer, stopAll, request } from '../../e2e/lib/harness.mjs';

export { Parse, stopAll, request, cliJson };

// The gates of a fresh application, as `crmd app create` prints them (docs/PROFILES.md).
export const SPEC_GATES = {
  captcha: 'on', signup: 'key', passwordPolicy: 'on', newClasses: 'closed', dottedKeys: 'off',
  anonymousUsers: 'off', userFields: 'closed', selfUpdate: 'off', dropSystemClasses: 'off', installations: 'off', parseNames: 'off',
};
export const PARSE_GATES = {
  captcha: 'off', signup: 'open', passwordPolicy: 'off', newClasses: 'open', dottedKeys: 'on',
  anonymousUsers: 'on', userFields: 'open', selfUpdate: 'on', dropSystemClasses: 'on', installations: 'on', parseNames: 'on',
};

// The two ways a Parse app can be configured on crmd: the spec's gates (the default) and the Parse
// profile. Files whose behaviour does not depend on the gates run every test under both.
export const PROFILES = ['crmd', 'parse'];

// Starts the file's one server (in a fresh data dir) and returns {server, dataDir, newApp(profile)}.
export async function startCompat() {
  const dataDir = makeDataDir('crmd-compat');
  // The first application exists before the server starts; later ones are picked up while it runs.
  const first = createCompatApp(dataDir, 'crmd');
  const server = await startServer(dataDir, { prefix: 'parse' });
  let firstTaken = false;
  const newApp = async (profile = 'crmd') => {
    if (!firstTaken && profile === 'crmd') { firstTaken = true; return first; }
    const app = createCompatApp(dataDir, profile);
    await waitForApp(server, app);
    return app;
  };
  return { server, dataDir, newApp };
}

// Registers the file's hooks: before the first test, one server and an application per profile
// (`apps.crmd`, `apps.parse`); after the last, every server stops. The returned object is filled
// in by the hook: `server`, `dataDir`, `newApp`, `apps`.
export function compatSuite({ seed } = {}) {
  const suite = { apps: {} };
  before(async () => {
    Object.assign(suite, await startCompat());
    for (const p of PROFILES) {
      suite.apps[p] = await suite.newApp(p);
      if (!seed) continue;
      // Rows every test of the file reads, saved through the SDK with the application's API key.
      await useApp(suite.server, suite.apps[p], { apiKey: true });
      await seed(p);
    }
  });
  after(stopAll);
  return suite;
}

function createCompatApp(dataDir, profile) {
  const args = ['app', 'create', '--data', dataDir, '--no-product-base'];
  if (profile === 'parse') args.push('--profile', 'parse');
  const app = cliJson(args);
  assert.deepEqual(app.gates, profile === 'parse' ? PARSE_GATES : SPEC_GATES, `gates of a new ${profile} app`);
  app.profile = profile;
  return app;
}

// An application created while the server runs is known to it within a moment: bounded poll.
async function waitForApp(server, app) {
  for (let i = 0; i < 200; i++) {
    const r = await request(server, 'GET', '/parse/schemas', { headers: { 'X-Parse-Application-Id': app.appId, 'X-Parse-Master-Key': app.masterKey } });
    if (r.status === 200) return;
    await new Promise((res) => setTimeout(res, 25));
  }
  throw new Error(`application ${app.appId} never became known to the server`);
}

// Points the SDK at `app`. `apiKey: true` sends the application's API key on every request
// (crmd's key; the SDK's REQUEST_HEADERS setting). The master key is sent only with `useMasterKey`.
// Whoever was the SDK's current user is forgotten.
export async function useApp(server, app, { apiKey = false } = {}) {
  Parse.initialize(app.appId, undefined, app.masterKey);
  Parse.serverURL = `${server.base}/parse`;
  // A 5xx is an answer to assert, not something to retry with back-off.
  Parse.CoreManager.set('REQUEST_ATTEMPT_LIMIT', 1);
  Parse.CoreManager.set('REQUEST_HEADERS', apiKey ? { 'X-Parse-API-Key': app.apiKey } : {});
  Parse.User.enableUnsafeCurrentUser();
  await Parse.CoreManager.getUserController().removeUserFromDisk();
  return Parse;
}

export const MASTER = { useMasterKey: true };

// Awaits `promise`, which must reject with a Parse.Error of `code` (and `message` when given).
export async function rejectsWith(promise, code, message) {
  let err;
  try {
    await promise;
  } catch (e) {
    err = e;
  }
  assert.ok(err, `expected a rejection with code ${code}, but the call succeeded`);
  // An array: any of those codes (the spec leaves the choice to the application's settings).
  if (Array.isArray(code)) assert.ok(code.includes(err.code), `code ${err.code} not in ${code} (message: ${err.message})`);
  else assert.equal(err.code, code, `code (message: ${err.message})`);
  if (message !== undefined) {
    if (message instanceof RegExp) assert.match(err.message, message);
    else assert.equal(err.message, message);
  }
  return err;
}

// Signs a user up with the master key (which every profile allows) and forgets the SDK's current user.
export async function signUpWithKey(username, password = 'Passw0rd1', extra = {}) {
  const user = new Parse.User({ username, password, ...extra });
  await user.signUp(null, MASTER);
  return user;
}

// Opens a class to everyone (Parse's default CLP) through the schema API, with the master key.
export async function openClass(className) {
  const schema = new Parse.Schema(className);
  const all = { '*': true };
  schema.setCLP({ find: all, get: all, count: all, create: all, update: all, delete: all, addField: all });
  await schema.update();
}

let counter = 0;
export function uniq(prefix) {
  counter += 1;
  return `${prefix}${Date.now().toString(36)}${counter}`;
}
