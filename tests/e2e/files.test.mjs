// Issue 20 / spec §4.8, §3.3, §7 (file rows), ../shared/SECURITY.md "files": uploads judged by
// content, stored whole under a prefixed name, deleted with a key. Every file is made here with the
// bytes its format starts with; downloads, attachment, private rights and the sign-in gate are
// driven as a browser and a client would.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import {
  setup, stopAll, request, rawRequest, appHeaders, masterHeaders, apiKeyHeaders, createApp, startServer, makeDataDir, pollUntil, HOST,
  cliJson, createRecord, uploadsInFlight,
} from './lib/harness.mjs';

let server;
let app;
let dataDir;
before(async () => {
  // Many anonymous uploads from one address follow here within a minute: the per-address upload
  // rate (issue 31 #18) has its own tests in doors-files.test.mjs.
  ({ server, app, dataDir } = await setup({ extraArgs: ['--upload-rate', '0'] }));
});
after(stopAll);

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1,
  8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89, 0, 0, 0, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0, 1, 0, 0, 5, 0, 1,
  0x0d, 0x0a, 0x2d, 0xb4, 0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82]);
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]),
  Buffer.alloc(64), Buffer.from([0xff, 0xd9])]);
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
const HTML = Buffer.from('<!DOCTYPE html>\n<html><head><title>Pay</title></head><body><script>alert(1)</script></body></html>\n');
const SVG = Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>\n');

// A zip of one stored entry (a real archive: local header, central directory, end record).
function zip(entry, content) {
  const name = Buffer.from(entry);
  const data = Buffer.from(content);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0); local.writeUInt16LE(20, 4);
  local.writeUInt32LE(data.length, 18); local.writeUInt32LE(data.length, 22); local.writeUInt16LE(name.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0); central.writeUInt16LE(20, 4); central.writeUInt16LE(20, 6);
  central.writeUInt32LE(data.length, 20); central.writeUInt32LE(data.length, 24); central.writeUInt16LE(name.length, 28);
  const centralAt = local.length + name.length + data.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0); end.writeUInt16LE(1, 8); end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + name.length, 12); end.writeUInt32LE(centralAt, 16);
  return Buffer.concat([local, name, data, central, name, end]);
}

const upload = (fileName, bytes, { a = app, srv = server, headers, contentType = 'application/octet-stream' } = {}) =>
  request(srv, 'POST', `/core/files/${encodeURIComponent(fileName)}`, {
    headers: { ...(headers ?? appHeaders(a)), 'Content-Type': contentType }, body: bytes,
  });
const filesDir = (a = app, dir = dataDir) => path.join(dir, 'apps', a.appId, 'files');
const stored = (name, a = app, dir = dataDir) => path.join(filesDir(a, dir), name);

test('§4.8 POST /core/files/{fileName} with the application id alone: 201 {url, name}; name is <32 hex>_<fileName>; url encodes it', async () => {
  const r = await upload('My Offer (final).png', PNG, { contentType: 'image/png' });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(Object.keys(r.body).sort(), ['name', 'url']);
  assert.match(r.body.name, /^[0-9a-f]{32}_My Offer \(final\)\.png$/);
  assert.equal(r.body.url, `${server.base}/core/files/${app.appId}/${encodeURIComponent(r.body.name).replace(/\(/g, '%28').replace(/\)/g, '%29')}`);
  assert.deepEqual(fs.readFileSync(stored(r.body.name)), PNG, 'the bytes are stored as sent');
  const again = await upload('My Offer (final).png', PNG);
  assert.notEqual(again.body.name, r.body.name, 'each upload has a name of its own');
});

test('§4.8 any file name is accepted: spaces, parentheses, non-Latin text', async () => {
  for (const fileName of ['הצעת מחיר.pdf', 'été 2026 (copy).pdf', "it's 100%.pdf"]) {
    const r = await upload(fileName, PDF);
    assert.equal(r.status, 201, `${fileName}: ${r.text}`);
    assert.equal(r.body.name.slice(33), fileName);
    assert.ok(fs.existsSync(stored(r.body.name)));
  }
});

test('§4.8 the type is judged by content: PNG, JPEG, PDF and ZIP are taken; the Content-Type header is not checked', async () => {
  for (const [fileName, bytes] of [['a.png', PNG], ['b.jpg', JPEG], ['c.pdf', PDF], ['d.zip', zip('notes.txt', 'hello')],
    ['e.docx', zip('[Content_Types].xml', '<Types/>')], ['f.txt', Buffer.from('plain words\n')], ['g.csv', Buffer.from('Name,Phone\nDana,050\n')]]) {
    const r = await upload(fileName, bytes, { contentType: 'text/plain' });
    assert.equal(r.status, 201, `${fileName}: ${r.text}`);
  }
});

