// Measures crmd's memory while ten clients upload 50 MB files at once, then download them at once
// (issue 20: bodies stream to and from disk, so the server's RSS stays within a few MB of idle).
// Loopback only, bounded: 10 uploads and 10 downloads of 50 MB, then stop.
// Usage: node bench/files-rss.mjs [path/to/crmd]
import { execFileSync, spawn } from 'node:child_process';
import { Readable } from 'node:stream';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { listeningPort } from './lib/listening.mjs';

const bin = process.argv[2] || 'build/crmd';
const CLIENTS = 10;
const SIZE = 50 * 1024 * 1024;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'crmd-files-rss-'));
const app = JSON.parse(execFileSync(bin, ['app', 'create', '--data', dir, '--id', 'bench', '--no-product-base']));
const server = spawn(bin, ['serve', '--data', dir, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
const port = await listeningPort(server);
const kib = (field) => Number(fs.readFileSync(`/proc/${server.pid}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`))[1]);
// RssAnon is the server's own memory (buffers, heaps); RssFile the mapped files it touched, such
// as libmagic's database, loaded once by the first upload, whatever the number of uploads.
let peak = 0;
let peakAnon = 0;
const sampler = setInterval(() => { peak = Math.max(peak, kib('VmRSS')); peakAnon = Math.max(peakAnon, kib('RssAnon')); }, 20);

// A PNG header, then filler: generated as the request goes out, never held whole by the client.
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89]);
function body() {
  let sent = 0;
  const chunk = Buffer.alloc(256 * 1024, 7);
  return Readable.from((function* gen() {
    yield PNG;
    sent += PNG.length;
    while (sent < SIZE) { const n = Math.min(chunk.length, SIZE - sent); sent += n; yield chunk.subarray(0, n); }
  })());
}

await new Promise((r) => setTimeout(r, 500));
const idle = kib('VmRSS');
const idleAnon = kib('RssAnon');
let t = Date.now();
const uploads = await Promise.all(Array.from({ length: CLIENTS }, async (_, i) => {
  const r = await fetch(`http://127.0.0.1:${port}/core/files/big${i}.png`, {
    method: 'POST', headers: { 'X-Core-Application-Id': 'bench', 'Content-Type': 'image/png', 'Content-Length': String(SIZE) },
    body: body(), duplex: 'half', signal: AbortSignal.timeout(300_000) });
  if (r.status !== 201) throw new Error(`upload ${i}: ${r.status} ${await r.text()}`);
  return (await r.json()).url;
}));
const uploadS = (Date.now() - t) / 1000;
const afterUploads = peak;
const afterUploadsAnon = peakAnon;
t = Date.now();
await Promise.all(uploads.map(async (url) => {
  const r = await fetch(url, { headers: { 'X-Core-Master-Key': app.masterKey }, signal: AbortSignal.timeout(300_000) });
  let n = 0;
  for await (const c of r.body) n += c.length;
  if (n !== SIZE) throw new Error(`download of ${url}: ${n} bytes`);
}));
const downloadS = (Date.now() - t) / 1000;
clearInterval(sampler);
const mib = (k) => (k / 1024).toFixed(1);
console.log(`idle RSS ${mib(idle)} MiB; peak during ${CLIENTS} concurrent ${SIZE >> 20} MB uploads ${mib(afterUploads)} MiB (${uploadS.toFixed(1)} s), ` +
  `during the downloads ${mib(peak)} MiB (${downloadS.toFixed(1)} s); VmHWM ${mib(kib('VmHWM'))} MiB`);
console.log(`anonymous memory (RssAnon): idle ${mib(idleAnon)} MiB, uploads peak ${mib(afterUploadsAnon)} MiB, downloads peak ${mib(peakAnon)} MiB`);
server.kill('SIGTERM');
await new Promise((r) => server.once('exit', r));
fs.rmSync(dir, { recursive: true, force: true });
