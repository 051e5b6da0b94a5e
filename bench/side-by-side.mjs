// crmd side by side with Parse Server (issue 6). Run by bench/run (`make bench`), which installs the
// tools and copies the crmd binary to bench/.work/crmd first. Loopback only, bounded in time:
//   1. starts PostgreSQL 15 (own cluster), Parse Server 9.10 on it, crmd (--durability full,
//      --prefix parse so that both answer X-Parse-* on /parse), crmd on the same PostgreSQL server
//      (`--store`, a database of its own; issue 22) and nginx serving a static JSON file;
//   2. loads the same deterministic data into every server through /batch and declares the same index;
//   3. runs each workload with wrk against every server, alternating which goes first;
//   4. crmd alone: change history, form functions, the product base's own Accounts (beside Parse's
//      plain one), MCP tools beside the record API;
//   5. the limit beside the peer (issue 33), between the read and the write workloads: pgbench and a
//      C loop over SQLite doing the workloads' statements on copies of crmd's tables
//      (bench/lib/limits.mjs, bench/sqlite-limit.c);
//   6. writes bench/.work/results.json and the "Side by side" section of docs/PERFORMANCE.md, with
//      the rows of bench/tenants.mjs when bench/run ran it on the same binary just before.
// Stops everything it started, also on failure or signal. Environment overrides for a quick trial
// (then docs/PERFORMANCE.md is left alone): BENCH_ROWS, BENCH_WARMUP, BENCH_DURATION, and
// BENCH_ONLY, a comma list of the parts to run after the load: workloads, limits, history, forms,
// productbase, mcp (`limits` without `workloads` gives the limits without crmd's fractions).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CITIES, LEAD_STATUS_NAMES, accountRow, leadStatusRow, productAccountRow, prng } from './lib/data.mjs';
import { PG_LIMIT_WORKLOADS, pgbenchLimit, sqliteLimit } from './lib/limits.mjs';
import { poster } from './lib/post.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');
const BENCH = path.join(ROOT, 'bench');
const WORK = path.join(BENCH, '.work');
const RUN = path.join(WORK, 'run'); // recreated every run: data, logs, request files, wrk output
const PGDIR = path.join(WORK, 'pg');
const PGDATA = path.join(PGDIR, 'data');
const PG_BIN = '/usr/lib/postgresql/15/bin';
const CRMD = path.join(WORK, 'crmd');
const REPLAY = path.join(BENCH, 'wrk', 'replay.lua');
const DOC = path.join(ROOT, 'docs', 'PERFORMANCE.md');
const SQLITE_LIMIT = path.join(WORK, 'sqlite-limit'); // bench/sqlite-limit.c, compiled by bench/run
const TENANTS = path.join(WORK, 'tenants.json');     // bench/tenants.mjs's figures, when bench/run ran it
const SECTION = '## Side by side with Parse Server (make bench)';

const intEnv = (name, fallback) => {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer`);
  return n;
};
const ROWS = intEnv('BENCH_ROWS', 100_000);
const WARMUP = intEnv('BENCH_WARMUP', 5);
const DURATION = intEnv('BENCH_DURATION', 15);
const PARTS = ['workloads', 'limits', 'history', 'forms', 'productbase', 'mcp'];
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').filter(Boolean)) : null;
for (const p of ONLY ?? []) if (!PARTS.includes(p)) throw new Error(`BENCH_ONLY: unknown part ${p} (${PARTS.join(', ')})`);
const runs = (part) => !ONLY || ONLY.has(part);
const FULL_RUN = ROWS === 100_000 && WARMUP === 5 && DURATION === 15 && !ONLY;
const BATCH = 50;
const LOAD_IN_FLIGHT = 16;
const LOAD_TIMEOUT_MS = 420_000; // per server; Parse was measured at ~2,100 rows/s (48 s)
const CONNS = 16;
const CONNS_HIGH = 64;
const PREFIX = '/parse';
const QUIET_CORES = 0.25; // busy cores tolerated from other processes before the run starts
const QUIET_WAIT_S = intEnv('BENCH_QUIET_WAIT', 120);
const LIMIT_SQLITE_SECONDS = Math.min(DURATION, 10); // per mode of sqlite-limit: 7 modes
const PB_APP = 'pbench'; // crmd's product-base application, beside `bench` in the same server
const TENANT_GOAL_MS = 20; // issue 33: p99 of a cold product-base open and of a closed empty store
const SIGTERM_GOAL_MS = 1000; // issue 33: SIGTERM with 1,000 stores open

const t0 = Date.now();
const log = (msg) => console.log(`[bench ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)}s] ${msg}`);

// ---------------------------------------------------------------------------------------------
// Processes: every child is tracked (and its pid written to run/pids for bench/run's trap).
const children = new Map();
function track(name, child) {
  children.set(name, child);
  fs.writeFileSync(path.join(RUN, 'pids'), [...children].map(([n, c]) => `${n} ${c.pid}\n`).join(''));
  return child;
}
const alive = (child) => child.exitCode === null && child.signalCode === null;

function pgCtl(...args) {
  return spawnSync('runuser', ['-u', 'postgres', '--', `${PG_BIN}/pg_ctl`, '-D', PGDATA, ...args],
    { encoding: 'utf8', timeout: 90_000 });
}
function pgStop() {
  if (!fs.existsSync(path.join(PGDATA, 'postmaster.pid'))) return;
  const r = pgCtl('-m', 'fast', '-w', '-t', '30', 'stop');
  if (r.status !== 0) {
    const pid = Number(fs.readFileSync(path.join(PGDATA, 'postmaster.pid'), 'utf8').split('\n')[0]);
    try { process.kill(pid, 'SIGQUIT'); } catch { /* gone */ }
  }
}

let stopping = null;
function stopAll() { // one stop, whoever asks first; later callers wait for the same one
  stopping ??= stopEverything();
  return stopping;
}
async function stopEverything() {
  for (const [, child] of children) if (alive(child)) child.kill('SIGTERM');
  const until = Date.now() + 10_000;
  while ([...children.values()].some(alive) && Date.now() < until) await sleep(100);
  for (const [, child] of children) if (alive(child)) child.kill('SIGKILL');
  pgStop();
}
process.on('exit', () => { // last resort, synchronous
  for (const [, child] of children) if (alive(child)) { try { child.kill('SIGKILL'); } catch { /* gone */ } }
  pgStop(); // no-op once the cluster is down (pg_ctl removes postmaster.pid)
});
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => { log(`${sig}: stopping`); stopAll().finally(() => process.exit(1)); });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => resolve(port)); });
  });
}

async function waitHttp(url, child, what, ms) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (child && !alive(child)) throw new Error(`${what} exited during start-up (see ${RUN})`);
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await r.arrayBuffer();
      if (r.ok) return;
    } catch { /* not yet */ }
    await sleep(200);
  }
  throw new Error(`${what} did not answer ${url} within ${ms / 1000} s`);
}

const sh = (cmd, args, opts = {}) => execFileSync(cmd, args, { encoding: 'utf8', timeout: 120_000, ...opts }).trim();
const shTry = (cmd, args) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 30_000 });
  return `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() || 'unknown';
};

// ---------------------------------------------------------------------------------------------
// Start-up
async function startPostgres() {
  pgStop(); // a cluster left running by a killed earlier run
  fs.rmSync(PGDIR, { recursive: true, force: true });
  fs.mkdirSync(PGDIR, { recursive: true });
  sh('chown', ['postgres:postgres', PGDIR]);
  sh('runuser', ['-u', 'postgres', '--', `${PG_BIN}/initdb`, '-D', PGDATA, '-U', 'postgres', '-A', 'trust',
    '-E', 'UTF8', '--no-locale'], { cwd: PGDIR });
  const port = await freePort();
  const r = pgCtl('-l', path.join(PGDIR, 'postgres.log'), '-w', '-t', '60',
    '-o', `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories=${PGDIR}`, 'start');
  if (r.status !== 0) throw new Error(`pg_ctl start failed: ${r.stdout}${r.stderr}`);
  const pid = Number(fs.readFileSync(path.join(PGDATA, 'postmaster.pid'), 'utf8').split('\n')[0]);
  sh(`${PG_BIN}/psql`, ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', 'postgres', '-qc', 'CREATE DATABASE parse']);
  return { port, pid };
}
const psql = (pg, sql) => sh(`${PG_BIN}/psql`, ['-h', '127.0.0.1', '-p', String(pg.port), '-U', 'postgres', '-d', 'parse', '-Atqc', sql]);
// Statements on crmd's database, each in its own transaction (VACUUM may be among them).
const psqlCrmd = (pg, ...sqls) => sh(`${PG_BIN}/psql`, ['-h', '127.0.0.1', '-p', String(pg.port), '-U', 'postgres', '-d', 'crmd', '-Atq',
  '-v', 'ON_ERROR_STOP=1', ...sqls.flatMap((x) => ['-c', x])], { maxBuffer: 64 << 20 });

// A tracked child (its pid in run/pids), killed after `ms`; its stdout and stderr together.
function runChild(name, cmd, args, ms) {
  return new Promise((resolve) => {
    const child = track(name, spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] }));
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    const killer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('exit', (code, signal) => { clearTimeout(killer); children.delete(name); resolve({ code: code ?? signal, out }); });
  });
}

async function startParse(pg) {
  const port = await freePort();
  const dir = path.join(RUN, 'parse');
  fs.mkdirSync(dir, { recursive: true });
  const out = fs.openSync(path.join(dir, 'parse-server.log'), 'a');
  const server = { name: 'Parse Server', key: 'parse', base: `http://127.0.0.1:${port}`, appId: 'bench',
    masterKey: crypto.randomBytes(20).toString('hex'), restKey: crypto.randomBytes(20).toString('hex') };
  const child = track('parse-server', spawn(process.execPath, [path.join(BENCH, 'parse-server.mjs')], {
    cwd: dir, stdio: ['ignore', out, out],
    env: { ...process.env, BENCH_WORK: WORK, PARSE_PORT: String(port), PARSE_APP_ID: server.appId,
      PARSE_MASTER_KEY: server.masterKey, PARSE_REST_KEY: server.restKey,
      PARSE_DATABASE_URI: `postgres://postgres@127.0.0.1:${pg.port}/parse` },
  }));
  await waitHttp(`${server.base}/parse/health`, child, 'Parse Server', 90_000);
  return { ...server, pid: child.pid };
}

// crmd on its SQLite files, or (`pg` given) on the PostgreSQL server Parse uses, in a database of
// its own (issue 22): the same database server, the same data.
async function startCrmd(pg = null) {
  const key = pg ? 'crmdpg' : 'crmd';
  const data = path.join(RUN, `${key}-data`);
  const store = [];
  if (pg) {
    sh(`${PG_BIN}/psql`, ['-h', '127.0.0.1', '-p', String(pg.port), '-U', 'postgres', '-d', 'postgres', '-qc', 'CREATE DATABASE crmd']);
    store.push('--store', `postgresql://postgres@127.0.0.1:${pg.port}/crmd`);
  }
  const app = JSON.parse(sh(CRMD, ['app', 'create', '--data', data, ...store, '--id', 'bench', '--no-product-base']));
  // Issue 33: an application with the product base, as `crmd app create` makes one by default.
  const pbApp = pg || !runs('productbase') ? null : JSON.parse(sh(CRMD, ['app', 'create', '--data', data, '--id', PB_APP]));
  const port = await freePort();
  const out = fs.openSync(path.join(RUN, `${key}.log`), 'a');
  const child = track(key, spawn(CRMD, ['serve', '--data', data, ...store, '--listen', `127.0.0.1:${port}`,
    '--prefix', 'parse', '--durability', 'full'], { stdio: ['ignore', out, out] }));
  const server = { name: pg ? 'crmd on PostgreSQL' : 'crmd', key, base: `http://127.0.0.1:${port}`, appId: app.appId, masterKey: app.masterKey, pbApp, data };
  await waitHttp(`${server.base}/health`, child, server.name, 20_000);
  // Its CPU is crmd's and the database's, as Parse's is.
  return { ...server, pid: child.pid, ...(pg ? { postmaster: pg.pid } : {}) };
}