test('§4.8 SECURITY files: content the allowlist lacks or that is not what its name says answers 403 {"error":"Invalid file type"} and stores nothing', async () => {
  const before = fs.existsSync(filesDir()) ? fs.readdirSync(filesDir()).length : 0;
  for (const [fileName, bytes] of [['page.html', HTML], ['page.txt', HTML], ['image.png', SVG], ['image.svg', SVG],
    ['logo.jpg', PNG], ['quote.pdf', Buffer.from('no pdf here\n')], ['noextension', PNG], ['empty.png', Buffer.alloc(0)]]) {
    const r = await upload(fileName, bytes, { contentType: 'image/png' });
    assert.equal(r.status, 403, `${fileName}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'Invalid file type' }, fileName);
  }
  assert.equal(fs.existsSync(filesDir()) ? fs.readdirSync(filesDir()).length : 0, before);
});

test('§4.8 SECURITY path escape: names with /, .., NUL or over 222 bytes answer 400 and write nothing outside the folder', async () => {
  for (const fileName of ['../escape.png', 'a/b.png', 'nul\u0000.png', 'x'.repeat(223) + '.png']) {
    const r = await upload(fileName, PNG);
    assert.equal(r.status, 400, `${JSON.stringify(fileName)}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'Invalid file name' });
  }
  // `..` as the name itself: fetch would resolve it away, so it goes raw.
  for (const raw of ['..', '%2E%2E']) {
    const r = await rawRequest(server, `POST /core/files/${raw} HTTP/1.1\nX-Core-Application-Id: ${app.appId}\nContent-Type: image/png`, PNG);
    assert.equal(r.status, 400, `${raw}: ${r.text ?? ''}`);
  }
  assert.ok(!fs.existsSync(path.join(dataDir, 'apps', app.appId, 'escape.png')));
  assert.ok(!fs.existsSync(path.join(dataDir, 'apps', 'escape.png')));
});

test('§8 no size cap by default: a 15 MB file is taken; --max-file-size caps it (413)', async () => {
  const big = Buffer.concat([PNG, Buffer.alloc(15 * 1024 * 1024, 7)]);
  const r = await upload('big.png', big);
  assert.equal(r.status, 201, r.text);
  assert.equal(fs.statSync(stored(r.body.name)).size, big.length);
  const capped = await setup({ extraArgs: ['--max-file-size', '1'] });
  // Raw: the server answers 413 from the head and closes while the body is still going out, which
  // fetch may report as a failed request instead of the answer.
  const refused = await rawRequest(capped.server, `POST /core/files/big.png HTTP/1.1\nX-Core-Application-Id: ${capped.app.appId}\nContent-Type: image/png`,
    Buffer.concat([PNG, Buffer.alloc(2 * 1024 * 1024, 7)]));
  assert.equal(refused.status, 413);
  const small = await upload('small.png', PNG, { srv: capped.server, a: capped.app });
  assert.equal(small.status, 201, small.text);
});

test('§4.8 DELETE /core/files/{name}: the application id alone gets 403 and the file stays; a key removes it (200, empty body), also for a name that does not exist', async () => {
  const r = await upload('to-delete.pdf', PDF);
  assert.equal(r.status, 201, r.text);
  const target = `/core/files/${encodeURIComponent(r.body.name)}`;
  const refused = await request(server, 'DELETE', target, { headers: appHeaders(app) });
  assert.equal(refused.status, 403);
  assert.deepEqual(refused.body, { error: 'unauthorized: master key is required' });
  assert.ok(fs.existsSync(stored(r.body.name)));
  const done = await request(server, 'DELETE', target, { headers: apiKeyHeaders(app) });
  assert.equal(done.status, 200, done.text);
  assert.equal(done.text, '');
  assert.ok(!fs.existsSync(stored(r.body.name)));
  const again = await request(server, 'DELETE', target, { headers: masterHeaders(app) });
  assert.equal(again.status, 200);
  assert.equal(again.text, '');
  // The SQLite store's file, or a stand-in where the PostgreSQL store keeps none.
  const outside = path.join(dataDir, 'apps', app.appId, 'data.db');
  if (!fs.existsSync(outside)) fs.writeFileSync(outside, 'not a file of the files folder');
  const escape = await request(server, 'DELETE', `/core/files/${encodeURIComponent('../data.db')}`, { headers: masterHeaders(app) });
  assert.equal(escape.status, 200);
  assert.ok(fs.existsSync(outside), 'nothing outside the folder is touched');
});

