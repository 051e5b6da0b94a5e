// Issue 31 #4: another tenant stays fast while one application's functions are hostile. crmd
// alone, loopback only, bounded in time (about a minute).
//   node bench/functions.mjs [path/to/crmd]
// Application H has a function that runs until its time limit (`s:match` backtracking over 60,000
// spaces); application C is a calm tenant. C's record writes and logins are measured idle, then
// while 16 clients call H's function back to back (the per-address rate of form calls is switched
// off for the run, so the 16 calls really run). The goals: C's writes p99 under 50 ms, and C's
// login p99 within 2x of its idle p99. Environment: BENCH_FN_SECONDS (20: seconds per phase),
// BENCH_FN_HOSTILE (16: hostile clients). Prints a Markdown section; writes
// bench/.work/functions.json.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = path.resolve(import.meta.dirname, '..');
const WORK = path.join(ROOT, 'bench', '.work');
const CRMD = path.resolve(process.argv[2] ?? path.join(ROOT, 'build', 'crmd'));
const SECONDS = Number(process.env.BENCH_FN_SECONDS || 20);
const HOSTILE = Number(process.env.BENCH_FN_HOSTILE || 16);
const TRIM = 'local s = "a" .. string.rep(" ", 60000) .. "a" return {t = s:match("^%s*(.-)%s*$")}';

let server = null;
process.on('exit', () => { if (server && server.exitCode === null) server.kill('SIGKILL'); });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));

const freePort = () => new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
});
const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s.length ? +s[Math.min(s.length - 1, Math.floor(p * s.length))].toFixed(2) : null; };
const summary = (xs) => ({ n: xs.length, p50: pct(xs, 0.5), p99: pct(xs, 0.99), max: pct(xs, 1) });

async function timedFetch(url, init) {
  const t = performance.now();
  const r = await fetch(url, { ...init, signal: AbortSignal.timeout(60_000) });
  await r.arrayBuffer();
  return { status: r.status, ms: performance.now() - t };
}

// Runs `fn` back to back until `until` (ms since the epoch of performance.now()): the latencies.
async function loop(until, fn) {
  const times = [];
  while (performance.now() < until) {
    const { status, ms } = await fn();
    if (status >= 200 && status < 300) times.push(ms);
  }
  return times;
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'crmd-bench-fn-'));
  const make = () => JSON.parse(execFileSync(CRMD, ['app', 'create', '--data', dir], { encoding: 'utf8' }));
  const hostile = make();
  const calm = make();
  const file = path.join(dir, 'trim.lua');
  fs.writeFileSync(file, TRIM);
  execFileSync(CRMD, ['function', 'deploy', '--data', dir, '--app', hostile.appId, '--name', 'trim', '--file', file]);
  const port = await freePort();
  const log = fs.openSync(path.join(dir, 'crmd.log'), 'w');
  server = spawn(CRMD, ['serve', '--data', dir, '--listen', `127.0.0.1:${port}`, '--form-calls-per-minute', '0'], { stdio: ['ignore', log, log] });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try { if ((await fetch(`${base}/health`)).ok) break; } catch { /* not yet */ }
    if (i > 200 || server.exitCode !== null) throw new Error('crmd did not start');
    await sleep(50);
  }
  const C = { 'X-Core-Application-Id': calm.appId, 'X-Core-Master-Key': calm.masterKey, 'Content-Type': 'application/json' };
  const made = await fetch(`${base}/core/users`, { method: 'POST', headers: C, body: JSON.stringify({ username: 'calm.user', password: 'Calm5ecret' }) });
  if (made.status !== 201) throw new Error(`sign-up: ${made.status}`);
  const write = () => timedFetch(`${base}/core/classes/Tasks`, { method: 'POST', headers: C, body: JSON.stringify({ Name: 'calm' }) });
  const login = () => timedFetch(`${base}/core/login`, { method: 'POST', headers: { 'X-Core-Application-Id': calm.appId, 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'calm.user', password: 'Calm5ecret' }) });
  const phase = async () => {
    const until = performance.now() + SECONDS * 1000;
    const [writes, logins] = await Promise.all([loop(until, write), loop(until, login)]);
    return { writes: summary(writes), logins: summary(logins) };
  };

  const idle = await phase();
  let stop = false;
  const calls = { ok: 0, limited: 0, refused: 0 };
  const H = { 'X-Core-Application-Id': hostile.appId, 'Content-Type': 'application/json' };
  const flood = Array.from({ length: HOSTILE }, async () => {
    while (!stop) {
      const r = await timedFetch(`${base}/functions/${hostile.appId}/trim`, { method: 'POST', headers: H, body: '{}' });
      if (r.status === 500) calls.limited++;
      else if (r.status === 429) calls.refused++;
      else calls.ok++;
    }
  });
  await sleep(500);
  const busy = await phase();
  stop = true;
  await Promise.all(flood);
  server.kill('SIGTERM');

  const writesMet = busy.writes.p99 !== null && busy.writes.p99 < 50;
  const loginMet = busy.logins.p99 !== null && idle.logins.p99 !== null && busy.logins.p99 <= 2 * idle.logins.p99;
  const result = { seconds: SECONDS, hostile_clients: HOSTILE, idle, busy, hostile_calls: calls,
    goals: { writes_p99_under_50ms: writesMet, login_p99_within_2x_idle: loginMet } };
  fs.mkdirSync(WORK, { recursive: true });
  fs.writeFileSync(path.join(WORK, 'functions.json'), JSON.stringify(result, null, 2));
  const row = (what, i, b, goal, met) => `| ${what} | ${i.p50} / ${i.p99} | ${b.p50} / ${b.p99} | ${goal} | ${met ? 'met' : 'not met'} |`;
  console.log([
    `### Another tenant while ${HOSTILE} hostile function calls run (issue 31 #4)`,
    '',
    `Application H's function runs to its 1 s time limit; ${HOSTILE} clients call it back to back (${calls.limited} calls ended at the limit, ${calls.refused} refused with 429 in ${SECONDS} s). Application C's requests, one client each, ${SECONDS} s per phase; milliseconds.`,
    '',
    '| C\'s request | idle p50 / p99 | during p50 / p99 | goal | |',
    '|---|---|---|---|---|',
    row('record write', idle.writes, busy.writes, 'p99 < 50 ms', writesMet),
    row('login', idle.logins, busy.logins, `p99 <= 2 x idle (${(2 * idle.logins.p99).toFixed(1)} ms)`, loginMet),
  ].join('\n'));
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((e) => { console.error(e); process.exit(1); });