async function startNginx(staticBody) {
  const dir = path.join(RUN, 'nginx');
  for (const d of ['www', 'tmp']) fs.mkdirSync(path.join(dir, d), { recursive: true });
  fs.writeFileSync(path.join(dir, 'www', 'account.json'), staticBody);
  const port = await freePort();
  const tmp = path.join(dir, 'tmp');
  fs.writeFileSync(path.join(dir, 'nginx.conf'), `# written by bench/side-by-side.mjs
user www-data;
worker_processes auto;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_timeout 65;
  keepalive_requests 1000000;
  types { application/json json; }
  default_type application/json;
  client_body_temp_path ${tmp}/body;
  proxy_temp_path ${tmp}/proxy;
  fastcgi_temp_path ${tmp}/fastcgi;
  uwsgi_temp_path ${tmp}/uwsgi;
  scgi_temp_path ${tmp}/scgi;
  server {
    listen 127.0.0.1:${port};
    root ${dir}/www;
  }
}
`);
  const out = fs.openSync(path.join(dir, 'stderr.log'), 'a');
  const child = track('nginx', spawn('/usr/sbin/nginx', ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')],
    { stdio: ['ignore', out, out] }));
  const server = { name: 'nginx', key: 'nginx', base: `http://127.0.0.1:${port}`, staticPath: '/account.json', appId: '-', masterKey: '-', pid: child.pid };
  await waitHttp(`${server.base}/account.json`, child, 'nginx', 20_000);
  return server;
}

