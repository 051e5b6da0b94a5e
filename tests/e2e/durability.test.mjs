// Durability (spec §8, DESIGN.md "Durability" and the serve contract): with `--durability full` a 2xx
// means the write is on disk, so kill -9 in the middle of a stream of writes loses nothing that was
// acknowledged and leaves the SQLite files intact; SIGTERM finishes in-flight requests and exits 0.
import test, { after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import {
  makeDataDir, createApp, startServer, stopAll, request, masterHeaders, listAll, HOST, sleep,
  pool,
} from './lib/harness.mjs';

after(stopAll);

// Bounds of the write stream: whichever comes first.
const MAX_CREATES = 2000;
const STREAM_MS = 5000;
const WORKERS = 6;
// When to pull the plug: after this many acknowledged writes, or this long into the stream.
const KILL_AFTER_ACKS = 400;
const KILL_AFTER_MS = 2500;

// Runs `write(seq)` from WORKERS workers until the stream's bounds, and kills the server with
// SIGKILL once `enough()` says so or KILL_AFTER_MS passed. A write whose connection died with the
// process was never acknowledged: `write` records only what was answered. Returns the writes sent.
async function streamThenKill(server, write, enough) {
  let sent = 0;
  let killed = false;
  const start = Date.now();
  const killer = (async () => {
    for (let i = 0; i < 1000 && !killed; i++) {
      if (enough() || Date.now() - start >= KILL_AFTER_MS) break;
      await sleep(5);
    }
    killed = true;
    server.proc.kill('SIGKILL');
    await server.exited;
  })();
  const workers = Array.from({ length: WORKERS }, async () => {
    while (!killed && sent < MAX_CREATES && Date.now() - start < STREAM_MS) {
      const seq = sent++;
      try {
        await write(seq);
      } catch {
        if (killed) break;
      }
    }
  });
  await Promise.all(workers);
  killed = true;
  await killer;
  return { sent, ms: Date.now() - start };
}

function integrityCheck(dbFile) {
  return execFileSync('sqlite3', [dbFile, 'PRAGMA integrity_check'], { encoding: 'utf8', timeout: 30_000 }).trim();
}


test('§8 --durability full: every create and Increment acknowledged before kill -9 survives the restart; integrity_check ok', async (t) => {
  const dataDir = makeDataDir();
  const app = createApp(dataDir);
  const M = masterHeaders(app);
  let server = await startServer(dataDir, { durability: 'full' });

  const counter = await request(server, 'POST', '/core/classes/Counters', { headers: M, body: { Hits: 0 } });
  assert.equal(counter.status, 201, counter.text);
  const counterId = counter.body.objectId;

  const acked = [];          // {id, seq}
  let incSent = 0;
  let incAcked = 0;
  const otherStatuses = [];
  const { sent, ms } = await streamThenKill(server, async (seq) => {
    if (seq % 4 === 3) {
      incSent++;
      const r = await request(server, 'PUT', `/core/classes/Counters/${counterId}`, {
        headers: M, body: { Hits: { __op: 'Increment', amount: 1 } }, timeoutMs: 5000,
      });
      if (r.status === 200) incAcked++; else otherStatuses.push(r.status);
    } else {
      const r = await request(server, 'POST', '/core/classes/Stream', {
        headers: M, body: { Seq: seq, Name: `row-${seq}`, Payload: 'p'.repeat(200) }, timeoutMs: 5000,
      });
      if (r.status === 201) acked.push({ id: r.body.objectId, seq }); else otherStatuses.push(r.status);
    }
  }, () => acked.length >= KILL_AFTER_ACKS);

  t.diagnostic(`kill -9 after ${ms} ms: ${acked.length} creates and ${incAcked} increments acknowledged, ${sent} writes sent`);
  assert.equal(server.exitSignal, 'SIGKILL', 'the server was killed mid-stream, not finished');
  assert.deepEqual(otherStatuses, [], 'every answered write succeeded');
  assert.ok(acked.length >= 20, `only ${acked.length} creates acknowledged before the kill`);

  // The files are consistent as the crash left them.
  const dbFile = path.join(dataDir, 'apps', app.appId, 'data.db');
  assert.equal(integrityCheck(dbFile), 'ok');

  server = await startServer(dataDir, { durability: 'full' });
  const missing = [];
  const wrong = [];
  await pool(acked, 8, async ({ id, seq }) => {
    const g = await request(server, 'GET', `/core/classes/Stream/${id}`, { headers: M });
    if (g.status !== 200) missing.push({ id, seq, status: g.status });
    else if (g.body.Seq !== seq || g.body.Name !== `row-${seq}`) wrong.push({ id, seq, got: g.body });
  });
  assert.deepEqual(missing, [], `${missing.length} of ${acked.length} acknowledged creates lost`);
  assert.deepEqual(wrong, []);

  const all = await listAll(server, app, 'Stream');
  assert.ok(all.length >= acked.length && all.length <= sent, `${all.length} rows; ${acked.length} acked, ${sent} sent`);
  assert.equal(new Set(all.map((r) => r.objectId)).size, all.length, 'no duplicate rows');

  const c = await request(server, 'GET', `/core/classes/Counters/${counterId}`, { headers: M });
  assert.equal(c.status, 200, c.text);
  assert.ok(c.body.Hits >= incAcked && c.body.Hits <= incSent, `Hits ${c.body.Hits}; ${incAcked} acked, ${incSent} sent`);

  // The restarted server keeps writing.
  const more = await request(server, 'POST', '/core/classes/Stream', { headers: M, body: { Seq: -1, Name: 'after restart' } });
  assert.equal(more.status, 201, more.text);

  const { code, signal } = await server.stop();
  assert.equal(signal, null);
  assert.equal(code, 0);
  assert.equal(integrityCheck(dbFile), 'ok');
  assert.equal(integrityCheck(path.join(dataDir, 'registry.db')), 'ok');
});

test('§8 SIGTERM finishes a request still in flight, then exits 0; the write is durable', async () => {
  const dataDir = makeDataDir();
  const app = createApp(dataDir);
  const server = await startServer(dataDir);

  // A create whose body is only half sent when SIGTERM arrives.
  const body = Buffer.from(JSON.stringify({ Name: 'in flight', Blob: 'z'.repeat(200_000) }));
  const head = `POST /core/classes/InFlight HTTP/1.1\r\nHost: ${HOST}:${server.port}\r\n` +
    `X-Core-Application-Id: ${app.appId}\r\nX-Core-Master-Key: ${app.masterKey}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
  const sock = net.createConnection({ host: HOST, port: server.port });
  await new Promise((resolve, reject) => { sock.once('connect', resolve); sock.once('error', reject); });
  let received = Buffer.alloc(0);
  const closed = new Promise((resolve) => {
    sock.on('data', (d) => { received = Buffer.concat([received, d]); });
    sock.on('close', resolve);
    sock.on('error', () => { /* reported through `received` */ });
  });
  const half = Math.floor(body.length / 2);
  sock.write(Buffer.concat([Buffer.from(head, 'latin1'), body.subarray(0, half)]));
  await sleep(200); // let the server read the head and start on the body (ordering, not an assertion)

  server.proc.kill('SIGTERM');
  await sleep(200);
  sock.end(body.subarray(half));
  let timer;
  await Promise.race([closed, new Promise((r) => { timer = setTimeout(r, 10_000); })]);
  clearTimeout(timer);
  sock.destroy();

  const text = received.toString('utf8');
  assert.match(text, /^HTTP\/1\.1 201 /, `in-flight create was not finished: ${text.slice(0, 300)}`);
  const json = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
  assert.match(json.objectId, /^[A-Za-z0-9]{10}$/);

  let t2;
  const result = await Promise.race([server.exited, new Promise((r) => { t2 = setTimeout(() => r('timeout'), 15_000); })]);
  clearTimeout(t2);
  assert.notEqual(result, 'timeout', 'crmd did not exit after SIGTERM');
  assert.deepEqual(result, { code: 0, signal: null });

  const again = await startServer(dataDir);
  const g = await request(again, 'GET', `/core/classes/InFlight/${json.objectId}`, { headers: masterHeaders(app) });
  assert.equal(g.status, 200, g.text);
  assert.equal(g.body.Name, 'in flight');
  assert.equal(g.body.Blob.length, 200_000);
  const stopped = await again.stop();
  assert.deepEqual(stopped, { code: 0, signal: null });
});

test('§8 SIGTERM under concurrent load: answered writes all succeed and persist, exit code 0', async () => {
  const dataDir = makeDataDir();
  const app = createApp(dataDir);
  const M = masterHeaders(app);
  const server = await startServer(dataDir, { durability: 'full' });

  const results = [];
  const inflight = [];
  for (let i = 0; i < 40; i++) {
    inflight.push(request(server, 'POST', '/core/classes/Burst', { headers: M, body: { Seq: i }, timeoutMs: 10_000 })
      .then((r) => results.push({ i, status: r.status, id: r.body.objectId }))
      .catch(() => results.push({ i, status: 'closed' })));
  }
  await Promise.race(inflight);
  const stopped = await server.stop();
  await Promise.all(inflight);
  assert.deepEqual(stopped, { code: 0, signal: null });

  const answered = results.filter((r) => r.status !== 'closed');
  assert.ok(answered.length >= 1);
  assert.deepEqual(answered.filter((r) => r.status !== 201), [], 'no answered write failed');

  const again = await startServer(dataDir);
  const all = await listAll(again, app, 'Burst');
  const ids = new Set(all.map((r) => r.objectId));
  for (const r of answered) assert.ok(ids.has(r.id), `acknowledged create ${r.i} (${r.id}) lost`);
  assert.deepEqual(await again.stop(), { code: 0, signal: null });
});

test('§8 --durability normal serves, and data written before a clean stop is there after restart', async () => {
  const dataDir = makeDataDir();
  const app = createApp(dataDir);
  const M = masterHeaders(app);
  const server = await startServer(dataDir, { durability: 'normal', threads: 2 });
  const ids = [];
  for (let i = 0; i < 20; i++) {
    const r = await request(server, 'POST', '/core/classes/Normal', { headers: M, body: { Seq: i } });
    assert.equal(r.status, 201, r.text);
    ids.push(r.body.objectId);
  }
  assert.deepEqual(await server.stop(), { code: 0, signal: null });
  const again = await startServer(dataDir, { durability: 'normal' });
  const all = await listAll(again, app, 'Normal');
  assert.deepEqual(all.map((r) => r.objectId).sort(), [...ids].sort());
  assert.deepEqual(await again.stop(), { code: 0, signal: null });
  assert.equal(integrityCheck(path.join(dataDir, 'apps', app.appId, 'data.db')), 'ok');
});

test('issue 16 §2.6 kill -9 during writes to a timeline table: every acknowledged write has its _Timeline row, and no row has no write', async (t) => {
  const dataDir = makeDataDir();
  const app = createApp(dataDir);
  const M = masterHeaders(app);
  let server = await startServer(dataDir, { durability: 'full' });
  const on = await request(server, 'POST', '/core/schemas/Deals', {
    headers: M, body: { timeline: { index: { DealId: 'Deals' } }, classLevelPermissions: { create: { '*': true } } },
  });
  assert.equal(on.status, 200, on.text);
  const counters = [];
  for (let i = 0; i < 4; i++) {
    const c = await request(server, 'POST', '/core/classes/Deals', { headers: M, body: { Hits: 0, Name: `counter-${i}` } });
    assert.equal(c.status, 201, c.text);
    counters.push(c.body.objectId);
  }

  const acked = [];  // created ids
  const incAcked = new Map(counters.map((id) => [id, 0]));
  const incSent = new Map(counters.map((id) => [id, 0]));
  const otherStatuses = [];
  const { sent, ms } = await streamThenKill(server, async (seq) => {
    if (seq % 3 === 2) {
      const id = counters[seq % counters.length];
      incSent.set(id, incSent.get(id) + 1);
      const r = await request(server, 'PUT', `/core/classes/Deals/${id}`, {
        headers: M, body: { Hits: { __op: 'Increment', amount: 1 } }, timeoutMs: 5000,
      });
      if (r.status === 200) incAcked.set(id, incAcked.get(id) + 1); else otherStatuses.push(r.status);
    } else {
      const r = await request(server, 'POST', '/core/classes/Deals', { headers: M, body: { Seq: seq, Name: `deal-${seq}` }, timeoutMs: 5000 });
      if (r.status === 201) acked.push(r.body.objectId); else otherStatuses.push(r.status);
    }
  }, () => acked.length >= KILL_AFTER_ACKS / 2);
  t.diagnostic(`kill -9 after ${ms} ms: ${acked.length} creates acknowledged, ${sent} writes sent`);
  assert.equal(server.exitSignal, 'SIGKILL');
  assert.deepEqual(otherStatuses, []);
  assert.ok(acked.length >= 20, `only ${acked.length} creates acknowledged before the kill`);
  assert.equal(integrityCheck(path.join(dataDir, 'apps', app.appId, 'data.db')), 'ok');

  server = await startServer(dataDir, { durability: 'full' });
  const deals = await listAll(server, app, 'Deals');
  const history = await listAll(server, app, '_Timeline');
  const dealIds = new Set(deals.map((d) => d.objectId));
  const creates = history.filter((h) => h.event === 'create');
  const createdIds = creates.map((h) => h.objectIdValue);
  assert.equal(new Set(createdIds).size, createdIds.length, 'one create row per record');
  assert.deepEqual([...dealIds].filter((id) => !createdIds.includes(id)), [], 'every record has its create row');
  assert.deepEqual(createdIds.filter((id) => !dealIds.has(id)), [], 'no create row without its record');
  for (const id of acked) assert.ok(dealIds.has(id) && createdIds.includes(id), `acknowledged create ${id} and its row`);
  for (const id of counters) {
    const deal = deals.find((d) => d.objectId === id);
    const updates = history.filter((h) => h.objectIdValue === id && h.event === 'update');
    assert.equal(updates.length, deal.Hits, `one update row per durable Increment of ${id}`);
    assert.ok(deal.Hits >= incAcked.get(id) && deal.Hits <= incSent.get(id), `Hits ${deal.Hits} of ${id}`);
    assert.equal(history.filter((h) => h.objectIdValue === id && h.Last).length, 1, `one Last row for ${id}`);
  }
  assert.deepEqual(await server.stop(), { code: 0, signal: null });
});
