// Issue 35, metrics and readiness: `--metrics-listen` serves GET /metrics in the Prometheus text
// format on a listener of its own (never on the public port); requests are counted by route
// family and status, per-application series exist for the 20 busiest applications only, and
// /ready answers for load balancers. Each series of the second half (write queues, store
// evictions, function calls, mail, trigger actions by kind and the oldest held activation, the
// PostgreSQL pool and its statement errors) is asserted to move when its event happens.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { startWebhookReceiver, startFakeSmtp, closeAll } from './lib/receivers.mjs';
import {
  HOST, ON_POSTGRESQL, stopAll, request, makeDataDir, createApp, startServer, masterHeaders, appHeaders, pollUntil, pool,
  cliJson, storeUrl,
} from './lib/harness.mjs';

let dir;
let server;
let metricsBase;
let firstApp;
before(async () => {
  dir = makeDataDir('crmd-metrics');
  firstApp = createApp(dir, { id: 'first' });
  server = await startServer(dir, { extraArgs: ['--metrics-listen', `${HOST}:0`] });
  const line = server.logLines().find((l) => l.msg === 'metrics listening');
  assert.ok(line, 'the metrics listener says where it listens');
  metricsBase = `http://${HOST}:${line.port}`;
});
after(async () => { await closeAll(); await stopAll(); });

// The exposition, parsed: {series: Map(name{labels} -> value), text}.
async function scrape(base = metricsBase) {
  const r = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(10_000) });
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  const text = await r.text();
  const series = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (\S+)$/.exec(line);
    assert.ok(m, `a sample line of the text format: ${line}`);
    series.set(m[1], Number(m[2]));
  }
  return { series, text };
}

test('issue 35: /metrics is on its own listener only; requests are counted by route family and status', async () => {
  const pub = await request(server, 'GET', '/metrics');
  assert.equal(pub.status, 404, 'never on the public port');
  const created = createApp(dir, { id: 'counted' });
  await pollUntil(async () => ({ done: (await request(server, 'GET', '/core/classes/Deals', { headers: masterHeaders(created) })).status === 200 }), { timeoutMs: 2000 });
  const before = (await scrape()).series;
  const key = (family, status) => `crmd_http_requests_total{family="${family}",status="${status}"}`;
  for (let i = 0; i < 3; i++) assert.equal((await request(server, 'POST', '/core/classes/Deals', { headers: masterHeaders(created), body: { Name: `d${i}` } })).status, 201);
  assert.equal((await request(server, 'GET', '/core/classes/Deals/nosuchid00', { headers: masterHeaders(created) })).status, 404);
  assert.equal((await request(server, 'GET', '/no/such/route/at/all')).status, 404);
  // The family is the route table's: a login is a route of the users family.
  const login = await request(server, 'POST', '/core/login', { headers: masterHeaders(created), body: { username: 'nobody', password: 'Nobody5ecret' } });
  // A request is counted once its answer is written, which the client may read first.
  let after;
  await pollUntil(async () => {
    after = await scrape();
    return { done: (after.series.get(key('users', login.status)) ?? 0) > (before.get(key('users', login.status)) ?? 0) };
  }, { timeoutMs: 5000 });
  assert.equal((after.series.get(key('users', login.status)) ?? 0) - (before.get(key('users', login.status)) ?? 0), 1);
  assert.equal((after.series.get(key('classes', 201)) ?? 0) - (before.get(key('classes', 201)) ?? 0), 3);
  assert.equal((after.series.get(key('classes', 404)) ?? 0) - (before.get(key('classes', 404)) ?? 0), 1);
  assert.ok(after.series.get(key('other', 404)) >= 1, 'an unknown path is "other", not a series of its own');
  assert.ok(after.series.get('crmd_http_request_duration_seconds_count{family="classes"}') >= 4);
  assert.ok(after.series.get('crmd_commit_duration_seconds_count{path="write_queue"}') >= 1, 'the queue\'s commits are timed');
  for (const name of ['crmd_open_stores', 'crmd_open_connections', 'process_open_fds', 'process_max_fds', 'process_resident_memory_bytes', 'crmd_registry_up', 'crmd_trigger_activations_held', 'crmd_reads_moved_total', 'crmd_read_timeouts_total'])
    assert.ok(after.series.has(name), name);
  assert.ok(after.series.get('process_resident_memory_bytes') > 1 << 20);
  assert.equal(after.series.get('crmd_registry_up'), 1);
  assert.ok(after.series.get('crmd_app_requests_total{app="counted"}') >= 4);
});

