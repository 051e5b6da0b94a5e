// Issue 36: Parse Dashboard, unchanged (npm parse-dashboard, pinned in tests/compat/dashboard/),
// pointed at `crmd serve --prefix parse` with a Parse-profile application's master key, used in
// Debian's Chromium as a person uses it: the application opens, a class is browsed, filtered, a
// cell edited, a column added and a class-level permission changed. Every change is read back
// through the record and schema API: the dashboard's requests go through crmd's one door.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { startCompat, stopAll, request } from './lib/compat.mjs';
import { launchBrowser, screenshotDir } from '../e2e/lib/browser.mjs';
import { ON_POSTGRESQL } from '../e2e/lib/harness.mjs';

const DASHBOARD = path.join(import.meta.dirname, 'dashboard', 'node_modules', 'parse-dashboard', 'bin', 'parse-dashboard');
const ctx = { apps: {} };
let app, M, dashboard, dashboardBase, browser, shots;
const rows = {};

const freePort = () => new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
});

before(async () => {
  Object.assign(ctx, await startCompat());
  for (const profile of ['crmd', 'parse']) ctx.apps[profile] = await ctx.newApp(profile);
  app = ctx.apps.parse;
  M = { 'X-Parse-Application-Id': app.appId, 'X-Parse-Master-Key': app.masterKey };
  for (const Name of ['Acme', 'Globex', 'Initech']) {
    const r = await request(ctx.server, 'POST', '/parse/classes/Deals', { headers: M, body: { Name, Amount: 100 } });
    assert.equal(r.status, 201, r.text);
    rows[Name] = r.body.objectId;
  }
  const port = await freePort();
  dashboardBase = `http://127.0.0.1:${port}`;
  dashboard = spawn(process.execPath, [DASHBOARD, '--dev', '--appId', app.appId, '--masterKey', app.masterKey,
    '--serverURL', `${ctx.server.base}/parse`, '--appName', 'crm', '--host', '127.0.0.1', '--port', String(port)],
  { stdio: ['ignore', 'pipe', 'pipe'] });
  let said = '';
  dashboard.stdout.on('data', (d) => { said += d; });
  dashboard.stderr.on('data', (d) => { said += d; });
  for (let i = 0; ; i++) {
    try { if ((await fetch(dashboardBase)).ok) break; } catch { /* not yet */ }
    assert.ok(i < 300 && dashboard.exitCode === null, `the dashboard did not start: ${said}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  browser = await launchBrowser();
  shots = screenshotDir(ON_POSTGRESQL ? 'dashboard-postgresql' : 'dashboard');
});
after(async () => {
  await browser?.close();
  dashboard?.kill('SIGKILL');
  await stopAll();
});

// A tab on the dashboard that records every request it makes of crmd (the SDK sends each as a
// POST carrying `_method`) and every answer's status.
async function open(pagePath) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(String(e)));
  page.crmd = [];
  page.on('response', (r) => {
    if (!r.url().startsWith(ctx.server.base) || r.request().method() === 'OPTIONS') return;
    let body = {};
    try { body = JSON.parse(r.request().postData() ?? '{}'); } catch { /* not JSON */ }
    page.crmd.push({ path: new URL(r.url()).pathname, method: body._method ?? r.request().method(), status: r.status(), body });
  });
  await page.goto(`${dashboardBase}/apps/crm/${pagePath}`);
  return page;
}
const row = (page, name) => page.locator('span', { hasText: new RegExp(`^${name}$`) });

test('issue 36: GET /parse/serverInfo is the master key\'s and names the features crmd has', async () => {
  const refused = await request(ctx.server, 'GET', '/parse/serverInfo', { headers: { 'X-Parse-Application-Id': app.appId } });
  assert.equal(refused.status, 403, refused.text);
  const r = await request(ctx.server, 'GET', '/parse/serverInfo', { headers: M });
  assert.equal(r.status, 200, r.text);
  assert.match(r.body.parseServerVersion, /^9\.10\.0\+crmd\.\d+\.\d+\.\d+/);
  const { schemas, hooks, cloudCode, push, globalConfig } = r.body.features;
  assert.equal(schemas.addField, true);
  assert.equal(schemas.editClassLevelPermissions, true);
  assert.equal(schemas.exportClass, false);
  assert.equal(hooks.create, false);
  assert.equal(cloudCode.jobs, false);
  assert.equal(push.immediatePush, false);
  assert.equal(globalConfig.read, true);
  const core = await request(ctx.server, 'GET', '/parse/serverInfo', { headers: { 'X-Parse-Application-Id': ctx.apps.crmd.appId, 'X-Parse-Master-Key': ctx.apps.crmd.masterKey } });
  assert.equal(core.status, 200, 'any application under --prefix parse');
});

test('issue 36: the dashboard opens the application and browses a class, and a filter in its address is the query crmd runs', async () => {
  const page = await open('browser/Deals');
  for (const name of ['Acme', 'Globex', 'Initech']) await row(page, name).first().waitFor();
  await page.screenshot({ path: path.join(shots, 'browser.png') });
  const info = page.crmd.find((c) => c.path.endsWith('/serverInfo'));
  assert.equal(info?.status, 200, 'the dashboard asked serverInfo first');
  const filters = [{ field: 'Name', constraint: 'eq', compareTo: 'Acme' }];
  await page.goto(`${dashboardBase}/apps/crm/browser/Deals?filters=${encodeURIComponent(JSON.stringify(filters))}`);
  await row(page, 'Acme').first().waitFor();
  await page.waitForFunction(() => !document.body.innerText.includes('Globex'));
  assert.ok(page.crmd.some((c) => c.path === '/parse/classes/Deals' && c.body.where?.Name === 'Acme' && c.status === 200),
    JSON.stringify(page.crmd.filter((c) => c.path === '/parse/classes/Deals').map((c) => c.body.where)));
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('issue 36: a cell edited in the dashboard is an update through the record API', async () => {
  const page = await open('browser/Deals');
  await row(page, 'Initech').first().dblclick();
  await page.keyboard.press('Control+A');
  await page.keyboard.type('Initech Ltd');
  // The grid shows the new value at once; its PUT is answered a moment later.
  const put = page.waitForResponse((r) => r.url().endsWith(`/parse/classes/Deals/${rows.Initech}`) && r.request().method() === 'POST'
    && JSON.parse(r.request().postData() ?? '{}')._method === 'PUT');
  await page.keyboard.press('Enter');
  assert.equal((await put).status(), 200);
  await row(page, 'Initech Ltd').first().waitFor();
  const got = await request(ctx.server, 'GET', `/parse/classes/Deals/${rows.Initech}`, { headers: M });
  assert.equal(got.body.Name, 'Initech Ltd');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('issue 36: a column added in the dashboard is a field of the class; a class-level permission unticked is the schema\'s', async () => {
  const page = await open('browser/Deals');
  await row(page, 'Acme').first().waitFor();
  await page.click('span:text-is("Edit")');
  await page.click('text=Add a column');
  await page.fill('input[placeholder="Give it a good name..."]', 'Stage');
  await page.click('text=/^Add$/');
  await page.locator('text=Stage').first().waitFor();
  let schema = await request(ctx.server, 'GET', '/parse/schemas/Deals', { headers: M });
  assert.deepEqual(schema.body.fields.Stage, { type: 'String' });

  assert.deepEqual(schema.body.classLevelPermissions.update, { '*': true }, 'the Parse profile\'s open default');
  await page.click('span:text-is("Security")');
  await page.click('text=Class Level Permissions');
  const publicRow = page.locator('div', { has: page.locator(':scope > div', { hasText: /^Public$/ }) }).last();
  await publicRow.locator('span:text-is("Write")').click();
  await page.screenshot({ path: path.join(shots, 'clp.png') });
  await page.click('text=Save CLP');
  await page.waitForFunction(() => !document.body.innerText.includes('Save CLP'));
  schema = await request(ctx.server, 'GET', '/parse/schemas/Deals', { headers: M });
  assert.deepEqual(schema.body.classLevelPermissions.update, {});
  assert.deepEqual(schema.body.classLevelPermissions.find, { '*': true });
  // And it holds: an anonymous update is now refused by the record API.
  const anonymous = await request(ctx.server, 'PUT', `/parse/classes/Deals/${rows.Acme}`,
    { headers: { 'X-Parse-Application-Id': app.appId }, body: { Name: 'Taken' } });
  assert.notEqual(anonymous.status, 200, anonymous.text);
  assert.deepEqual(page.errors, []);
  await page.close();
});
