// Measures crmd's peak memory while answering `limit=100000` on a 100,000-row class (issue 3:
// results stream, so the peak stays well below two copies of the result).
// Loopback only, bounded: 100,000 creates at most 32 in flight, one query, then stop.
// Usage: node bench/stream-rss.mjs [path/to/crmd]
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { listeningPort } from './lib/listening.mjs';

const bin = process.argv[2] || 'build/crmd';
const ROWS = 100_000;
const IN_FLIGHT = 32;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'crmd-rss-'));
const app = JSON.parse(execFileSync(bin, ['app', 'create', '--data', dir, '--id', 'bench', '--no-product-base']));
const server = spawn(bin, ['serve', '--data', dir, '--listen', '127.0.0.1:0', '--durability', 'normal'],
  { stdio: ['ignore', 'ignore', 'pipe'] });
const port = await listeningPort(server);
const base = `http://127.0.0.1:${port}/core`;
const headers = { 'X-Core-Application-Id': 'bench', 'X-Core-Master-Key': app.masterKey, 'Content-Type': 'application/json' };
const status = (field) => Number(fs.readFileSync(`/proc/${server.pid}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`))[1]);

let next = 0;
const started = Date.now();
async function worker() {
  while (next < ROWS) {
    const i = next++;
    const body = { Name: `Account ${i}`, City: ['Haifa', 'Eilat', 'Tel Aviv'][i % 3], Score: i % 100,
      Email: `a${i}@example.test`, IsAccount: i % 2 === 0, Tags: ['a', `t${i % 7}`],
      Since: { __type: 'Date', iso: new Date(1.7e12 + i * 1000).toISOString() } };
    const r = await fetch(`${base}/classes/Accounts`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (r.status !== 201) throw new Error(`create ${i}: ${r.status} ${await r.text()}`);
  }
}
await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
const loadSeconds = (Date.now() - started) / 1000;

const before = { rss: status('VmRSS'), hwm: status('VmHWM') };
const q0 = Date.now();
const r = await fetch(`${base}/classes/Accounts?limit=100000`, { headers });
const text = await r.text();
const querySeconds = (Date.now() - q0) / 1000;
const rows = JSON.parse(text).results.length;
const after = { rss: status('VmRSS'), hwm: status('VmHWM') };
server.kill('SIGTERM');
await new Promise((resolve) => server.on('exit', resolve));
fs.rmSync(dir, { recursive: true, force: true });

const mib = (kb) => (kb / 1024).toFixed(1);
console.log(JSON.stringify({
  rows, bodyMiB: (text.length / 1048576).toFixed(1), loadSeconds, createsPerSecond: Math.round(ROWS / loadSeconds),
  querySeconds, rssBeforeMiB: mib(before.rss), peakBeforeMiB: mib(before.hwm), peakAfterMiB: mib(after.hwm),
  peakGrowthMiB: mib(after.hwm - before.hwm),
}, null, 2));
