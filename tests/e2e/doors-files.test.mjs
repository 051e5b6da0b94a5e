// Issue 31, the file doors: each test reproduces one finding of the table (by number) against
// the upload and attachment routes, bounded in count and time. A file never stays public once it is
// attached privately (#7); an upload's application is known from its head (#9), or for Parse's JSON
// file before its base64 is decoded, which is read as a stream (#13); uploads keep a pace and a
// total time and cannot hold the connection slots (#10); anonymous uploads have a rate per address,
// applications a quota of bytes, and --max-file-size answers in the file routes' form (#18).
import test, { after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import {
  setup, stopAll, request, rawRequest, appHeaders, masterHeaders, apiKeyHeaders, HOST, sleep, cli, cliJson, pollUntil, uploadsInFlight,
} from './lib/harness.mjs';

after(stopAll);

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1,
  8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89, 0, 0, 0, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0, 1, 0, 0, 5, 0, 1,
  0x0d, 0x0a, 0x2d, 0xb4, 0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82]);
// A PNG head followed by `bytes` of zeros: what libmagic still calls a PNG (the 1 GiB file).
const bigPng = (bytes) => Buffer.concat([PNG, Buffer.alloc(bytes)]);

const upload = (srv, headers, fileName, bytes) =>
  request(srv, 'POST', `/core/files/${encodeURIComponent(fileName)}`, { headers: { ...headers, 'Content-Type': 'image/png' }, body: bytes });
