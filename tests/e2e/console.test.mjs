// Issue 34: the console in the binary (/console/), as a person uses it, in Debian's Chromium
// driven headless by playwright-core: signing in each way, a 100,000-row class browsed a page at a
// time, filters, an edited cell and the API's answer, a field added, a trigger defined and fired,
// its run and the record's history read, a user refused where the user's rights end, hostile
// values shown as text, and axe-core on every page. Screenshots: <build>/test-output/console/.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  setup, stopAll, startServer, stopServer, request, masterHeaders, apiKeyHeaders, appHeaders, ON_POSTGRESQL, cli, makeDataDir, pollUntil, createApp,
} from './lib/harness.mjs';
import { launchBrowser, screenshotDir, assertAccessible } from './lib/browser.mjs';

// A 1×1 PNG (the files' type check reads the content).
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1,
  8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89, 0, 0, 0, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0, 1, 0, 0, 5, 0, 1,
  0x0d, 0x0a, 0x2d, 0xb4, 0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82]);
// The console's pages are the same on either store, and the API they call is tested on both by
// the other e2e files: on PostgreSQL one flow runs, through sign-in and the schema, trigger and
// history pages (issue 34 asks for one), and the 100,000 rows are not made.
const ONE_FLOW = ON_POSTGRESQL ? 'on PostgreSQL only the sign-in and schema flows run (the pages are the same on either store)' : false;
// The class the data browser pages through: issue 34 asks for 100,000 rows.
const BIG_ROWS = ON_POSTGRESQL ? 0 : 100_000;
const BATCH = 10_000;  // api/batch.hpp kMaxBatchItems: ten requests seed the class

let server, app, dataDir, M, K, browser, shots;
const agent = { username: 'agent@example.test', password: 'Agent5ecret' };
const HOSTILE = {
  Name: '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">',
  Website: 'javascript:window.__pwned = 3',
  Note: '\u202Egnp.exe',
};

before(async () => {
  ({ server, app, dataDir } = await setup());
  M = masterHeaders(app);
  K = apiKeyHeaders(app);
  const agents = { 'role:Agents': true };
  const open = { find: agents, count: agents, get: agents, create: agents, update: agents, delete: agents };
  for (const [className, fields] of [
    ['Deals', { Name: { type: 'String' }, Amount: { type: 'Number' }, Closed: { type: 'Boolean' }, Due: { type: 'Date' },
      Owner: { type: 'Pointer', targetClass: '_User' }, Tags: { type: 'Array' }, Website: { type: 'String' }, Note: { type: 'String' } }],
    ['Big', { n: { type: 'Number' }, Name: { type: 'String' }, Even: { type: 'Boolean' } }],
    ['Payroll', { Name: { type: 'String' }, Salary: { type: 'Number' } }],
  ]) {
    const made = await request(server, 'POST', `/core/schemas/${className}`, {
      headers: M, body: { className, fields, classLevelPermissions: className === 'Payroll' ? {} : open } });
    assert.equal(made.status, 200, made.text);
  }
  const timeline = await request(server, 'PUT', '/core/schemas/Deals', { headers: M, body: { timeline: {} } });
  assert.equal(timeline.status, 200, timeline.text);
  const user = await request(server, 'POST', '/core/users', { headers: M, body: agent });
  assert.equal(user.status, 201, user.text);
  agent.id = user.body.objectId;
  const role = await request(server, 'POST', '/core/classes/_Role', { headers: M, body: {
    name: 'Agents', ACL: { '*': { read: true } }, users: { __op: 'AddRelation', objects: [{ __type: 'Pointer', className: '_User', objectId: agent.id }] } } });
  assert.equal(role.status, 201, role.text);
  // The 100,000 rows, ten batches of 10,000 creates.
  for (let start = 0; start < BIG_ROWS; start += BATCH) {
    const requests = Array.from({ length: BATCH }, (_, i) => ({
      method: 'POST', path: '/core/classes/Big', body: { n: start + i, Name: `row ${start + i}`, Even: (start + i) % 2 === 0 } }));
    const r = await request(server, 'POST', '/core/batch', { headers: M, body: { requests }, timeoutMs: 120_000 });
    assert.equal(r.status, 200, r.text.slice(0, 300));
  }
  browser = await launchBrowser();
  shots = screenshotDir(ON_POSTGRESQL ? 'console-postgresql' : 'console');
});
after(async () => {
  await browser?.close();
  await stopAll();
});

