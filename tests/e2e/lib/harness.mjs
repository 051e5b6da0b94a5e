// End-to-end harness: runs the real crmd binary against a fresh data directory on 127.0.0.1 and speaks
// HTTP to it (global fetch for ordinary requests, node:net for bytes fetch cannot send).
//
// Every wait here is bounded in time and in count. Every server started here is remembered so the
// test file's `after(stopAll)` can kill it even when a test failed half-way.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';

import { withStore } from './pg.mjs';

export { storeDirs, storeUrl, ON_POSTGRESQL, stopPostgres, startPostgres } from './pg.mjs';

export const CRMD_BIN = process.env.CRMD_BIN || path.resolve(import.meta.dirname, '../../../build/crmd');
export const HOST = '127.0.0.1';

// How long a server may take to print its `listening` line and then answer /health.
const START_TIMEOUT_MS = 15_000;
// How long SIGTERM may take before the harness gives up and kills.
const STOP_TIMEOUT_MS = 15_000;
// Default per-request timeout.
const REQUEST_TIMEOUT_MS = 20_000;
// Raw requests with a body larger than this send the head first and give the server EARLY_ANSWER_MS
// to refuse it before the body follows.
const EARLY_ANSWER_BODY = 64 * 1024;
const EARLY_ANSWER_MS = 300;

const liveServers = new Set();
const tempDirs = new Set();

// Last-resort cleanup if a test file dies without its after() hook.
process.on('exit', () => {
  for (const s of liveServers) {
    try { s.proc.kill('SIGKILL'); } catch { /* already gone */ }
  }
});

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const OBJECT_ID = /^[A-Za-z0-9]{10}$/;

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---------------------------------------------------------------------------------------------
// Data directories and the CLI

