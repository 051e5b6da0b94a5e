// Issue 17: many tenants in one process, and reads that must not hold the others. crmd alone,
// loopback only, bounded in time (about 3 minutes once the applications exist; making them the
// first time takes 5-15 minutes more).
//   node bench/tenants.mjs [path/to/crmd] [extra serve flags...]
// Environment: BENCH_APPS (10000: empty applications made and touched), BENCH_ROTATE (60: seconds
// of requests over all of them after the first touch), BENCH_PB_APPS (200: product-base
// applications, in the same data folder, each asked once after the rotation, when the open-store
// cache is full: issue 33's cold-open figure), BENCH_CLIENTS (4: requests in flight).
// The applications are made once into bench/.work/tenants/ and kept for the next run.
// Prints a Markdown section and writes bench/.work/tenants.json (with the binary's sha256, so that
// bench/side-by-side.mjs takes its rows into docs/PERFORMANCE.md only for the binary it measures).
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { makeApps } from './lib/apps.mjs';
import { untilHealthy } from './lib/crmd.mjs';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = path.resolve(import.meta.dirname, '..');
const WORK = path.join(ROOT, 'bench', '.work', 'tenants');
const CRMD = path.resolve(process.argv[2] ?? path.join(ROOT, 'build', 'crmd'));
const EXTRA = process.argv.slice(3);
const num = (name, fallback) => Number(process.env[name] || fallback);
const APPS = num('BENCH_APPS', 10_000);
const ROTATE = num('BENCH_ROTATE', 60);
const PB_APPS = num('BENCH_PB_APPS', 200);
const CLIENTS = num('BENCH_CLIENTS', 4);

let server = null;
process.on('exit', () => { if (server && server.exitCode === null) server.kill('SIGKILL'); });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));

const freePort = () => new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
});
const status = (pid, field) => Number(fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`))[1]);
const fdsOf = (pid) => fs.readdirSync(`/proc/${pid}/fd`).length;
const storesOf = (pid) => new Set(fs.readdirSync(`/proc/${pid}/fd`).map((fd) => {
  try { return fs.readlinkSync(`/proc/${pid}/fd/${fd}`); } catch { return ''; }
}).filter((l) => l.endsWith('/data.db'))).size;
const sample = (pid) => ({ rss_mib: +(status(pid, 'VmRSS') / 1024).toFixed(1), fds: fdsOf(pid), threads: status(pid, 'Threads'), open_stores: storesOf(pid) });
const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s.length ? +s[Math.min(s.length - 1, Math.floor(p * s.length))].toFixed(2) : null; };
const summary = (xs) => ({ n: xs.length, p50: pct(xs, 0.5), p99: pct(xs, 0.99), max: pct(xs, 1) });

async function start(dir) {
  const port = await freePort();
  const log = fs.openSync(path.join(dir, 'crmd.log'), 'w');
  server = spawn(CRMD, ['serve', '--data', dir, '--listen', `127.0.0.1:${port}`, ...EXTRA], { stdio: ['ignore', log, log] });
  const base = `http://127.0.0.1:${port}`;
  await untilHealthy(base, server);
  return base;
}

// SIGTERM, and the milliseconds until the process is gone.
async function stop() {
  const exited = new Promise((resolve) => server.once('exit', resolve));
  const t = performance.now();
  server.kill('SIGTERM');
  await Promise.race([exited, sleep(60_000)]);
  const ms = performance.now() - t;
  if (server.exitCode === null) server.kill('SIGKILL');
  return +ms.toFixed(0);
}

const headers = (a) => ({ 'X-Core-Application-Id': a.appId, 'X-Core-Master-Key': a.masterKey, 'Content-Type': 'application/json' });
async function timed(base, a, method, p, body) {
  const t = performance.now();
  const r = await fetch(base + p, { method, headers: headers(a), body: body && JSON.stringify(body) });
  await r.arrayBuffer();
  return { ms: performance.now() - t, status: r.status };
}

// Runs `fn(i)` for i in [from, to) with CLIENTS in flight; `until` (ms timestamp) ends it early.
async function spread(from, to, fn, until = Infinity) {
  let next = from;
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (next < to && performance.now() < until) await fn(next++);
  }));
  return next - from;
}

const statuses = {};
const count = (s) => { statuses[s] = (statuses[s] ?? 0) + 1; };

async function scale() {
  const dir = path.join(WORK, 'plain');
  fs.mkdirSync(dir, { recursive: true });
  const apps = await makeApps(CRMD, dir, APPS, false);
  const pbApps = await makeApps(CRMD, dir, PB_APPS, true, 'pb');
  const base = await start(dir);
  const out = { idle: sample(server.pid), touched: [], cold_first_request_ms: null, rotation: null };
  const cold = [];
  let touched = 0;
  for (const milestone of [10, 100, 1_000, 10_000, 100_000].filter((m) => m <= APPS)) {
    await spread(touched, milestone, async (i) => {
      const r = await timed(base, apps[i], 'POST', '/core/classes/Notes', { n: i });
      count(r.status);
      cold.push(r.ms);
    });
    touched = milestone;
    out.touched.push({ apps: milestone, ...sample(server.pid) });
  }
  out.cold_first_request_ms = summary(cold);
  // Every application again, in turn: each request finds its store closed (the cache holds fewer).
  const rotation = [];
  const until = performance.now() + ROTATE * 1000;
  let laps = 0;
  while (performance.now() < until) {
    await spread(0, APPS, async (i) => {
      const r = await timed(base, apps[i], 'GET', '/core/classes/Notes?limit=1');
      count(r.status);
      rotation.push(r.ms);
    }, until);
    laps++;
  }
  out.rotation = { seconds: ROTATE, laps, requests: summary(rotation), after: sample(server.pid) };
  // The product-base applications, each asked once, with the cache full of the others: every
  // request opens a store of 111 classes and closes the least recently used one.
  const pbCold = [];
  await spread(0, pbApps.length, async (i) => {
    const r = await timed(base, pbApps[i], 'GET', '/core/classes/Accounts?limit=1');
    count(r.status);
    pbCold.push(r.ms);
  });
  out.product_base = { apps: pbApps.length, cold_first_request_ms: summary(pbCold), after: sample(server.pid) };
  out.sigterm_open_stores = out.product_base.after.open_stores;
  out.sigterm_ms = await stop();
  return out;
}

