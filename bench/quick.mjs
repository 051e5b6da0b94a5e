// crmd alone, for development: the workloads of side-by-side.mjs against one crmd binary, short runs,
// no Parse Server, PostgreSQL or nginx, nothing written to docs/. Loopback only, bounded in time.
//   node bench/quick.mjs [path/to/crmd] [extra serve flags...]
// Environment: BENCH_ROWS (100000), BENCH_WARMUP (1), BENCH_DURATION (5), BENCH_ONLY (comma list of
// workload keys: get,get64,query,count,include,update,create,create-plain,create-timeline,create-trigger,
// form-create,getlead,web2table,mcp-query,mcp-create,pb-create,pb-plain,pb-update), BENCH_KEEP (1: keep
// the data folder and its request files for profiling; its path is printed). The pb-* keys (issue 33)
// run in a second application made with the product base: create and update on its own Accounts
// (37 fields, history on) and the same create on a plain class of that application; its Accounts
// is loaded with BENCH_PB_ROWS (20000) rows first, only when a pb-* key runs. BENCH_PERF (a folder):
// `perf record` of the server over each measured run, into <folder>/<key>.data.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CITIES, LEAD_STATUS_NAMES, accountRow, leadStatusRow, productAccountRow, prng } from './lib/data.mjs';
import { poster } from './lib/post.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');
const REPLAY = path.join(ROOT, 'bench', 'wrk', 'replay.lua');
const CRMD = path.resolve(process.argv[2] ?? path.join(ROOT, 'build', 'crmd'));
const EXTRA = process.argv.slice(3);
const num = (name, fallback) => Number(process.env[name] || fallback);
const ROWS = num('BENCH_ROWS', 100_000);
const WARMUP = num('BENCH_WARMUP', 1);
const DURATION = num('BENCH_DURATION', 5);
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',')) : null;
const PREFIX = '/parse';
const DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'crmd-quick-'));

let server = null;
const stop = () => {
  if (server && server.exitCode === null) server.kill('SIGKILL');
  if (process.env.BENCH_KEEP === '1') console.log(`kept ${DIR}`);
  else fs.rmSync(DIR, { recursive: true, force: true });
};
process.on('exit', stop);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));

const freePort = () => new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
});
const userSys = (pid) => { const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return [Number(f[11]), Number(f[12])]; };
const ticks = (pid) => userSys(pid)[0] + userSys(pid)[1];
const hwm = (pid) => Number(fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmHWM:\s+(\d+)/)[1]);
const rss = (pid) => Number(fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1]);
const CLK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' })) || 100;

// The application is made in the store the server will use (`--store URL` among the extra flags).
const storeAt = EXTRA.indexOf('--store');
const STORE = storeAt >= 0 ? ['--store', EXTRA[storeAt + 1]] : [];
const app = JSON.parse(execFileSync(CRMD, ['app', 'create', '--data', DIR, ...STORE, '--id', 'bench', '--no-product-base'], { encoding: 'utf8' }));
const PB_KEYS = ['pb-create', 'pb-plain', 'pb-update'];
const PB = !ONLY || PB_KEYS.some((k) => ONLY.has(k));
const pbApp = PB ? JSON.parse(execFileSync(CRMD, ['app', 'create', '--data', DIR, ...STORE, '--id', 'pb'], { encoding: 'utf8' })) : null;
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const log = fs.openSync(path.join(DIR, 'crmd.log'), 'a');
server = spawn(CRMD, ['serve', '--data', DIR, '--listen', `127.0.0.1:${port}`, '--prefix', 'parse', '--durability', 'full', ...EXTRA],
  { stdio: ['ignore', log, log] });
for (let i = 0; ; i++) {
  try { if ((await fetch(`${base}/health`)).ok) break; } catch { /* not yet */ }
  if (i > 200 || server.exitCode !== null) throw new Error('crmd did not start');
  await sleep(50);
}

// One retry: a pooled keep-alive socket the server closed while the workloads ran (its idle
// timeout) fails the first request sent on it, the drain's count after create-trigger's warmup.
const call = async (method, p, body, as = app) => {
  try { return await call1(method, p, body, as); } catch { return call1(method, p, body, as); }
};
const call1 = async (method, p, body, as) => {
  const r = await fetch(base + p, { method, body: body === undefined ? undefined : JSON.stringify(body),
    headers: { 'X-Parse-Application-Id': as.appId, 'X-Parse-Master-Key': as.masterKey, 'Content-Type': 'application/json' } });
  return r.json();
};

