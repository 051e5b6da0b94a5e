// Loopback receivers for what crmd sends out: a webhook receiver (node:http) and a minimal SMTP
// server (node:net). Both listen on 127.0.0.1 port 0, record everything they get, and are closed by
// the test file's after() hook through closeAll().
//
// `order()` is one counter shared by the receivers and the tests: a test that calls it when a client
// answer arrives can compare that number with a receiver's `receivedAt` / `answeredAt`, so "A happened
// before B" is asserted by ordering, never by a time threshold.
import http from 'node:http';
import net from 'node:net';
import { HOST } from './harness.mjs';

let sequence = 0;
export function order() {
  return ++sequence;
}

const open = new Set();

// Starts a webhook receiver. `respond(req, n)` decides each answer: `req` is the recorded request
// (below), `n` how many requests its path got before this one. It returns {status, delayMs, body}
// (all optional; default 200 at once). Every request is recorded as
//   {n, method, path, url, headers (lower-case), rawBody (string), json, receivedAt, answeredAt, status}
// Returns {url, port, requests, on(path), close()}; `on(path)` lists the requests of one path.
export function startWebhookReceiver(respond = () => ({ status: 200 })) {
  const requests = [];
  const perPath = new Map();
  const timers = new Set();
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const pathOnly = req.url.split('?')[0];
      const n = perPath.get(pathOnly) ?? 0;
      perPath.set(pathOnly, n + 1);
      const rec = {
        n, method: req.method, path: pathOnly, url: req.url, headers: { ...req.headers }, rawBody,
        json: undefined, receivedAt: order(), receivedMs: Date.now(), answeredAt: undefined, status: undefined,
      };
      try { rec.json = JSON.parse(rawBody); } catch { /* not JSON: left undefined */ }
      requests.push(rec);
      let answer;
      try { answer = respond(rec, n) ?? {}; } catch { answer = { status: 500 }; }
      const status = answer.status ?? 200;
      const finish = () => {
        rec.status = status;
        rec.answeredAt = order();
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(answer.body ?? JSON.stringify({ ok: status < 300 }));
      };
      if (answer.delayMs > 0) {
        const t = setTimeout(() => { timers.delete(t); finish(); }, answer.delayMs);
        timers.add(t);
      } else {
        finish();
      }
    });
    req.on('error', () => { /* the client went away */ });
  });
  server.keepAliveTimeout = 1000;
  const handle = {
    server,
    requests,
    port: 0,
    url: '',
    on: (p) => requests.filter((r) => r.path === p),
    close: () => new Promise((resolve) => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      open.delete(handle);
      server.closeAllConnections?.();
      server.close(() => resolve());
    }),
  };
  return listen(server, handle);
}

// A minimal SMTP server: one message per DATA, recorded as {from, to: [lines], data}. It speaks just
// enough of RFC 5321 for curl's client (EHLO/HELO, MAIL, RCPT, DATA, RSET, NOOP, QUIT).
export function startFakeSmtp() {
  const messages = [];
  const sockets = new Set();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => { /* client gone */ });
    socket.setEncoding('utf8');
    let pending = '';
    let collecting = false;
    let current = { from: '', to: [] };
    socket.write('220 loopback test SMTP\r\n');
    socket.on('data', (chunk) => {
      pending += chunk;
      for (let guard = 0; guard < 10_000; guard++) {
        if (collecting) {
          const end = pending.indexOf('\r\n.\r\n');
          if (end < 0) return;
          // Undo dot-stuffing.
          const data = pending.slice(0, end).replace(/^\.\./gm, '.');
          pending = pending.slice(end + 5);
          messages.push({ ...current, data, receivedAt: order() });
          current = { from: '', to: [] };
          collecting = false;
          socket.write('250 2.0.0 accepted\r\n');
          continue;
        }
        const eol = pending.indexOf('\r\n');
        if (eol < 0) return;
        const line = pending.slice(0, eol);
        pending = pending.slice(eol + 2);
        const verb = line.split(' ')[0].toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') socket.write('250 loopback\r\n');
        else if (verb === 'MAIL') { current.from = line; socket.write('250 2.1.0 ok\r\n'); }
        else if (verb === 'RCPT') { current.to.push(line); socket.write('250 2.1.5 ok\r\n'); }
        else if (verb === 'DATA') { collecting = true; socket.write('354 end with <CRLF>.<CRLF>\r\n'); }
        else if (verb === 'QUIT') { socket.end('221 2.0.0 bye\r\n'); return; }
        else if (verb === 'RSET') { current = { from: '', to: [] }; socket.write('250 2.0.0 ok\r\n'); }
        else socket.write('250 2.0.0 ok\r\n');
      }
    });
  });
  const handle = {
    server,
    messages,
    port: 0,
    close: () => new Promise((resolve) => {
      open.delete(handle);
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
  return listen(server, handle);
}

// Listens on a free loopback port; `handle` (closed by closeAll if the test does not) gets the port
// and the base URL.
function listen(server, handle) {
  open.add(handle);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, HOST, () => {
      handle.port = server.address().port;
      handle.url = `http://${HOST}:${handle.port}`;
      resolve(handle);
    });
  });
}

// For after() hooks: closes every receiver still open.
export async function closeAll() {
  await Promise.all([...open].map((h) => h.close()));
}

// Undoes the transfer encodings a mailer may use (quoted-printable, base64), so a test can look for
// the text it expects; returns the raw message followed by every decoded form.
export function decodeMail(raw) {
  const parts = [raw];
  if (/content-transfer-encoding:\s*quoted-printable/i.test(raw)) {
    parts.push(raw.replace(/=\r?\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16))));
  }
  if (/content-transfer-encoding:\s*base64/i.test(raw)) {
    for (const block of raw.match(/(?:^[A-Za-z0-9+/=]{16,}\r?\n?)+/gm) ?? []) {
      parts.push(Buffer.from(block.replace(/\s+/g, ''), 'base64').toString('utf8'));
    }
  }
  return parts.join('\n');
}