test('§4.8 SECURITY tenant isolation: another application\'s keys delete nothing of this one', async () => {
  const other = createApp(dataDir);
  const known = await pollUntil(async () => ({ done: (await upload('x.pdf', PDF, { a: other })).status === 201 }),
    { timeoutMs: 30_000, intervalMs: 100 });
  assert.ok(known.ok, 'the server knows the second application');
  const mine = await upload('mine.pdf', PDF);
  const r = await request(server, 'DELETE', `/core/files/${encodeURIComponent(mine.body.name)}`, { headers: masterHeaders(other) });
  assert.equal(r.status, 200);
  assert.ok(fs.existsSync(stored(mine.body.name)), 'the file of the first application stays');
  const mixed = await request(server, 'DELETE', `/core/files/${encodeURIComponent(mine.body.name)}`,
    { headers: { 'X-Core-Application-Id': app.appId, 'X-Core-Master-Key': other.masterKey } });
  assert.equal(mixed.status, 403, 'a key of B with the id of A is no key of A');
  assert.ok(fs.existsSync(stored(mine.body.name)));
});

test('§3.3 kill -9 during an upload leaves no file behind, under no name, after the restart', async () => {
  const dir = makeDataDir('crmd-files-kill');
  const a = createApp(dir);
  const srv = await startServer(dir);
  // Half of a 4 MB upload, then the server is killed.
  const sock = net.createConnection({ host: HOST, port: srv.port });
  sock.on('error', () => { /* reset by the kill: expected */ });
  await new Promise((resolve) => sock.once('connect', resolve));
  sock.write(`POST /core/files/half.png HTTP/1.1\r\nHost: ${HOST}\r\nX-Core-Application-Id: ${a.appId}\r\n` +
    `Content-Type: image/png\r\nContent-Length: ${4 * 1024 * 1024}\r\n\r\n`);
  sock.write(Buffer.concat([PNG, Buffer.alloc(2 * 1024 * 1024, 1)]));
  const arrived = await pollUntil(() => ({ done: uploadsInFlight(dir).some((f) => fs.statSync(f).size > 1024 * 1024) }),
    { timeoutMs: 5000, intervalMs: 20 });
  assert.ok(arrived.ok, 'the upload streams to a temporary file as it arrives');
  const crashedFolder = path.dirname(uploadsInFlight(dir)[0]);
  await srv.kill();
  sock.destroy();
  const again = await startServer(dir);
  assert.deepEqual(uploadsInFlight(dir), [], 'the half upload is gone after the restart');
  assert.ok(!fs.existsSync(crashedFolder) && !fs.existsSync(`${crashedFolder}.lock`), 'and so is the killed server\'s folder (issue 33)');
  assert.ok(!fs.existsSync(filesDir(a, dir)) || fs.readdirSync(filesDir(a, dir)).length === 0, 'no file was kept');
  const r = await upload('after.png', PNG, { srv: again, a });
  assert.equal(r.status, 201, r.text);
});

// Downloads of the address an upload answers (spec §4.8 "GET of the returned url").
// As a browser opens an address, except that redirects are shown, not followed.
const open = (url, headers = {}, method = 'GET') => fetch(url, { method, headers, redirect: 'manual', signal: AbortSignal.timeout(30_000) });
// Asserts `r` sends the browser to crmd's sign-in gate, to come back to `url`.
async function assertGate(r, a, url, why) {
  assert.equal(r.status, 302, why);
  const to = new URL(r.headers.get('location'));
  assert.equal(`${to.origin}${to.pathname}`, `${server.base}/core/apps/${a.appId}/signin`, why);
  assert.equal(to.searchParams.get('return'), url, why);
  await r.arrayBuffer();
}