// A fresh tab (no credential: each test signs in), at 1280×800 unless told.
async function newPage(viewport = { width: 1280, height: 800 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(String(e)));
  // The browser logs each answer of 4xx as an error: the API refusing is not the page failing.
  page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) page.errors.push(m.text()); });
  return page;
}
const at = (p) => `${server.base}/console/${p}`;
const shot = (page, name) => page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: false });

async function signIn(page, kind, { deepLink = '' } = {}) {
  await page.goto(at(deepLink));
  await page.fill('#app-id', app.appId);
  if (kind === 'user') {
    await page.fill('#username', agent.username);
    await page.fill('#password', agent.password);
  } else {
    await page.check(`input[name=kind][value=${kind}]`);
    await page.fill('#secret', kind === 'master' ? app.masterKey : app.apiKey);
    if (kind === 'master') await page.check('#master-confirm');
  }
  await page.click('button[type=submit]');
  await page.waitForSelector('nav[aria-label=Console]');
}

test('issue 34: /console/ is served from the binary with a strict CSP, an ETag and index.html for deep links', { skip: ONE_FLOW }, async () => {
  const index = await request(server, 'GET', '/console/');
  assert.equal(index.status, 200);
  assert.match(index.headers['content-type'], /^text\/html/);
  const csp = index.headers['content-security-policy'];
  for (const part of ["default-src 'self'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"]) assert.ok(csp.includes(part), csp);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  assert.doesNotMatch(index.text, /<script>|<script [^>]*>[^<]/, 'no inline script');
  assert.match(index.text, /<meta name="crmd-prefix" content="core">/);
  const deep = await request(server, 'GET', `/console/${app.appId}/classes/Deals?skip=50`);
  assert.equal(deep.status, 200);
  assert.equal(deep.text, index.text, 'a deep link is the page, which routes by its address');
  const script = await request(server, 'GET', '/console/app.js');
  assert.equal(script.status, 200);
  assert.match(script.headers['content-type'], /^text\/javascript/);
  const etag = script.headers['etag'];
  assert.match(etag, /^"[0-9a-f]{16}"$/);
  const again = await request(server, 'GET', '/console/app.js', { headers: { 'If-None-Match': etag } });
  assert.equal(again.status, 304);
  assert.equal((await request(server, 'GET', '/console/look.css')).status, 200);
  assert.equal((await request(server, 'GET', '/console/nothing.js')).status, 404);
  assert.equal((await request(server, 'POST', '/console/', { body: {} })).status, 404);
});

test('issue 34: --console off answers 404 at /console/, and the API is unchanged', { skip: ONE_FLOW }, async () => {
  // A data directory of its own: on SQLite one serves a data directory at a time (issue 35).
  const own = makeDataDir('crmd-console-off');
  const offApp = createApp(own);
  const off = await startServer(own, { extraArgs: ['--console', 'off'] });
  try {
    assert.equal((await request(off, 'GET', '/console/')).status, 404);
    assert.equal((await request(off, 'GET', '/core/classes/_Role', { headers: masterHeaders(offApp) })).status, 200);
  } finally {
    await stopServer(off);
  }
});

test('issue 34: GET /core/functions lists the functions to the keys only', { skip: ONE_FLOW }, async () => {
  const listed = await request(server, 'GET', '/core/functions', { headers: K });
  assert.equal(listed.status, 200, listed.text);
  assert.deepEqual(listed.body.results.map((f) => f.name), ['getlead', 'web2case', 'web2sale', 'web2table']);
  const login = await request(server, 'POST', '/core/login', { headers: appHeaders(app), body: agent });
  const user = await request(server, 'GET', '/core/functions', { headers: { ...appHeaders(app), 'X-Core-Session-Token': login.body.sessionToken } });
  assert.equal(user.status, 403);
  assert.deepEqual(user.body, { error: 'unauthorized: master key is required' });
});

