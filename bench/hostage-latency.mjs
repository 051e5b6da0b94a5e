// Issue 17's hostage cases, timed (moved here from the end-to-end suite by issue 32: the tests
// assert what is refused and that others are served meanwhile; how fast is measured here). crmd
// alone, loopback only, about 20 seconds.
//   node bench/hostage-latency.mjs [path/to/crmd]
// Prints one line per case with its figure and the bound the tests once held it to.
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startCrmd } from './lib/crmd.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');
const CRMD = path.resolve(process.argv[2] ?? path.join(ROOT, 'build', 'crmd'));

async function timed(fn) {
  const t = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - t };
}
async function call(base, method, url, headers, body) {
  const r = await fetch(`${base}${url}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(120_000) });
  const text = await r.text();
  return { status: r.status, text };
}
// One raw request on its own connection (fetch() will not send 15 KB of one header): its status.
function raw(port, head) {
  return new Promise((resolve, reject) => {
    const sock = net.createConnection({ host: '127.0.0.1', port }, () => sock.write(`${head}\r\nHost: x\r\nConnection: close\r\n\r\n`));
    let text = '';
    sock.on('data', (d) => { text += d; });
    sock.on('end', () => resolve(Number(text.slice(9, 12))));
    sock.on('error', reject);
  });
}
const keysBody = (n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
function report(name, ms, bound) {
  console.log(`${name}: ${ms.toFixed(0)} ms (${ms < bound ? 'within' : 'beyond'} ${bound} ms)`);
}

// The longest of `n` creates made one after another while something else runs.
async function worstCreate(srv, n) {
  let worst = 0;
  for (let i = 0; i < n; i++) {
    const { value, ms } = await timed(() => call(srv.base, 'POST', '/core/classes/Bystander', srv.master, { i }));
    if (value.status !== 201) throw new Error(`a create answered ${value.status}`);
    worst = Math.max(worst, ms);
    await sleep(20);
  }
  return worst;
}

async function main() {
  const srv = await startCrmd(CRMD);
  try {
    // #5: 40 preflights, each asking for 800 header names (~15 KB).
    const names = Array.from({ length: 800 }, (_, i) => `X-Core-Custom-${i}`).join(', ');
    const preflights = await timed(() => Promise.all(Array.from({ length: 40 }, () =>
      raw(srv.port, `OPTIONS /core/classes/X HTTP/1.1\r\nOrigin: https://a.example\r\nAccess-Control-Request-Headers: ${names}`))));
    report('#5 40 preflights of ~15 KB of header names', preflights.ms, 5000);

    // #2: bodies of many keys, refused before their fields are looked at.
    const open = { '*': true };
    await call(srv.base, 'POST', '/core/schemas/Wide', srv.master, { classLevelPermissions: { create: open, update: open, find: open, get: open } });
    report('#2 an anonymous body of 40,000 new keys refused', (await timed(() => call(srv.base, 'POST', '/core/classes/Wide', srv.anonymous, keysBody(40_000)))).ms, 2000);
    report('#2 the master key\'s body of 200,000 keys refused', (await timed(() => call(srv.base, 'POST', '/core/classes/Wide', srv.master, keysBody(200_000)))).ms, 3000);

    // #2: AddUnique and Remove of 60,000 values, with another writer beside them.
    const id = JSON.parse((await call(srv.base, 'POST', '/core/classes/Lists', srv.master, { Tags: ['seed'] })).text).objectId;
    const values = Array.from({ length: 60_000 }, (_, i) => `v${i}`);
    const other = worstCreate(srv, 10);
    report('#2 AddUnique of 61,000 values (60,000 distinct)', (await timed(() => call(srv.base, 'PUT', `/core/classes/Lists/${id}`, srv.master,
      { Tags: { __op: 'AddUnique', objects: [...values, ...values.slice(0, 1000)] } }))).ms, 2000);
    report('#2 Remove of 60,000 values', (await timed(() => call(srv.base, 'PUT', `/core/classes/Lists/${id}`, srv.master,
      { Tags: { __op: 'Remove', objects: values } }))).ms, 2000);
    report('#2 the worst of 10 creates beside them', await other, 2000);

    // #1: an anonymous batch of 100 wrong logins; the application's creates meanwhile.
    await call(srv.base, 'POST', '/core/users', srv.master, { username: 'victim@example.test', password: 'Hostage5ecret' });
    const logins = Array.from({ length: 100 }, () => ({ method: 'POST', path: '/core/login', body: { username: 'victim@example.test', password: 'Wrong5ecret' } }));
    const batch = call(srv.base, 'POST', '/core/batch', srv.anonymous, { requests: logins });
    await sleep(100);
    report('#1 the worst of 15 creates beside a batch of 100 logins', await worstCreate(srv, 15), 1000);
    await batch;
  } finally {
    srv.stop();
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