test('§4.8 GET of the returned url: the bytes, to the master key, an API key and a signed-in user of the application; HEAD and Range work', async () => {
  const bytes = Buffer.concat([PNG, Buffer.alloc(10 * 1024 * 1024, 3)]);
  const up = await upload('photo.png', bytes);
  assert.equal(up.status, 201, up.text);
  const got = await open(up.body.url, { 'X-Core-Master-Key': app.masterKey });
  assert.equal(got.status, 200);
  assert.equal(got.headers.get('content-type'), 'image/png');
  assert.equal(got.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(got.headers.get('accept-ranges'), 'bytes');
  assert.deepEqual(Buffer.from(await got.arrayBuffer()), bytes, 'streamed whole');
  const viaKey = await open(up.body.url, { 'X-Core-API-Key': app.apiKey });
  assert.equal(viaKey.status, 200);
  await viaKey.arrayBuffer();
  // A signed-in user of the application.
  const user = await request(server, 'POST', '/core/users', { headers: masterHeaders(app), body: { username: 'reader@example.test', password: 'Reader5ecret' } });
  assert.equal(user.status, 201, user.text);
  const viaSession = await open(up.body.url, { 'X-Core-Session-Token': user.body.sessionToken });
  assert.equal(viaSession.status, 200);
  assert.equal((await viaSession.arrayBuffer()).byteLength, bytes.length);
  const head = await open(up.body.url, { 'X-Core-Master-Key': app.masterKey }, 'HEAD');
  assert.equal(head.status, 200);
  assert.equal(head.headers.get('content-length'), String(bytes.length));
  const part = await open(up.body.url, { 'X-Core-Master-Key': app.masterKey, Range: 'bytes=1-3' });
  assert.equal(part.status, 206);
  assert.equal(part.headers.get('content-range'), `bytes 1-3/${bytes.length}`);
  assert.deepEqual(Buffer.from(await part.arrayBuffer()), bytes.subarray(1, 4));
  const tail = await open(up.body.url, { 'X-Core-Master-Key': app.masterKey, Range: 'bytes=-2' });
  assert.equal(tail.status, 206);
  assert.deepEqual(Buffer.from(await tail.arrayBuffer()), bytes.subarray(bytes.length - 2));
  const beyond = await open(up.body.url, { 'X-Core-Master-Key': app.masterKey, Range: `bytes=${bytes.length}-` });
  assert.equal(beyond.status, 416);
  assert.equal(beyond.headers.get('content-range'), `bytes */${bytes.length}`);
});

test('§4.8 SECURITY files: nothing a download holds runs in a browser; only images, media, PDF and text are shown inline', async () => {
  const docx = await upload('offer.docx', zip('[Content_Types].xml', '<Types/>'));
  const r = await open(docx.body.url, { 'X-Core-Master-Key': app.masterKey });
  assert.equal(r.headers.get('content-disposition'), 'attachment');
  assert.match(r.headers.get('content-security-policy'), /sandbox/);
  await r.arrayBuffer();
  const png = await upload('shown.png', PNG);
  const shown = await open(png.body.url, { 'X-Core-Master-Key': app.masterKey });
  assert.equal(shown.headers.get('content-disposition'), 'inline');
  await shown.arrayBuffer();
});

test('§4.8 SECURITY tenant isolation and deletion: another application\'s key or session gets nothing; a deleted file answers 404 File not found', async () => {
  const other = createApp(dataDir);
  await pollUntil(async () => ({ done: (await upload('x.pdf', PDF, { a: other })).status === 201 }), { timeoutMs: 30_000, intervalMs: 100 });
  const up = await upload('secret.pdf', PDF);
  await assertGate(await open(up.body.url), app, up.body.url, 'an anonymous browser');
  await assertGate(await open(up.body.url, { 'X-Core-Application-Id': other.appId, 'X-Core-Master-Key': other.masterKey }), app, up.body.url,
    'another application\'s master key is no key of this one');
  await assertGate(await open(up.body.url, { 'X-Core-API-Key': other.apiKey }), app, up.body.url, 'nor its API key');
  const otherUser = await request(server, 'POST', '/core/users', { headers: masterHeaders(other), body: { username: 'outsider', password: 'Outs1derPw' } });
  assert.equal(otherUser.status, 201, otherUser.text);
  await assertGate(await open(up.body.url, { 'X-Core-Session-Token': otherUser.body.sessionToken }), app, up.body.url, 'nor its user');
  await assertGate(await open(up.body.url, { Cookie: `crmd_session=${otherUser.body.sessionToken}` }), app, up.body.url, 'nor its cookie');
  const wrongApp = await open(up.body.url.replace(`/files/${app.appId}/`, `/files/${other.appId}/`), { 'X-Core-Master-Key': other.masterKey });
  assert.equal(wrongApp.status, 404, 'the name is not a file of the other application');
  await wrongApp.arrayBuffer();
  // Every route with the other application's id in its path: its files and its gate.
  const privateOther = await open(`${server.base}/core/files/${other.appId}/${encodeURIComponent(up.body.name)}/Docs/x1/Logo`, { 'X-Core-Master-Key': other.masterKey });
  assert.equal(privateOther.status, 404);
  await privateOther.arrayBuffer();
  const gateOther = await open(`${server.base}/core/apps/${other.appId}/signin?return=${encodeURIComponent(up.body.url)}`);
  assert.equal(gateOther.status, 400, 'one application\'s gate does not return to another\'s files');
  await gateOther.arrayBuffer();
  const del = await request(server, 'DELETE', `/core/files/${encodeURIComponent(up.body.name)}`, { headers: masterHeaders(app) });
  assert.equal(del.status, 200);
  const gone = await open(up.body.url, { 'X-Core-Master-Key': app.masterKey });
  assert.equal(gone.status, 404);
  assert.deepEqual(await gone.json(), { error: 'File not found' });
  const escape = await open(`${server.base}/core/files/${app.appId}/..%2Fdata.db`, { 'X-Core-Master-Key': app.masterKey });
  assert.equal(escape.status, 404);
  await escape.arrayBuffer();
});

// Attachment (spec §3.3, §4.8): the stored value carries the address its field type gives it.
test('§3.3 §4.8 attach: a File field stores {static-url}/<APP_ID>/<name> with public:true, served to anyone with Cache-Control; a PrivateFile field the record-scoped address with private:true', async () => {
  const M = masterHeaders(app);
  const made = await request(server, 'POST', '/core/schemas/Docs', { headers: M, body: { fields: {
    Logo: { type: 'File' }, Contract: { type: 'PrivateFile' }, Note: { type: 'String' } } } });
  assert.equal(made.status, 200, made.text);
  const up = await upload('logo (1).png', PNG);
  const file = { __type: 'File', name: up.body.name, url: up.body.url };
  const created = await request(server, 'POST', '/core/classes/Docs', { headers: M, body: { Logo: file } });
  assert.equal(created.status, 201, created.text);
  const id = created.body.objectId;
  const staticUrl = `${server.base}/static/${app.appId}/${encodeURIComponent(up.body.name).replace(/\(/g, '%28').replace(/\)/g, '%29')}`;
  const got = await request(server, 'GET', `/core/classes/Docs/${id}`, { headers: M });
  assert.deepEqual(got.body.Logo, { __type: 'File', name: up.body.name, url: staticUrl, public: true });
  const listed = await request(server, 'GET', `/core/classes/Docs?where=${encodeURIComponent(JSON.stringify({ objectId: id }))}&keys=Logo`, { headers: M });
  assert.deepEqual(listed.body.results[0].Logo, got.body.Logo, 'find with keys answers the same value as get');
  const holder = await createRecord(server, app, 'DocLinks', { Doc: { __type: 'Pointer', className: 'Docs', objectId: id } });
  const included = await request(server, 'GET', `/core/classes/DocLinks/${holder}?include=Doc`, { headers: M });
  assert.deepEqual(included.body.Doc.Logo, got.body.Logo, 'include answers the same value');
  const includedList = await request(server, 'GET', `/core/classes/DocLinks?include=Doc&keys=Doc.Logo`, { headers: M });
  assert.deepEqual(includedList.body.results[0].Doc.Logo, got.body.Logo, 'include with keys answers the same value');
  const served = await open(staticUrl);
  assert.equal(served.status, 200);
  assert.equal(served.headers.get('cache-control'), 'public, max-age=86400');
  assert.equal(served.headers.get('x-content-type-options'), 'nosniff');
  assert.deepEqual(Buffer.from(await served.arrayBuffer()), PNG);
  const other = createApp(dataDir);
  await pollUntil(async () => ({ done: (await upload('x.pdf', PDF, { a: other })).status === 201 }), { timeoutMs: 30_000, intervalMs: 100 });
  const crossed = await open(staticUrl.replace(`/static/${app.appId}/`, `/static/${other.appId}/`));
  assert.equal(crossed.status, 404, 'another application\'s static path does not reach this one\'s files');
  await crossed.arrayBuffer();

  const secret = await upload('contract.pdf', PDF);
  const updated = await request(server, 'PUT', `/core/classes/Docs/${id}`, { headers: M,
    body: { Contract: { __type: 'File', name: secret.body.name, url: secret.body.url } } });
  assert.equal(updated.status, 200, updated.text);
  const after = await request(server, 'GET', `/core/classes/Docs/${id}`, { headers: M });
  assert.deepEqual(after.body.Contract, { __type: 'File', name: secret.body.name, private: true,
    url: `${server.base}/core/files/${app.appId}/${encodeURIComponent(secret.body.name)}/Docs/${id}/Contract` });
  const notPublic = await open(`${server.base}/static/${app.appId}/${encodeURIComponent(secret.body.name)}`);
  assert.equal(notPublic.status, 404, 'a private file is not on the static host');
  await notPublic.arrayBuffer();
  const unattached = await upload('loose.png', PNG);
  const loose = await open(`${server.base}/static/${app.appId}/${encodeURIComponent(unattached.body.name)}`);
  assert.equal(loose.status, 404, 'an unattached upload is not on the static host');
  await loose.arrayBuffer();

  // Deleted: every address answers 404.
  await request(server, 'DELETE', `/core/files/${encodeURIComponent(up.body.name)}`, { headers: M });
  const gone = await open(staticUrl);
  assert.equal(gone.status, 404);
  assert.deepEqual(await gone.json(), { error: 'File not found' });
});

test('§4.8 attaching a name never uploaded answers as any write; its address answers 404; a File value in a String field is 111', async () => {
  const M = masterHeaders(app);
  const r = await request(server, 'POST', '/core/classes/Docs', { headers: M, body: { Logo: { __type: 'File', name: 'local.png' } } });
  assert.equal(r.status, 201, r.text);
  const got = await request(server, 'GET', `/core/classes/Docs/${r.body.objectId}`, { headers: M });
  assert.equal(got.body.Logo.public, true);
  const missing = await open(got.body.Logo.url);
  assert.equal(missing.status, 404);
  await missing.arrayBuffer();
  const wrong = await request(server, 'POST', '/core/classes/Docs', { headers: M, body: { Note: { __type: 'File', name: 'x.png' } } });
  assert.equal(wrong.status, 400, wrong.text);
  assert.equal(wrong.body.code, 111);
});

// Private rights (spec §4.8): the private address serves the master key, and a user who may read
// the record (CLP and ACL, as a GET of the record), while the record's field holds the file.
test('§4.8 PrivateFile rights: master and a permitted user get the file; a user without the role, another application\'s user and an anonymous browser go to the sign-in gate (302)', async () => {
  const M = masterHeaders(app);
  const signUp = async (username, a = app) => {
    const r = await request(server, 'POST', '/core/users', { headers: masterHeaders(a), body: { username, password: 'Str0ngPass' } });
    assert.equal(r.status, 201, r.text);
    return r.body;
  };
  const lawyer = await signUp('lawyer');
  const clerk = await signUp('clerk');
  await createRecord(server, app, '_Role', {
    name: 'Legal', users: { __op: 'AddRelation', objects: [{ __type: 'Pointer', className: '_User', objectId: lawyer.objectId }] },
  });
  const schema = await request(server, 'POST', '/core/schemas/Contracts', { headers: M, body: {
    fields: { Scan: { type: 'PrivateFile' }, Other: { type: 'PrivateFile' } },
    classLevelPermissions: { get: { 'role:Legal': true }, find: { 'role:Legal': true } } } });
  assert.equal(schema.status, 200, schema.text);
  const up = await upload('signed.pdf', PDF);
  const id = await createRecord(server, app, 'Contracts', { Scan: { __type: 'File', name: up.body.name, url: up.body.url } });
  const url = `${server.base}/core/files/${app.appId}/${encodeURIComponent(up.body.name)}/Contracts/${id}/Scan`;
  const got = await request(server, 'GET', `/core/classes/Contracts/${id}`, { headers: M });
  assert.equal(got.body.Scan.url, url);

  const asMaster = await open(url, { 'X-Core-Master-Key': app.masterKey });
  assert.equal(asMaster.status, 200);
  assert.equal(asMaster.headers.get('content-type'), 'application/pdf');
  assert.deepEqual(Buffer.from(await asMaster.arrayBuffer()), PDF);
  const asLawyer = await open(url, { 'X-Core-Session-Token': lawyer.sessionToken });
  assert.equal(asLawyer.status, 200, 'a user of the role the CLP names');
  assert.deepEqual(Buffer.from(await asLawyer.arrayBuffer()), PDF);
  const viaCookie = await open(url, { Cookie: `theme=dark; crmd_session=${lawyer.sessionToken}` });
  assert.equal(viaCookie.status, 200, 'the gate\'s cookie counts as the token');
  await viaCookie.arrayBuffer();
  await assertGate(await open(url, { 'X-Core-Session-Token': clerk.sessionToken }), app, url, 'a user without the role');
  const other = createApp(dataDir);
  await pollUntil(async () => ({ done: (await upload('x.pdf', PDF, { a: other })).status === 201 }), { timeoutMs: 30_000, intervalMs: 100 });
  const outsider = await signUp('lawyer', other);
  await assertGate(await open(url, { 'X-Core-Session-Token': outsider.sessionToken }), app, url, 'another application\'s user');
  await assertGate(await open(url), app, url, 'an anonymous browser');
  await assertGate(await open(url, {}, 'HEAD'), app, url, 'HEAD as GET');

  // The record's ACL narrows it further: hidden from the lawyer, the file is too.
  const narrowed = await request(server, 'PUT', `/core/classes/Contracts/${id}`, { headers: M, body: { ACL: { [clerk.objectId]: { read: true } } } });
  assert.equal(narrowed.status, 200, narrowed.text);
  await assertGate(await open(url, { 'X-Core-Session-Token': lawyer.sessionToken }), app, url, 'an ACL that hides the record hides the file');
  await request(server, 'PUT', `/core/classes/Contracts/${id}`, { headers: M, body: { ACL: { 'role:Legal': { read: true } } } });

  // Only while the field holds that file: another field, another record, or a replaced file is 404.
  const wrongField = await open(url.replace(/\/Scan$/, '/Other'), { 'X-Core-Session-Token': lawyer.sessionToken });
  assert.equal(wrongField.status, 404);
  assert.deepEqual(await wrongField.json(), { error: 'File not found' });
  const otherRecord = await createRecord(server, app, 'Contracts', {});
  const borrowed = await open(url.replace(`/Contracts/${id}/`, `/Contracts/${otherRecord}/`), { 'X-Core-Master-Key': app.masterKey });
  assert.equal(borrowed.status, 404, 'a record that does not hold the file does not open it');
  await borrowed.arrayBuffer();
  // Its upload address is the master key's alone once it is private: users go through the record.
  const bare = await open(up.body.url, { 'X-Core-Master-Key': app.masterKey });
  assert.equal(bare.status, 200);
  await bare.arrayBuffer();
  await assertGate(await open(up.body.url, { 'X-Core-Session-Token': lawyer.sessionToken }), app, up.body.url, 'the bare address of a private file');
  // Its name does not publish it: attached to a File field, the static address stays 404.
  const leak = await request(server, 'POST', '/core/classes/Docs', { headers: M, body: { Logo: { __type: 'File', name: up.body.name } } });
  assert.equal(leak.status, 201, leak.text);
  const leakedValue = (await request(server, 'GET', `/core/classes/Docs/${leak.body.objectId}`, { headers: M })).body.Logo;
  assert.equal(leakedValue.public, true);
  const leaked = await open(leakedValue.url);
  assert.equal(leaked.status, 404, 'a private file attached to a File field is not published');
  await leaked.arrayBuffer();
  const next = await upload('signed-v2.pdf', PDF);
  await request(server, 'PUT', `/core/classes/Contracts/${id}`, { headers: M, body: { Scan: { __type: 'File', name: next.body.name, url: next.body.url } } });
  const replaced = await open(url, { 'X-Core-Master-Key': app.masterKey });
  assert.equal(replaced.status, 404, 'the old file is no longer the field\'s');
  await replaced.arrayBuffer();
});

// The sign-in gate (issue 20): a browser signs in with the application's login and comes back to
// the file with a session cookie only the application's file addresses receive.
test('§4.8 sign-in gate: the 302 leads to a form; a bad password is refused; signing in sets an HttpOnly SameSite=Lax cookie scoped to the files and returns to the file, which then opens', async () => {
  const user = await request(server, 'POST', '/core/users', { headers: masterHeaders(app), body: { username: 'browser', password: 'Br0wserPw' } });
  assert.equal(user.status, 201, user.text);
  const up = await upload('plan.png', PNG);
  const first = await open(up.body.url);
  assert.equal(first.status, 302);
  await first.arrayBuffer();
  const gateUrl = first.headers.get('location');
  const page = await open(gateUrl);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type'), /^text\/html/);
  const html = await page.text();
  assert.match(html, /<form method="post">/);
  assert.match(html, /name="password"/);
  // The form's own post carries its token and the cookie it came with (issue 31 #12).
  const gateCookie = page.headers.get('set-cookie').split(';')[0];
  const csrf = html.match(/name="csrf" value="([0-9a-f]+)"/)[1];
  const form = (password, back = up.body.url) => new URLSearchParams({ username: 'browser', password, return: back, csrf }).toString();
  const post = (body) => fetch(gateUrl, { method: 'POST', redirect: 'manual', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: gateCookie }, body });

  const wrong = await post(form('not-it'));
  assert.equal(wrong.status, 401);
  assert.equal(wrong.headers.get('set-cookie'), null);
  assert.match(await wrong.text(), /Invalid username\/password\./);
  for (const elsewhere of ['https://evil.example.test/', `${server.base}/core/classes/_User`, `${server.base}/core/files/${app.appId}/`, `${up.body.url}\r\nX-Injected: 1`]) {
    const refused = await post(form('Br0wserPw', elsewhere));
    assert.equal(refused.status, 400, `the gate returns only to the application's files: ${elsewhere}`);
    assert.equal(refused.headers.get('set-cookie'), null);
    await refused.arrayBuffer();
  }

  const signed = await post(form('Br0wserPw'));
  assert.equal(signed.status, 303);
  assert.equal(signed.headers.get('location'), up.body.url);
  await signed.arrayBuffer();
  const cookie = signed.headers.get('set-cookie');
  const [pair, ...attributes] = cookie.split(';').map((part) => part.trim());
  assert.match(pair, /^crmd_session=r:[0-9a-zA-Z]+$/);
  assert.deepEqual(attributes.sort(), ['HttpOnly', `Path=/core/files/${app.appId}/`, 'SameSite=Lax'], 'no Secure over plain http');
  const back = await open(up.body.url, { Cookie: pair });
  assert.equal(back.status, 200);
  assert.deepEqual(Buffer.from(await back.arrayBuffer()), PNG);
  // The cookie is a session like a login's: logging it out closes the file again.
  const out = await request(server, 'POST', '/core/logout', { headers: { ...appHeaders(app), 'X-Core-Session-Token': pair.slice('crmd_session='.length) } });
  assert.equal(out.status, 200, out.text);
  await assertGate(await open(up.body.url, { Cookie: pair }), app, up.body.url, 'a logged-out cookie');
});