test('issue 34: sign in as a user (the default), refused with the API\'s words for a wrong password', async () => {
  const page = await newPage();
  await page.goto(at(''));
  assert.equal(await page.isChecked('input[name=kind][value=user]'), true, 'signing in as a user is the default');
  await assertAccessible(page, 'sign-in page');
  await shot(page, 'signin');
  await page.fill('#app-id', app.appId);
  await page.fill('#username', agent.username);
  await page.fill('#password', 'wrong-password');
  await page.click('button[type=submit]');
  await page.waitForSelector('[role=alert]');
  assert.match(await page.textContent('[role=alert]'), /Invalid username\/password\. \(HTTP 404, code 101\)/);
  await page.fill('#password', agent.password);
  await page.click('button[type=submit]');
  await page.waitForSelector('nav[aria-label=Console]');
  assert.match(await page.textContent('nav'), /Signed in with user agent@example\.test/);
  assert.equal(await page.locator('nav >> text=Schema').count(), 0, 'the schema is the keys\'');
  // A user opens a class by its name (no list of classes: the schema API is the keys').
  await page.fill('#open-class', 'Deals');
  await page.click('button:text-is("Open")');
  await page.waitForSelector('#records');
  await page.click('nav a:text-is("Data")');
  await page.waitForSelector('ul[aria-label="Opened in this tab"] a:text-is("Deals")');
  const stored = await page.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie]);
  assert.deepEqual(stored, [0, 0, ''], 'the session token is kept in memory only');
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('issue 34: sign in with an API key, and with the master key only when the operator confirms it', { skip: ONE_FLOW }, async () => {
  const page = await newPage();
  await signIn(page, 'key');
  assert.match(await page.textContent('nav'), /Signed in with API key/);
  await page.click('text=Sign out');
  await page.waitForSelector('#app-id');
  await page.fill('#app-id', app.appId);
  await page.check('input[name=kind][value=master]');
  await page.fill('#secret', app.masterKey);
  await page.click('button[type=submit]');
  assert.match(await page.textContent('[role=alert]'), /Confirm that you choose to use the master key/);
  await page.check('#master-confirm');
  await page.click('button[type=submit]');
  await page.waitForSelector('nav[aria-label=Console]');
  assert.match(await page.textContent('nav'), /Signed in with master key/);
  // A wrong key: the API's refusal.
  const other = await newPage();
  await other.goto(at(''));
  await other.fill('#app-id', app.appId);
  await other.check('input[name=kind][value=key]');
  await other.fill('#secret', 'not-the-key');
  await other.click('button[type=submit]');
  assert.match(await other.textContent('[role=alert]'), /^unauthorized: master key is required \(HTTP 403\)$/);
  assert.equal(await other.locator('nav[aria-label=Console]').count(), 0);
  await page.context().close();
  await other.context().close();
});

