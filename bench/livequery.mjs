// Issue 36: LiveQuery on crmd alone (SQLite, loopback): event latency from a write's
// acknowledgement to 1,000 subscribers of one class (p50/p99), what subscribers cost the writes,
// and the server's memory with 10,000 idle subscriptions. About a minute.
//   node bench/livequery.mjs [path/to/crmd]
// Environment: BENCH_SUBSCRIBERS (1000), BENCH_WRITES (200), BENCH_IDLE (10000).
// Prints a Markdown section and writes bench/.work/livequery.json.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { startCrmd } from './lib/crmd.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');
const WORK = path.join(ROOT, 'bench', '.work');
const CRMD = path.resolve(process.argv[2] ?? path.join(ROOT, 'build', 'crmd'));
// The e2e suite's pinned `ws` (tests/e2e/package.json): no package of the bench's own.
const WebSocket = createRequire(path.join(ROOT, 'tests', 'e2e', 'package.json'))('ws');
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS || 1000);
const WRITES = Number(process.env.BENCH_WRITES || 200);
const IDLE = Number(process.env.BENCH_IDLE || 10000);
const PER_CONNECTION = 100;  // LiveConnection::kMaxSubscriptions
// Every wait is bounded: past this a phase fails instead of hanging.
const PHASE_TIMEOUT_MS = 120_000;

const crmd = await startCrmd(CRMD);
const pidOf = () => Number(execFileSync('sh', ['-c', `ss -ltnp 'sport = :${crmd.port}' | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2`], { encoding: 'utf8' }).trim());
const rssKiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
const pid = pidOf();

function dataDirOf() {
  const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  return cmd[cmd.indexOf('--data') + 1];
}
execFileSync(CRMD, ['app', 'set', '--data', dataDirOf(), '--app', crmd.app.appId, '--live-classes', '*'], { stdio: 'ignore' });
await new Promise((r) => setTimeout(r, 1500));  // the server reads the registry every 200 ms

const deadline = (what) => new Promise((_, reject) => setTimeout(() => reject(new Error(`${what}: timed out`)), PHASE_TIMEOUT_MS).unref());

// A connection with `count` subscriptions of `className`; `onEvent(message, receivedAt)`.
async function subscriber(className, count, onEvent) {
  const ws = new WebSocket(`ws://127.0.0.1:${crmd.port}/core`);
  await new Promise((resolve, reject) => { ws.on('open', resolve); ws.on('error', reject); });
  let subscribed = 0;
  let done;
  const all = new Promise((resolve) => { done = resolve; });
  ws.on('message', (data) => {
    const at = performance.now();
    const m = JSON.parse(String(data));
    if (m.op === 'connected') for (let i = 1; i <= count; i++) ws.send(JSON.stringify({ op: 'subscribe', requestId: i, query: { className } }));
    else if (m.op === 'subscribed' && ++subscribed === count) done();
    else if (m.op === 'error') throw new Error(`subscribe refused: ${m.error}`);
    else if (onEvent) onEvent(m, at);
  });
  ws.send(JSON.stringify({ op: 'connect', applicationId: crmd.app.appId, masterKey: crmd.app.masterKey }));
  await all;
  return ws;
}

// `n` creates one after another; `delivered(id)`, when given, is awaited after each (so each
// event's latency is its own, not a queue's behind it).
async function writes(className, n, delivered) {
  const acks = [];
  const ms = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    const r = await fetch(`${crmd.base}/core/classes/${className}`, { method: 'POST', headers: crmd.master, body: JSON.stringify({ n: i }) });
    const body = await r.json();
    const at = performance.now();
    if (r.status !== 201) throw new Error(`write answered ${r.status}`);
    acks.push({ id: body.objectId, at });
    ms.push(at - start);
    if (delivered) await delivered(body.objectId);
  }
  return { acks, ms };
}

const pct = (values, p) => {
  const s = [...values].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : NaN;
};
const f1 = (x) => x.toFixed(1);

// 1. Writes with nobody subscribed (the class opted in, no subscription: a map lookup).
await writes('Warm', 50);
const bare = await writes('Quiet', WRITES);