// Four reads of 16 costly $regex patterns over 20 values of 400 KB, and meanwhile /health and
// another application's get-by-id, one after another.
async function hostileReads() {
  const dir = path.join(WORK, 'hostile');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const [victim, bystander] = await makeApps(CRMD, dir, 2, false);
  const base = await start(dir);
  const letters = (n, seed) => { const b = Buffer.alloc(n); let x = seed; for (let i = 0; i < n; i++) { x = (x * 1103515245 + 12345) & 0x7fffffff; b[i] = 97 + (x % 26); } return b.toString('latin1'); };
  for (let i = 0; i < 20; i++) await timed(base, victim, 'POST', '/core/classes/Notes', { Body: letters(400_000, i + 1) });
  const made = await fetch(`${base}/core/classes/Accounts`, { method: 'POST', headers: headers(bystander), body: '{"Name":"elsewhere"}' });
  const id = (await made.json()).objectId;
  const where = { $or: Array.from({ length: 16 }, (_, i) => ({ Body: { $regex: `(?:[a-q][^u-z]{40}|[b-r][^t-y]{40})${i}` } })) };
  const hostile = [];
  const t0 = performance.now();
  let running = 4;
  const reads = Array.from({ length: 4 }, async () => {
    const r = await timed(base, victim, 'GET', `/core/classes/Notes?limit=10&keys=objectId&where=${encodeURIComponent(JSON.stringify(where))}`);
    hostile.push(r);
    running--;
  });
  const health = [];
  const other = [];
  await sleep(50);
  while (running > 0 && performance.now() - t0 < 60_000) {
    let t = performance.now();
    await (await fetch(`${base}/health`)).arrayBuffer();
    health.push(performance.now() - t);
    t = performance.now();
    other.push((await timed(base, bystander, 'GET', `/core/classes/Accounts/${id}`)).ms);
  }
  await Promise.all(reads);
  const out = {
    hostile_reads: { n: hostile.length, statuses: hostile.map((r) => r.status), ms: summary(hostile.map((r) => r.ms)) },
    health_ms: summary(health), other_app_get_ms: summary(other),
  };
  await stop();
  return out;
}

const sha256 = crypto.createHash('sha256').update(fs.readFileSync(CRMD)).digest('hex');
const results = { date: new Date().toISOString(), crmd: CRMD, sha256, flags: EXTRA, clients: CLIENTS, apps: APPS, rotate_seconds: ROTATE };
results.hostile = await hostileReads();
results.scale = await scale();
results.product_base = results.scale.product_base;
delete results.scale.product_base;
results.statuses = statuses;
fs.writeFileSync(path.join(ROOT, 'bench', '.work', 'tenants.json'), JSON.stringify(results, null, 2));

const s = results.scale;
const rows = [['idle', s.idle], ...s.touched.map((t) => [`${t.apps.toLocaleString('en')} touched`, t]), [`after ${ROTATE} s rotation`, s.rotation.after],
  [`after ${PB_APPS} product-base applications`, results.product_base.after]];
console.log(`## Tenants at scale (bench/tenants.mjs, ${CLIENTS} clients${EXTRA.length ? `, ${EXTRA.join(' ')}` : ''})\n`);
console.log('| applications | RSS MiB | fds | threads | stores open |\n|---|---|---|---|---|');
for (const [label, t] of rows) console.log(`| ${label} | ${t.rss_mib} | ${t.fds} | ${t.threads} | ${t.open_stores} |`);
const ms = (x) => `p50 ${x.p50} ms, p99 ${x.p99} ms, max ${x.max} ms (${x.n})`;
console.log(`\n- first request to a cold application (an empty one): ${ms(s.cold_first_request_ms)}`);
console.log(`- rotation over all ${APPS.toLocaleString('en')} (each request to a closed store): ${ms(s.rotation.requests)}, ${s.rotation.laps} laps`);
console.log(`- first request to a cold product-base application, the cache full: ${ms(results.product_base.cold_first_request_ms)}`);
console.log(`- SIGTERM to exit: ${s.sigterm_ms} ms with ${s.sigterm_open_stores} stores open`);
console.log(`- statuses: ${JSON.stringify(statuses)}`);
const h = results.hostile;
console.log(`\n## Four hostile reads (16 $regex patterns over 20 x 400 KB)\n`);
console.log(`- the reads: ${JSON.stringify(h.hostile_reads.statuses)} after ${ms(h.hostile_reads.ms)}`);
console.log(`- meanwhile /health: ${ms(h.health_ms)}; another application's get-by-id: ${ms(h.other_app_get_ms)}`);
