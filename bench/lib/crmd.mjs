// A crmd server of its own for a benchmark script: a fresh data folder with one application, the
// server on a free loopback port, and a stop() that ends both. Scripts that measure crmd alone.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const freePort = () => new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
});

// Resolves once the server at `base` answers /health; throws if `server` (a child process) exits
// first or it takes over 10 s.
export async function untilHealthy(base, server) {
  for (let i = 0; ; i++) {
    try { if ((await fetch(`${base}/health`)).ok) return; } catch { /* not yet */ }
    if (i > 200 || server.exitCode !== null) throw new Error('crmd did not start');
    await sleep(50);
  }
}

// {base, app, master, anonymous, stop()}: `master` and `anonymous` are the application's headers.
export async function startCrmd(crmd, serveArgs = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'crmd-bench-'));
  const app = JSON.parse(execFileSync(crmd, ['app', 'create', '--data', dir, '--no-product-base'], { encoding: 'utf8' }));
  const port = await freePort();
  const server = spawn(crmd, ['serve', '--data', dir, '--listen', `127.0.0.1:${port}`, ...serveArgs], { stdio: 'ignore' });
  const stop = () => {
    if (server.exitCode === null) server.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', stop);
  const base = `http://127.0.0.1:${port}`;
  try {
    await untilHealthy(base, server);
  } catch (e) {
    stop();
    throw e;
  }
  const anonymous = { 'X-Core-Application-Id': app.appId, 'Content-Type': 'application/json' };
  return { base, port, app, anonymous, master: { ...anonymous, 'X-Core-Master-Key': app.masterKey }, stop };
}