// ---------------------------------------------------------------------------------------------
// HTTP with the master key (both servers answer X-Parse-* on /parse).
async function call(server, method, p, body) {
  const headers = { 'X-Parse-Application-Id': server.appId, 'X-Parse-Master-Key': server.masterKey };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(server.base + p, { method, headers, signal: AbortSignal.timeout(120_000),
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  return { status: r.status, text, json };
}

const pct = (sorted, p) => sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : null;

async function bulkLoad(server) {
  const ls = await call(server, 'POST', `${PREFIX}/batch`, { requests: LEAD_STATUS_NAMES.map((_, i) =>
    ({ method: 'POST', path: `${PREFIX}/classes/LeadStatuses`, body: leadStatusRow(i) })) });
  if (ls.status !== 200 || !Array.isArray(ls.json) || ls.json.some((x) => !x.success))
    throw new Error(`${server.name}: LeadStatuses batch failed: ${ls.status} ${ls.text.slice(0, 300)}`);
  const leadIds = ls.json.map((x) => x.success.objectId);

  const batches = [];
  for (let b = 0; b * BATCH < ROWS; b++) {
    const requests = [];
    for (let i = b * BATCH; i < Math.min(ROWS, (b + 1) * BATCH); i++)
      requests.push({ method: 'POST', path: `${PREFIX}/classes/Accounts`, body: accountRow(i, leadIds) });
    batches.push(JSON.stringify({ requests }));
  }
  const ids = new Array(ROWS).fill(null);
  const latencies = [];
  let non2xx = 0;
  let failedItems = 0;
  let firstError = null;
  const post = poster(server.base, { 'X-Parse-Application-Id': server.appId, 'X-Parse-Master-Key': server.masterKey },
    LOAD_IN_FLIGHT, 120_000);
  const started = performance.now();
  const send = async (b) => {
    const t = performance.now();
    const r = await post(`${PREFIX}/batch`, batches[b]);
    latencies.push(performance.now() - t);
    if (r.status < 200 || r.status > 299 || !Array.isArray(r.json)) {
      non2xx++;
      failedItems += Math.min(BATCH, ROWS - b * BATCH);
      firstError ??= `HTTP ${r.status} ${r.text.slice(0, 200)}`;
      return;
    }
    r.json.forEach((item, k) => {
      if (item.success?.objectId) ids[b * BATCH + k] = item.success.objectId;
      else { failedItems++; firstError ??= JSON.stringify(item).slice(0, 200); }
    });
  };
  const cpuBefore = cpuSnapshot(server);
  await send(0); // alone: the first rows create the class and its columns
  let next = 1;
  await Promise.all(Array.from({ length: LOAD_IN_FLIGHT }, async () => {
    while (next < batches.length) {
      if (performance.now() - started > LOAD_TIMEOUT_MS) throw new Error(`${server.name}: bulk load over ${LOAD_TIMEOUT_MS / 1000} s`);
      await send(next++);
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuDelta(server, cpuBefore); // benchCores: this node process, the loading client
  latencies.sort((a, b) => a - b);
  const loaded = ids.filter(Boolean).length;
  const result = { rows: ROWS, loaded, batches: batches.length, batchSize: BATCH, inFlight: LOAD_IN_FLIGHT, seconds,
    rowsPerSecond: loaded / seconds, batchLatencyMs: { p50: pct(latencies, 50), p99: pct(latencies, 99) },
    non2xx, failedItems, firstError, cpu };
  return { result, ids, leadIds };
}

async function declareIndex(server) {
  const t = performance.now();
  const r = await call(server, 'PUT', `${PREFIX}/schemas/Accounts`, { indexes: { city_score: { City: 1, Score: 1 } } });
  const ms = performance.now() - t;
  if (r.status !== 200) throw new Error(`${server.name}: index declaration failed: ${r.status} ${r.text.slice(0, 300)}`);
  return { status: r.status, ms };
}

// ---------------------------------------------------------------------------------------------
// Request files: the same sequence for both servers (row k on one server is row k on the other).
function writeRequestFiles(server, ids, leadIds) {
  const dir = path.join(RUN, 'requests', server.key);
  fs.mkdirSync(dir, { recursive: true });
  const loaded = ids.map((id, i) => [id, i]).filter(([id]) => id);
  const files = {};
  const write = (name, lines) => { files[name] = path.join(dir, `${name}.txt`); fs.writeFileSync(files[name], lines.join('\n') + '\n'); };
  const cls = `${PREFIX}/classes/Accounts`;
  let r = prng(101);
  const randomId = () => loaded[Math.floor(r() * loaded.length)][0];
  write('get', Array.from({ length: 100_000 }, () => `GET\t${cls}/${randomId()}`));
  r = prng(202);
  write('update', Array.from({ length: 20_000 }, (_, k) =>
    `PUT\t${cls}/${randomId()}\t${JSON.stringify({ Visits: { __op: 'Increment', amount: 1 }, Status: `touched ${k % 7}` })}`));
  write('create', Array.from({ length: 2_000 }, (_, k) => `POST\t${cls}\t${JSON.stringify(accountRow(ROWS + k, leadIds))}`));
  r = prng(303);
  const wheres = Array.from({ length: 2_000 }, () => encodeURIComponent(JSON.stringify(
    { City: CITIES[Math.floor(r() * CITIES.length)], Score: { $gte: Math.floor(r() * 100) } })));
  write('query', wheres.map((w) => `GET\t${cls}?where=${w}&order=-createdAt&limit=100`));
  write('count', wheres.map((w) => `GET\t${cls}?where=${w}&limit=0&count=1`));
  write('include', wheres.map((w) => `GET\t${cls}?where=${w}&order=-createdAt&limit=100&include=LeadStatusId`));
  write('static', ['GET\t/account.json']);
  return files;
}

// Issue 16's budget: a create on a timeline table writes the record and its `_Timeline` row, and
// may cost at most 1.3x the server CPU of the same create on a table without timeline. Issue 19's
// figure beside it: the same create on a table with one trigger (a follow-up row in another table
// per create; the firing writes a `_syslogTriggers` row and an outbox entry in the create's
// transaction, the action its row, its log row and the outbox's note after it). A trigger's work
// runs after the answer, so its run's CPU is counted until every action ran. All tables are new
// and get the same rows; they are measured in turn, twice, and the CPU per request of each is the
// mean of its two runs.
async function historyBudget(s, leadIds, sampler) {
  const plain = 'HistoryPlain'; const timeline = 'HistoryTimeline'; const trigger = 'HistoryTrigger';
  await call(s, 'POST', `${PREFIX}/schemas/${plain}`, JSON.stringify({}));
  await call(s, 'POST', `${PREFIX}/schemas/${timeline}`,
    JSON.stringify({ timeline: { displayFields: { Name: true }, index: { AccountId: timeline } } }));
  await call(s, 'POST', `${PREFIX}/schemas/HistoryTriggered`, JSON.stringify({ fields: { Name: { type: 'String' } } }));
  await call(s, 'POST', `${PREFIX}/schemas/${trigger}`, JSON.stringify({}));
  await call(s, 'POST', `${PREFIX}/classes/${trigger}`, JSON.stringify(accountRow(0, leadIds)));  // its fields
  await call(s, 'PUT', `${PREFIX}/schemas/${trigger}`, JSON.stringify({ triggers: [{ name: 'follow-up', event: 'create',
    actions: [{ actionType: 'create-record', actionData: { 'create-record': { table: 'HistoryTriggered', data: { Name: 'Call {{Name}}' } } } }] }] }));
  const dir = path.join(RUN, 'requests', s.key);
  const file = (cls) => {
    const f = path.join(dir, `${cls}.txt`);
    fs.writeFileSync(f, Array.from({ length: 2_000 }, (_, k) => `POST\t${PREFIX}/classes/${cls}\t${JSON.stringify(accountRow(ROWS + k, leadIds))}`).join('\n') + '\n');
    return f;
  };
  const count = async (cls) => (await call(s, 'GET', `${PREFIX}/classes/${cls}?count=1&limit=0`)).json?.count ?? -1;
  // Until every create's action ran (bounded: 120 s).
  const drained = async () => {
    for (const end = Date.now() + 120_000; Date.now() < end;) {
      if (await count('HistoryTriggered') >= await count(trigger) - 1) return true;
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  };
  const files = { plain: file(plain), timeline: file(timeline), trigger: file(trigger) };
  const probes = [await probe(s, 'create', files.plain), await probe(s, 'create', files.timeline), await probe(s, 'create', files.trigger)];
  const runs = { plain: [], timeline: [], trigger: [] };
  let allDrained = true;
  for (let round = 0; round < 2; round++) {
    for (const k of round === 0 ? ['plain', 'timeline', 'trigger'] : ['trigger', 'timeline', 'plain']) {
      runs[k].push(await measure(s, files[k], CONNS, `history-${k}-${round}`, sampler, k === 'trigger' ? drained : null));
      if (k === 'trigger') allDrained &&= runs[k].at(-1).drained;
    }
  }
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const plainMs = mean(runs.plain.map((x) => x.cpu.msPerRequest));
  const timelineMs = mean(runs.timeline.map((x) => x.cpu.msPerRequest));
  const triggerMs = mean(runs.trigger.map((x) => x.cpu.msPerRequest));
  const triggered = await count('HistoryTriggered'); const fired = await count(trigger);
  return { runs, plainMs, timelineMs, triggerMs, ratio: timelineMs / plainMs, triggerRatio: triggerMs / plainMs,
    probeOk: probes.every((p) => p.ok) && allDrained && triggered === fired - 1,
    probeError: probes.find((p) => !p.ok)?.error ?? (allDrained ? `${triggered} follow-ups for ${fired - 1} creates` : 'trigger actions did not drain in 120 s') };
}

// Issue 18's budget: the public form functions (flag, phone normalisation, contact lookup by the
// indexed phone key) at most 2x a create's server CPU. A create of the form's small body, getlead
// (a new lead per call, as from a landing page) and web2table (half the calls for a known
// contact), each measured twice in turn against the same application as the rest.
async function formsBudget(s, leadIds, sampler) {
  await call(s, 'PUT', `${PREFIX}/schemas/Accounts`, JSON.stringify({ indexes: { Email_1: { Email: 1 } } }));
  await call(s, 'POST', `${PREFIX}/schemas/Tasks`, JSON.stringify({}));
  for (const flag of ['AcceptWebLeads', 'AcceptWebToTable'])
    await call(s, 'POST', `${PREFIX}/classes/Config`, JSON.stringify({ Name: flag, Value: { [flag]: true } }));
  const dir = path.join(RUN, 'requests', s.key);
  const r = prng(404);
  const lead = (k) => ({ Name: `Lead ${k}`, PhoneNumber: `05${Math.floor(r() * 1e8).toString().padStart(8, '0')}`, Email: `lead${k}@example.test` });
  const known = Array.from({ length: 1_000 }, (_, k) => accountRow(k, leadIds).PhoneNumber);
  const file = (name, lines) => { const f = path.join(dir, `${name}.txt`); fs.writeFileSync(f, lines.join('\n') + '\n'); return f; };
  const files = {
    create: file('form-create', Array.from({ length: 40_000 }, (_, k) => `POST\t${PREFIX}/classes/Accounts\t${JSON.stringify(lead(k))}`)),
    getlead: file('getlead', Array.from({ length: 40_000 }, (_, k) => `POST\t/functions/${s.appId}/getlead\t${JSON.stringify(lead(40_000 + k))}`)),
    web2table: file('web2table', Array.from({ length: 2_000 }, (_, k) => `POST\t/functions/${s.appId}/web2table\t${JSON.stringify(
      { table: 'Tasks', phone: k % 2 ? known[k % known.length] : lead(80_000 + k).PhoneNumber, Name: `Task ${k}` })}`)),
  };
  const probes = [await probe(s, 'create', files.create), await probe(s, 'form', files.getlead), await probe(s, 'form', files.web2table)];
  const runs = { create: [], getlead: [], web2table: [] };
  for (let round = 0; round < 2; round++) {
    const order = round === 0 ? ['create', 'getlead', 'web2table'] : ['web2table', 'getlead', 'create'];
    for (const k of order) runs[k].push(await measure(s, files[k], CONNS, `forms-${k}-${round}`, sampler));
  }
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const ms = Object.fromEntries(Object.entries(runs).map(([k, xs]) => [k, mean(xs.map((x) => x.cpu.msPerRequest))]));
  return { runs, ms, probeOk: probes.every((p) => p.ok), probeError: probes.find((p) => !p.ok)?.error };
}

// Rows of `rowOf(i)` for i < ROWS into `cls` through /batch, as bulkLoad does; their ids.
async function loadRows(server, cls, rowOf) {
  const post = poster(server.base, { 'X-Parse-Application-Id': server.appId, 'X-Parse-Master-Key': server.masterKey }, LOAD_IN_FLIGHT, 120_000);
  const ids = new Array(ROWS).fill(null);
  let firstError = null;
  const started = performance.now();
  const send = async (b) => {
    const requests = [];
    for (let i = b * BATCH; i < Math.min(ROWS, (b + 1) * BATCH); i++) requests.push({ method: 'POST', path: `${PREFIX}/classes/${cls}`, body: rowOf(i) });
    const r = await post(`${PREFIX}/batch`, JSON.stringify({ requests }));
    if (!Array.isArray(r.json)) { firstError ??= `HTTP ${r.status} ${r.text.slice(0, 200)}`; return; }
    r.json.forEach((item, k) => { if (item.success?.objectId) ids[b * BATCH + k] = item.success.objectId; else firstError ??= JSON.stringify(item).slice(0, 200); });
  };
  await send(0);
  let next = 1;
  const batches = Math.ceil(ROWS / BATCH);
  await Promise.all(Array.from({ length: LOAD_IN_FLIGHT }, async () => {
    while (next < batches) {
      if (performance.now() - started > LOAD_TIMEOUT_MS) throw new Error(`${server.name}: loading ${cls} over ${LOAD_TIMEOUT_MS / 1000} s`);
      await send(next++);
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  const loaded = ids.filter(Boolean);
  return { ids: loaded, loaded: loaded.length, seconds, rowsPerSecond: loaded.length / seconds, firstError };
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

// Issue 33: the limit beside the peer, on the data the read workloads ran on. `check(what,
// ok, detail)` records a correctness check of the run.
const CRMD_PG_SCHEMA = 'app_bench'; // crmd on PostgreSQL keeps application `bench` in schema app_<id>
async function limits(pg, crmd, check) {
  const out = {};
  const postgres = { key: 'postgres', pid: pg.pid, postmaster: pg.pid, reaped: true }; // all of PostgreSQL
  try {
    out.pg = await pgbenchLimit({ pg, pgBin: PG_BIN, psql: (...sqls) => psqlCrmd(pg, ...sqls), run: runChild,
      cpuSnapshot: () => cpuSnapshot(postgres), cpuDelta: (before) => cpuDelta(postgres, before),
      dir: path.join(RUN, 'pgbench'), warmup: WARMUP, duration: DURATION, clients: CONNS, log }, CRMD_PG_SCHEMA);
    check('pgbench: synchronous_commit is on', out.pg.synchronousCommit === 'on', out.pg.synchronousCommit);
    check('pgbench: every insert made its row, no transaction failed',
      out.pg.insertsComplete && Object.values(out.pg.workloads).every((x) => !x.failed), JSON.stringify(Object.fromEntries(Object.entries(out.pg.workloads).map(([k, x]) => [k, x.failed]))));
  } catch (e) {
    out.pgError = String(e.message ?? e);
    check('pgbench limit ran', false, out.pgError.slice(0, 300));
  }
  if (!fs.existsSync(SQLITE_LIMIT)) {
    check('sqlite-limit ran', false, `${SQLITE_LIMIT} missing (bench/run compiles bench/sqlite-limit.c)`);
    return out;
  }
  try {
    log(`  sqlite-limit: 7 modes, ${LIMIT_SQLITE_SECONDS} s each after 1 s, on a copy of crmd's store`);
    out.sqlite = await sqliteLimit({ bin: SQLITE_LIMIT, dir: path.join(RUN, 'sqlite-limit'), seconds: LIMIT_SQLITE_SECONDS,
      group: CONNS, readers: os.availableParallelism(), run: runChild }, path.join(crmd.data, 'apps', 'bench', 'data.db'));
    for (const [k, x] of Object.entries(out.sqlite.modes)) log(`    ${k}: ${Math.round(x.perSecond)}/s, ${x.cpuMsPerOp.toFixed(4)} ms CPU each`);
    check('sqlite-limit: all 7 modes measured', Object.keys(out.sqlite.modes).length === 7, Object.keys(out.sqlite.modes).join(', '));
  } catch (e) {
    out.sqliteError = String(e.message ?? e);
    check('sqlite-limit ran', false, out.sqliteError.slice(0, 300));
  }
  return out;
}

// Issue 33: create and update on the product base's own Accounts (37 fields, 4 indexes of its
// own, history on: each write also writes its `_Timeline` row), as a fresh application has it,
// beside Parse Server's plain Accounts given the same bodies (Parse has no product base: its
// Accounts gains the fields the first create brings). The budget beside it: the same create on a
// plain class of the same application (made by the first create, no timeline), measured in turn,
// twice each, as the history budget is; CPU is the mean of the two runs.
const PARSE_ACCOUNT_STATUSES = ['Active', 'VIP', 'Inactive', 'Prospect', 'Former'];
async function productBaseBudget(crmd, parse, parseLoaded, sampler, check) {
  const pb = { ...crmd, key: 'crmd-pb', appId: crmd.pbApp.appId, masterKey: crmd.pbApp.masterKey };
  const idsOf = async (s, cls) => (await call(s, 'GET', `${PREFIX}/classes/${cls}?limit=10&keys=objectId&order=objectId`)).json?.results?.map((x) => x.objectId) ?? [];
  const crmdRefs = { leadStatusIds: await idsOf(pb, 'LeadStatuses'), accountStatusIds: await idsOf(pb, 'AccountStatuses') };
  const made = await call(parse, 'POST', `${PREFIX}/batch`, { requests: PARSE_ACCOUNT_STATUSES.map((Name) =>
    ({ method: 'POST', path: `${PREFIX}/classes/AccountStatuses`, body: { Name } })) });
  const parseRefs = { leadStatusIds: parseLoaded.leadIds, accountStatusIds: Array.isArray(made.json) ? made.json.map((x) => x.success?.objectId).filter(Boolean) : [] };
  if (!crmdRefs.leadStatusIds.length || !crmdRefs.accountStatusIds.length || parseRefs.accountStatusIds.length !== PARSE_ACCOUNT_STATUSES.length)
    throw new Error(`product base: no statuses to point to (crmd ${JSON.stringify(crmdRefs)}, Parse ${made.text.slice(0, 200)})`);
  log(`  loading ${ROWS} rows into crmd's product-base Accounts (as many as Parse's Accounts holds)`);
  sampler.phase = 'load-productbase';
  const load = await loadRows(pb, 'Accounts', (i) => productAccountRow(i, crmdRefs));
  sampler.phase = 'between';
  log(`    ${Math.round(load.rowsPerSecond)} rows/s (${load.seconds.toFixed(1)} s)`);
  check(`crmd's product-base Accounts holds ${ROWS} rows`, load.loaded === ROWS, load.firstError ?? '');
  await call(pb, 'POST', `${PREFIX}/schemas/PlainAccounts`, {});

  const dir = path.join(RUN, 'requests', 'productbase');
  fs.mkdirSync(dir, { recursive: true });
  const file = (name, lines) => { const f = path.join(dir, `${name}.txt`); fs.writeFileSync(f, lines.join('\n') + '\n'); return f; };
  const creates = (cls, refs) => Array.from({ length: 2_000 }, (_, k) => `POST\t${PREFIX}/classes/${cls}\t${JSON.stringify(productAccountRow(ROWS + k, refs))}`);
  const updates = (ids, refs) => {
    const r = prng(505);
    return Array.from({ length: 20_000 }, (_, k) => `PUT\t${PREFIX}/classes/Accounts/${ids[Math.floor(r() * ids.length)]}\t${JSON.stringify({
      Balance: { __op: 'Increment', amount: 1 }, StatusId: { __type: 'Pointer', className: 'AccountStatuses', objectId: refs.accountStatusIds[k % refs.accountStatusIds.length] } })}`);
  };
  const files = {
    create: file('crmd-create', creates('Accounts', crmdRefs)), plain: file('crmd-plain-create', creates('PlainAccounts', crmdRefs)),
    parseCreate: file('parse-create', creates('Accounts', parseRefs)),
    update: file('crmd-update', updates(load.ids, crmdRefs)), parseUpdate: file('parse-update', updates(parseLoaded.ids.filter(Boolean), parseRefs)),
  };
  // Parse's create first: it adds the new fields to its Accounts before its update runs.
  const probes = [await probe(pb, 'create', files.create), await probe(pb, 'create', files.plain), await probe(parse, 'create', files.parseCreate),
    await probe(pb, 'update', files.update), await probe(parse, 'update', files.parseUpdate)];
  const server = { create: pb, plain: pb, parseCreate: parse, update: pb, parseUpdate: parse };
  const runs = { create: [], plain: [], parseCreate: [], update: [], parseUpdate: [] };
  for (const k of ['create', 'plain', 'parseCreate', 'update', 'parseUpdate', 'plain', 'create']) {
    runs[k].push(await measure(server[k], files[k], CONNS, `productbase-${k}-${runs[k].length}`, sampler));
    const e = runs[k].at(-1);
    log(`    ${k}: ${Math.round(e.reqPerSec)} req/s, p99 ${e.p99ms.toFixed(1)} ms, ${e.cpu.msPerRequest?.toFixed(4)} ms CPU a request`);
  }
  const createMs = mean(runs.create.map((x) => x.cpu.msPerRequest));
  const plainMs = mean(runs.plain.map((x) => x.cpu.msPerRequest));
  const createRps = mean(runs.create.map((x) => x.reqPerSec));
  return { load: { ...load, ids: undefined }, runs, createMs, plainMs, ratio: createMs / plainMs,
    createRatio: createRps / runs.parseCreate[0].reqPerSec, updateRatio: runs.update[0].reqPerSec / runs.parseUpdate[0].reqPerSec,
    probeOk: probes.every((p) => p.ok), probeError: probes.find((p) => !p.ok)?.error };
}

// Issue 21's budget, held by issue 33: the same reads and creates through MCP tools (`POST
// /mcp/<appId>`, one JSON-RPC `tools/call` each) at most 1.3x the server CPU of the record API's
// `query` and `create` (the same wheres in the same order, the same rows). crmd alone; measured in
// turn, twice each; CPU is the mean of the two runs.
async function mcpBudget(s, files, leadIds, sampler) {
  const dir = path.join(RUN, 'requests', s.key);
  const toolCall = (name, args) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
  const file = (name, lines) => { const f = path.join(dir, `${name}.txt`); fs.writeFileSync(f, lines.join('\n') + '\n'); return f; };
  const r = prng(303); // the query file's wheres, in its order (writeRequestFiles)
  const mcpFiles = {
    query: files.query, create: files.create,
    mcpQuery: file('mcp-query', Array.from({ length: 2_000 }, () => `POST\t/mcp/${s.appId}\t${toolCall('Get-Data', {
      table: 'Accounts', where: { City: CITIES[Math.floor(r() * CITIES.length)], Score: { $gte: Math.floor(r() * 100) } }, order: '-createdAt', limit: 100 })}`)),
    mcpCreate: file('mcp-create', Array.from({ length: 2_000 }, (_, k) => `POST\t/mcp/${s.appId}\t${toolCall('Create-Data', { table: 'Accounts', data: accountRow(ROWS + k, leadIds) })}`)),
  };
  // A tool's answer: 200, a result that is no error, its text the record API's JSON.
  const tool = async (f) => {
    const [method, p, body] = fs.readFileSync(f, 'utf8').split('\n')[0].split('\t');
    const a = await call(s, method, p, body);
    let inner = null;
    try { inner = JSON.parse(a.json?.result?.content?.[0]?.text); } catch { /* not JSON */ }
    return { status: a.status, ok: a.status === 200 && a.json?.result && !a.json.result.isError && inner !== null, inner, error: a.text.slice(0, 300) };
  };
  const query = await probe(s, 'query', mcpFiles.query);
  const mcpQuery = await tool(mcpFiles.mcpQuery);
  const create = await probe(s, 'create', mcpFiles.create);
  const mcpCreate = await tool(mcpFiles.mcpCreate);
  const probeOk = query.ok && create.ok && mcpQuery.ok && mcpQuery.inner.results?.length === query.rows && mcpCreate.ok && typeof mcpCreate.inner.objectId === 'string';
  const runs = { query: [], mcpQuery: [], create: [], mcpCreate: [] };
  for (const round of [0, 1]) {
    const order = round === 0 ? ['query', 'mcpQuery', 'create', 'mcpCreate'] : ['mcpCreate', 'create', 'mcpQuery', 'query'];
    for (const k of order) {
      runs[k].push(await measure(s, mcpFiles[k], CONNS, `mcp-${k}-${round}`, sampler));
      const e = runs[k].at(-1);
      log(`    ${k}: ${Math.round(e.reqPerSec)} req/s, p99 ${e.p99ms.toFixed(1)} ms, ${e.cpu.msPerRequest?.toFixed(4)} ms CPU a request`);
    }
  }
  const ms = Object.fromEntries(Object.entries(runs).map(([k, xs]) => [k, mean(xs.map((x) => x.cpu.msPerRequest))]));
  return { runs, ms, getDataRatio: ms.mcpQuery / ms.query, createDataRatio: ms.mcpCreate / ms.create, probeOk,
    probeError: probeOk ? undefined : `record query ${query.rows} rows, Get-Data ${mcpQuery.inner?.results?.length ?? mcpQuery.error}; Create-Data ${mcpCreate.inner?.objectId ?? mcpCreate.error}` };
}

// bench/tenants.mjs's figures (issue 17; issue 33's goals), when they are of this binary and newer
// than its copy, that is, bench/run ran it just before this script; null otherwise.
function readTenants() {
  if (!fs.existsSync(TENANTS)) return null;
  try {
    const t = JSON.parse(fs.readFileSync(TENANTS, 'utf8'));
    const sha = crypto.createHash('sha256').update(fs.readFileSync(CRMD)).digest('hex');
    if (t.sha256 !== sha || fs.statSync(TENANTS).mtimeMs < fs.statSync(CRMD).mtimeMs || !t.product_base) {
      log(`${path.relative(ROOT, TENANTS)} is not of this binary's run: its rows are left out`);
      return null;
    }
    return t;
  } catch (e) {
    log(`${path.relative(ROOT, TENANTS)} unreadable (${e.message}): its rows are left out`);
    return null;
  }
}

// One request of the workload, checked for status and shape before it is measured.
async function probe(server, workload, file) {
  const [method, p, body] = fs.readFileSync(file, 'utf8').split('\n')[0].split('\t');
  const r = await call(server, method, p, body);
  const j = r.json;
  let ok = r.status >= 200 && r.status <= 299 && j !== null;
  let detail = '';
  if (ok) {
    switch (workload) {
      case 'get': ok = typeof j.objectId === 'string' && j.LeadStatusId?.__type === 'Pointer'; break;
      case 'create': ok = r.status === 201 && typeof j.objectId === 'string'; break;
      case 'form': ok = r.status === 200 && j.success === true && typeof j.accountId === 'string'; break;
      case 'update': ok = typeof j.updatedAt === 'string'; detail = `Visits in response: ${typeof j.Visits === 'number'}`; break;
      case 'query': ok = Array.isArray(j.results) && j.results.length > 0 && j.results.length <= 100; detail = `${j.results?.length} rows`; break;
      case 'count': ok = typeof j.count === 'number' && j.results?.length === 0; detail = `count ${j.count}`; break;
      case 'include': ok = Array.isArray(j.results) && j.results.length > 0 && j.results.every((x) => x.LeadStatusId?.__type === 'Object' && typeof x.LeadStatusId.Name === 'string'); detail = `${j.results?.length} rows`; break;
      default: break;
    }
  }
  return { ok, status: r.status, bytes: Buffer.byteLength(r.text), detail, count: j?.count, rows: j?.results?.length,
    error: ok ? undefined : r.text.slice(0, 300) };
}

// ---------------------------------------------------------------------------------------------
// Memory: kernel peak (VmHWM) of crmd and of Parse's node process; PostgreSQL as the sum of PSS over
// the postmaster and its children, sampled once a second (VmHWM would count shared buffers per backend).
function procKiB(pid, field) {
  try {
    const m = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`));
    return m ? Number(m[1]) : null;
  } catch { return null; }
}
function pssKiB(pid) {
  try { return Number(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8').match(/Pss:\s+(\d+)/)[1]); } catch { return 0; }
}
function postgresPssKiB(postmaster) {
  let sum = pssKiB(postmaster);
  let procs = 1;
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster) { sum += pssKiB(d); procs++; }
    } catch { /* exited */ }
  }
  return { sum, procs };
}
// CPU: ticks of a process (all threads), of the machine, and of this process's reaped children (wrk).
const CLK_TCK = Number(sh('getconf', ['CLK_TCK'])) || 100;
function statFields(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' '); // [0] is the state
}
function childrenOf(ppid) {
  const out = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try { if (Number(statFields(d)[1]) === ppid) out.push(Number(d)); } catch { /* exited */ }
  }
  return out;
}
function processTicks(pids) {
  const out = new Map();
  for (const pid of pids) {
    try { const f = statFields(pid); out.set(pid, Number(f[11]) + Number(f[12])); } catch { /* exited */ }
  }
  return out;
}
function machineTicks() {
  const v = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
  return { busy: v[0] + v[1] + v[2] + v[5] + v[6] + v[7], total: v.reduce((a, b) => a + b, 0) };
}
function selfTicks() {
  const f = statFields('self');
  return { own: Number(f[11]) + Number(f[12]), children: Number(f[13]) + Number(f[14]) };
}
// Everything the server under test runs on: crmd; Parse's node process and all of PostgreSQL; nginx's workers.
function serverPids(server) {
  if (server.postmaster) return [server.pid, server.postmaster, ...childrenOf(server.postmaster)];
  if (server.key === 'nginx') return [server.pid, ...childrenOf(server.pid)];
  return [server.pid];
}
// `server.reaped`: also the CPU of the postmaster's children that exited (its cutime and cstime):
// pgbench's backends end with its connections, before the snapshot after the run is taken.
function cpuSnapshot(server) {
  const ticks = processTicks(serverPids(server));
  if (server.reaped) try { const f = statFields(server.postmaster); ticks.set('reaped', Number(f[13]) + Number(f[14])); } catch { /* gone */ }
  return { server: ticks, machine: machineTicks(), self: selfTicks(), at: performance.now() };
}
function cpuDelta(server, before) {
  const after = cpuSnapshot(server);
  let serverTicks = 0;
  for (const [pid, t] of after.server) serverTicks += t - (before.server.get(pid) ?? 0);
  // Counted as reaped in full: what a process that exited meanwhile had used before.
  if (before.server.has('reaped')) for (const [pid, t] of before.server) if (!after.server.has(pid)) serverTicks -= t;
  const seconds = (after.at - before.at) / 1000;
  const sec = (ticks) => ticks / CLK_TCK;
  const serverSec = sec(serverTicks);
  const wrkSec = sec(after.self.children - before.self.children);
  const busySec = sec(after.machine.busy - before.machine.busy);
  const benchSec = sec(after.self.own - before.self.own);
  return { seconds, serverCores: serverSec / seconds, wrkCores: wrkSec / seconds, benchCores: benchSec / seconds, busyCores: busySec / seconds,
    otherCores: Math.max(0, busySec - serverSec - wrkSec - benchSec) / seconds, serverCpuSeconds: serverSec };
}
// Busy cores of the whole machine over `ms`.
async function machineBusyCores(ms) {
  const a = machineTicks();
  await sleep(ms);
  const b = machineTicks();
  return ((b.busy - a.busy) / (b.total - a.total)) * os.availableParallelism();
}

class MemorySampler {
  constructor(targets) { this.targets = targets; this.peak = {}; this.phase = 'start'; this.phasePeak = {}; }
  sample() {
    const now = {};
    for (const [key, pid] of Object.entries(this.targets.rss)) now[key] = procKiB(pid, 'VmRSS');
    const pg = postgresPssKiB(this.targets.postmaster);
    now.postgres = pg.sum;
    this.pgProcs = Math.max(this.pgProcs ?? 0, pg.procs);
    const ph = (this.phasePeak[this.phase] ??= {});
    for (const [k, v] of Object.entries(now)) {
      if (v === null) continue;
      this.peak[k] = Math.max(this.peak[k] ?? 0, v);
      ph[k] = Math.max(ph[k] ?? 0, v);
    }
  }
  start() { this.sample(); this.timer = setInterval(() => this.sample(), 1000); }
  stop() { clearInterval(this.timer); this.sample(); }
}

// ---------------------------------------------------------------------------------------------
// wrk
// `file` null: plain wrk on server.base + server.staticPath, no Lua call per request.
function wrk(server, file, conns, seconds, offset, tag) {
  const url = file ? `${server.base}/` : `${server.base}${server.staticPath}`;
  const args = ['-t1', `-c${conns}`, `-d${seconds}s`, '--timeout', '10s', '--latency', '-s', REPLAY, url];
  return new Promise((resolve, reject) => {
    const child = track(`wrk-${tag}`, spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, BENCH_REQUESTS: file ?? '', BENCH_STATIC: file ? '0' : '1', BENCH_OFFSET: String(offset),
        BENCH_APP_ID: server.appId, BENCH_MASTER_KEY: server.masterKey } }));
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    const killer = setTimeout(() => child.kill('SIGKILL'), (seconds + 90) * 1000);
    child.on('exit', (code) => {
      clearTimeout(killer);
      children.delete(`wrk-${tag}`);
      fs.writeFileSync(path.join(RUN, 'wrk', `${tag}.txt`), `wrk ${args.join(' ')}\n${out}`);
      const m = out.match(/^BENCH_RESULT (.*)$/m);
      if (code !== 0 || !m) return reject(new Error(`wrk ${tag} failed (exit ${code}): ${out.slice(-500)}`));
      const r = JSON.parse(m[1]);
      const e = r.errors;
      resolve({ requests: r.requests, seconds: r.duration_us / 1e6, reqPerSec: r.requests / (r.duration_us / 1e6),
        p50ms: r.latency_us.p50 / 1000, p90ms: r.latency_us.p90 / 1000, p99ms: r.latency_us.p99 / 1000,
        maxms: r.latency_us.max / 1000, non2xx: e.status, socketErrors: e.connect + e.read + e.write + e.timeout,
        errors: e, bytesPerResponse: r.requests ? r.bytes / r.requests : 0 });
    });
  });
}

// `drained` (optional): awaited after the run and before the CPU is read, for work that goes on
// after the answers (trigger actions); its outcome is `result.drained`.
async function measure(server, file, conns, tag, sampler, drained = null) {
  await wrk(server, file, conns, WARMUP, 0, `${tag}-warmup`);
  if (drained) await drained();
  sampler.phase = tag;
  const lines = file ? fs.readFileSync(file, 'utf8').split('\n').length - 1 : 0;
  const before = cpuSnapshot(server);
  const result = await wrk(server, file, conns, DURATION, Math.floor(lines / 2), tag);
  if (drained) result.drained = await drained();
  result.cpu = cpuDelta(server, before);
  result.cpu.msPerRequest = result.requests ? (result.cpu.serverCpuSeconds * 1000) / result.requests : null;
  sampler.phase = 'between';
  return result;
}

// ---------------------------------------------------------------------------------------------
function versions() {
  const pkg = (name) => { try { return JSON.parse(fs.readFileSync(path.join(WORK, 'node_modules', name, 'package.json'), 'utf8')).version; } catch { return 'missing'; } };
  const head = shTry('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD']);
  const dirty = !['', 'unknown'].includes(shTry('git', ['-C', ROOT, 'status', '--porcelain', '--', 'src', 'CMakeLists.txt']));
  return {
    crmd: `${head}${dirty ? ' + uncommitted changes in src/' : ''}, Release build, binary sha256 ${crypto.createHash('sha256').update(fs.readFileSync(CRMD)).digest('hex').slice(0, 12)}`,
    parseServer: pkg('parse-server'), router: pkg('router'), express: pkg('express'), pg: pkg('pg-promise') === 'missing' ? undefined : `pg-promise ${pkg('pg-promise')}`,
    postgres: shTry(`${PG_BIN}/postgres`, ['--version']),
    node: process.version,
    nginx: shTry('/usr/sbin/nginx', ['-v']).replace(/^nginx version: /, ''),
    wrk: shTry('wrk', ['-v']).split('\n')[0].replace(/\s*\[.*$/, ''),
  };
}

function machine() {
  const cpuinfo = fs.readFileSync('/proc/cpuinfo', 'utf8');
  const memKiB = Number(fs.readFileSync('/proc/meminfo', 'utf8').match(/MemTotal:\s+(\d+)/)[1]);
  let distro = 'Linux';
  try { distro = fs.readFileSync('/etc/os-release', 'utf8').match(/^PRETTY_NAME="?([^"\n]*)/m)[1]; } catch { /* keep */ }
  return { nproc: Number(sh('nproc', [])), cpu: (cpuinfo.match(/^model name\s*:\s*(.*)$/m) ?? [])[1] ?? 'unknown',
    memGiB: +(memKiB / 1048576).toFixed(1), kernel: os.release(), distro, loadavgStart: fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ') };
}

// ---------------------------------------------------------------------------------------------
const WORKLOADS = [
  { key: 'get', name: 'get-by-id', file: 'get', conns: CONNS, goal: 20 },
  { key: 'get64', name: 'get-by-id, 64 connections', file: 'get', conns: CONNS_HIGH, goal: null },
  { key: 'query', name: 'query (City = x, Score ≥ n, order -createdAt, limit 100)', file: 'query', conns: CONNS, goal: 10 },
  { key: 'count', name: 'count (same where, limit=0&count=1)', file: 'count', conns: CONNS, goal: 20 },
  { key: 'include', name: 'query + include of the Pointer (100 rows)', file: 'include', conns: CONNS, goal: 10 },
  { key: 'update', name: 'update (2 fields, one Increment)', file: 'update', conns: CONNS, goal: 20, write: true },
  { key: 'create', name: 'create (21 fields)', file: 'create', conns: CONNS, goal: 20, write: true },
];

async function main() {
  fs.rmSync(RUN, { recursive: true, force: true });
  fs.mkdirSync(path.join(RUN, 'wrk'), { recursive: true });
  if (!fs.existsSync(CRMD)) throw new Error(`${CRMD} missing (bench/run copies build/crmd there)`);
  const results = { date: new Date().toISOString(), fullRun: FULL_RUN, machine: machine(), versions: versions(),
    settings: { rows: ROWS, batch: BATCH, loadInFlight: LOAD_IN_FLIGHT, warmupSeconds: WARMUP, durationSeconds: DURATION,
      connections: CONNS, connectionsHigh: CONNS_HIGH, wrkThreads: 1 }, checks: [] };
  const check = (what, ok, detail = '') => { results.checks.push({ what, ok, detail }); if (!ok) log(`CHECK FAILED: ${what} ${detail}`); };

  // Others' work on the machine skews every figure: wait (bounded) for a quiet machine, and record it.
  let busy = await machineBusyCores(3000);
  for (let waited = 0; busy > QUIET_CORES && waited < QUIET_WAIT_S; waited += 5) {
    if (waited === 0) log(`machine busy (${busy.toFixed(2)} cores in use by other processes); waiting up to ${QUIET_WAIT_S} s for it to calm down`);
    busy = await machineBusyCores(5000);
  }
  results.machine.busyCoresAtStart = busy;
  if (busy > QUIET_CORES) log(`going ahead with ${busy.toFixed(2)} cores busy elsewhere: figures will be low`);
  log('starting PostgreSQL');
  const pg = await startPostgres();
  log(`PostgreSQL on 127.0.0.1:${pg.port}; starting Parse Server`);
  const parse = await startParse(pg);
  log(`Parse Server on ${parse.base}; starting crmd`);
  const crmd = await startCrmd();
  log(`crmd on ${crmd.base}; starting crmd on PostgreSQL`);
  const crmdpg = await startCrmd(pg);
  log(`crmd on PostgreSQL on ${crmdpg.base}`);
  parse.postmaster = pg.pid;
  const sampler = new MemorySampler({ rss: { crmd: crmd.pid, crmdpg: crmdpg.pid, parse: parse.pid }, postmaster: pg.pid });
  sampler.start();

  // Load, index.
  results.load = {};
  results.index = {};
  const loaded = {};
  for (const s of [crmd, crmdpg, parse]) {
    log(`bulk load into ${s.name}: ${ROWS} Accounts in batches of ${BATCH}, ${LOAD_IN_FLIGHT} in flight`);
    sampler.phase = `load-${s.key}`;
    const { result, ids, leadIds } = await bulkLoad(s);
    sampler.phase = 'between';
    results.load[s.key] = result;
    loaded[s.key] = { ids, leadIds };
    log(`  ${s.name}: ${Math.round(result.rowsPerSecond)} rows/s (${result.seconds.toFixed(1)} s), failed items ${result.failedItems}`);
    check(`${s.name} bulk load complete`, result.loaded === ROWS && result.non2xx === 0, result.firstError ?? '');
    results.index[s.key] = await declareIndex(s);
    log(`  index (City, Score) on ${s.name}: ${results.index[s.key].ms.toFixed(0)} ms`);
  }
  // Autovacuum would analyze the freshly loaded table within a minute or two; do it now so that the
  // planner statistics do not depend on when it happens to run.
  psql(pg, 'ANALYZE');
  const pgIndexes = psql(pg, `SELECT indexname FROM pg_indexes WHERE tablename = 'Accounts' ORDER BY 1`).split('\n');
  check('PostgreSQL has the (City, Score) index', pgIndexes.some((n) => n.includes('city_score')), pgIndexes.join(', '));
  for (const s of [crmd, crmdpg, parse]) {
    const r = await call(s, 'GET', `${PREFIX}/classes/Accounts?limit=0&count=1`);
    check(`${s.name} holds ${ROWS} Accounts`, r.json?.count === ROWS, `count ${r.json?.count}`);
  }

  const files = { crmd: writeRequestFiles(crmd, loaded.crmd.ids, loaded.crmd.leadIds),
    crmdpg: writeRequestFiles(crmdpg, loaded.crmdpg.ids, loaded.crmdpg.leadIds),
    parse: writeRequestFiles(parse, loaded.parse.ids, loaded.parse.leadIds) };
  results.workloads = [];
  results.nginx = {};
  // The limits run between the reads and the writes: on the rows crmd's reads saw, and before
  // crmd's creates add to the tables they copy.
  const runLimits = async () => {
    if (!runs('limits') || results.limits) return;
    log('the limit beside the peer (issue 33): pgbench on PostgreSQL, a C loop on SQLite, the workloads\' statements');
    results.limits = await limits(pg, crmd, check);
  };
  if (runs('workloads')) {
    const sample = await call(crmd, 'GET', `${PREFIX}/classes/Accounts/${loaded.crmd.ids[0]}`);
    const nginx = await startNginx(sample.text);
    files.nginx = { static: files.crmd.static };
    results.nginxBodyBytes = Buffer.byteLength(sample.text);
    log(`nginx on ${nginx.base}, serving a ${results.nginxBodyBytes}-byte JSON file (crmd's answer for row 0)`);

    for (const [k, w] of WORKLOADS.entries()) {
      if (w.write) await runLimits();
      const entry = { key: w.key, name: w.name, connections: w.conns, goal: w.goal, probe: {} };
      results.workloads.push(entry);
      if (w.key === 'get' || w.key === 'get64') {
        log(`nginx static, ${w.conns} connections`);
        results.nginx[w.conns] = await measure(nginx, files.nginx.static, w.conns, `nginx-c${w.conns}`, sampler);
        log(`  nginx: ${Math.round(results.nginx[w.conns].reqPerSec)} req/s`);
        if (w.key === 'get') {
          log(`nginx static, ${w.conns} connections, plain wrk (no Lua per request)`);
          results.nginxPlain = await measure(nginx, null, w.conns, `nginx-plain-c${w.conns}`, sampler);
          log(`  nginx: ${Math.round(results.nginxPlain.reqPerSec)} req/s`);
        }
      }
      const order = k % 2 === 0 ? [crmd, crmdpg, parse] : [parse, crmdpg, crmd];
      for (const s of order) {
        const file = files[s.key][w.file];
        entry.probe[s.key] = await probe(s, w.file, file);
        check(`${s.name} ${w.key} answers as expected`, entry.probe[s.key].ok, entry.probe[s.key].error ?? entry.probe[s.key].detail);
        log(`${w.name} against ${s.name}, ${w.conns} connections`);
        entry[s.key] = await measure(s, file, w.conns, `${w.key}-${s.key}`, sampler);
        const e = entry[s.key];
        log(`  ${s.name}: ${Math.round(e.reqPerSec)} req/s, p50 ${e.p50ms.toFixed(2)} ms, p99 ${e.p99ms.toFixed(2)} ms, non-2xx ${e.non2xx}, socket errors ${e.socketErrors}`);
        if (!alive(children.get(s.key === 'parse' ? 'parse-server' : s.key))) throw new Error(`${s.name} died during ${w.key}`);
      }
      if (w.key === 'count') check('count: same answer from every server', entry.probe.crmd.count === entry.probe.parse.count &&
        entry.probe.crmdpg.count === entry.probe.parse.count,
        `crmd ${entry.probe.crmd.count}, crmd on PostgreSQL ${entry.probe.crmdpg.count}, Parse ${entry.probe.parse.count}`);
      if (w.key === 'query' || w.key === 'include') check(`${w.key}: same number of rows from every server`,
        entry.probe.crmd.rows === entry.probe.parse.rows && entry.probe.crmdpg.rows === entry.probe.parse.rows,
        `crmd ${entry.probe.crmd.rows}, crmd on PostgreSQL ${entry.probe.crmdpg.rows}, Parse ${entry.probe.parse.rows}`);
      entry.ratio = entry.crmd.reqPerSec / entry.parse.reqPerSec;
      entry.ratioPg = entry.crmdpg.reqPerSec / entry.parse.reqPerSec;
    }
  }
  await runLimits();
  if (runs('history')) {
    log('change history (issue 16): creates on a table with timeline and on one without, crmd alone');
    results.history = await historyBudget(crmd, loaded.crmd.leadIds, sampler);
    check('history: creates on both tables answer 201', results.history.probeOk, results.history.probeError ?? '');
    log(`  CPU per create: ${results.history.plainMs.toFixed(4)} ms without timeline, ${results.history.timelineMs.toFixed(4)} ms with (${results.history.ratio.toFixed(2)}×), ${results.history.triggerMs.toFixed(4)} ms with one trigger and its action (${results.history.triggerRatio.toFixed(2)}×)`);
  }
  if (runs('forms')) {
    log('form functions (issue 18): a create of the form body, getlead and web2table, crmd alone');
    results.forms = await formsBudget(crmd, loaded.crmd.leadIds, sampler);
    check('forms: the create answers 201 and the forms 200 {success}', results.forms.probeOk, results.forms.probeError ?? '');
    log(`  CPU per call: create ${results.forms.ms.create.toFixed(4)} ms, getlead ${results.forms.ms.getlead.toFixed(4)} ms, web2table ${results.forms.ms.web2table.toFixed(4)} ms`);
  }
  // The memory goal is held over the phases it always covered (load, workloads, history, forms):
  // the parts below add an application of 111 classes and MCP's larger bodies in flight.
  const peaksBefore = { crmd: procKiB(crmd.pid, 'VmHWM'), parse: procKiB(parse.pid, 'VmHWM') };
  if (runs('productbase')) {
    log('the product base\'s own Accounts (issue 33): create and update beside Parse\'s plain Accounts; create against a plain class, crmd alone');
    results.productBase = await productBaseBudget(crmd, parse, loaded.parse, sampler, check);
    check('product base: creates and updates answer as expected on both servers', results.productBase.probeOk, results.productBase.probeError ?? '');
  }
  if (runs('mcp')) {
    log('MCP (issue 21): Get-Data and Create-Data beside the record API\'s query and create, crmd alone');
    results.mcp = await mcpBudget(crmd, files.crmd, loaded.crmd.leadIds, sampler);
    check('mcp: the tools answer as the record API does', results.mcp.probeOk, results.mcp.probeError ?? '');
  }
  sampler.stop();
  results.memory = {
    crmdPeakKiB: peaksBefore.crmd, parsePeakKiB: peaksBefore.parse, crmdpgPeakKiB: procKiB(crmdpg.pid, 'VmHWM'),
    crmdPeakAllKiB: procKiB(crmd.pid, 'VmHWM'), parsePeakAllKiB: procKiB(parse.pid, 'VmHWM'),
    crmdSampledPeakKiB: sampler.peak.crmd, parseSampledPeakKiB: sampler.peak.parse,
    postgresPeakPssKiB: sampler.peak.postgres, postgresProcesses: sampler.pgProcs, byPhase: sampler.phasePeak,
  };
  results.machine.loadavgEnd = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  results.tenants = readTenants();
  results.goals = goals(results);
  results.elapsedSeconds = (Date.now() - t0) / 1000;

  log('stopping servers');
  await stopAll();
  try { // keep the last MiB of crmd's request log
    const f = path.join(RUN, 'crmd.log');
    const size = fs.statSync(f).size;
    if (size > 1 << 20) {
      const fd = fs.openSync(f, 'r'); const buf = Buffer.alloc(1 << 20); fs.readSync(fd, buf, 0, buf.length, size - buf.length); fs.closeSync(fd);
      fs.writeFileSync(f, buf);
    }
  } catch { /* no log */ }
  fs.writeFileSync(path.join(WORK, 'results.json'), JSON.stringify(results, null, 2) + '\n');
  log(`raw results: ${path.relative(ROOT, path.join(WORK, 'results.json'))}`);
  const section = renderSection(results);
  if (FULL_RUN) {
    writeSection(section);
    log(`wrote "${SECTION.slice(3)}" in docs/PERFORMANCE.md`);
  } else {
    fs.writeFileSync(path.join(WORK, 'section.md'), section);
    log('not a full run (BENCH_* overrides): docs/PERFORMANCE.md untouched, section in bench/.work/section.md');
  }
  console.log(`\n${section}`);
  const failed = results.checks.filter((c) => !c.ok);
  if (failed.length) { log(`${failed.length} check(s) failed`); process.exitCode = 1; }
}

// ---------------------------------------------------------------------------------------------
// Report
function goals(r) {
  const out = [];
  const w = Object.fromEntries(r.workloads.map((x) => [x.key, x]));
  const ratioGoal = (name, ratio, min) => out.push({ goal: `${name}: crmd/Parse ≥ ${min}×`, measured: `${ratio.toFixed(1)}×`, met: ratio >= min });
  const cpuGoal = (goal, ratio, max) => out.push({ goal, measured: `${ratio.toFixed(2)}×`, met: ratio <= max });
  ratioGoal('bulk load', r.load.crmd.rowsPerSecond / r.load.parse.rowsPerSecond, 20);
  for (const k of ['get', 'create', 'update', 'count']) if (w[k]) ratioGoal(w[k].name.split(' (')[0], w[k].ratio, 20);
  for (const k of ['query', 'include']) if (w[k]) ratioGoal(w[k].name.split(' (')[0], w[k].ratio, 10);
  if (r.productBase) {
    ratioGoal('create on the product base\'s Accounts (issue 33)', r.productBase.createRatio, 10);
    ratioGoal('update on the product base\'s Accounts (issue 33)', r.productBase.updateRatio, 10);
  }
  if (r.history) {
    cpuGoal('create on a timeline table: server CPU ≤ 1.3× a create without (issue 16)', r.history.ratio, 1.3);
    if (r.history.triggerRatio !== undefined)
      cpuGoal('create whose trigger action creates one record: server CPU ≤ 2.5× a create without (issues 19, 33)', r.history.triggerRatio, 2.5);
  }
  if (r.productBase)
    cpuGoal('create on the product base\'s Accounts (history on): server CPU ≤ 1.3× the same body on a plain class (issue 33)', r.productBase.ratio, 1.3);
  if (r.mcp) {
    cpuGoal('MCP Get-Data (100 rows): server CPU ≤ 1.3× the record API\'s query (issues 21, 33)', r.mcp.getDataRatio, 1.3);
    cpuGoal('MCP Create-Data: server CPU ≤ 1.3× the record API\'s create (issues 21, 33)', r.mcp.createDataRatio, 1.3);
  }
  if (r.forms && w.create) {
    const create = w.create.crmd.cpu?.msPerRequest;
    for (const k of ['getlead', 'web2table'])
      out.push({ goal: `${k}: server CPU < 2× a create (issue 18)`,
        measured: `${(r.forms.ms[k] / create).toFixed(2)}× the bench's create, ${(r.forms.ms[k] / r.forms.ms.create).toFixed(2)}× a create of the form's body`,
        met: r.forms.ms[k] < 2 * create });
  }
  // Issue 22: crmd on PostgreSQL against Parse Server on the same PostgreSQL server.
  if (r.load.crmdpg) {
    ratioGoal('crmd on PostgreSQL, bulk load', r.load.crmdpg.rowsPerSecond / r.load.parse.rowsPerSecond, 10);
    for (const x of r.workloads) ratioGoal(`crmd on PostgreSQL, ${x.name.split(' (')[0]}`, x.ratioPg, 10);
  }
  if (r.tenants) { // bench/tenants.mjs (issue 33's goals)
    const t = r.tenants;
    const p99 = (goal, x) => out.push({ goal, measured: `p99 ${ms(x.p99)} ms (p50 ${ms(x.p50)} ms, ${n0(x.n)} requests)`, met: x.p99 <= TENANT_GOAL_MS });
    p99(`first request to a cold product-base application, ${n0(t.apps)} applications, the store cache full: p99 ≤ ${TENANT_GOAL_MS} ms (issue 33)`, t.product_base.cold_first_request_ms);
    p99(`a request to a closed empty store (rotation over ${n0(t.apps)} applications): p99 ≤ ${TENANT_GOAL_MS} ms (issue 33)`, t.scale.rotation.requests);
    out.push({ goal: `SIGTERM with the store cache full: exit < ${SIGTERM_GOAL_MS / 1000} s (issue 33)`,
      measured: `${n0(t.scale.sigterm_ms)} ms with ${n0(t.scale.sigterm_open_stores)} stores open`, met: t.scale.sigterm_ms < SIGTERM_GOAL_MS });
  }
  const m = r.memory;
  out.push({ goal: 'peak RSS under load: crmd/Parse ≤ 1/10', measured: `1/${(m.parsePeakKiB / m.crmdPeakKiB).toFixed(1)}`, met: m.crmdPeakKiB * 10 <= m.parsePeakKiB });
  if (w.get && r.nginx[CONNS]) {
    const ng = w.get.crmd.reqPerSec / r.nginx[CONNS].reqPerSec;
    out.push({ goal: 'crmd get-by-id ≥ 50% of nginx static', measured: `${(ng * 100).toFixed(0)}% (${CONNS} connections)`, met: ng >= 0.5 });
  }
  const bad = [];
  for (const x of r.workloads) for (const s of ['crmd', 'crmdpg', 'parse']) if (x[s] && (x[s].non2xx || x[s].socketErrors)) bad.push(`${x.key}/${s}: ${x[s].non2xx} non-2xx, ${x[s].socketErrors} socket errors`);
  for (const [part, runs] of [['history', r.history?.runs], ['forms', r.forms?.runs], ['product base', r.productBase?.runs], ['mcp', r.mcp?.runs]])
    for (const [k, xs] of Object.entries(runs ?? {})) for (const x of xs) if (x.non2xx || x.socketErrors) bad.push(`${part} ${k}: ${x.non2xx} non-2xx, ${x.socketErrors} socket errors`);
  for (const s of ['crmd', 'crmdpg', 'parse']) if (r.load[s] && (r.load[s].non2xx || r.load[s].failedItems)) bad.push(`load/${s}: ${r.load[s].non2xx} non-2xx, ${r.load[s].failedItems} failed items`);
  for (const [c, x] of Object.entries(r.nginx)) if (x.non2xx || x.socketErrors) bad.push(`nginx/${c}: ${x.non2xx} non-2xx, ${x.socketErrors} socket errors`);
  out.push({ goal: '0 non-2xx responses everywhere', measured: bad.length ? bad.join('; ') : '0', met: bad.length === 0 });
  return out;
}

const n0 = (x) => Math.round(x).toLocaleString('en-US');
const ms = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const mib = (kib) => `${(kib / 1024).toFixed(1)} MiB`;
const ratio = (x) => (x >= 10 ? x.toFixed(0) : x >= 1 ? x.toFixed(1) : x.toFixed(2));

function renderSection(r) {
  const m = r.machine;
  const v = r.versions;
  const L = [];
  L.push(SECTION, '');
  L.push('`make bench` (`bench/run`, `bench/side-by-side.mjs`): installs wrk, PostgreSQL 15 and nginx (Debian) and',
    `Parse Server ${v.parseServer} (npm, into \`bench/.work/\`, \`router\` pinned to ${v.router}), then on loopback starts PostgreSQL`,
    '(own cluster, initdb defaults), Parse Server on it (express, mounted on `/parse`, default settings), crmd',
    '(`--durability full --prefix parse`, default threads) and nginx (`worker_processes auto`, a static JSON',
    `file of ${r.nginxBodyBytes ?? '(not run)'} bytes: crmd's answer to a get-by-id). Both servers get the same deterministic data through`,
    `\`/batch\` (${r.settings.batch} per batch, ${r.settings.loadInFlight} in flight, node client on \`http.request\` with keep-alive): 10 \`LeadStatuses\`, ${n0(r.settings.rows)} \`Accounts\` of 21 fields`,
    '(11 String, 5 Number, 2 Boolean, 2 Date, a Pointer to `LeadStatuses`, an Array), then the index',
    '`{"City":1,"Score":1}` through `PUT /parse/schemas/Accounts` on both, then `ANALYZE` on PostgreSQL (what',
    `autovacuum does a minute later). Each workload: wrk, ${r.settings.wrkThreads} thread, ${r.settings.connections} connections, ${r.settings.durationSeconds} s after a ${r.settings.warmupSeconds} s warm-up, the`,
    'same request sequence for both servers, alternating which server goes first; master key on every request.',
    `Read workloads run before the writes, so queries see the loaded ${n0(r.settings.rows)} rows on both. Latency is wrk's`,
    '(p50/p99); "non-2xx" is wrk\'s count of HTTP errors plus socket errors. wrk calls a Lua function per request',
    '(`bench/wrk/replay.lua` replays a pre-formatted request file), for nginx too; "plain wrk" is nginx without it.',
    'Raw figures: `bench/.work/results.json`.',
    '');
  L.push(`- **Run**: ${r.date.slice(0, 16).replace('T', ' ')} UTC, ${r.elapsedSeconds.toFixed(0)} s in all. Load average at start ${m.loadavgStart}, at end ${m.loadavgEnd}.`);
  L.push(`- **Machine**: ${m.nproc} cores (${m.cpu}), ${m.memGiB} GiB, ${m.distro}, Linux ${m.kernel}; client, servers and database share the cores.`);
  L.push(`- **Versions**: crmd ${v.crmd}; Parse Server ${v.parseServer} (express ${v.express}, router ${v.router}) on node ${v.node}; ${v.postgres}; ${v.nginx}; ${v.wrk}.`);
  L.push('');
  L.push('| workload | crmd req/s | p50 ms | p99 ms | non-2xx | Parse req/s | p50 ms | p99 ms | non-2xx | crmd/Parse |');
  L.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const ld = r.load;
  L.push(`| bulk load, rows/s (latency per 50-row batch) | ${n0(ld.crmd.rowsPerSecond)} | ${ms(ld.crmd.batchLatencyMs.p50)} | ${ms(ld.crmd.batchLatencyMs.p99)} | ${ld.crmd.non2xx + ld.crmd.failedItems} | ${n0(ld.parse.rowsPerSecond)} | ${ms(ld.parse.batchLatencyMs.p50)} | ${ms(ld.parse.batchLatencyMs.p99)} | ${ld.parse.non2xx + ld.parse.failedItems} | ${ratio(ld.crmd.rowsPerSecond / ld.parse.rowsPerSecond)}× |`);
  for (const w of r.workloads) {
    const c = w.crmd; const p = w.parse;
    L.push(`| ${w.name} | ${n0(c.reqPerSec)} | ${ms(c.p50ms)} | ${ms(c.p99ms)} | ${c.non2xx + c.socketErrors} | ${n0(p.reqPerSec)} | ${ms(p.p50ms)} | ${ms(p.p99ms)} | ${p.non2xx + p.socketErrors} | ${ratio(w.ratio)}× |`);
  }
  L.push('');
  const wg = Object.fromEntries(r.workloads.map((x) => [x.key, x]));
  L.push('| loopback ceiling | req/s | p50 ms | p99 ms | non-2xx | crmd get-by-id / nginx |');
  L.push('|---|---:|---:|---:|---:|---:|');
  for (const [c, key] of [[CONNS, 'get'], [CONNS_HIGH, 'get64']]) {
    const x = r.nginx[c];
    if (!x) continue;
    L.push(`| nginx static, ${r.nginxBodyBytes} bytes, ${c} connections | ${n0(x.reqPerSec)} | ${ms(x.p50ms)} | ${ms(x.p99ms)} | ${x.non2xx + x.socketErrors} | ${(100 * wg[key].crmd.reqPerSec / x.reqPerSec).toFixed(0)}% |`);
  }
  if (r.nginxPlain && wg.get) {
    const x = r.nginxPlain;
    L.push(`| nginx static, ${CONNS} connections, plain wrk | ${n0(x.reqPerSec)} | ${ms(x.p50ms)} | ${ms(x.p99ms)} | ${x.non2xx + x.socketErrors} | ${(100 * wg.get.crmd.reqPerSec / x.reqPerSec).toFixed(0)}% |`);
  }
  L.push('');
  const cpuMs = (x) => (x >= 1 ? x.toFixed(2) : x >= 0.1 ? x.toFixed(3) : x.toFixed(4));
  const cores = (c) => `${c.serverCores.toFixed(2)} / ${c.wrkCores.toFixed(2)} / ${c.otherCores.toFixed(2)}`;
  L.push('Server CPU time per request (crmd; Parse\'s node process plus all of PostgreSQL), and the cores in use during',
    'each measurement: server / wrk / everything else on the machine (a non-zero last figure means other work',
    `competed with the benchmark; ${r.machine.busyCoresAtStart.toFixed(2)} cores were busy elsewhere just before the start).`, '');
  L.push('| workload | crmd CPU ms/req | Parse CPU ms/req | Parse/crmd | cores, crmd run | cores, Parse run |');
  L.push('|---|---:|---:|---:|---|---|');
  for (const w of r.workloads) {
    const c = w.crmd.cpu; const p = w.parse.cpu;
    L.push(`| ${w.name.split(' (')[0]}${w.connections !== CONNS ? '' : ''} | ${cpuMs(c.msPerRequest)} | ${cpuMs(p.msPerRequest)} | ${ratio(p.msPerRequest / c.msPerRequest)}× | ${cores(c)} | ${cores(p)} |`);
  }
  const lc = r.load.crmd.cpu; const lp = r.load.parse.cpu;
  if (lc && lp) L.push(`| bulk load, per row (cores: server / node client / other) | ${cpuMs((lc.serverCpuSeconds * 1000) / r.load.crmd.loaded)} | ${cpuMs((lp.serverCpuSeconds * 1000) / r.load.parse.loaded)} | ${ratio((lp.serverCpuSeconds / r.load.parse.loaded) / (lc.serverCpuSeconds / r.load.crmd.loaded))}× | ${lc.serverCores.toFixed(2)} / ${lc.benchCores.toFixed(2)} / ${lc.otherCores.toFixed(2)} | ${lp.serverCores.toFixed(2)} / ${lp.benchCores.toFixed(2)} / ${lp.otherCores.toFixed(2)} |`);
  const nx = r.nginx[CONNS]?.cpu;
  if (nx) L.push(`| nginx static, ${CONNS} connections | ${cpuMs(nx.msPerRequest)} | | | ${cores(nx)} | |`);
  L.push('');
  if (r.history) {
    const h = r.history;
    const rps = (xs) => xs.map((x) => n0(x.reqPerSec)).join(' / ');
    L.push('Change history (issue 16), crmd alone: creates of the same 21-field rows on two new tables, one with',
      '`timeline` (each create also writes its `_Timeline` row, with `data` and an index pointer) and one without,',
      'and one with a trigger whose action creates a follow-up row (the CPU counted until every action ran);',
      'measured in turn, twice each; CPU is the mean of the two runs.', '');
    L.push('| create | req/s (two runs) | server CPU ms/req | vs. without timeline |', '|---|---:|---:|---:|');
    L.push(`| on a table without timeline | ${rps(h.runs.plain)} | ${cpuMs(h.plainMs)} | 1× |`);
    L.push(`| on a timeline table (two rows) | ${rps(h.runs.timeline)} | ${cpuMs(h.timelineMs)} | ${h.ratio.toFixed(2)}× |`);
    if (h.triggerMs !== undefined)
      L.push(`| on a table with one trigger, its action included (issue 19) | ${rps(h.runs.trigger)} | ${cpuMs(h.triggerMs)} | ${h.triggerRatio.toFixed(2)}× |`);
    L.push('');
  }
  if (r.forms) {
    const f = r.forms;
    const rps = (xs) => xs.map((x) => n0(x.reqPerSec)).join(' / ');
    L.push('Form functions (issue 18), crmd alone: a create of the form\'s small body (Name, PhoneNumber, Email) on Accounts,',
      '`getlead` with a new number per call, and `web2table` into Tasks with a known contact every other call (a new',
      'contact otherwise); measured in turn, twice each; CPU is the mean of the two runs.', '');
    L.push('| call | req/s (two runs) | server CPU ms/req | vs. the create of the form body |', '|---|---:|---:|---:|');
    for (const [k, name] of [['create', 'create (form body)'], ['getlead', 'getlead'], ['web2table', 'web2table']])
      L.push(`| ${name} | ${rps(f.runs[k])} | ${cpuMs(f.ms[k])} | ${(f.ms[k] / f.ms.create).toFixed(2)}× |`);
    L.push('');
  }
  if (r.productBase) {
    const b = r.productBase;
    const rps = (xs) => xs.map((x) => n0(x.reqPerSec)).join(' / ');
    const lat = (xs) => `${ms(xs[0].p50ms)} / ${ms(xs[0].p99ms)}`;
    L.push('The product base\'s own Accounts (issue 33): a fresh application made without `--no-product-base` (37 fields, 4',
      'indexes of its own, history on: every create and update also writes its `_Timeline` row), loaded with',
      `${n0(b.load.loaded)} rows of 24 fields (${n0(b.load.rowsPerSecond)} rows/s in batches of ${BATCH}), beside Parse Server's plain Accounts`,
      `(its ${n0(r.settings.rows)} rows) given the same bodies: Parse has no such schema, its Accounts gains the new fields at its first`,
      'create. The update sets the StatusId Pointer and increments Balance. The plain class is a new class of the same',
      'application given the same creates (its fields made by the first, no history, no index of its own); crmd\'s',
      'creates ran twice, in turn with the plain class; CPU is the mean of the two runs (crmd: crmd alone; Parse: its',
      'node process and all of PostgreSQL).', '');
    L.push('| request | crmd req/s | crmd p50 / p99 ms | crmd CPU ms/req | Parse req/s | Parse p50 / p99 ms | Parse CPU ms/req | crmd/Parse |',
      '|---|---:|---:|---:|---:|---:|---:|---:|');
    L.push(`| create on the product base's Accounts | ${rps(b.runs.create)} | ${lat(b.runs.create)} | ${cpuMs(b.createMs)} | ${rps(b.runs.parseCreate)} | ${lat(b.runs.parseCreate)} | ${cpuMs(b.runs.parseCreate[0].cpu.msPerRequest)} | ${ratio(b.createRatio)}× |`);
    L.push(`| update on the product base's Accounts | ${rps(b.runs.update)} | ${lat(b.runs.update)} | ${cpuMs(b.runs.update[0].cpu.msPerRequest)} | ${rps(b.runs.parseUpdate)} | ${lat(b.runs.parseUpdate)} | ${cpuMs(b.runs.parseUpdate[0].cpu.msPerRequest)} | ${ratio(b.updateRatio)}× |`);
    L.push(`| create of the same body on a plain class (crmd) | ${rps(b.runs.plain)} | ${lat(b.runs.plain)} | ${cpuMs(b.plainMs)} | | | | product base / plain CPU: ${b.ratio.toFixed(2)}× |`);
    L.push('');
  }
  if (r.mcp) {
    const c = r.mcp;
    const rps = (xs) => xs.map((x) => n0(x.reqPerSec)).join(' / ');
    L.push('MCP (issues 21 and 33), crmd alone: the same work through one MCP `tools/call` each (`POST /mcp/<appId>`, master key)',
      'and through the record API: Get-Data with the query workload\'s where, order and limit (100 rows), in the same order,',
      'and Create-Data of the create workload\'s rows; measured in turn, twice each; CPU is the mean of the two runs.', '');
    L.push('| call | req/s (two runs) | p50 / p99 ms (first run) | server CPU ms/req | vs. the record API |', '|---|---:|---:|---:|---:|');
    for (const [k, name, base] of [['query', 'record API, query (100 rows)', 'query'], ['mcpQuery', 'MCP Get-Data (100 rows)', 'query'],
      ['create', 'record API, create', 'create'], ['mcpCreate', 'MCP Create-Data', 'create']])
      L.push(`| ${name} | ${rps(c.runs[k])} | ${ms(c.runs[k][0].p50ms)} / ${ms(c.runs[k][0].p99ms)} | ${cpuMs(c.ms[k])} | ${(c.ms[k] / c.ms[base]).toFixed(2)}× |`);
    L.push('');
  }
  if (r.load.crmdpg) {
    const pgc = (x) => (x?.cpu ? cpuMs(x.cpu.msPerRequest) : '');
    L.push('crmd on PostgreSQL (issue 22, `--store postgresql://...`) beside Parse Server on the same PostgreSQL server: the',
      'same cluster, a database each, the same data and request sequences. CPU is the server\'s and all of PostgreSQL\'s',
      'for both.', '');
    L.push('| workload | crmd on PostgreSQL req/s | p50 ms | p99 ms | non-2xx | Parse req/s | ratio | crmd+PG CPU ms/req | Parse+PG CPU ms/req | Parse/crmd CPU |');
    L.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    const lg = r.load.crmdpg;
    L.push(`| bulk load, rows/s (latency per 50-row batch) | ${n0(lg.rowsPerSecond)} | ${ms(lg.batchLatencyMs.p50)} | ${ms(lg.batchLatencyMs.p99)} | ${lg.non2xx + lg.failedItems} | ${n0(ld.parse.rowsPerSecond)} | ${ratio(lg.rowsPerSecond / ld.parse.rowsPerSecond)}× | ${cpuMs((lg.cpu.serverCpuSeconds * 1000) / lg.loaded)} | ${cpuMs((ld.parse.cpu.serverCpuSeconds * 1000) / ld.parse.loaded)} | ${ratio((ld.parse.cpu.serverCpuSeconds / ld.parse.loaded) / (lg.cpu.serverCpuSeconds / lg.loaded))}× |`);
    for (const w of r.workloads) {
      const c = w.crmdpg; const p = w.parse;
      L.push(`| ${w.name} | ${n0(c.reqPerSec)} | ${ms(c.p50ms)} | ${ms(c.p99ms)} | ${c.non2xx + c.socketErrors} | ${n0(p.reqPerSec)} | ${ratio(w.ratioPg)}× | ${pgc(c)} | ${pgc(p)} | ${ratio(p.cpu.msPerRequest / c.cpu.msPerRequest)}× |`);
    }
    L.push('', `Peak memory of crmd on PostgreSQL: ${mib(r.memory.crmdpgPeakKiB)} (VmHWM), PostgreSQL besides.`, '');
  }
  if (r.limits) {
    const lim = r.limits;
    const frac = (x) => (x === undefined || x === null || !Number.isFinite(x) ? '' : x >= 10 ? `${x.toFixed(0)}×` : x >= 1 ? `${x.toFixed(1)}×` : x.toFixed(2));
    L.push('The limit beside the peer (issue 33): what each database alone does with the statements of the workloads, so that',
      '"close to the limit" is a number (`bench/lib/limits.mjs`, `bench/sqlite-limit.c`). crmd\'s figures are those of the',
      'workloads above; a fraction is crmd\'s req/s over the database\'s statements (or transactions) per second.', '');
    if (lim.pg) {
      const p = lim.pg;
      L.push(`PostgreSQL: \`pgbench\` (${r.versions.postgres.replace(/^postgres \(PostgreSQL\) /, 'PostgreSQL ')}), ${p.clients} clients, one thread, prepared statements, after a ${r.settings.warmupSeconds} s warm-up,`,
        `${r.settings.durationSeconds} s each, on the same cluster as the workloads (\`synchronous_commit = ${p.synchronousCommit}\`), on a copy of crmd's \`Accounts\` and`,
        '`LeadStatuses` in a schema of their own (`CREATE TABLE ... (LIKE ... INCLUDING ALL)`: the same columns, types and',
        `${p.indexes.length} indexes, the (City, Score) one included; the same ${n0(p.rows)} rows, numbered as their objectIds). The statements are`,
        'crmd\'s own as PostgreSQL logs them; the where draws City and Score as the bench\'s do; an insert binds the last',
        'loaded row\'s values with a new objectId, the time, and City, Score and LeadStatusId drawn. Each statement commits',
        'on its own, except bulk\'s 50 inserts a transaction. The limits run after crmd\'s reads and before its writes, on',
        'the rows the reads saw, reads first. crmd caches a count until a write of its class (a generation every server',
        'reads), so its count may pass the limit. CPU is all of PostgreSQL\'s per transaction (its exited backends',
        'included); cores: PostgreSQL / pgbench / everything else.', '');
      L.push('| workload: statement | pgbench tps | latency avg ms | PG CPU ms/txn | cores | crmd on PG req/s | crmd on PG / limit | Parse req/s | Parse / limit |',
        '|---|---:|---:|---:|---|---:|---:|---:|---:|');
      for (const lw of PG_LIMIT_WORKLOADS) {
        const x = p.workloads[lw.key];
        if (!x) continue;
        const bulk = lw.key === 'bulk';
        const limit = x.tps * x.rowsPerTransaction;
        const crmdpg = bulk ? r.load.crmdpg?.rowsPerSecond : wg[lw.key]?.crmdpg?.reqPerSec;
        const parseRps = bulk ? r.load.parse?.rowsPerSecond : wg[lw.key]?.parse?.reqPerSec;
        L.push(`| ${lw.name}${bulk ? ' (rows/s)' : ''} | ${n0(limit)} | ${ms(x.latencyMs)} | ${cpuMs(x.cpu.msPerTransaction)} | ${x.cpu.serverCores.toFixed(2)} / ${x.cpu.wrkCores.toFixed(2)} / ${x.cpu.otherCores.toFixed(2)} | ${crmdpg ? n0(crmdpg) : ''} | ${crmdpg ? frac(crmdpg / limit) : ''} | ${parseRps ? n0(parseRps) : ''} | ${parseRps ? frac(parseRps / limit) : ''} |`);
      }
      L.push('');
    } else if (lim.pgError) L.push(`PostgreSQL limit: not measured (${lim.pgError.split('\n')[0].slice(0, 200)}).`, '');
    if (lim.sqlite) {
      const q = lim.sqlite;
      L.push(`SQLite: \`bench/sqlite-limit.c\` (SQLite ${q.sqlite}, Debian's libsqlite3) on a copy of crmd's store file: \`Accounts\` and \`LeadStatuses\``,
        'created by the statements crmd created them with (read from its `sqlite_master`: the same columns and indexes, the',
        '(City, Score) one included) and their rows, with crmd\'s durability: `journal_mode=WAL`, `synchronous=FULL`, a 2,000 KiB',
        'page cache (readers 1,024 KiB), the log copied back by a thread of its own past 4,000 pages (as crmd\'s checkpointer).',
        `Reads first, ${q.readers} threads, a connection each; then writes, one writer, as crmd's: an insert binds the values of the last`,
        `loaded rows with a new objectId and the time; each commits alone (an fsync of the log per row), or ${q.group} to a`,
        `transaction, each in a savepoint, as crmd's group commit runs them. ${q.seconds} s a mode after 1 s. Not as crmd: the default`,
        'VFS (crmd\'s hands a commit\'s log to the OS in one write). crmd caches a count until the next write, and its',
        'query reads the (City, Score) index run by run instead of sorting every match (`src/storage/sqlite/grouped_top.hpp`),',
        'so both may pass the limit of the plain statement.', '');
      L.push('| SQLite alone | statements/s | CPU ms each | crmd req/s | crmd / limit |', '|---|---:|---:|---:|---:|');
      const rows = [['create-each', 'create, a commit each', 'create'], ['create-group', `create, ${q.group} a commit, a savepoint each`, 'create'],
        ['update-each', 'update (updatedAt, Visits + 1, Status), a commit each', 'update'], ['update-group', `update, ${q.group} a commit, a savepoint each`, 'update'],
        ['get', `get-by-id, ${q.readers} threads`, 'get'], ['count', `count with the where, ${q.readers} threads`, 'count'],
        ['query', `query, 100 rows, ${q.readers} threads`, 'query']];
      for (const [mode, name, key] of rows) {
        const x = q.modes[mode];
        if (!x) continue;
        const c = wg[key]?.crmd?.reqPerSec;
        L.push(`| ${name} | ${n0(x.perSecond)} | ${cpuMs(x.cpuMsPerOp)} | ${c ? n0(c) : ''} | ${c ? frac(c / x.perSecond) : ''} |`);
      }
      L.push('');
    } else if (lim.sqliteError) L.push(`SQLite limit: not measured (${lim.sqliteError.split('\n')[0].slice(0, 200)}).`, '');
  }
  if (r.tenants) {
    const t = r.tenants;
    const row = (name, x) => `| ${name} | ${ms(x.p50)} | ${ms(x.p99)} | ${ms(x.max)} | ${n0(x.n)} |`;
    const full = t.scale.touched.at(-1);
    L.push(`Tenants (issues 17 and 33), crmd alone: \`bench/tenants.mjs\`, run by \`bench/run\` before this script on the same binary`,
      `(${t.date.slice(0, 16).replace('T', ' ')} UTC; serve flags \`${t.flags.join(' ') || 'none'}\`; ${t.clients} clients). ${n0(t.apps)} empty applications are touched once (each`,
      `first request a create), then asked in turn for ${t.rotate_seconds} s, each request finding its store closed (the cache holds fewer);`,
      `then ${n0(t.product_base.apps)} product-base applications (111 classes) are asked once each, the cache full. With ${n0(full.apps)} touched:`,
      `RSS ${full.rss_mib} MiB, ${n0(full.fds)} descriptors, ${full.threads} threads, ${n0(full.open_stores)} stores open.`, '');
    L.push('| request | p50 ms | p99 ms | max ms | requests |', '|---|---:|---:|---:|---:|');
    L.push(row('first request to a cold product-base application, the store cache full', t.product_base.cold_first_request_ms));
    L.push(row(`a request to a closed empty store (rotation, ${t.scale.rotation.laps} laps)`, t.scale.rotation.requests));
    L.push(row('first request to a cold empty application (a create that makes its class)', t.scale.cold_first_request_ms));
    L.push('', `SIGTERM to exit: ${n0(t.scale.sigterm_ms)} ms with ${n0(t.scale.sigterm_open_stores)} stores open. Four hostile \`$regex\` reads meanwhile`,
      `another application's get-by-id: p99 ${ms(t.hostile.other_app_get_ms.p99)} ms (${n0(t.hostile.other_app_get_ms.n)} probes).`, '');
  }
  const mem = r.memory;
  const later = r.productBase || r.mcp
    ? ` With the product base's application and the MCP calls after them, over the whole run: crmd ${mib(mem.crmdPeakAllKiB)}, Parse ${mib(mem.parsePeakAllKiB)}.` : '';
  L.push(`Peak memory over the load, the workloads and the budgets of issues 16 and 18: crmd ${mib(mem.crmdPeakKiB)} (VmHWM); Parse Server's node`,
    `process ${mib(mem.parsePeakKiB)} (VmHWM); PostgreSQL, which Parse needs besides, ${mib(mem.postgresPeakPssKiB)} (sum of PSS over`,
    `the postmaster and its ${mem.postgresProcesses - 1} children, sampled once a second). crmd/Parse: 1/${(mem.parsePeakKiB / mem.crmdPeakKiB).toFixed(1)}; crmd/(Parse + PostgreSQL):`,
    `1/${((mem.parsePeakKiB + mem.postgresPeakPssKiB) / mem.crmdPeakKiB).toFixed(1)}. Bulk load ${ld.crmd.seconds.toFixed(1)} s vs ${ld.parse.seconds.toFixed(1)} s; the (City, Score) index was built in`,
    `${n0(r.index.crmd.ms)} ms (crmd) and ${n0(r.index.parse.ms)} ms (Parse).${!wg.get ? '' : ` Probe sizes, one response: get-by-id crmd ${wg.get.probe.crmd.bytes} B / Parse ${wg.get.probe.parse.bytes} B,`}`,
    ...(!wg.get ? [] : [`query crmd ${wg.query.probe.crmd.bytes} B / Parse ${wg.query.probe.parse.bytes} B, include crmd ${wg.include.probe.crmd.bytes} B / Parse ${wg.include.probe.parse.bytes} B.`]),
    ...(later ? [later.trim()] : []));
  L.push('');
  L.push('| goal | measured | met |', '|---|---|---|');
  for (const g of r.goals) L.push(`| ${g.goal} | ${g.measured} | ${g.met ? 'yes' : '**no**'} |`);
  const failed = r.checks.filter((c) => !c.ok);
  L.push('', failed.length
    ? `Checks that failed in this run: ${failed.map((c) => `${c.what} (${c.detail})`).join('; ')}.`
    : `All ${r.checks.length} correctness checks passed (complete loads, index present, equal counts and row numbers from both servers, shape of every workload's answer).`);
  L.push('');
  return L.join('\n');
}

function writeSection(section) {
  let doc = fs.existsSync(DOC) ? fs.readFileSync(DOC, 'utf8') : '# Performance\n';
  const at = doc.indexOf(`\n${SECTION}\n`);
  if (at >= 0) {
    const rest = doc.slice(at + 1 + SECTION.length);
    const next = rest.search(/\n## /);
    doc = doc.slice(0, at) + (next >= 0 ? rest.slice(next) : '');
  }
  // Today's figures first, the history of the changes below them (issue 33).
  const first = doc.search(/\n## /);
  doc = first >= 0 ? `${doc.slice(0, first).replace(/\s*$/, '')}\n\n${section.replace(/\s*$/, '')}\n${doc.slice(first)}`
    : `${doc.replace(/\s*$/, '')}\n\n${section}`;
  fs.writeFileSync(DOC, doc.replace(/\n*$/, '\n'));
}

main().catch(async (e) => {
  console.error(`[bench] FAILED: ${e.stack ?? e}`);
  await stopAll();
  process.exit(1);
}).then(() => stopAll());
