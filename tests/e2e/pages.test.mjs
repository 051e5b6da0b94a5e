// Issue 34: the pages crmd shows a person (the password-reset page, the "forgot password" page,
// the files' sign-in gate) as people accept them: a viewport (tried in Chromium at 390 px), the
// application's name, the person's language (Accept-Language or `lang`; Hebrew right to left), a
// "forgot password" link, the new password typed twice, a way on after "Password changed", the
// console's look, and no serious or critical axe-core violation.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setup, stopAll, request, masterHeaders, pollUntil, cli } from './lib/harness.mjs';
import { launchBrowser, screenshotDir, assertAccessible } from './lib/browser.mjs';

let server, app, dataDir, browser, shots;
const user = { username: 'dana@example.test', email: 'dana@example.test', password: 'First5ecret' };

before(async () => {
  ({ server, app, dataDir } = await setup({ extraArgs: ['--reset-mails-per-hour', '100'] }, { name: 'Acme Sales' }));
  const made = await request(server, 'POST', '/core/users', { headers: masterHeaders(app), body: user });
  assert.equal(made.status, 201, made.text);
  browser = await launchBrowser();
  shots = screenshotDir('pages');
});
after(async () => {
  await browser?.close();
  await stopAll();
});

const form = (fields) => ({ headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
const pageUrl = (name, query = '') => `/core/apps/${app.appId}/${name}${query}`;

// The mails in the outbox, oldest first (quoted-printable undone).
function mails() {
  const dir = path.join(dataDir, 'apps', app.appId, 'outbox');
  const names = fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith('.eml')).sort() : [];
  return names.map((n) => fs.readFileSync(path.join(dir, n), 'utf8').replace(/=\r?\n/g, '').replace(/=3D/g, '='));
}
// The reset links' tokens, newest last.
function resetTokens() {
  return mails().map((text) => /reset-password\?token=([0-9a-f]{32})/.exec(text)?.[1]).filter(Boolean);
}

async function newToken() {
  const before = resetTokens().length;
  const asked = await request(server, 'POST', pageUrl('forgot-password'), form({ email: user.email }));
  assert.equal(asked.status, 200, asked.text);
  assert.match(asked.text, /Link sent/);
  const p = await pollUntil(() => ({ done: resetTokens().length > before }), { timeoutMs: 5000, intervalMs: 50 });
  assert.ok(p.ok, 'a reset mail arrives');
  return resetTokens().at(-1);
}

test('issue 34: the pages have a viewport, the application\'s name, English by default and the console\'s look', async () => {
  const r = await request(server, 'GET', pageUrl('reset-password', '?token=x'));
  assert.equal(r.status, 200);
  assert.match(r.text, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
  assert.match(r.text, /<html lang="en">/);
  assert.match(r.text, /<p class="app-name">Acme Sales<\/p>/);
  assert.match(r.text, /--accent:/, 'web/look.css, inlined');
  assert.match(r.text, /name="confirm_password"/);
  assert.equal(r.headers['content-language'], 'en');
});

test('issue 34: Hebrew from Accept-Language (or lang=he) is laid out right to left; English wins by q-value', async () => {
  const he = await request(server, 'GET', pageUrl('reset-password', '?token=x'), { headers: { 'Accept-Language': 'he-IL,he;q=0.9,en;q=0.5' } });
  assert.match(he.text, /<html lang="he" dir="rtl">/);
  assert.match(he.text, /<h1>בחירת סיסמה חדשה<\/h1>/);
  assert.match(he.text, /סיסמה חדשה/);
  const chosen = await request(server, 'GET', pageUrl('forgot-password', '?lang=he'));
  assert.match(chosen.text, /<html lang="he" dir="rtl">/);
  const en = await request(server, 'GET', pageUrl('reset-password', '?token=x'), { headers: { 'Accept-Language': 'fr-FR, he;q=0.4, en;q=0.8' } });
  assert.match(en.text, /<html lang="en">/);
  // A person's own choice: links to each language that keep the page's parameters.
  assert.match(en.text, /<a href="\?token=x&amp;lang=he" lang="he" hreflang="he">עברית<\/a>/);
  const back = await request(server, 'GET', pageUrl('reset-password', '?lang=he&token=x'));
  assert.match(back.text, /<a href="\?token=x&amp;lang=en" lang="en" hreflang="en">English<\/a>/);
});

test('issue 34: the reset page asks for the password twice; two that differ change nothing', async () => {
  const token = await newToken();
  const differ = await request(server, 'POST', pageUrl('reset-password'), form({ token, new_password: 'Second5ecret', confirm_password: 'Second5ecreT' }));
  assert.equal(differ.status, 400);
  assert.match(differ.text, /The two passwords differ\./);
  const old = await request(server, 'POST', '/core/login', { headers: { 'X-Core-Application-Id': app.appId }, body: { username: user.username, password: user.password } });
  assert.equal(old.status, 200, 'the password is unchanged');
  const done = await request(server, 'POST', pageUrl('reset-password'), form({ token, new_password: 'Second5ecret', confirm_password: 'Second5ecret' }));
  assert.equal(done.status, 200, done.text);
  assert.match(done.text, /Password changed/);
  assert.match(done.text, new RegExp(`<a class="button" href="http://127\\.0\\.0\\.1:${server.port}/console/${app.appId}/">Sign in</a>`),
    '"Password changed" leads on to signing in');
  user.password = 'Second5ecret';
  const used = await request(server, 'POST', pageUrl('reset-password'), form({ token, new_password: 'Third5ecret', confirm_password: 'Third5ecret' }));
  assert.equal(used.status, 400);
  assert.match(used.text, /forgot-password/, 'a used link offers a new one');
});

test('issue 34: the files\' sign-in gate links to "forgot password", which answers alike for unknown addresses', async () => {
  const file = encodeURIComponent(`${server.base}/core/files/${app.appId}/x.txt`);
  const gate = await request(server, 'GET', pageUrl('signin', `?return=${file}`));
  assert.equal(gate.status, 200);
  assert.match(gate.text, /Sign in to Acme Sales/);
  assert.match(gate.text, new RegExp(`href="[^"]*/core/apps/${app.appId}/forgot-password">Forgot your password\\?</a>`));
  const unknown = await request(server, 'POST', pageUrl('forgot-password'), form({ email: 'nobody@example.test' }));
  assert.equal(unknown.status, 200);
  assert.match(unknown.text, /Link sent/);
  const none = await request(server, 'GET', '/core/apps/NoSuchApp/forgot-password');
  assert.equal(none.status, 404);
});

test('issue 34: in Chromium at 390 px the pages fit the phone, and pass axe-core in English and Hebrew', async () => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  const file = encodeURIComponent(`${server.base}/core/files/${app.appId}/x.txt`);
  for (const [name, url] of [
    ['reset', pageUrl('reset-password', '?token=x')],
    ['reset-he', pageUrl('reset-password', '?token=x&lang=he')],
    ['forgot', pageUrl('forgot-password')],
    ['gate', pageUrl('signin', `?return=${file}`)],
    ['gate-he', pageUrl('signin', `?return=${file}&lang=he`)],
  ]) {
    await page.goto(`${server.base}${url}`);
    const width = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    assert.deepEqual(width, [390, 390], `${name}: laid out at the phone's width, not 980 px`);
    if (name.endsWith('-he')) assert.equal(await page.evaluate(() => getComputedStyle(document.body).direction), 'rtl');
    await assertAccessible(page, name);
    await page.screenshot({ path: path.join(shots, `${name}-390.png`) });
  }
  await context.close();
});

test('issue 34: the reset mail names the application and comes from its sender (crmd app set --mail-from-name --mail-from)', async () => {
  await newToken();
  let mail = mails().at(-1);
  assert.match(mail, /^From: crmd <no-reply@crmd\.invalid>\r?$/m, 'the server\'s sender by default');
  assert.match(mail, /^Subject: Reset your password for Acme Sales\r?$/m);
  const set = JSON.parse(cli(['app', 'set', '--data', dataDir, '--app', app.appId, '--mail-from-name', 'Acme Sales', '--mail-from', 'sales@acme.example']).stdout);
  assert.equal(set.gates?.mailFrom ?? set.mailFrom, 'sales@acme.example', JSON.stringify(set));
  // A running server follows the registry within a second.
  const p = await pollUntil(async () => {
    await newToken();
    return { done: /^From: "Acme Sales" <sales@acme\.example>\r?$/m.test(mails().at(-1)) };
  }, { timeoutMs: 5000, intervalMs: 300 });
  assert.ok(p.ok, mails().at(-1));
  assert.throws(() => cli(['app', 'set', '--data', dataDir, '--app', app.appId, '--mail-from', 'Evil <x@y>\r\nBcc: z@w']), /--mail-from takes a plain address/);
  cli(['app', 'set', '--data', dataDir, '--app', app.appId, '--mail-from-name', '-', '--mail-from', '-']);
});

test('issue 34: hostile input to the pages answers a page, never a fault: bad forms, odd languages, markup in the address', async () => {
  const bad = await request(server, 'POST', pageUrl('forgot-password'), { headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'email=%zz' });
  assert.ok([200, 400].includes(bad.status), `${bad.status} ${bad.text.slice(0, 200)}`);
  assert.match(bad.headers['content-type'], /^text\/html/);
  const odd = await request(server, 'GET', pageUrl('forgot-password', '?lang=%3Cscript%3E'), {
    headers: { 'Accept-Language': `${'x-'.repeat(3000)}he;q=abc, ;;;, *;q=2` } });
  assert.equal(odd.status, 200);
  assert.match(odd.text, /<html lang="(en|he)"/);
  const marked = await request(server, 'GET', pageUrl('reset-password', '?token=%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E'));
  assert.equal(marked.status, 200);
  assert.doesNotMatch(marked.text, /<script>alert/);
  assert.match(marked.text, /href="\?token=%22%3E%3Cscript%3Ealert%281%29%3C%2Fscript%3E&amp;lang=he"/);
  const none = await request(server, 'GET', '/console/%00/..%2F..%2Fetc%2Fpasswd');
  assert.ok([200, 400, 404].includes(none.status));
  assert.doesNotMatch(none.text, /root:/);
  assert.equal((await request(server, 'GET', '/health')).status, 200);
});
