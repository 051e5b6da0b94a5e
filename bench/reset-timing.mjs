// Issue 17 #14 (moved here from the end-to-end suite by issue 32: a test asserts behaviour, a
// benchmark measures time): a password reset request for a known address must take as long as
// one for an unknown address, or the time tells which addresses have accounts. crmd alone,
// loopback only, about 10 seconds.
//   node bench/reset-timing.mjs [path/to/crmd]
// Prints the medians of 40 requests each, and whether known is within 25% (+0.15 ms) of unknown.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = path.resolve(import.meta.dirname, '..');
const CRMD = path.resolve(process.argv[2] ?? path.join(ROOT, 'build', 'crmd'));
const COUNT = 40;

const freePort = () => new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
});

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'crmd-bench-reset-'));
  const app = JSON.parse(execFileSync(CRMD, ['app', 'create', '--data', dir, '--no-product-base'], { encoding: 'utf8' }));
  const port = await freePort();
  const server = spawn(CRMD, ['serve', '--data', dir, '--listen', `127.0.0.1:${port}`, '--password-rate', '100000'], { stdio: 'ignore' });
  const base = `http://127.0.0.1:${port}`;
  try {
    for (let i = 0; ; i++) {
      try { if ((await fetch(`${base}/health`)).ok) break; } catch { /* not yet */ }
      if (i > 200) throw new Error('crmd did not start');
      await sleep(50);
    }
    const master = { 'X-Core-Application-Id': app.appId, 'X-Core-Master-Key': app.masterKey, 'Content-Type': 'application/json' };
    const anonymous = { 'X-Core-Application-Id': app.appId, 'Content-Type': 'application/json' };
    for (let i = 0; i < COUNT; i++) {
      const email = `known${i}@example.test`;
      await fetch(`${base}/core/users`, { method: 'POST', headers: master, body: JSON.stringify({ username: email, email, password: 'Known5ecret' }) });
    }
    const time = async (email) => {
      const t = performance.now();
      const r = await fetch(`${base}/core/requestPasswordReset`, { method: 'POST', headers: anonymous, body: JSON.stringify({ email }) });
      await r.arrayBuffer();
      return performance.now() - t;
    };
    const known = [];
    const unknown = [];
    for (let i = 0; i < COUNT; i++) {
      known.push(await time(`known${i}@example.test`));
      unknown.push(await time(`unknown${i}@example.test`));
    }
    const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
    const [k, u] = [median(known), median(unknown)];
    console.log(`reset request, median of ${COUNT}: known ${k.toFixed(2)} ms, unknown ${u.toFixed(2)} ms: ` +
      `${k <= u * 1.25 + 0.15 ? 'met' : 'not met'} (known within 25% + 0.15 ms of unknown)`);
  } finally {
    server.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
