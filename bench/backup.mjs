// Issue 35: `crmd backup` of 1,000 applications while the server serves, and what it costs the
// live requests. crmd alone on SQLite, loopback only. Each round measures three windows of wrk
// reading a page of 10 records of one application: just before the backup, exactly while it runs,
// and just after; the figure is the p99 during against the p99 of the
// windows around it (goal: under twice). The first run also makes the 1,000 applications (kept in
// bench/.work/backup/).
//   node bench/backup.mjs [path/to/crmd]
// Environment: BENCH_APPS (1000), BENCH_ROUNDS (3), BENCH_WINDOW_S (3).
// Prints a Markdown section with the goal row and writes bench/.work/backup.json.
import { spawn, execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { makeApps } from './lib/apps.mjs';
import { untilHealthy } from './lib/crmd.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');
const WORK = path.join(ROOT, 'bench', '.work');
const DIR = path.join(WORK, 'backup');
const OUT = path.join(WORK, 'backup-out');
const CRMD = path.resolve(process.argv[2] ?? path.join(ROOT, 'build', 'crmd'));
const APPS = Number(process.env.BENCH_APPS || 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const WINDOW_S = Number(process.env.BENCH_WINDOW_S || 3);
const GOAL_RATIO = 2;

let server = null;
process.on('exit', () => { if (server && server.exitCode === null) server.kill('SIGKILL'); });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));

const freePort = () => new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
});
const run = (cmd, args) => new Promise((resolve, reject) => {
  execFile(cmd, args, { encoding: 'utf8', maxBuffer: 16 << 20 }, (e, stdout, stderr) => (e ? reject(Object.assign(e, { stderr })) : resolve(stdout)));
});

// wrk's latency distribution line "99%  1.23ms" in microseconds.
function percentile(text, p) {
  const m = new RegExp(`^\\s*${p}%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(text);
  if (!m) throw new Error(`no ${p}% line in wrk's output:\n${text}`);
  return Number(m[1]) * { us: 1, ms: 1000, s: 1e6 }[m[2]];
}
const rate = (text) => Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? NaN);

const wrkArgs = (seconds, app) => ['-t2', '-c8', `-d${seconds}s`, '--latency',
  '-H', `X-Core-Application-Id: ${app.appId}`, '-H', `X-Core-Master-Key: ${app.masterKey}`];
const figures = (text) => ({ p50_us: percentile(text, 50), p99_us: percentile(text, 99), rps: Math.round(rate(text)) });

async function window(url, app) {
  return figures(await run('wrk', [...wrkArgs(WINDOW_S, app), url]));
}

// wrk for exactly as long as `work` runs: stopped with SIGINT (it then prints its figures) once
// `work` settles. {figures, value}: work's value.
async function windowWhile(url, app, work) {
  const wrk = spawn('wrk', [...wrkArgs(600, app), url], { stdio: ['ignore', 'pipe', 'inherit'] });
  let text = '';
  wrk.stdout.on('data', (d) => { text += d; });
  const exited = new Promise((resolve) => wrk.once('exit', resolve));
  const value = await work();
  wrk.kill('SIGINT');
  await exited;
  return { figures: figures(text), value };
}

fs.mkdirSync(DIR, { recursive: true });
const apps = await makeApps(CRMD, DIR, APPS, false, 'b');
const port = await freePort();
server = spawn(CRMD, ['serve', '--data', DIR, '--listen', `127.0.0.1:${port}`], { stdio: ['ignore', 'ignore', 'ignore'] });
const base = `http://127.0.0.1:${port}`;
await untilHealthy(base, server);
const reader = apps[0];
for (let i = 0; i < 10; i++) {
  const r = await fetch(`${base}/core/classes/Notes`, {
    method: 'POST', body: JSON.stringify({ n: i, Body: `note ${i}` }),
    headers: { 'X-Core-Application-Id': reader.appId, 'X-Core-Master-Key': reader.masterKey, 'Content-Type': 'application/json' } });
  if (r.status !== 201) throw new Error(`seeding answered ${r.status}`);
}
const url = `${base}/core/classes/Notes?limit=10`;

const rounds = [];
for (let i = 0; i < ROUNDS; i++) {
  fs.rmSync(OUT, { recursive: true, force: true });
  const before = await window(url, reader);
  const { figures: during, value: backup_ms } = await windowWhile(url, reader, async () => {
    const t = performance.now();
    await run(CRMD, ['backup', '--data', DIR, '--out', OUT]);
    return Math.round(performance.now() - t);
  });
  const after = await window(url, reader);
  rounds.push({ backup_ms, before, during, after });
}
fs.rmSync(OUT, { recursive: true, force: true });
server.kill('SIGTERM');

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const around = median(rounds.flatMap((r) => [r.before.p99_us, r.after.p99_us]));
const during = median(rounds.map((r) => r.during.p99_us));
const met = during < GOAL_RATIO * around;
fs.writeFileSync(path.join(WORK, 'backup.json'), JSON.stringify({ crmd: CRMD, apps: APPS, window_s: WINDOW_S, rounds, around_p99_us: around, during_p99_us: during, met }, null, 2));

const ms = (us) => `${(us / 1000).toFixed(2)} ms`;
console.log([
  `### Backup of ${APPS.toLocaleString('en')} applications while serving (issue 35)`,
  '',
  `crmd on SQLite; \`crmd backup\` of ${APPS.toLocaleString('en')} applications while wrk (2 threads, 8 connections) reads a page of 10 records of one of them, ${WINDOW_S} s windows just before and just after it, and one exactly as long as it; ${ROUNDS} rounds.`,
  '',
  '| round | backup | p50 before / during / after | p99 before / during / after | req/s during |',
  '|---|---:|---|---|---:|',
  ...rounds.map((r, i) => `| ${i + 1} | ${(r.backup_ms / 1000).toFixed(1)} s | ${ms(r.before.p50_us)} / ${ms(r.during.p50_us)} / ${ms(r.after.p50_us)} | ${ms(r.before.p99_us)} / ${ms(r.during.p99_us)} / ${ms(r.after.p99_us)} | ${r.during.rps.toLocaleString('en')} |`),
  '',
  '| measure | measured | goal | |',
  '|---|---|---|---|',
  `| p99 of live reads during a backup, against the windows around it (medians) | ${ms(during)} against ${ms(around)} | under ${GOAL_RATIO}× | ${met ? 'met' : 'not met'} |`,
].join('\n'));
