// Issue 36: LiveQuery across two crmd servers on one PostgreSQL database: the delay from a
// write's acknowledgement by server A to its event at subscribers of server B (the store's
// NOTIFY/LISTEN), p50/p99; the goal is a p99 under 1 s. A throw-away PostgreSQL cluster
// (initdb in a temporary folder, a Unix socket only: tests/e2e/lib/pg.mjs), loopback only.
//   node bench/livequery-scale-out.mjs [path/to/crmd]
// Environment: BENCH_SUBSCRIBERS (100), BENCH_WRITES (200).
// Prints a Markdown section and writes bench/.work/livequery-scale-out.json.
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const WORK = path.join(ROOT, 'bench', '.work');
process.env.CRMD_BIN = path.resolve(process.argv[2] ?? path.join(ROOT, 'build', 'crmd'));
process.env.CRMD_E2E_STORE = 'postgresql';  // the harness then gives every data folder a database
const { makeDataDir, createApp, startServer, cli, stopAll, masterHeaders, request } = await import('../tests/e2e/lib/harness.mjs');
const { stopCluster } = await import('../tests/e2e/lib/pg.mjs');
const { LiveClient } = await import('../tests/e2e/lib/live.mjs');
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS || 100);
const WRITES = Number(process.env.BENCH_WRITES || 200);
// Every wait is bounded: past this the run fails instead of hanging.
const RUN_TIMEOUT_MS = 180_000;
setTimeout(() => { console.error('livequery-scale-out: timed out'); process.exit(1); }, RUN_TIMEOUT_MS).unref();

const dir = makeDataDir('crmd-bench-live-pg');
const app = createApp(dir);
cli(['app', 'set', '--data', dir, '--app', app.appId, '--live-classes', '*']);
const [a, b] = await Promise.all([startServer(dir), startServer(dir)]);
const arrivals = new Map();  // objectId -> [ms]
const clients = [];
for (let i = 0; i < SUBSCRIBERS; i++) {
  const c = new LiveClient(b, app);
  await c.connect();
  const ok = await c.subscribe(1, { className: 'Shared' });
  if (ok.op !== 'subscribed') throw new Error(`subscribe refused: ${JSON.stringify(ok)}`);
  c.ws.on('message', (data) => {
    const at = performance.now();
    const m = JSON.parse(String(data));
    if (m.op !== 'create') return;
    const list = arrivals.get(m.object.objectId) ?? [];
    list.push(at);
    arrivals.set(m.object.objectId, list);
  });
  clients.push(c);
}
// The class exists before the timed writes (its first write changes the schema).
await request(a, 'POST', '/core/classes/Shared', { headers: masterHeaders(app), body: { n: -1 } });
const delays = [];
for (let i = 0; i < WRITES; i++) {
  const r = await request(a, 'POST', '/core/classes/Shared', { headers: masterHeaders(app), body: { n: i } });
  const acked = performance.now();
  if (r.status !== 201) throw new Error(`write answered ${r.status}`);
  const id = r.body.objectId;
  while ((arrivals.get(id)?.length ?? 0) < SUBSCRIBERS) await new Promise((res) => setImmediate(res));
  for (const t of arrivals.get(id)) delays.push(t - acked);
}
for (const c of clients) c.close();
await stopAll();
stopCluster();

const pct = (p) => { const s = [...delays].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]; };
const out = { subscribers: SUBSCRIBERS, writes: WRITES, p50_ms: pct(50), p99_ms: pct(99) };
fs.mkdirSync(WORK, { recursive: true });
fs.writeFileSync(path.join(WORK, 'livequery-scale-out.json'), JSON.stringify(out, null, 2));
console.log(`## LiveQuery across servers (issue 36; bench/livequery-scale-out.mjs, PostgreSQL, two servers, ${SUBSCRIBERS} subscribers on B, ${WRITES} writes through A)

| figure | p50 | p99 | goal |
|---|---:|---:|---|
| write acknowledged by A to its event at each subscriber of B | ${out.p50_ms.toFixed(1)} ms | ${out.p99_ms.toFixed(1)} ms | p99 < 1,000 ms |`);
process.exit(0);