const ls = await call('POST', `${PREFIX}/batch`, { requests: LEAD_STATUS_NAMES.map((_, i) => ({ method: 'POST', path: `${PREFIX}/classes/LeadStatuses`, body: leadStatusRow(i) })) });
const leadIds = ls.map((x) => x.success.objectId);
const ids = [];
let t = performance.now();
const batchOf = (b) => JSON.stringify({ requests: Array.from({ length: Math.min(50, ROWS - b * 50) }, (_, k) =>
  ({ method: 'POST', path: `${PREFIX}/classes/Accounts`, body: accountRow(b * 50 + k, leadIds) })) });
const post = poster(base, { 'X-Parse-Application-Id': app.appId, 'X-Parse-Master-Key': app.masterKey }, 16, 120_000);
const batches = Array.from({ length: Math.ceil(ROWS / 50) }, (_, b) => batchOf(b)); // formatted before the clock starts
t = performance.now();
ids.push(...(await post(`${PREFIX}/batch`, batches[0])).json.map((x) => x.success.objectId));
let next = 1;
const cpu0 = ticks(server.pid);
await Promise.all(Array.from({ length: 16 }, async () => {
  while (next < batches.length) { const r = await post(`${PREFIX}/batch`, batches[next++]); ids.push(...r.json.map((x) => x.success?.objectId).filter(Boolean)); }
}));
const loadS = (performance.now() - t) / 1000;
console.log(`load: ${ids.length} rows in ${loadS.toFixed(1)} s = ${Math.round(ids.length / loadS)} rows/s, cpu ${(((ticks(server.pid) - cpu0) / CLK) * 1000 / ids.length).toFixed(3)} ms/row`);
await call('PUT', `${PREFIX}/schemas/Accounts`, { indexes: { city_score: { City: 1, Score: 1 } } });

const write = (name, lines) => { const f = path.join(DIR, `${name}.txt`); fs.writeFileSync(f, lines.join('\n') + '\n'); return f; };
const cls = `${PREFIX}/classes/Accounts`;
let r = prng(101);
const randomId = () => ids[Math.floor(r() * ids.length)];
const files = { get: write('get', Array.from({ length: 100_000 }, () => `GET\t${cls}/${randomId()}`)) };
r = prng(202);
files.update = write('update', Array.from({ length: 20_000 }, (_, k) =>
  `PUT\t${cls}/${randomId()}\t${JSON.stringify({ Visits: { __op: 'Increment', amount: 1 }, Status: `touched ${k % 7}` })}`));
files.create = write('create', Array.from({ length: 2_000 }, (_, k) => `POST\t${cls}\t${JSON.stringify(accountRow(ROWS + k, leadIds))}`));
// Issue 16's budget: a create on a timeline table (two rows) against one on the same table without.
await call('POST', `${PREFIX}/schemas/HistoryPlain`, {});
await call('POST', `${PREFIX}/schemas/HistoryTimeline`, { timeline: { displayFields: { Name: true }, index: { AccountId: 'HistoryTimeline' } } });
for (const name of ['HistoryPlain', 'HistoryTimeline'])
  files[name] = write(name, Array.from({ length: 2_000 }, (_, k) => `POST\t${PREFIX}/classes/${name}\t${JSON.stringify(accountRow(ROWS + k, leadIds))}`));
// Issue 19's figure: the same create on a table with one trigger whose action creates a follow-up
// row; its CPU is counted until every action ran.
await call('POST', `${PREFIX}/schemas/HistoryTriggered`, { fields: { Name: { type: 'String' } } });
await call('POST', `${PREFIX}/classes/HistoryTrigger`, accountRow(0, leadIds));  // its fields
await call('PUT', `${PREFIX}/schemas/HistoryTrigger`, { triggers: [{ name: 'follow-up', event: 'create',
  actions: [{ actionType: 'create-record', actionData: { 'create-record': { table: 'HistoryTriggered', data: { Name: 'Call {{Name}}' } } } }] }] });