test('issue 34: the data browser pages through 100,000 rows a page at a time, sorts and filters', { skip: ONE_FLOW }, async () => {
  const page = await newPage();
  await signIn(page, 'master');
  await page.waitForSelector('table[aria-label=Classes]');
  const bigCount = page.locator('tr', { has: page.locator('a', { hasText: /^Big$/ }) }).locator('td').nth(1);
  await page.waitForFunction((el) => el.textContent === String(100000), await bigCount.elementHandle());
  await assertAccessible(page, 'classes');
  await shot(page, 'classes');
  const requested = [];
  page.on('request', (r) => { if (r.url().includes('/core/classes/Big')) requested.push(new URL(r.url())); });
  await page.click('a:text-is("Big")');
  await page.waitForSelector('#records tbody tr');
  assert.equal(await page.locator('#records tbody tr').count(), 50);
  assert.equal(await page.textContent('#page-info'), `1–50 of ${BIG_ROWS}`);
  assert.ok(requested.every((u) => Number(u.searchParams.get('limit')) <= 200), 'never more than a page is asked');
  await assertAccessible(page, 'data browser');
  await shot(page, 'browser');
  await page.click('#next-page');
  await page.waitForFunction(() => document.querySelector('#page-info')?.textContent.startsWith('51–100'));
  assert.match(page.url(), /skip=50/, 'the page is in the address');
  await page.goBack();
  await page.waitForFunction(() => document.querySelector('#page-info')?.textContent.startsWith('1–50'));
  // Sort by n ascending: row 0 first.
  await page.click('th button:text-is("n")');
  await page.waitForFunction(() => document.querySelector('#records tbody tr td[data-field=n]')?.textContent === '0');
  assert.match(page.url(), /order=n/);
  // The filter builder: n ≥ 99990 and Even = true.
  await page.click('summary:text-is("Filter")');
  await page.click('text=Add condition');
  await page.selectOption('#f-field-0', 'n');
  await page.selectOption('#f-op-0', '$gte');
  await page.fill('#f-value-0', '99990');
  await page.click('text=Add condition');
  await page.selectOption('#f-field-1', 'Even');
  await page.fill('#f-value-1', 'true');
  await page.click('#apply-filter');
  await page.waitForFunction(() => document.querySelector('#page-info')?.textContent === '1–5 of 5');
  assert.deepEqual(JSON.parse(new URL(page.url()).searchParams.get('where')), { n: { $gte: 99990 }, Even: true });
  // $in, $regex and $exists, through the address (a deep link).
  for (const [where, expected] of [
    [{ n: { $in: [3, 5, 99999] } }, '1–3 of 3'],
    [{ Name: { $regex: '^row 9999[0-4]$' } }, '1–5 of 5'],
    [{ Name: { $exists: false } }, '0 of 0'],
  ]) {
    await page.goto(at(`${app.appId}/classes/Big?where=${encodeURIComponent(JSON.stringify(where))}`));
    // A reload signs out: the credential lives in the tab's memory only.
    await page.waitForSelector('#app-id');
    await signIn(page, 'master', { deepLink: `${app.appId}/classes/Big?where=${encodeURIComponent(JSON.stringify(where))}` });
    await page.waitForFunction((text) => document.querySelector('#page-info')?.textContent === text, expected);
  }
  // Keyboard: arrows move between cells, PageDown changes the page.
  await page.goto(at(''));
  await signIn(page, 'master', { deepLink: `${app.appId}/classes/Big?order=n` });
  await page.waitForSelector('#records tbody td[data-field]');
  await page.focus('#records tbody td[data-field]');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.field), 'createdAt');
  await page.keyboard.press('PageDown');
  await page.waitForFunction(() => document.querySelector('#page-info')?.textContent.startsWith('51–100'));
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('issue 34: a pointer filter, an edited cell with the API\'s answer and its refusal, a column chosen', { skip: ONE_FLOW }, async () => {
  const deal = await request(server, 'POST', '/core/classes/Deals', { headers: M, body: {
    Name: 'Pointer deal', Amount: 10, Owner: { __type: 'Pointer', className: '_User', objectId: agent.id } } });
  await request(server, 'POST', '/core/classes/Deals', { headers: M, body: { Name: 'Other deal', Amount: 20 } });
  const page = await newPage();
  const where = { Owner: { __type: 'Pointer', className: '_User', objectId: agent.id } };
  await signIn(page, 'user', { deepLink: `${app.appId}/classes/Deals?where=${encodeURIComponent(JSON.stringify(where))}` });
  await page.waitForFunction(() => document.querySelector('#page-info')?.textContent === '1–1 of 1');
  const owner = page.locator('#records td[data-field=Owner] a');
  assert.equal(await owner.textContent(), agent.id, 'a pointer is a link to its record');
  assert.match(await owner.getAttribute('href'), new RegExp(`/console/${app.appId}/classes/_User/${agent.id}$`));
  // Edit Amount: Enter, a value, Enter; the cell shows what the server holds now.
  const amount = page.locator(`#records tr[data-id="${deal.body.objectId}"] td[data-field=Amount]`);
  await amount.focus();
  await page.keyboard.press('Enter');
  await page.fill(`#records tr[data-id="${deal.body.objectId}"] td[data-field=Amount] input`, '42.5');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.status .ok');
  assert.match(await page.textContent('.status'), /Saved Amount of/);
  assert.equal(await amount.textContent(), '42.5');
  const stored = await request(server, 'GET', `/core/classes/Deals/${deal.body.objectId}`, { headers: M });
  assert.equal(stored.body.Amount, 42.5);
  assert.deepEqual(page.errors, []);
  await page.context().close();
  // As the master key (the schema gives every column): a value of the wrong type, the API's 111
  // as it comes; then the column chooser.
  const master = await newPage();
  await signIn(master, 'master', { deepLink: `${app.appId}/classes/Deals?where=${encodeURIComponent(JSON.stringify({ objectId: deal.body.objectId }))}` });
  const tags = master.locator(`#records tr[data-id="${deal.body.objectId}"] td[data-field=Tags]`);
  await tags.dblclick();
  await master.fill(`#records tr[data-id="${deal.body.objectId}"] td[data-field=Tags] textarea`, '{"not": "an array"}');
  await master.keyboard.press('Control+Enter');
  await master.waitForSelector('.status [role=alert]');
  assert.match(await master.textContent('.status [role=alert]'), /expected Array but got Object \(HTTP 400, code 111\)/);
  await master.keyboard.press('Escape');
  assert.equal(await tags.textContent(), '', 'the cell shows what the server holds: nothing');
  await master.click('summary:has-text("Columns")');
  await master.uncheck('form[aria-label=Columns] input[value=Amount]');
  await master.waitForFunction(() => new URL(location.href).searchParams.has('cols') && document.querySelector('#records'));
  assert.ok(!new URL(master.url()).searchParams.get('cols').split(',').includes('Amount'));
  assert.equal(await master.locator('#records td[data-field=Amount]').count(), 0);
  assert.equal(await master.locator('#records td[data-field=Name]').count(), 1);
  assert.deepEqual(master.errors, []);
  await master.context().close();
});