export function makeDataDir(label = 'crmd-e2e') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${label}-`));
  tempDirs.add(dir);
  return dir;
}

// Runs `crmd <args...>`; returns {stdout, stderr}. Throws (with stderr attached) on a non-zero exit.
export function cli(args, { timeoutMs = 20_000 } = {}) {
  try {
    const stdout = execFileSync(CRMD_BIN, withStore(args), {
      encoding: 'utf8',
      timeout: timeoutMs,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return { stdout };
  } catch (err) {
    const msg = `crmd ${args.join(' ')} failed (status ${err.status}, signal ${err.signal}):\n` +
      `stdout: ${err.stdout}\nstderr: ${err.stderr}`;
    const e = new Error(msg);
    e.status = err.status;
    e.stdout = err.stdout;
    e.stderr = err.stderr;
    throw e;
  }
}

// Runs a CLI command whose stdout must be exactly one JSON value; returns it parsed.
export function cliJson(args, opts) {
  const { stdout } = cli(args, opts);
  try {
    return JSON.parse(stdout.trim());
  } catch {
    throw new Error(`crmd ${args.join(' ')}: stdout is not one JSON value:\n${stdout}`);
  }
}

// `crmd app create`: {appId, masterKey, apiKey, apiKeyName}.
// Suites that test generic behaviour start from an empty application; `productBase: true` gives
// the CRM product base a real application starts from (issue 5).
export function createApp(dataDir, { id, name, productBase = false } = {}) {
  const args = ['app', 'create', '--data', dataDir];
  if (id !== undefined) args.push('--id', id);
  if (name !== undefined) args.push('--name', name);
  if (!productBase) args.push('--no-product-base');
  return cliJson(args);
}

// `crmd key create`: {apiKey}.
export function createKey(dataDir, appId, name) {
  return cliJson(['key', 'create', '--data', dataDir, '--app', appId, '--name', name]);
}

export function revokeKey(dataDir, appId, name) {
  return cli(['key', 'revoke', '--data', dataDir, '--app', appId, '--name', name]);
}

export function listKeys(dataDir, appId) {
  return cliJson(['key', 'list', '--data', dataDir, '--app', appId]);
}

// The uploads in flight under `dataDir`: the paths of their temporary files, wherever they are
// under tmp/uploads (each server streams into a folder of its own there, beside its lock file:
// issue 33).
export function uploadsInFlight(dataDir) {
  const root = path.join(dataDir, 'tmp', 'uploads');
  if (!fs.existsSync(root)) return [];
  return fs.readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && !((e.parentPath ?? e.path) === root && e.name.endsWith('.lock')))
    .map((e) => path.join(e.parentPath ?? e.path, e.name));
}

// ---------------------------------------------------------------------------------------------
// The server process

// Starts `crmd serve` on 127.0.0.1 port 0, waits for its `listening` line and for GET /health 200.
// Returns a handle: {proc, port, base, stderr(), logLines(), exited, stop(), kill()}.
// `env`: variables added to the server's environment (the clock seam CRMD_TEST_CLOCK_OFFSET_MS).
// `prlimitNoFile`: the server runs under `prlimit --nofile=N:N` (a process short of descriptors).
export async function startServer(dataDir, { prefix, durability, threads, extraArgs = [], env = {}, prlimitNoFile } = {}) {
  const args = ['serve', '--data', dataDir, '--listen', `${HOST}:0`];
  if (prefix !== undefined) args.push('--prefix', prefix);
  if (durability !== undefined) args.push('--durability', durability);
  if (threads !== undefined) args.push('--threads', String(threads));
  args.push(...extraArgs);

  const [command, argv] = prlimitNoFile
    ? ['prlimit', [`--nofile=${prlimitNoFile}:${prlimitNoFile}`, CRMD_BIN, ...withStore(args)]]
    : [CRMD_BIN, withStore(args)];
  const proc = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const server = {
    proc,
    dataDir,
    port: 0,
    base: '',
    stderrText: '',
    stdoutText: '',
    exitCode: undefined,
    exitSignal: undefined,
  };
  liveServers.add(server);

  server.exited = new Promise((resolve) => {
    proc.on('exit', (code, signal) => {
      server.exitCode = code;
      server.exitSignal = signal;
      liveServers.delete(server);
      resolve({ code, signal });
    });
  });
  proc.on('error', () => { /* reported through `exited` / the start timeout */ });
  proc.stdout.setEncoding('utf8');
  proc.stdout.on('data', (d) => { server.stdoutText += d; });

  const listening = new Promise((resolve, reject) => {
    let pending = '';
    const timer = setTimeout(
      () => reject(new Error(`crmd did not log "listening" within ${START_TIMEOUT_MS} ms; stderr:\n${server.stderrText}`)),
      START_TIMEOUT_MS);
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (chunk) => {
      server.stderrText += chunk;
      pending += chunk;
      let nl;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        let obj;
        try { obj = JSON.parse(line); } catch { continue; }
        if (obj && obj.msg === 'listening' && Number.isInteger(obj.port)) {
          clearTimeout(timer);
          resolve(obj);
        }
      }
    });
    server.exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`crmd exited early (code ${code}, signal ${signal}); stderr:\n${server.stderrText}`));
    });
  });

  let line;
  try {
    line = await listening;
  } catch (err) {
    await killServer(server);
    throw err;
  }
  server.listeningLine = line;
  server.port = line.port;
  server.base = `http://${HOST}:${line.port}`;

  // Ready once /health answers 200 {"status":"ok"}: at most START_TIMEOUT_MS, polls every 25 ms.
  const deadline = Date.now() + START_TIMEOUT_MS;
  let last;
  for (let i = 0; i < 1000 && Date.now() < deadline; i++) {
    try {
      last = await request(server, 'GET', '/health', { timeoutMs: 2000 });
      if (last.status === 200) break;
    } catch (err) {
      last = err;
    }
    await sleep(25);
  }
  if (!last || last.status !== 200) {
    await killServer(server);
    throw new Error(`crmd /health never answered 200: ${JSON.stringify(last?.body ?? String(last))}`);
  }

  server.stderr = () => server.stderrText;
  server.logLines = () => parseLogLines(server.stderrText);
  server.stop = (opts) => stopServer(server, opts);
  server.kill = () => killServer(server);
  return server;
}