const open = (url, headers = {}) => fetch(url, { headers, redirect: 'manual', signal: AbortSignal.timeout(20_000) });
const staticUrl = (srv, app, name) => `${srv.base}/static/${app.appId}/${encodeURIComponent(name)}`;
const vmKiB = (pid, field) => Number(fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`))[1]);
const leftovers = uploadsInFlight;

// Sends `head` (request line and headers, no blank line) and never a body; resolves with what the
// server answered before it closed, or '' when it answered nothing within `timeoutMs`.
function headOnly(srv, head, { timeoutMs = 10_000 } = {}) {
  return new Promise((resolve) => {
    const sock = net.createConnection({ host: HOST, port: srv.port });
    let text = '';
    const timer = setTimeout(() => { sock.destroy(); resolve(text); }, timeoutMs);
    sock.on('data', (d) => { text += d.toString('latin1'); });
    sock.on('error', () => {});
    sock.on('close', () => { clearTimeout(timer); resolve(text); });
    sock.write(`${head}\r\nHost: ${HOST}\r\n\r\n`);
  });
}

// Sends an upload's head, then `chunk` every `everyMs` until the server answers or closes, or
// `timeoutMs` passes. Resolves with {status (0: none), text, endedMs (null: still open), sent}.
function feed(srv, head, { chunk, everyMs, timeoutMs }) {
  return new Promise((resolve) => {
    const started = Date.now();
    const sock = net.createConnection({ host: HOST, port: srv.port });
    let text = '';
    let sent = 0;
    let timer;
    let pump;
    const finish = (endedMs) => {
      clearTimeout(timer);
      clearInterval(pump);
      sock.destroy();
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      resolve({ status: m ? Number(m[1]) : 0, text, endedMs, sent });
    };
    timer = setTimeout(() => finish(null), timeoutMs);
    sock.on('data', (d) => { text += d.toString('latin1'); if (/\r\n\r\n[\s\S]*\}/.test(text)) finish(Date.now() - started); });
    sock.on('error', () => {});
    sock.on('close', () => finish(Date.now() - started));
    sock.on('connect', () => {
      sock.write(`${head}\r\nHost: ${HOST}\r\n\r\n`);
      pump = setInterval(() => { if (!sock.destroyed && sock.writableLength < (1 << 20)) { sock.write(chunk); sent += chunk.length; } }, everyMs);
    });
  });
}

test('issue 31 #7: a file attached to a File field and then to a PrivateFile field leaves the static host at once; it is never published again', async () => {
  const { server, app, dataDir } = await setup();
  const M = masterHeaders(app);
  for (const [cls, fields] of [['Docs', { Logo: { type: 'File' } }], ['Vault', { Scan: { type: 'PrivateFile' } }]]) {
    const made = await request(server, 'POST', `/core/schemas/${cls}`, { headers: M, body: { fields } });
    assert.equal(made.status, 200, made.text);
  }
  const up = await upload(server, appHeaders(app), 'scan.png', PNG);
  assert.equal(up.status, 201, up.text);
  const file = { __type: 'File', name: up.body.name, url: up.body.url };
  const doc = await request(server, 'POST', '/core/classes/Docs', { headers: M, body: { Logo: file } });
  assert.equal(doc.status, 201, doc.text);
  const published = await open(staticUrl(server, app, up.body.name));
  assert.equal(published.status, 200);
  assert.equal(published.headers.get('cache-control'), 'public, max-age=86400');
  await published.arrayBuffer();

  // The same name, attached privately to another class's record.
  const vault = await request(server, 'POST', '/core/classes/Vault', { headers: M, body: { Scan: file } });
  assert.equal(vault.status, 201, vault.text);
  const after = await open(staticUrl(server, app, up.body.name));
  assert.equal(after.status, 404, 'once attached privately, the file is no longer public');
  assert.deepEqual(await after.json(), { error: 'File not found' });
  assert.ok(!fs.existsSync(path.join(dataDir, 'apps', app.appId, 'public', up.body.name)), 'the public copy is gone from disk');
  const value = (await request(server, 'GET', `/core/classes/Vault/${vault.body.objectId}`, { headers: M })).body.Scan;
  const privately = await open(value.url, { 'X-Core-Master-Key': app.masterKey });
  assert.equal(privately.status, 200, 'the private address serves it');
  assert.deepEqual(Buffer.from(await privately.arrayBuffer()), PNG);
  // Attached to a File field again (a writer who learned the name): still not public.
  const again = await request(server, 'PUT', `/core/classes/Docs/${doc.body.objectId}`, { headers: M, body: { Logo: file } });
  assert.equal(again.status, 200, again.text);
  const republished = await open(staticUrl(server, app, up.body.name));
  assert.equal(republished.status, 404);
  await republished.arrayBuffer();

  // A File value removed leaves its file public until `crmd files gc` finds no record names it
  // (docs/FILES.md): then the file and its public copy go.
  const other = await upload(server, M, 'logo.png', PNG);
  const logo = await request(server, 'POST', '/core/classes/Docs', { headers: M, body: { Logo: { __type: 'File', name: other.body.name } } });
  assert.equal(logo.status, 201, logo.text);
  const cleared = await request(server, 'PUT', `/core/classes/Docs/${logo.body.objectId}`, { headers: M, body: { Logo: { __op: 'Delete' } } });
  assert.equal(cleared.status, 200, cleared.text);
  const still = await open(staticUrl(server, app, other.body.name));
  assert.equal(still.status, 200);
  await still.arrayBuffer();
  const gc = cliJson(['files', 'gc', '--data', dataDir, '--app', app.appId, '--older-than', '0s']);
  assert.ok(gc.removed.includes(other.body.name), JSON.stringify(gc));
  assert.ok(!gc.removed.includes(up.body.name), 'a file a record names stays');
  const gone = await open(staticUrl(server, app, other.body.name));
  assert.equal(gone.status, 404);
  await gone.arrayBuffer();
});

test('issue 31 #9: an upload naming an application that does not exist is refused by its head, before its body is read', async () => {
  // The body never comes: a server that waited for it would answer nothing before the request
  // timeout, a minute, and headOnly gives up after 30 s.
  const { server, dataDir } = await setup({ extraArgs: ['--request-timeout', '60'] });
  const answer = await headOnly(server,
    'POST /core/files/big.png HTTP/1.1\r\nX-Core-Application-Id: no-such-app\r\nContent-Type: image/png\r\nContent-Length: 67108864',
    { timeoutMs: 30_000 });
  assert.match(answer, /^HTTP\/1\.1 403 /, `answered: ${JSON.stringify(answer.slice(0, 80))}`);
  assert.match(answer, /\{"error":"unauthorized"\}$/);
  // Any POST: a Parse body cannot name another application than the header does.
  const record = await headOnly(server,
    'POST /core/classes/Leads HTTP/1.1\r\nX-Core-Application-Id: no-such-app\r\nContent-Type: application/json\r\nContent-Length: 4000000');
  assert.match(record, /^HTTP\/1\.1 403 /);
  const chunked = await headOnly(server, 'POST /core/files/big.png HTTP/1.1\r\nX-Core-Application-Id: no-such-app\r\nTransfer-Encoding: chunked');
  assert.match(chunked, /^HTTP\/1\.1 403 /);
  assert.deepEqual(leftovers(dataDir), [], 'nothing was streamed to disk');
});

test('issue 31 #10: an upload trickling a byte at a time is ended within its first window, and leaves no file', async () => {
  // Windows of the request timeout (2 s here) must each bring 2 KiB (the 1 KiB/s default).
  const { server, app, dataDir } = await setup({ extraArgs: ['--request-timeout', '2'] });
  const r = await feed(server,
    `POST /core/files/slow.png HTTP/1.1\r\nX-Core-Application-Id: ${app.appId}\r\nContent-Type: image/png\r\nContent-Length: 1048576`,
    { chunk: Buffer.from([0x89]), everyMs: 250, timeoutMs: 30_000 });
  assert.notEqual(r.endedMs, null, `the trickle was still open after 30 s (${r.sent} bytes sent)`);
  // Answered when a read brought the news, closed when the window ran out between two bytes.
  assert.ok(r.status === 408 || r.status === 0, `answer ${r.status}`);
  if (r.status === 408) assert.match(r.text, /\{"error":"Upload too slow: less than 1024 bytes a second"\}/);
  await sleep(200);
  assert.deepEqual(leftovers(dataDir), [], 'the partial upload was removed');
  assert.ok(!fs.existsSync(path.join(dataDir, 'apps', app.appId, 'files')) ||
            fs.readdirSync(path.join(dataDir, 'apps', app.appId, 'files')).length === 0, 'nothing was kept');
});

test('issue 31 #10: an upload has a total time: past --upload-timeout it ends, however fast it goes', async () => {
  const { server, app, dataDir } = await setup({ extraArgs: ['--upload-timeout', '2'] });
  const r = await feed(server,
    `POST /core/files/endless.png HTTP/1.1\r\nX-Core-Application-Id: ${app.appId}\r\nContent-Type: image/png\r\nContent-Length: 1073741824`,
    { chunk: Buffer.alloc(64 * 1024, 7), everyMs: 20, timeoutMs: 30_000 });
  assert.notEqual(r.endedMs, null, `still open after 30 s (${r.sent} bytes sent at ~3 MB/s)`);
  assert.ok(r.status === 408 || r.status === 0, `answer ${r.status}`);
  if (r.status === 408) assert.match(r.text, /\{"error":"Upload took longer than 2 s"\}/);
  await sleep(200);
  assert.deepEqual(leftovers(dataDir), []);
});

test('issue 31 #10: trickling uploads holding every connection slot do not keep new clients out', async () => {
  const { server, app } = await setup({ extraArgs: ['--max-connections', '16'] });
  const head = `POST /core/files/hold.png HTTP/1.1\r\nX-Core-Application-Id: ${app.appId}\r\nContent-Type: image/png\r\nContent-Length: 1048576`;
  const holds = Array.from({ length: 16 }, () => feed(server, head, { chunk: Buffer.from([0]), everyMs: 1000, timeoutMs: 7000 }));
  await sleep(3000);  // every slot taken, each sending a byte a second
  for (let i = 0; i < 3; i++) {
    const r = await rawRequest(server, 'GET /health HTTP/1.1', undefined, { timeoutMs: 5000 });
    assert.equal(r.status, 200, `a new client, attempt ${i + 1}`);
  }
  const ended = await Promise.all(holds);
  assert.ok(ended.some((h) => h.endedMs !== null), 'a slow sender made room');
});

test('issue 31 #13: a Parse JSON file naming an application that does not exist is refused before its base64 is decoded; memory stays flat', async () => {
  const { server, app } = await setup();
  const bytes = bigPng(18 << 20);
  const base64 = bytes.toString('base64');  // 24 MiB of base64, as the SDK sends it: the file first
  const body = (appId) => JSON.stringify({ base64, _ContentType: 'image/png', _ApplicationId: appId, _ClientVersion: 'js8.6.2' });
  const send = (appId, name) => request(server, 'POST', `/core/files/${name}`, { headers: { 'Content-Type': 'text/plain' }, body: body(appId), timeoutMs: 60_000 });
  const before = vmKiB(server.proc.pid, 'VmRSS');
  const refused = await Promise.all(Array.from({ length: 8 }, (_, i) => send('no-such-app', `big${i}.png`)));
  for (const r of refused) {
    assert.equal(r.status, 403, r.text.slice(0, 200));
    assert.deepEqual(r.body, { error: 'unauthorized' });
  }
  // The application's own: decoded a piece at a time into the upload's file, the bytes intact.
  const taken = await Promise.all(Array.from({ length: 4 }, (_, i) => send(app.appId, `ok${i}.png`)));
  for (const r of taken) assert.equal(r.status, 201, r.text.slice(0, 200));
  const back = await open(taken[0].body.url, { 'X-Core-Master-Key': app.masterKey });
  assert.equal(back.status, 200);
  assert.ok(Buffer.from(await back.arrayBuffer()).equals(bytes), 'the decoded file is the one sent');
  const grew = (vmKiB(server.proc.pid, 'VmHWM') - before) / 1024;
  assert.ok(grew < 128, `peak memory grew ${grew.toFixed(0)} MiB for 12 uploads of 24 MiB of JSON`);
});

test('issue 31 #18: anonymous uploads are rate-limited per address: 429 {"error":"Too many requests"}; keys and sessions are not', async () => {
  const { server, app } = await setup();
  for (let i = 0; i < 30; i++) {
    const r = await upload(server, appHeaders(app), `a${i}.png`, PNG);
    assert.equal(r.status, 201, `upload ${i + 1}: ${r.text}`);
  }
  const past = await upload(server, appHeaders(app), 'a30.png', PNG);
  assert.equal(past.status, 429, past.text);
  assert.deepEqual(past.body, { error: 'Too many requests' });
  // Refused by its head: a large anonymous body is not waited for.
  const big = await headOnly(server, `POST /core/files/big.png HTTP/1.1\r\nX-Core-Application-Id: ${app.appId}\r\nContent-Length: 50000000`, { timeoutMs: 5000 });
  assert.match(big, /^HTTP\/1\.1 429 /);
  // Parse's JSON file names its application in the body: counted the same, before decoding.
  const json = await request(server, 'POST', '/core/files/p.png', { headers: { 'Content-Type': 'text/plain' },
    body: JSON.stringify({ base64: PNG.toString('base64'), _ApplicationId: app.appId }) });
  assert.equal(json.status, 429, json.text);
  assert.deepEqual(json.body, { error: 'Too many requests' });
  // Keyed callers are exempt: master key, API key, a session.
  assert.equal((await upload(server, masterHeaders(app), 'm.png', PNG)).status, 201);
  assert.equal((await upload(server, apiKeyHeaders(app), 'k.png', PNG)).status, 201);
  const user = await request(server, 'POST', '/core/users', { headers: masterHeaders(app), body: { username: 'clerk', password: 'Cl3rkPass' } });
  assert.equal(user.status, 201, user.text);
  assert.equal((await upload(server, { ...appHeaders(app), 'X-Core-Session-Token': user.body.sessionToken }, 's.png', PNG)).status, 201);
  // A token the application does not know is no one: 209, from the head.
  const bad = await upload(server, { ...appHeaders(app), 'X-Core-Session-Token': 'r:00000000000000000000000000000000' }, 'b.png', PNG);
  assert.equal(bad.status, 400, bad.text);
  assert.equal(bad.body.code, 209);
});

test('issue 31 #18: --max-file-size answers 413 {"error":"File too large: at most <n> bytes"}, the file routes\' form; the default keeps no cap', async () => {
  const { server, app } = await setup({ extraArgs: ['--max-file-size', '1'] });
  const announced = await rawRequest(server, `POST /core/files/big.png HTTP/1.1\nX-Core-Application-Id: ${app.appId}\nContent-Type: image/png`, bigPng(2 << 20));
  assert.equal(announced.status, 413);
  assert.deepEqual(announced.body, { error: 'File too large: at most 1048576 bytes' });
  // Chunked: found out while it streams.
  const body = bigPng(2 << 20);
  const chunks = [];
  for (let at = 0; at < body.length; at += 256 * 1024) {
    const piece = body.subarray(at, at + 256 * 1024);
    chunks.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from('0\r\n\r\n'));
  const streamed = await rawRequest(server, `POST /core/files/big.png HTTP/1.1\nX-Core-Application-Id: ${app.appId}\nTransfer-Encoding: chunked`, Buffer.concat(chunks));
  assert.equal(streamed.status, 413);
  assert.deepEqual(streamed.body, { error: 'File too large: at most 1048576 bytes' });
  assert.equal((await upload(server, appHeaders(app), 'small.png', PNG)).status, 201);
});

test('issue 31 #18: a per-application quota of file bytes (crmd app set --file-quota-mib): past it 413 {"error":...}; a deleted file makes room', async () => {
  const { server, app, dataDir } = await setup();
  const M = masterHeaders(app);
  const set = cliJson(['app', 'set', '--data', dataDir, '--app', app.appId, '--file-quota-mib', '1']);
  assert.equal(set.gates.fileQuotaMiB, 1);
  const quotaText = { error: 'File quota exceeded: the application keeps at most 1 MiB of files' };
  // The server follows the registry within a second: until then a file may still be taken.
  const early = [];
  const seen = await pollUntil(async () => {
    const r = await upload(server, M, 'probe.png', bigPng(600 * 1024));
    if (r.status === 201) early.push(r.body.name);
    return { done: r.status === 413 && r.body.error === quotaText.error };
  }, { timeoutMs: 5000, intervalMs: 100 });
  assert.ok(seen.ok, 'the quota took effect');
  for (const name of early) await request(server, 'DELETE', `/core/files/${encodeURIComponent(name)}`, { headers: M });

  const first = await upload(server, M, 'first.png', bigPng(600 * 1024));
  assert.equal(first.status, 201, first.text);
  const second = await upload(server, appHeaders(app), 'second.png', bigPng(600 * 1024));
  assert.equal(second.status, 413, second.text);
  assert.deepEqual(second.body, quotaText);
  // Announced larger than the quota: refused by its head.
  const announced = await headOnly(server, `POST /core/files/huge.png HTTP/1.1\r\nX-Core-Application-Id: ${app.appId}\r\nX-Core-Master-Key: ${app.masterKey}\r\nContent-Length: 5000000`, { timeoutMs: 5000 });
  assert.match(announced, /^HTTP\/1\.1 413 /);
  const deleted = await request(server, 'DELETE', `/core/files/${encodeURIComponent(first.body.name)}`, { headers: M });
  assert.equal(deleted.status, 200);
  const third = await upload(server, M, 'third.png', bigPng(600 * 1024));
  assert.equal(third.status, 201, third.text);
  // A limit, not a gate: a profile leaves it, and 0 lifts it.
  assert.equal(cliJson(['app', 'set', '--data', dataDir, '--app', app.appId, '--profile', 'parse']).gates.fileQuotaMiB, 1);
  const lifted = cliJson(['app', 'set', '--data', dataDir, '--app', app.appId, '--file-quota-mib', '0']);
  assert.equal(lifted.gates.fileQuotaMiB, undefined);
  assert.throws(() => cli(['app', 'set', '--data', dataDir, '--app', app.appId, '--file-quota-mib', 'lots']), /takes a number of MiB/);
});
