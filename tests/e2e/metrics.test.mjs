// Issue 35, metrics and readiness: `--metrics-listen` serves GET /metrics in the Prometheus text
// format on a listener of its own (never on the public port); requests are counted by route
// family and status, per-application series exist for the 20 busiest applications only, and
// /ready answers for load balancers.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWebhookReceiver, closeAll } from './lib/receivers.mjs';
import {
  HOST, stopAll, request, makeDataDir, createApp, startServer, masterHeaders, pollUntil, pool,
} from './lib/harness.mjs';

let dir;
let server;
let metricsBase;
before(async () => {
  dir = makeDataDir('crmd-metrics');
  createApp(dir, { id: 'first' });
  server = await startServer(dir, { extraArgs: ['--metrics-listen', `${HOST}:0`] });
  const line = server.logLines().find((l) => l.msg === 'metrics listening');
  assert.ok(line, 'the metrics listener says where it listens');
  metricsBase = `http://${HOST}:${line.port}`;
});
after(async () => { await closeAll(); await stopAll(); });

// The exposition, parsed: {series: Map(name{labels} -> value), text}.
async function scrape() {
  const r = await fetch(`${metricsBase}/metrics`, { signal: AbortSignal.timeout(10_000) });
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
  const after = await scrape();
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
  const key = (result) => `crmd_trigger_network_actions_total{result="${result}"}`;
  const seen = await pollUntil(async () => {
    const text = await (await fetch(`${base}/metrics`)).text();
    const value = (result) => Number(new RegExp(`^${key(result).replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
    const v = { delivered: value('delivered'), retried: value('retried'), failed: value('failed') };
    return { done: v.delivered >= 1 && v.retried >= 1 && v.failed >= 1, v };
  }, { timeoutMs: 10_000, intervalMs: 100 });
  assert.ok(seen.ok, JSON.stringify(seen.last?.v));
});