test('issue 35: per-application series exist for the 20 busiest applications only', async () => {
  const apps = [];
  for (let i = 0; i < 24; i++) apps.push(createApp(dir, { id: `tenant${String(i).padStart(2, '0')}` }));
  await pollUntil(async () => ({ done: (await request(server, 'GET', '/core/classes/X', { headers: masterHeaders(apps[23]) })).status === 200 }), { timeoutMs: 2000 });
  // tenantNN gets NN + 5 requests: the busiest are the last ones.
  const calls = apps.flatMap((a, i) => Array.from({ length: i + 5 }, () => a));
  await pool(calls, 8, async (a) => { await request(server, 'GET', '/core/classes/X', { headers: masterHeaders(a) }); });
  const { series } = await scrape();
  const perApp = [...series.keys()].filter((k) => k.startsWith('crmd_app_requests_total{'));
  assert.equal(perApp.length, 20, perApp.join('\n'));
  for (const a of apps.slice(-15)) assert.ok(series.has(`crmd_app_requests_total{app="${a.appId}"}`), `${a.appId} is among the busiest`);
  assert.ok(!series.has('crmd_app_requests_total{app="tenant00"}'), 'the least busy has no series');
});

test('issue 35: /ready answers 200 while the store answers; /health stays the liveness answer', async () => {
  const ready = await request(server, 'GET', '/ready');
  assert.equal(ready.status, 200);
  assert.deepEqual(ready.body, { status: 'ready' });
  const health = await request(server, 'GET', '/health');
  assert.deepEqual(health.body, { status: 'ok' });
});