export function parseLogLines(text) {
  return text.split('\n').filter((l) => l.length > 0).map((l) => {
    try { return JSON.parse(l); } catch { return { __unparsed: l }; }
  });
}

// SIGTERM, then wait for the exit; returns {code, signal}. Kills (and throws) if it takes too long.
export async function stopServer(server, { timeoutMs = STOP_TIMEOUT_MS } = {}) {
  if (server.exitCode !== undefined || server.exitSignal !== undefined) {
    return { code: server.exitCode, signal: server.exitSignal };
  }
  server.proc.kill('SIGTERM');
  let timer;
  const timeout = new Promise((resolve) => { timer = setTimeout(() => resolve('timeout'), timeoutMs); });
  const result = await Promise.race([server.exited, timeout]);
  clearTimeout(timer);
  if (result === 'timeout') {
    await killServer(server);
    throw new Error(`crmd did not exit within ${timeoutMs} ms of SIGTERM`);
  }
  return result;
}

// SIGKILL and wait (bounded) for the exit.
export async function killServer(server) {
  if (server.exitCode !== undefined || server.exitSignal !== undefined) return;
  try { server.proc.kill('SIGKILL'); } catch { /* gone */ }
  let timer;
  await Promise.race([server.exited, new Promise((r) => { timer = setTimeout(r, 5000); })]);
  clearTimeout(timer);
}

// For after() hooks: kill every server still running and remove the temp dirs. With
// CRMD_E2E_SHOW_ERRORS=1 the error lines of every server's log are printed first (diagnosis).
export async function stopAll() {
  if (process.env.CRMD_E2E_SHOW_ERRORS) {
    for (const s of liveServers)
      for (const line of s.stderrText.split('\n')) if (line.includes('"level":"error"')) console.error(line);
  }
  await Promise.all([...liveServers].map((s) => killServer(s)));
  for (const dir of tempDirs) {
    try { fs.rmSync(dir, { recursive: true, force: true }); } catch { /* best effort */ }
  }
  tempDirs.clear();
}

// ---------------------------------------------------------------------------------------------
// HTTP

// Credential header sets.
export function appHeaders(app) {
  return { 'X-Core-Application-Id': app.appId };
}
export function masterHeaders(app) {
  return { 'X-Core-Application-Id': app.appId, 'X-Core-Master-Key': app.masterKey };
}
export function apiKeyHeaders(app, apiKey = app.apiKey) {
  return { 'X-Core-Application-Id': app.appId, 'X-Core-API-Key': apiKey };
}