files.HistoryTrigger = write('HistoryTrigger', Array.from({ length: 2_000 }, (_, k) => `POST\t${PREFIX}/classes/HistoryTrigger\t${JSON.stringify(accountRow(ROWS + k, leadIds))}`));
const count = async (c) => (await call('GET', `${PREFIX}/classes/${c}?count=1&limit=0`)).count;
const drained = async () => {
  for (const end = Date.now() + 120_000; Date.now() < end; await sleep(100))
    if (await count('HistoryTriggered') >= await count('HistoryTrigger') - 1) return;
  throw new Error('trigger actions did not drain in 120 s');
};
// Issue 18's budget: the public forms against a plain create of the same small body. The form
// finds contacts by phone (the indexed phone key) and Email (indexed, as in the product base).
await call('PUT', `${PREFIX}/schemas/Accounts`, { indexes: { Email_1: { Email: 1 } } });
await call('POST', `${PREFIX}/schemas/Tasks`, {});
for (const flag of ['AcceptWebLeads', 'AcceptWebToTable'])
  await call('POST', `${PREFIX}/classes/Config`, { Name: flag, Value: { [flag]: true } });
r = prng(404);
const lead = (k) => ({ Name: `Lead ${k}`, PhoneNumber: `05${Math.floor(r() * 1e8).toString().padStart(8, '0')}`, Email: `lead${k}@example.test` });
// Enough distinct leads that most calls bring a new number, as a landing page's do.
files['form-create'] = write('form-create', Array.from({ length: 40_000 }, (_, k) => `POST\t${cls}\t${JSON.stringify(lead(k))}`));
files.getlead = write('getlead', Array.from({ length: 40_000 }, (_, k) => `POST\t/functions/${app.appId}/getlead\t${JSON.stringify(lead(k))}`));
const knownPhones = Array.from({ length: 1_000 }, (_, k) => accountRow(k, leadIds).PhoneNumber);
files.web2table = write('web2table', Array.from({ length: 2_000 }, (_, k) => `POST\t/functions/${app.appId}/web2table\t${JSON.stringify(
  { table: 'Tasks', phone: k % 2 ? knownPhones[k % knownPhones.length] : lead(k).PhoneNumber, Name: `Task ${k}` })}`));
r = prng(303);
const wheres = Array.from({ length: 2_000 }, () => encodeURIComponent(JSON.stringify({ City: CITIES[Math.floor(r() * CITIES.length)], Score: { $gte: Math.floor(r() * 100) } })));
files.query = write('query', wheres.map((w) => `GET\t${cls}?where=${w}&order=-createdAt&limit=100`));
files.count = write('count', wheres.map((w) => `GET\t${cls}?where=${w}&limit=0&count=1`));
files.include = write('include', wheres.map((w) => `GET\t${cls}?where=${w}&order=-createdAt&limit=100&include=LeadStatusId`));
// Issue 21's budget: the same reads and creates through MCP tools (`POST /mcp/<appId>`, one
// JSON-RPC call each) beside the record API's `query` and `create`.
const toolCall = (name, args) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
r = prng(303);
files['mcp-query'] = write('mcp-query', Array.from({ length: 2_000 }, () => `POST\t/mcp/${app.appId}\t${toolCall('Get-Data', {
  table: 'Accounts', where: { City: CITIES[Math.floor(r() * CITIES.length)], Score: { $gte: Math.floor(r() * 100) } }, order: '-createdAt', limit: 100 })}`));
files['mcp-create'] = write('mcp-create', Array.from({ length: 2_000 }, (_, k) =>
  `POST\t/mcp/${app.appId}\t${toolCall('Create-Data', { table: 'Accounts', data: accountRow(ROWS + k, leadIds) })}`));