test('issue 35: trigger webhook actions are counted by result: delivered, retried, failed', async () => {
  const rx = await startWebhookReceiver((req) => ({ status: req.path === '/fail' ? 500 : 200 }));
  const d = makeDataDir('crmd-metrics-triggers');
  const a = createApp(d);
  const srv = await startServer(d, { extraArgs: ['--metrics-listen', `${HOST}:0`, '--allow-private-webhooks', '--trigger-retries', '1', '--trigger-retry-delay', '50'] });
  const base = `http://${HOST}:${srv.logLines().find((l) => l.msg === 'metrics listening').port}`;
  const M = masterHeaders(a);
  const hook = (cls, url) => request(srv, 'POST', `/core/schemas/${cls}`, { headers: M, body: { className: cls, fields: { Name: { type: 'String' } },
    triggers: [{ name: 'hook', event: 'create', actions: [{ actionType: 'webhook', actionData: { webhook: { url } } }] }] } });
  assert.equal((await hook('Good', `${rx.url}/ok`)).status, 200);
  assert.equal((await hook('Bad', `${rx.url}/fail`)).status, 200);
  assert.equal((await request(srv, 'POST', '/core/classes/Good', { headers: M, body: { Name: 'g' } })).status, 201);
  assert.equal((await request(srv, 'POST', '/core/classes/Bad', { headers: M, body: { Name: 'b' } })).status, 201);
  const key = (result) => `crmd_trigger_network_actions_total{kind="webhook",result="${result}"}`;
  const seen = await pollUntil(async () => {
    const text = await (await fetch(`${base}/metrics`)).text();
    const value = (result) => Number(new RegExp(`^${key(result).replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
    const v = { delivered: value('delivered'), retried: value('retried'), failed: value('failed') };
    return { done: v.delivered >= 1 && v.retried >= 1 && v.failed >= 1, v };
  }, { timeoutMs: 10_000, intervalMs: 100 });
  assert.ok(seen.ok, JSON.stringify(seen.last?.v));
});

// A server of its own with the metrics listener: {srv, base, dir, a, apps}; `prepare(dir, apps)`
// runs before it starts.
async function metricsServer(label, extraArgs = [], { apps = 1, prepare = () => {} } = {}) {
  const d = makeDataDir(label);
  const made = Array.from({ length: apps }, () => createApp(d));
  prepare(d, made);
  const srv = await startServer(d, { extraArgs: ['--metrics-listen', `${HOST}:0`, ...extraArgs] });
  // The metrics listener may say so just after the public one (which startServer waits for).
  const said = await pollUntil(async () => {
    const line = srv.logLines().find((l) => l.msg === 'metrics listening');
    return { done: line !== undefined, value: line };
  }, { timeoutMs: 10_000, intervalMs: 20 });
  assert.ok(said.ok, 'the metrics listener says where it listens');
  const base = `http://${HOST}:${said.last.value.port}`;
  return { srv, base, dir: d, a: made[0], apps: made };
}

// The value of one series (0 when it has no sample yet).
async function valueOf(base, series) {
  return (await scrape(base)).series.get(series) ?? 0;
}

// Polls the exposition until `done(series)`; returns the last series seen.
async function scrapeUntil(base, done, timeoutMs = 10_000) {
  const seen = await pollUntil(async () => {
    const { series } = await scrape(base);
    return { done: done(series), series };
  }, { timeoutMs, intervalMs: 50 });
  const shown = [...(seen.last?.series ?? [])].filter(([k]) => k.startsWith('crmd_') && !/_seconds_|crmd_http_|crmd_app_/.test(k));
  assert.ok(seen.ok, `the series did not move: ${JSON.stringify(Object.fromEntries(shown))}`);
  return seen.last.series;
}

function deploy(dir, a, name, code) {
  const file = path.join(dir, `${name}.lua`);
  fs.writeFileSync(file, code);
  return cliJson(['function', 'deploy', '--data', dir, '--app', a.appId, '--name', name, '--file', file]);
}

test('issue 35: function calls are counted by result: ok, failed, timeout, instructions, out_of_memory, rate', async () => {
  const sources = {
    fine: 'return {ok = true}',
    broken: 'error("no")',
    // Pattern matching runs in C: the time limit ends it, not the instruction budget.
    slow: 'local s = "a" .. string.rep(" ", 60000) .. "a" return {t = s:match("^%s*(.-)%s*$")}',
    spin: 'while true do end',
    big: 'local s = string.rep("x", 100 * 1024 * 1024) return {n = #s}',
  };
  // A budget of 1,000,000 instructions ends the spin in milliseconds of CPU: with the default 10,000,000
  // a loaded machine let the 1 s time limit end it first.
  const { srv, base, a } = await metricsServer('crmd-metrics-functions', ['--form-calls-per-minute', '2', '--function-instructions', '1000000'], {
    prepare: (d, [app]) => { for (const [name, code] of Object.entries(sources)) deploy(d, app, name, code); } });
  const call = (name, headers = masterHeaders(a)) => request(srv, 'POST', `/functions/${a.appId}/${name}`, { headers, body: {}, timeoutMs: 60_000 });
  const results = ['ok', 'failed', 'timeout', 'instructions', 'out_of_memory', 'rate'];
  const key = (result) => `crmd_function_calls_total{result="${result}"}`;
  const before = (await scrape(base)).series;
  assert.equal((await call('fine')).status, 200);
  assert.equal((await call('broken')).status, 500);
  assert.deepEqual((await call('slow')).body, { error: 'function slow ran past its time limit' });
  assert.deepEqual((await call('spin')).body, { error: 'function spin ran past its instruction budget' });
  assert.deepEqual((await call('big')).body, { error: 'function big ran out of memory' });
  // Without a key: two calls a minute from one address, the third refused before it runs.
  const anonymous = [];
  for (let i = 0; i < 3; i++) anonymous.push((await call('fine', appHeaders(a))).status);
  assert.deepEqual(anonymous, [200, 200, 429]);
  const after = (await scrape(base)).series;
  const moved = Object.fromEntries(results.map((r) => [r, (after.get(key(r)) ?? 0) - (before.get(key(r)) ?? 0)]));
  assert.deepEqual(moved, { ok: 3, failed: 1, timeout: 1, instructions: 1, out_of_memory: 1, rate: 1 });
});

test('issue 35: every mail is counted by way out and result (reset and trigger mail, SMTP and outbox folder); trigger actions by kind', async () => {
  const smtp = await startFakeSmtp();
  const { srv, base, a } = await metricsServer('crmd-metrics-mail', ['--smtp-url', `smtp://${HOST}:${smtp.port}`, '--trigger-retries', '0']);
  const M = masterHeaders(a);
  assert.equal((await request(srv, 'POST', '/core/users', { headers: M, body: { username: 'ada', password: 'Passw0rdA1', email: 'ada@example.test' } })).status, 201);
  const noted = await request(srv, 'POST', '/core/schemas/Notes', { headers: M, body: { className: 'Notes', fields: { Name: { type: 'String' } },
    triggers: [{ name: 'tell', event: 'create', actions: [{ actionType: 'send-email', actionData: { 'send-email': { to: 'staff@example.test', subject: 'note', html: '<p>{{Name}}</p>' } } }] }] } });
  assert.equal(noted.status, 200, noted.text);
  const mails = (result) => `crmd_mails_total{result="${result}",via="smtp"}`;  // labels in name order
  const actions = (result) => `crmd_trigger_network_actions_total{kind="mail",result="${result}"}`;
  const names = [mails('sent'), mails('failed'), actions('delivered'), actions('failed')];
  const before = (await scrape(base)).series;
  const moved = (series) => names.map((n) => (series.get(n) ?? 0) - (before.get(n) ?? 0));

  const reset = () => request(srv, 'POST', '/core/requestPasswordReset', { headers: appHeaders(a), body: { email: 'ada@example.test' } });
  assert.equal((await reset()).status, 200);
  assert.equal((await request(srv, 'POST', '/core/classes/Notes', { headers: M, body: { Name: 'one' } })).status, 201);
  await scrapeUntil(base, (series) => JSON.stringify(moved(series)) === JSON.stringify([2, 0, 1, 0]));
  assert.equal(smtp.messages.length, 2, 'the receiver got both');

  await smtp.close();  // nobody listens there now
  assert.equal((await reset()).status, 200);
  assert.equal((await request(srv, 'POST', '/core/classes/Notes', { headers: M, body: { Name: 'two' } })).status, 201);
  await scrapeUntil(base, (series) => JSON.stringify(moved(series)) === JSON.stringify([2, 2, 1, 1]));

  // Without --smtp-url, mail is a file in the application's outbox folder.
  const outbox = 'crmd_mails_total{result="sent",via="outbox"}';
  const user = await request(server, 'POST', '/core/users', { headers: masterHeaders(firstApp), body: { username: 'bo', password: 'Passw0rdA1', email: 'bo@example.test' } });
  assert.equal(user.status, 201, user.text);
  const filed = await valueOf(metricsBase, outbox);
  assert.equal((await request(server, 'POST', '/core/requestPasswordReset', { headers: appHeaders(firstApp), body: { email: 'bo@example.test' } })).status, 200);
  await scrapeUntil(metricsBase, (series) => (series.get(outbox) ?? 0) === filed + 1);
});

test('issue 35: stores closed past --max-open-apps are counted as evictions', async () => {
  const { srv, base, apps } = await metricsServer('crmd-metrics-evictions', ['--max-open-apps', '1'], { apps: 2 });
  const key = 'crmd_store_evictions_total{reason="cache_full"}';
  const before = await valueOf(base, key);  // the start may have opened both already
  for (const a of apps) assert.equal((await request(srv, 'GET', '/core/classes/X', { headers: masterHeaders(a) })).status, 200);
  // The first store is closed once nobody uses it (its request's log row may still hold it).
  await scrapeUntil(base, (series) => (series.get(key) ?? 0) > before);
});

test('issue 35: the age of the oldest trigger activation this server holds', async () => {
  // A receiver that answers only when the test lets it.
  const held = [];
  const rx = http.createServer((req, res) => { req.resume(); held.push(res); });
  await new Promise((resolve) => rx.listen(0, HOST, resolve));
  after(() => new Promise((resolve) => { rx.closeAllConnections(); rx.close(resolve); }));
  const { srv, base, a } = await metricsServer('crmd-metrics-oldest', ['--allow-private-webhooks']);
  const M = masterHeaders(a);
  const hooked = await request(srv, 'POST', '/core/schemas/Slow', { headers: M, body: { className: 'Slow', fields: { Name: { type: 'String' } },
    triggers: [{ name: 'hook', event: 'create', actions: [{ actionType: 'webhook', actionData: { webhook: { url: `http://${HOST}:${rx.address().port}/slow` } } }] }] } });
  assert.equal(hooked.status, 200, hooked.text);
  const oldest = 'crmd_trigger_oldest_held_seconds';
  assert.equal(await valueOf(base, oldest), 0, 'none held');
  assert.equal((await request(srv, 'POST', '/core/classes/Slow', { headers: M, body: { Name: 's' } })).status, 201);
  const waiting = await pollUntil(async () => ({ done: held.length === 1 }), { timeoutMs: 10_000 });
  assert.ok(waiting.ok, 'the webhook is waiting for its answer');
  const first = (await scrapeUntil(base, (series) => series.get(oldest) > 0)).get(oldest);
  // It grows while the activation is held (scraped until it has), and is 0 once none is.
  await scrapeUntil(base, (series) => series.get(oldest) > first && series.get('crmd_trigger_activations_held') === 1);
  for (const res of held) res.end('{}');
  await scrapeUntil(base, (series) => series.get(oldest) === 0 && series.get('crmd_trigger_activations_held') === 0);
});

// Holds the write lock of every application's `Deals` table from outside crmd until release():
// SQLite's write lock of its data.db (sqlite3), or PostgreSQL's ACCESS EXCLUSIVE lock of the tables
// (psql), which reads of them wait for too. Resolves once the lock is held.
async function holdTables(dir, apps) {
  const holders = ON_POSTGRESQL
    ? [spawn('psql', ['-X', '-q', '-A', '-t', '-d', storeUrl(dir)], { stdio: ['pipe', 'pipe', 'inherit'] })]
    : apps.map((a) => spawn('sqlite3', [path.join(dir, 'apps', a.appId, 'data.db')], { stdio: ['pipe', 'pipe', 'inherit'] }));
  const tables = apps.map((a) => `"app_${a.appId}"."Deals"`).join(', ');
  const begin = ON_POSTGRESQL ? `BEGIN;\nLOCK TABLE ${tables} IN ACCESS EXCLUSIVE MODE;\n` : 'BEGIN IMMEDIATE;\n';
  await Promise.all(holders.map((h) => new Promise((resolve, reject) => {
    h.on('error', reject);
    h.stdout.on('data', (d) => { if (String(d).includes('held')) resolve(); });
    h.stdin.write(`${begin}SELECT 'held';\n`);
  })));
  return () => Promise.all(holders.map((h) => new Promise((resolve) => { h.on('exit', resolve); h.stdin.end('COMMIT;\n'); })));
}

test('issue 35: the write queues\' depth; on PostgreSQL the pool\'s connections in use and callers waiting, and statement errors by kind', async () => {
  // On PostgreSQL one application more than the pool has connections (2 x (1 + 1 + 1) + 4 = 10 with
  // these threads): each application's queue holds one while its write waits for the lock, and
  // the last waits for a connection.
  const count = ON_POSTGRESQL ? 11 : 1;
  const { srv, base, dir: d, apps } = await metricsServer('crmd-metrics-queues',
    ['--threads', '1', '--write-threads', '1', '--trigger-threads', '1'], { apps: count });
  for (const a of apps) assert.equal((await request(srv, 'POST', '/core/classes/Deals', { headers: masterHeaders(a), body: { Name: 'first' } })).status, 201);
  const depth = 'crmd_write_queue_depth';
  await scrapeUntil(base, (series) => series.get(depth) === 0);  // the request log's rows are written too
  const errors = (kind) => `crmd_pg_statement_errors_total{kind="${kind}"}`;
  const before = (await scrape(base)).series;

  const release = await holdTables(d, apps);
  const [a] = apps;
  const writes = [
    ...[1, 2].map((i) => request(srv, 'POST', '/core/classes/Deals', { headers: masterHeaders(a), body: { Name: `held ${i}` }, timeoutMs: 60_000 })),
    ...apps.map((b) => request(srv, 'POST', '/core/classes/Deals', { headers: masterHeaders(b), body: { Name: 'held' }, timeoutMs: 60_000 })),
  ];
  const reads = ON_POSTGRESQL ? [request(srv, 'GET', '/core/classes/Deals', { headers: masterHeaders(a), timeoutMs: 60_000 })] : [];
  const held = await scrapeUntil(base, (series) => series.get(depth) >= writes.length &&
    (!ON_POSTGRESQL || (series.get('crmd_pg_pool_waiting') >= 1 && series.get('crmd_pg_pool_in_use') >= 10 &&
      (series.get(errors('canceled')) ?? 0) > (before.get(errors('canceled')) ?? 0))));  // the read past its slice
  assert.ok(held.get(depth) >= writes.length);
  await release();
  for (const w of await Promise.all(writes)) assert.equal(w.status, 201, w.text);
  for (const r of await Promise.all(reads)) assert.equal(r.status, 200, r.text);
  const drained = await scrapeUntil(base, (series) => series.get(depth) === 0 && (series.get('crmd_pg_pool_waiting') ?? 0) === 0);
  assert.equal(drained.get('crmd_pg_pool_waiting'), 0);

  if (ON_POSTGRESQL) {
    // A table dropped under crmd's feet: its statements fail, counted as "other".
    const other = before.get(errors('other')) ?? 0;
    execFileSync('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', storeUrl(d), '-c', `DROP TABLE "app_${a.appId}"."Deals"`],
      { stdio: ['ignore', 'ignore', 'pipe'], timeout: 20_000 });
    const failed = await request(srv, 'GET', '/core/classes/Deals', { headers: masterHeaders(a) });
    assert.equal(failed.status, 500, failed.text);
    await scrapeUntil(base, (series) => (series.get(errors('other')) ?? 0) > other);
  }
});

test('issue 35: a function call refused because its application\'s share of function threads is taken is counted as busy', async () => {
  const slow = 'local s = "a" .. string.rep(" ", 60000) .. "a" return {t = s:match("^%s*(.-)%s*$")}';
  const { srv, base, a } = await metricsServer('crmd-metrics-busy', ['--function-threads-per-app', '1'], {
    prepare: (d, [app]) => { deploy(d, app, 'slow', slow); deploy(d, app, 'fine', 'return {}'); } });
  const busy = 'crmd_function_calls_total{result="busy"}';
  assert.equal(await valueOf(base, busy), 0);
  // The slow call holds the application's one slot until its time limit; an MCP tool's call
  // (which runs on its own thread) meanwhile is refused, not queued.
  const running = request(srv, 'POST', `/functions/${a.appId}/slow`, { headers: masterHeaders(a), body: {}, timeoutMs: 60_000 });
  const refused = await pollUntil(async () => {
    const r = await fetch(`${srv.base}/mcp/${a.appId}`, { method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...masterHeaders(a) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'Run-Function', arguments: { name: 'fine' } } }),
      signal: AbortSignal.timeout(20_000) });
    const text = JSON.stringify(await r.json());
    return { done: /Too many requests/.test(text), text };
  }, { timeoutMs: 10_000, intervalMs: 10 });
  assert.ok(refused.ok, refused.last?.text);
  assert.equal((await running).status, 500);
  assert.ok(await valueOf(base, busy) >= 1);
});
