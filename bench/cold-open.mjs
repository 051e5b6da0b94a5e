// Issue 33's cold product-base open, light: one client asks GET /classes/Accounts?limit=1 of
// product-base applications in rotation, from a server whose store cache holds fewer of them
// (--max-open-apps 2), so every request opens a store of 111 classes and the closer thread closes
// another. Prints latency percentiles and the server's CPU (user + system, all threads) per
// request. Minutes, not tenants.mjs's quarter hour; loopback only.
//   node bench/cold-open.mjs [path/to/crmd] [extra serve flags...]
// Environment: BENCH_COLD_APPS (6: applications in the rotation, made once into
// bench/.work/cold/), BENCH_COLD_REQUESTS (400, after one unmeasured lap), BENCH_COLD_WRAP (a
// command line the server runs under, e.g. `perf record -g -o /tmp/cold.data --` or `valgrind
// --tool=callgrind`; the CPU figure then includes the wrapper's).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { makeApps } from './lib/apps.mjs';
import { untilHealthy } from './lib/crmd.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');
const WORK = path.join(ROOT, 'bench', '.work', 'cold');
const CRMD = path.resolve(process.argv[2] ?? path.join(ROOT, 'build', 'crmd'));
const EXTRA = process.argv.slice(3);
const APPS = Number(process.env.BENCH_COLD_APPS || 6);
const REQUESTS = Number(process.env.BENCH_COLD_REQUESTS || 400);
const WRAP = (process.env.BENCH_COLD_WRAP || '').split(' ').filter(Boolean);
const TICKS_PER_SECOND = 100;  // USER_HZ on Linux

const freePort = () => new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
});
// utime + stime of the whole process, in ms (fields 14 and 15 of /proc/<pid>/stat).
const cpuMs = (pid) => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
};
const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return +s[Math.min(s.length - 1, Math.floor(p * s.length))].toFixed(2); };

fs.mkdirSync(WORK, { recursive: true });
const apps = await makeApps(CRMD, WORK, APPS, true, 'pb');
const port = await freePort();
const serve = ['serve', '--data', WORK, '--listen', `127.0.0.1:${port}`, '--max-open-apps', '2', ...EXTRA];
const log = fs.openSync(path.join(WORK, 'crmd.log'), 'w');
const command = [...WRAP, CRMD, ...serve];
const server = spawn(command[0], command.slice(1), { stdio: ['ignore', log, log] });
process.on('exit', () => { if (server.exitCode === null) server.kill('SIGKILL'); });
const base = `http://127.0.0.1:${port}`;
await untilHealthy(base, server);
const pid = server.pid;

const ask = async (a) => {
  const t = performance.now();
  const r = await fetch(`${base}/core/classes/Accounts?limit=1`, { headers: { 'X-Core-Application-Id': a.appId, 'X-Core-Master-Key': a.masterKey } });
  await r.arrayBuffer();
  if (r.status !== 200) throw new Error(`status ${r.status}`);
  return performance.now() - t;
};
for (const a of apps) await ask(a);  // unmeasured: a store's first open since it was made
const ms = [];
const cpu0 = cpuMs(pid);
for (let i = 0; i < REQUESTS; i++) ms.push(await ask(apps[i % apps.length]));
const cpu = (cpuMs(pid) - cpu0) / REQUESTS;
server.kill('SIGTERM');
await new Promise((resolve) => server.once('exit', resolve));
const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
console.log(`cold-open ${REQUESTS} requests over ${APPS} stores: cpu ${cpu.toFixed(2)} ms/req, p50 ${pct(ms, 0.5)} ms, p90 ${pct(ms, 0.9)} ms, p99 ${pct(ms, 0.99)} ms, max ${pct(ms, 1)} ms (load ${load})`);