// Issue 33: the product base's own Accounts (side-by-side.mjs productBaseBudget, smaller): creates
// and updates of its bodies, and the same creates on a plain class of the same application.
if (PB) {
  const PB_ROWS = num('BENCH_PB_ROWS', 20_000);
  const idsOf = async (c) => (await call('GET', `${PREFIX}/classes/${c}?limit=10&keys=objectId&order=objectId`, undefined, pbApp)).results.map((x) => x.objectId);
  const refs = { leadStatusIds: await idsOf('LeadStatuses'), accountStatusIds: await idsOf('AccountStatuses') };
  const pbPost = poster(base, { 'X-Parse-Application-Id': pbApp.appId, 'X-Parse-Master-Key': pbApp.masterKey }, 16, 120_000);
  const pbIds = [];
  const pbBatches = Array.from({ length: Math.ceil(PB_ROWS / 50) }, (_, b) => JSON.stringify({ requests: Array.from({ length: Math.min(50, PB_ROWS - b * 50) }, (_, k) =>
    ({ method: 'POST', path: `${PREFIX}/classes/Accounts`, body: productAccountRow(b * 50 + k, refs) })) }));
  let pbNext = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (pbNext < pbBatches.length) { const x = await pbPost(`${PREFIX}/batch`, pbBatches[pbNext++]); pbIds.push(...x.json.map((y) => y.success?.objectId).filter(Boolean)); }
  }));
  if (pbIds.length !== PB_ROWS) throw new Error(`product base: ${pbIds.length} of ${PB_ROWS} rows loaded`);
  await call('POST', `${PREFIX}/schemas/PlainAccounts`, {}, pbApp);
  const pbCreates = (c) => Array.from({ length: 2_000 }, (_, k) => `POST\t${PREFIX}/classes/${c}\t${JSON.stringify(productAccountRow(PB_ROWS + k, refs))}`);
  files['pb-create'] = write('pb-create', pbCreates('Accounts'));
  files['pb-plain'] = write('pb-plain', pbCreates('PlainAccounts'));
  const u = prng(505);
  files['pb-update'] = write('pb-update', Array.from({ length: 20_000 }, (_, k) => `PUT\t${PREFIX}/classes/Accounts/${pbIds[Math.floor(u() * pbIds.length)]}\t${JSON.stringify({
    Balance: { __op: 'Increment', amount: 1 }, StatusId: { __type: 'Pointer', className: 'AccountStatuses', objectId: refs.accountStatusIds[k % refs.accountStatusIds.length] } })}`));
}

const wrk = (file, conns, seconds, as = app) => {
  const out = execFileSync('wrk', ['-t1', `-c${conns}`, `-d${seconds}s`, '--timeout', '10s', '--latency', '-s', REPLAY, `${base}/`],
    { encoding: 'utf8', timeout: (seconds + 60) * 1000,
      env: { ...process.env, BENCH_REQUESTS: file, BENCH_STATIC: '0', BENCH_OFFSET: '0', BENCH_APP_ID: as.appId, BENCH_MASTER_KEY: as.masterKey } });
  return JSON.parse(out.match(/^BENCH_RESULT (.*)$/m)[1]);
};
const workloads = [['get', 'get', 16], ['get64', 'get', 64], ['query', 'query', 16], ['count', 'count', 16],
  ['include', 'include', 16], ['update', 'update', 16], ['create', 'create', 16],
  ['create-plain', 'HistoryPlain', 16], ['create-timeline', 'HistoryTimeline', 16], ['create-trigger', 'HistoryTrigger', 16],
  ['form-create', 'form-create', 16], ['getlead', 'getlead', 16], ['web2table', 'web2table', 16],
  ['mcp-query', 'mcp-query', 16], ['mcp-create', 'mcp-create', 16],
  ['pb-create', 'pb-create', 16, pbApp], ['pb-plain', 'pb-plain', 16, pbApp], ['pb-update', 'pb-update', 16, pbApp]];
for (const [key, file, conns, as] of workloads) {
  if (ONLY && !ONLY.has(key)) continue;
  wrk(files[file], conns, WARMUP, as);
  if (key === 'create-trigger') await drained();
  const perf = process.env.BENCH_PERF
    ? spawn('perf', ['record', '-q', '-F', '1999', '-p', String(server.pid), '-o', path.join(process.env.BENCH_PERF, `${key}.data`)], { stdio: 'ignore' })
    : null;
  const [u0, s0] = userSys(server.pid);
  const w = wrk(files[file], conns, DURATION, as);
  if (perf) { perf.kill('SIGINT'); await new Promise((resolve) => perf.on('exit', resolve)); }
  if (key === 'create-trigger') await drained();
  const [u1, s1] = userSys(server.pid);
  const perReq = (t) => ((t / CLK) * 1000) / w.requests;
  const cpuMs = perReq(u1 - u0 + s1 - s0);
  const sysMs = perReq(s1 - s0);
  const e = w.errors;
  console.log(`${key.padEnd(8)} ${String(Math.round(w.requests / (w.duration_us / 1e6))).padStart(7)} req/s  p50 ${(w.latency_us.p50 / 1000).toFixed(2)} ms  p99 ${(w.latency_us.p99 / 1000).toFixed(2)} ms  cpu ${cpuMs.toFixed(4)} ms/req (sys ${sysMs.toFixed(4)})  errors ${e.status + e.connect + e.read + e.write + e.timeout}  rss ${(rss(server.pid) / 1024).toFixed(1)} MiB`);
}
console.log(`peak RSS (VmHWM) ${(hwm(server.pid) / 1024).toFixed(1)} MiB`);
process.exit(0);
