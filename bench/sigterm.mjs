// Issue 33: how long a SIGTERM takes with 1,000 stores open. crmd alone on SQLite, loopback only:
// each run starts crmd with room for 1,000 open stores, writes a record into each of 1,000
// applications (four clients), and sends SIGTERM as the last answer arrives (the writes' request-log
// rows still waiting, their queues' threads still up); the figure is the time until the process is
// gone. About a minute, plus most of a minute to make the applications once (kept in
// bench/.work/sigterm/ for the next run).
//   node bench/sigterm.mjs [path/to/crmd]
// Environment: BENCH_APPS (1000), BENCH_RUNS (3).
// Prints a Markdown section with the goal row and writes bench/.work/sigterm.json.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { makeApps } from './lib/apps.mjs';
import { untilHealthy } from './lib/crmd.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');
const WORK = path.join(ROOT, 'bench', '.work');
const DIR = path.join(WORK, 'sigterm');
const CRMD = path.resolve(process.argv[2] ?? path.join(ROOT, 'build', 'crmd'));
const APPS = Number(process.env.BENCH_APPS || 1000);
const RUNS = Number(process.env.BENCH_RUNS || 3);
const CLIENTS = 4;
const GOAL_MS = 1000;
// Past this the process is killed and the run counted at this figure: far beyond the goal.
const GIVE_UP_MS = 60_000;

let server = null;
process.on('exit', () => { if (server && server.exitCode === null) server.kill('SIGKILL'); });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));

const freePort = () => new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
});
const openStores = (pid) => new Set(fs.readdirSync(`/proc/${pid}/fd`).map((fd) => {
  try { return fs.readlinkSync(`/proc/${pid}/fd/${fd}`); } catch { return ''; }
}).filter((l) => l.endsWith('/data.db'))).size;

async function start() {
  const port = await freePort();
  // --max-open-apps: the default follows the open-file limit (937 at 20,000 descriptors).
  server = spawn(CRMD, ['serve', '--data', DIR, '--listen', `127.0.0.1:${port}`, '--max-open-apps', String(APPS)],
    { stdio: ['ignore', 'ignore', 'ignore'] });
  const base = `http://127.0.0.1:${port}`;
  await untilHealthy(base, server);
  return base;
}

// One run: every application written to once, then SIGTERM. {stores, ms, failed}.
async function run(apps) {
  const base = await start();
  let next = 0;
  let failed = 0;
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (next < apps.length) {
      const a = apps[next++];
      const r = await fetch(`${base}/core/classes/Notes`, {
        method: 'POST',
        headers: { 'X-Core-Application-Id': a.appId, 'X-Core-Master-Key': a.masterKey, 'Content-Type': 'application/json' },
        body: JSON.stringify({ n: next }),
      });
      await r.arrayBuffer();
      if (r.status !== 201) failed++;
    }
  }));
  const stores = openStores(server.pid);
  const exited = new Promise((resolve) => server.once('exit', resolve));
  const t = performance.now();
  server.kill('SIGTERM');
  await Promise.race([exited, sleep(GIVE_UP_MS)]);
  const ms = Math.round(performance.now() - t);
  if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
  return { stores, ms, failed };
}

fs.mkdirSync(DIR, { recursive: true });
const apps = await makeApps(CRMD, DIR, APPS, false);
const runs = [];
for (let i = 0; i < RUNS; i++) runs.push(await run(apps));
const p50 = [...runs.map((r) => r.ms)].sort((a, b) => a - b)[Math.floor(runs.length / 2)];
const met = p50 < GOAL_MS;
fs.writeFileSync(path.join(WORK, 'sigterm.json'), JSON.stringify({ crmd: CRMD, apps: APPS, runs, p50_ms: p50, goal_ms: GOAL_MS, met }, null, 2));

const failed = runs.reduce((n, r) => n + r.failed, 0);
console.log([
  `### SIGTERM with ${APPS.toLocaleString('en')} open stores (issue 33)`,
  '',
  `crmd on SQLite; each run writes a record into each of ${APPS.toLocaleString('en')} applications (${CLIENTS} clients), then sends SIGTERM at once; milliseconds until the process is gone. Stores open at the SIGTERM: ${runs.map((r) => r.stores).join(' / ')}${failed ? `; ${failed} writes did not answer 201` : ''}.`,
  '',
  '| measure | runs | p50 | goal | |',
  '|---|---|---|---|---|',
  `| SIGTERM with ${APPS.toLocaleString('en')} open stores | ${runs.map((r) => r.ms).join(' / ')} ms | ${p50} ms | < 1 s | ${met ? 'met' : 'not met'} |`,
].join('\n'));