test('issue 34: a user is refused where the user\'s rights end, with the API\'s words', { skip: ONE_FLOW }, async () => {
  const page = await newPage();
  await signIn(page, 'user', { deepLink: `${app.appId}/classes/Payroll` });
  await page.waitForSelector('main [role=alert]');
  assert.match(await page.textContent('main [role=alert]'), /Permission denied for action find on class Payroll\. \(HTTP 400, code 119\)/);
  await assertAccessible(page, 'refused class');
  await shot(page, 'refused');
  await page.context().close();
});

test('issue 34: a user\'s edit of a record the user may read but not write shows the API\'s refusal; a delete from the table happens', { skip: ONE_FLOW }, async () => {
  const readOnly = await request(server, 'POST', '/core/classes/Deals', { headers: M, body: {
    Name: 'Read only', Amount: 1, ACL: { [agent.id]: { read: true } } } });
  assert.equal(readOnly.status, 201, readOnly.text);
  const doomed = await request(server, 'POST', '/core/classes/Deals', { headers: M, body: { Name: 'Doomed', Amount: 2 } });
  const page = await newPage();
  page.on('dialog', (d) => d.accept());  // the delete's confirmation
  const ids = [readOnly.body.objectId, doomed.body.objectId];
  await signIn(page, 'user', { deepLink: `${app.appId}/classes/Deals?where=${encodeURIComponent(JSON.stringify({ objectId: { $in: ids } }))}` });
  await page.waitForFunction(() => document.querySelector('#page-info')?.textContent === '1–2 of 2');
  const amount = page.locator(`#records tr[data-id="${readOnly.body.objectId}"] td[data-field=Amount]`);
  await amount.dblclick();
  await page.fill(`#records tr[data-id="${readOnly.body.objectId}"] td[data-field=Amount] input`, '99');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.status [role=alert]');
  assert.match(await page.textContent('.status [role=alert]'), /^Object not found\. \(HTTP 404, code 101\)$/);
  assert.equal((await request(server, 'GET', `/core/classes/Deals/${readOnly.body.objectId}`, { headers: M })).body.Amount, 1);
  await page.keyboard.press('Escape');
  await page.click(`button[aria-label="Delete ${doomed.body.objectId}"]`);
  await page.waitForSelector(`#records tr[data-id="${doomed.body.objectId}"]`, { state: 'detached' });
  assert.equal((await request(server, 'GET', `/core/classes/Deals/${doomed.body.objectId}`, { headers: M })).status, 404);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('issue 34: hostile values are shown as text: no script runs, no javascript: link, RTL override kept as a character', { skip: ONE_FLOW }, async () => {
  const made = await request(server, 'POST', '/core/classes/Deals', { headers: M, body: { ...HOSTILE, Tags: ['<b>x</b>'] } });
  assert.equal(made.status, 201, made.text);
  const page = await newPage();
  await signIn(page, 'master', { deepLink: `${app.appId}/classes/Deals?where=${encodeURIComponent(JSON.stringify({ objectId: made.body.objectId }))}` });
  await page.waitForSelector(`#records tr[data-id="${made.body.objectId}"]`);
  const row = `#records tr[data-id="${made.body.objectId}"]`;
  assert.equal(await page.textContent(`${row} td[data-field=Name]`), HOSTILE.Name);
  assert.equal(await page.textContent(`${row} td[data-field=Website]`), HOSTILE.Website);
  assert.equal(await page.textContent(`${row} td[data-field=Note]`), HOSTILE.Note);
  await page.goto(at(''));
  await signIn(page, 'master', { deepLink: `${app.appId}/classes/Deals/${made.body.objectId}` });
  await page.waitForSelector('#record-fields');
  assert.ok((await page.textContent('#record-fields')).includes(HOSTILE.Name));
  assert.equal(await page.evaluate(() => window.__pwned), undefined, 'no value ran as script');
  assert.equal(await page.locator('a[href^="javascript:"], script:not([src]), img[src="x"]').count(), 0);
  await page.context().close();
});

test('issue 34: a PrivateFile is previewed from a blob: address fetched with the tab\'s headers, never a cookie', { skip: ONE_FLOW }, async () => {
  const made = await request(server, 'POST', '/core/schemas/Papers', { headers: M, body: { className: 'Papers', fields: { Scan: { type: 'PrivateFile' } } } });
  assert.equal(made.status, 200, made.text);
  const up = await fetch(`${server.base}/core/files/scan.png`, { method: 'POST', headers: { ...M, 'Content-Type': 'image/png' }, body: PNG });
  assert.equal(up.status, 201);
  const file = await up.json();
  const paper = await request(server, 'POST', '/core/classes/Papers', { headers: M, body: { Scan: { __type: 'File', name: file.name } } });
  assert.equal(paper.status, 201, paper.text);
  const page = await newPage();
  const fetched = [];
  page.on('request', (r) => { if (r.url().includes(`/core/files/${app.appId}/`)) fetched.push(r.headers()); });
  await signIn(page, 'master', { deepLink: `${app.appId}/classes/Papers/${paper.body.objectId}` });
  await page.click('#record-fields button:text-is("Preview")');
  const img = page.locator('#record-fields img.preview');
  await img.waitFor();
  assert.match(await img.getAttribute('src'), /^blob:http:\/\/127\.0\.0\.1:\d+\//);
  assert.equal(await img.evaluate((el) => el.complete && el.naturalWidth), 1, 'the PNG decoded');
  assert.equal(fetched.length, 1);
  assert.equal(fetched[0]['x-core-master-key'], app.masterKey, 'the credential went in its header');
  assert.equal(fetched[0].cookie, undefined);
  await page.context().close();
});

test('issue 34: schema: add a field, an index, class-level permissions, the timeline off and on; define a trigger (its error shown inline), make it fire, read its run and the record\'s history, switch it off', async () => {
  const page = await newPage();
  await signIn(page, 'master', { deepLink: `${app.appId}/schema/Deals` });
  await page.waitForSelector('#field-name');
  await assertAccessible(page, 'schema');
  await page.fill('#field-name', 'Stage');
  await page.selectOption('#field-type', 'String');
  await page.click('button:text-is("Add field")');
  await page.waitForSelector('table[aria-label=Fields] td:text-is("Stage")');
  // An index and class-level permissions, as JSON the schema API takes; the timeline switched.
  await page.fill('#json-index', JSON.stringify({ Stage_1: { Stage: 1 } }));
  await page.click('form[aria-label^="Add an index"] button[type=submit]');
  await page.waitForFunction(() => document.querySelector('main pre.json')?.textContent.includes('Stage_1'));
  const clp = { ...(await request(server, 'GET', '/core/schemas/Deals', { headers: M })).body.classLevelPermissions, delete: {} };
  await page.fill('#json-clp', JSON.stringify(clp));
  await page.click('form[aria-label=classLevelPermissions] button[type=submit]');
  await page.waitForFunction(() => document.querySelector('#json-clp')?.value.includes('"delete": {}'));
  await page.click('#timeline-toggle');
  await page.waitForFunction(() => document.querySelector('#timeline-toggle')?.textContent === 'Turn the timeline on');
  let schema = (await request(server, 'GET', '/core/schemas/Deals', { headers: M })).body;
  assert.deepEqual(schema.indexes.Stage_1, { Stage: 1 });
  assert.deepEqual(schema.classLevelPermissions.delete, {});
  assert.equal(schema.timeline, undefined);
  await page.click('#timeline-toggle');
  await page.waitForFunction(() => document.querySelector('#timeline-toggle')?.textContent === 'Turn the timeline off');
  schema = (await request(server, 'GET', '/core/schemas/Deals', { headers: M })).body;
  assert.ok(schema.timeline, 'the timeline is on again');
  // A trigger the server refuses: its words, under the form.
  const bad = { name: 'Broken', event: 'sometimes', actions: [] };
  await page.fill('#new-trigger', JSON.stringify(bad));
  await page.click('button:text-is("Add trigger")');
  await page.waitForSelector('form[aria-label="New trigger"] [role=alert]');
  assert.match(await page.textContent('form[aria-label="New trigger"] [role=alert]'), /code 107/);
  const good = { name: 'Stage on create', event: 'create', conditions: [],
    actions: [{ actionType: 'update-record', actionData: { 'update-record': { data: { Stage: 'New: {{Name}}' } } } }] };
  await page.fill('#new-trigger', JSON.stringify(good));
  await page.click('button:text-is("Add trigger")');
  await page.waitForSelector('#triggers form[aria-label="Trigger Stage on create"]');
  await shot(page, 'schema');
  // Fire it: a record made through the console's data browser.
  await page.click('a:text-is("Records of Deals")');
  await page.click('summary:text-is("New record")');
  await page.fill('#new-record', JSON.stringify({ Name: 'Fired deal' }));
  await page.click('form[aria-label="New record"] button[type=submit]');
  await page.waitForSelector('.status .ok');
  const id = (await page.textContent('.status .ok')).match(/Created (\w{10})\./)[1];
  // The trigger's action runs after the commit: wait for the record to show it.
  let record;
  for (let i = 0; i < 100; i++) {
    record = (await request(server, 'GET', `/core/classes/Deals/${id}`, { headers: M })).body;
    if (record.Stage) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(record.Stage, 'New: Fired deal');
  await page.goto(at(''));
  await signIn(page, 'master', { deepLink: `${app.appId}/classes/Deals/${id}` });
  await page.waitForSelector('#history .history-row');
  await page.waitForSelector('#trigger-runs .trigger-run');
  const history = await page.locator('#history .history-row').allTextContents();
  assert.ok(history.some((t) => t.startsWith('create')), history.join('\n'));
  assert.ok(history.some((t) => t.startsWith('update') && t.includes('trigger')), history.join('\n'));
  const runs = await page.locator('#trigger-runs .trigger-run').allTextContents();
  assert.ok(runs.some((t) => t.startsWith('fired')) && runs.some((t) => t.startsWith('action')), runs.join('\n'));
  await assertAccessible(page, 'record page');
  await shot(page, 'record');
  // The trigger's runs from the schema view; then switched off, it no longer fires.
  await page.goto(at(''));
  await signIn(page, 'master', { deepLink: `${app.appId}/schema/Deals` });
  const card = page.locator('#triggers form[aria-label="Trigger Stage on create"]');
  await card.locator('button:text-is("Runs")').click();
  await card.locator('.trigger-run').first().waitFor();
  // The box shows unticked at once; the schema's PUT is answered a moment later.
  const saved = page.waitForResponse((r) => r.url().endsWith('/core/schemas/Deals') && r.request().method() === 'PUT');
  await card.locator('input[type=checkbox]').uncheck();
  assert.equal((await saved).status(), 200);
  await page.waitForFunction(() => document.querySelector('#triggers input[type=checkbox]')?.checked === false);
  const stored = await request(server, 'GET', '/core/schemas/Deals', { headers: M });
  assert.equal(stored.body.triggers.find((t) => t.name === 'Stage on create').active, false);
  const quiet = await request(server, 'POST', '/core/classes/Deals', { headers: M, body: { Name: 'Quiet deal' } });
  const quietRuns = await request(server, 'GET', `/core/classes/_syslogTriggers?where=${encodeURIComponent(JSON.stringify({ objectIdValue: quiet.body.objectId }))}`, { headers: M });
  assert.deepEqual(quietRuns.body.results, [], 'an inactive trigger never fires');
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('issue 34: people (a user created, a weak password refused in the API\'s words, deactivated; a role\'s users) and operations (a function called, the request log) pass axe-core', { skip: ONE_FLOW }, async () => {
  const page = await newPage();
  await signIn(page, 'master', { deepLink: `${app.appId}/people` });
  await page.waitForSelector('table[aria-label=Users] td');
  assert.ok((await page.textContent('table[aria-label=Users]')).includes(agent.username));
  assert.ok((await page.textContent('#roles-title + ul')).includes('Agents'));
  await assertAccessible(page, 'people');
  // A new user, then deactivated: what the API holds after each.
  await page.fill('#new-username', 'newbie@example.test');
  await page.fill('#new-email', 'newbie@example.test');
  await page.fill('#new-password', 'weak');
  await page.click('button:text-is("Create user")');
  await page.waitForSelector('.status [role=alert]');
  assert.match(await page.textContent('.status [role=alert]'), /code 142/, 'the password policy, in the API\'s words');
  await page.fill('#new-password', 'Newbie5ecret');
  await page.click('button:text-is("Create user")');
  await page.waitForSelector('table[aria-label=Users] a:text-is("newbie@example.test")');
  await page.click('button[aria-label="Deactivate newbie@example.test"]');
  await page.waitForSelector('button[aria-label="Activate newbie@example.test"]');
  const newbie = await request(server, 'GET', `/core/classes/_User?where=${encodeURIComponent(JSON.stringify({ username: 'newbie@example.test' }))}`, { headers: M });
  assert.equal(newbie.body.results[0].active, false);
  // A role's record lists its users (a Relation, as a list of links).
  await page.click('#roles-title + ul a:text-is("Agents")');
  const members = page.locator('ul.related[aria-label^="users"] a');
  await members.first().waitFor();
  assert.deepEqual(await members.allTextContents(), [agent.id]);
  await assertAccessible(page, 'a role\'s record');
  await page.goBack();
  await page.waitForSelector('table[aria-label=Users] td');
  // A deployed function, called from the console with a test body through the functions route.
  const lua = path.join(makeDataDir('crmd-console-fn'), 'echo.lua');
  fs.writeFileSync(lua, 'return {echo = request.body.word}\n');
  cli(['function', 'deploy', '--data', dataDir, '--app', app.appId, '--name', 'echo', '--file', lua]);
  // The server follows the registry on its own: until it lists the function.
  const listed = await pollUntil(async () => ({
    done: (await request(server, 'GET', '/core/functions', { headers: K })).body.results.some((f) => f.name === 'echo') }),
  { timeoutMs: 5000, intervalMs: 50 });
  assert.ok(listed.ok, 'the server lists the deployed function');
  await page.click('nav a:text-is("Operations")');
  await page.waitForSelector('table[aria-label="Request log"] td');
  assert.equal(await page.locator('#fn-name option').count(), 5);
  await page.selectOption('#fn-name', 'echo');
  await page.fill('#fn-body', '{"word": "<b>hi</b>"}');
  await page.click('form[aria-label="Call a function"] button[type=submit]');
  await page.waitForFunction(() => document.querySelector('#fn-answer')?.textContent.includes('echo'));
  assert.deepEqual(JSON.parse(await page.textContent('#fn-answer')), { echo: '<b>hi</b>' });
  assert.ok((await page.textContent('table[aria-label="Request log"]')).includes('/core/'));
  await assertAccessible(page, 'operations');
  await shot(page, 'operations');
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('issue 34: at 390 px the console and its sign-in page fit the phone\'s width', { skip: ONE_FLOW }, async () => {
  const page = await newPage({ width: 390, height: 844 });
  await page.goto(at(''));
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390));
  await signIn(page, 'master', { deepLink: `${app.appId}/classes/Deals` });
  await page.waitForSelector('#records');
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), 'the table scrolls inside its frame');
  await shot(page, 'phone-browser');
  await page.context().close();
});