test('§4.8 --signin-url sends browsers to the operator\'s page; behind an https public URL the gate\'s cookie is Secure', async () => {
  const dir = makeDataDir();
  const a = createApp(dir);
  const srv = await startServer(dir, { extraArgs: ['--public-url', 'https://crm.example.test', '--signin-url', 'https://login.example.test/gate'] });
  const up = await upload('card.png', PNG, { a, srv });
  assert.equal(up.status, 201, up.text);
  assert.match(up.body.url, new RegExp(`^https://crm\\.example\\.test/core/files/${a.appId}/`));
  const local = up.body.url.replace('https://crm.example.test', srv.base);
  const r = await open(local);
  assert.equal(r.status, 302);
  await r.arrayBuffer();
  const to = new URL(r.headers.get('location'));
  assert.equal(`${to.origin}${to.pathname}`, 'https://login.example.test/gate');
  assert.equal(to.searchParams.get('app'), a.appId);
  assert.equal(to.searchParams.get('return'), up.body.url);
  const made = await request(srv, 'POST', '/core/users', { headers: masterHeaders(a), body: { username: 'secure', password: 'Secur3Pass' } });
  assert.equal(made.status, 201, made.text);
  // The operator's page posts from its own origin, which crmd trusts instead of a form token.
  const signed = await fetch(`${srv.base}/core/apps/${a.appId}/signin`, { method: 'POST', redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: 'https://login.example.test' },
    body: new URLSearchParams({ username: 'secure', password: 'Secur3Pass', return: up.body.url }).toString() });
  assert.equal(signed.status, 303);
  await signed.arrayBuffer();
  assert.match(signed.headers.get('set-cookie'), /; Secure$/);
});