// fetch wrapper. `body`: an object (sent as JSON), a string or a Buffer (sent as is).
// Returns {status, headers (lower-case names, plain object), body (parsed JSON or text), text, json}.
export async function request(server, method, urlPath, { headers = {}, body, timeoutMs = REQUEST_TIMEOUT_MS } = {}) {
  const h = { ...headers };
  let payload;
  if (body !== undefined) {
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      payload = body;
    } else {
      payload = JSON.stringify(body);
    }
    if (!Object.keys(h).some((k) => k.toLowerCase() === 'content-type')) {
      h['Content-Type'] = 'application/json';
    }
  }
  const res = await fetch(server.base + urlPath, {
    method,
    headers: h,
    body: payload,
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  server.responseCount = (server.responseCount ?? 0) + 1;
  const out = { status: res.status, headers: Object.fromEntries(res.headers.entries()), text };
  try { out.json = JSON.parse(text); } catch { out.json = undefined; }
  out.body = out.json !== undefined ? out.json : text;
  return out;
}

// Raw HTTP/1.1 over node:net: `head` is the request line and headers (without the final blank line,
// `Host` and `Connection: close` are added unless present), `body` a Buffer or string. Reads until the
// full response (Content-Length or chunked) or the connection closes. Write errors after the server
// answered early (e.g. 413 while the body is still going out) are ignored.
export function rawRequest(server, head, body = Buffer.alloc(0), { timeoutMs = REQUEST_TIMEOUT_MS } = {}) {
  const bodyBuf = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  let headText = head.replace(/\r?\n/g, '\r\n').replace(/(\r\n)+$/, '');
  if (!/\r\nhost:/i.test(headText)) headText += `\r\nHost: ${HOST}:${server.port}`;
  if (!/\r\nconnection:/i.test(headText)) headText += '\r\nConnection: close';
  if (bodyBuf.length > 0 && !/\r\ncontent-length:/i.test(headText) && !/\r\ntransfer-encoding:/i.test(headText)) {
    headText += `\r\nContent-Length: ${bodyBuf.length}`;
  }
  const headBytes = Buffer.from(headText + '\r\n\r\n', 'latin1');

  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    let done = false;
    // `onread` hands us each chunk straight from the read, before any write error of the same loop
    // turn can destroy the socket: a server that answers early and resets must not lose its answer.
    const sock = net.createConnection({
      host: HOST,
      port: server.port,
      onread: {
        buffer: Buffer.alloc(64 * 1024),
        callback: (n, chunk) => {
          buf = Buffer.concat([buf, Buffer.from(chunk.subarray(0, n))]);
          const parsed = parseRawResponse(buf, false);
          if (parsed && parsed.complete) finish(null, parsed);
        },
      },
    });
    const finish = (err, value) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      if (err) reject(err); else resolve(value);
    };
    const timer = setTimeout(() => {
      const parsed = parseRawResponse(buf, true);
      if (parsed) finish(null, parsed);
      else finish(new Error(`raw request timed out after ${timeoutMs} ms; got ${buf.length} bytes: ${buf.toString('latin1').slice(0, 200)}`));
    }, timeoutMs);
    sock.on('connect', async () => {
      if (bodyBuf.length <= EARLY_ANSWER_BODY) {
        sock.write(Buffer.concat([headBytes, bodyBuf]), () => { /* errors: see 'error' */ });
        return;
      }
      // Like a client sending `Expect: 100-continue`: a large body follows the head only if the server
      // has not answered (e.g. 413 on Content-Length) within EARLY_ANSWER_MS. The wait is bounded and
      // asserts nothing.
      sock.write(headBytes, () => { /* errors: see 'error' */ });
      const until = Date.now() + EARLY_ANSWER_MS;
      for (let i = 0; i < 100 && Date.now() < until && buf.length === 0 && !done; i++) {
        await new Promise((r) => setTimeout(r, 5));
      }
      if (buf.length === 0 && !done && !sock.destroyed) sock.write(bodyBuf, () => { /* errors: see 'error' */ });
    });
    sock.on('error', (err) => {
      // EPIPE/ECONNRESET after an early answer is fine; otherwise report what we have.
      const parsed = parseRawResponse(buf, true);
      if (parsed) finish(null, parsed);
      else finish(Object.assign(err, { received: buf.toString('latin1') }));
    });
    sock.on('end', () => {
      const parsed = parseRawResponse(buf, true);
      if (parsed) finish(null, parsed);
      else finish(new Error(`connection closed without a response (${buf.length} bytes: ${buf.toString('latin1').slice(0, 200)})`));
    });
    sock.on('close', () => {
      const parsed = parseRawResponse(buf, true);
      if (parsed) finish(null, parsed);
      else finish(new Error(`connection closed without a response (${buf.length} bytes: ${buf.toString('latin1').slice(0, 200)})`));
    });
  });
}