// 2. 10,000 idle subscriptions (100 connections of 100).
await new Promise((r) => setTimeout(r, 1000));
const rssIdleBefore = rssKiB(pid);  // before any subscriber
const idle = [];
await Promise.race([(async () => {
  for (let i = 0; i < IDLE; i += PER_CONNECTION * 10)
    idle.push(...await Promise.all(Array.from({ length: Math.min(10, (IDLE - i) / PER_CONNECTION) }, () => subscriber('Idle', PER_CONNECTION))));
})(), deadline('idle subscriptions')]);
await new Promise((r) => setTimeout(r, 1000));
const rssIdle = rssKiB(pid);
for (const ws of idle) ws.terminate();
const rssBefore = rssKiB(pid);

// 3. 1,000 subscribers on one class; each write's event timed from its acknowledgement.
const received = new Map();  // objectId -> [receivedAt]
const sockets = [];
await Promise.race([(async () => {
  for (let i = 0; i < SUBSCRIBERS; i += 50)
    sockets.push(...await Promise.all(Array.from({ length: Math.min(50, SUBSCRIBERS - i) }, () => subscriber('Watched', 1, (m, at) => {
      if (m.op !== 'create') return;
      const list = received.get(m.object.objectId) ?? [];
      list.push(at);
      received.set(m.object.objectId, list);
    }))));
})(), deadline('1,000 subscribers')]);
const rssSubscribers = rssKiB(pid);
const everyone = async (id) => {
  while ((received.get(id)?.length ?? 0) < SUBSCRIBERS) await new Promise((r) => setImmediate(r));
};
const watched = await Promise.race([writes('Watched', WRITES, everyone), deadline('every event delivered')]);
const latencies = [];
const lastArrival = [];
for (const { id, at } of watched.acks) {
  const list = received.get(id);
  for (const t of list) latencies.push(t - at);
  lastArrival.push(Math.max(...list) - at);
}
for (const ws of sockets) ws.terminate();

crmd.stop();

const out = {
  subscribers: SUBSCRIBERS, writes: WRITES,
  event_ms: { p50: pct(latencies, 50), p99: pct(latencies, 99) },
  last_subscriber_ms: { p50: pct(lastArrival, 50), p99: pct(lastArrival, 99) },
  write_ms_without: { p50: pct(bare.ms, 50), p99: pct(bare.ms, 99) },
  write_ms_with: { p50: pct(watched.ms, 50), p99: pct(watched.ms, 99) },
  rss_kib: { before: rssBefore, with_subscribers: rssSubscribers, idle_before: rssIdleBefore, idle: rssIdle },
  idle_subscriptions: IDLE,
};
fs.mkdirSync(WORK, { recursive: true });
fs.writeFileSync(path.join(WORK, 'livequery.json'), JSON.stringify(out, null, 2));
console.log(`## LiveQuery (issue 36; bench/livequery.mjs, SQLite, loopback, ${SUBSCRIBERS} subscribers, ${WRITES} sequential writes)

| figure | p50 | p99 |
|---|---:|---:|
| event, write's acknowledgement to each subscriber | ${f1(out.event_ms.p50)} ms | ${f1(out.event_ms.p99)} ms |
| event, acknowledgement to the last of the ${SUBSCRIBERS} subscribers | ${f1(out.last_subscriber_ms.p50)} ms | ${f1(out.last_subscriber_ms.p99)} ms |
| a create, no subscriber | ${f1(out.write_ms_without.p50)} ms | ${f1(out.write_ms_without.p99)} ms |
| a create, ${SUBSCRIBERS} subscribers of its class | ${f1(out.write_ms_with.p50)} ms | ${f1(out.write_ms_with.p99)} ms |

Memory (RSS): ${SUBSCRIBERS} subscriber connections +${((rssSubscribers - rssBefore) / 1024).toFixed(1)} MiB;
${IDLE} idle subscriptions on ${IDLE / PER_CONNECTION} connections +${((rssIdle - rssIdleBefore) / 1024).toFixed(1)} MiB.`);
process.exit(0);