// Orphans (spec §3.3): uploaded, never attached, found by no query. Last in the file: it removes
// every unreferenced upload of the application.
test('§3.3 crmd files gc removes the files no record references and older than --older-than, and reports them; attached ones stay', async () => {
  const M = masterHeaders(app);
  const kept = await upload('kept.png', PNG);
  const made = await request(server, 'POST', '/core/classes/Docs', { headers: M, body: { Logo: { __type: 'File', name: kept.body.name } } });
  assert.equal(made.status, 201, made.text);
  const keptPrivate = await upload('kept.pdf', PDF);
  const made2 = await request(server, 'POST', '/core/classes/Docs', { headers: M, body: { Contract: { __type: 'File', name: keptPrivate.body.name } } });
  assert.equal(made2.status, 201, made2.text);
  const orphan = await upload('orphan.png', PNG);
  const young = cliJson(['files', 'gc', '--data', dataDir, '--app', app.appId]);  // default 7d: all are young
  assert.deepEqual(young.removed, []);
  assert.ok(fs.existsSync(stored(orphan.body.name)));
  const r = cliJson(['files', 'gc', '--data', dataDir, '--app', app.appId, '--older-than', '0s']);
  assert.ok(r.removed.includes(orphan.body.name), JSON.stringify(r));
  assert.ok(!r.removed.includes(kept.body.name) && !r.removed.includes(keptPrivate.body.name));
  assert.ok(!fs.existsSync(stored(orphan.body.name)));
  assert.ok(fs.existsSync(stored(kept.body.name)) && fs.existsSync(stored(keptPrivate.body.name)));
  const served = await open(`${server.base}/static/${app.appId}/${encodeURIComponent(kept.body.name)}`);
  assert.equal(served.status, 200, 'an attached file is still served');
  await served.arrayBuffer();
  assert.throws(() => cliJson(['files', 'gc', '--data', dataDir, '--app', app.appId, '--older-than', 'soon']));
});