// Parses one HTTP response from `buf`. Returns null while the head is incomplete. With `atEof` an
// incomplete body is accepted as is (the connection ended).
function parseRawResponse(buf, atEof = false) {
  const headEnd = buf.indexOf('\r\n\r\n');
  if (headEnd < 0) return null;
  const headLines = buf.subarray(0, headEnd).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(headLines[0]);
  if (!m) return null;
  const headers = {};
  for (const line of headLines.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  let rest = buf.subarray(headEnd + 4);
  let bodyBuf;
  let complete = false;
  if (headers['content-length'] !== undefined) {
    const n = Number(headers['content-length']);
    if (rest.length >= n) { bodyBuf = rest.subarray(0, n); complete = true; } else if (atEof) bodyBuf = rest; else return null;
  } else if (/chunked/i.test(headers['transfer-encoding'] || '')) {
    const chunks = [];
    let off = 0;
    for (let i = 0; i < 100_000; i++) {
      const lineEnd = rest.indexOf('\r\n', off);
      if (lineEnd < 0) break;
      const size = parseInt(rest.subarray(off, lineEnd).toString('latin1'), 16);
      if (Number.isNaN(size)) break;
      if (size === 0) { complete = true; break; }
      if (rest.length < lineEnd + 2 + size + 2) break;
      chunks.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      off = lineEnd + 2 + size + 2;
    }
    if (!complete && !atEof) return null;
    bodyBuf = Buffer.concat(chunks);
  } else {
    if (!atEof) return null;
    bodyBuf = rest;
    complete = true;
  }
  const text = bodyBuf.toString('utf8');
  const out = { complete, status: Number(m[1]), headers, text };
  try { out.json = JSON.parse(text); } catch { out.json = undefined; }
  out.body = out.json !== undefined ? out.json : text;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Small helpers used by several files

// Fresh data dir + one application + a running server.
export async function setup(serverOpts = {}, appOpts = {}) {
  const dataDir = makeDataDir();
  const app = createApp(dataDir, appOpts);
  const server = await startServer(dataDir, serverOpts);
  return { dataDir, app, server };
}

// Creates a record with the master key; asserts 201 and returns its objectId.
export async function createRecord(server, app, className, fields) {
  const r = await request(server, 'POST', `/core/classes/${className}`, { headers: masterHeaders(app), body: fields });
  assert.equal(r.status, 201, `create ${className}: ${r.text}`);
  return r.body.objectId;
}

// All records of a class as the master key sees them (list with a large limit).
export async function listAll(server, app, className) {
  const r = await request(server, 'GET', `/core/classes/${encodeURIComponent(className)}?limit=10000`, { headers: masterHeaders(app) });
  assert.equal(r.status, 200, `list ${className}: ${r.text}`);
  assert.ok(Array.isArray(r.body.results), `list ${className}: ${r.text}`);
  return r.body.results;
}

export async function countRecords(server, app, className) {
  return (await listAll(server, app, className)).length;
}

// Asserts GET /health is still 200 {"status":"ok"}.
export async function assertHealthy(server) {
  const r = await request(server, 'GET', '/health');
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, { status: 'ok' });
}

// Polls `probe` (async, returns truthy when done) every `intervalMs` for at most `timeoutMs`.
// Returns {ok, elapsedMs, last}.
export async function pollUntil(probe, { timeoutMs = 1000, intervalMs = 20 } = {}) {
  const start = Date.now();
  const maxTries = Math.ceil(timeoutMs / Math.max(1, intervalMs)) + 2;
  let last;
  for (let i = 0; i < maxTries; i++) {
    last = await probe();
    if (last && last.done) return { ok: true, elapsedMs: Date.now() - start, last };
    if (Date.now() - start >= timeoutMs) break;
    await sleep(intervalMs);
  }
  return { ok: false, elapsedMs: Date.now() - start, last };
}

// Runs `fn(item, i)` over `items` with at most `width` in flight.
export async function pool(items, width, fn) {
  let next = 0;
  const workers = Array.from({ length: width }, async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i], i);
    }
  });
  await Promise.all(workers);
}

// The finished mails in an outbox folder, by name. A mail is written as a hidden .tmp file and
// then renamed, so a listing may catch one half written, gone by the time it is read.
export function outboxMails(outbox) {
  try {
    return fs.readdirSync(outbox).filter((n) => n.endsWith('.eml') && !n.startsWith('.')).sort();
  } catch (err) {
    if (err.code === 'ENOENT') return [];
    throw err;
  }
}
