// A raw LiveQuery client for the e2e tests (npm `ws`): every message it received, in order, and a
// bounded wait for the next one a predicate accepts.
import WebSocket from 'ws';

// How long one expected message may take (the delivery is asynchronous, never slow by design).
const MESSAGE_TIMEOUT_MS = 15_000;

export class LiveClient {
  // `server` from startServer, `app` from createApp; `path`: where the upgrade is asked.
  constructor(server, app, path = '/core') {
    this.app = app;
    this.messages = [];
    this.waiters = [];
    this.ws = new WebSocket(`ws://127.0.0.1:${server.port}${path}`);
    this.closed = new Promise((resolve) => this.ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
    this.ws.on('message', (data) => {
      const m = JSON.parse(String(data));
      this.messages.push(m);
      this.waiters = this.waiters.filter((w) => !w(m));
    });
    this.opened = new Promise((resolve, reject) => { this.ws.on('open', resolve); this.ws.on('error', reject); });
  }

  send(m) { this.ws.send(typeof m === 'string' ? m : JSON.stringify(m)); }

  // The first message received (before or after the call) that `pred` accepts.
  next(pred, what = 'a message') {
    const seen = this.messages.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.messages).slice(0, 2000)}`)), MESSAGE_TIMEOUT_MS);
      this.waiters.push((m) => { if (!pred(m)) return false; clearTimeout(timer); resolve(m); return true; });
    });
  }

  event(op, requestId, objectId) {
    return this.next((m) => m.op === op && m.requestId === requestId && (!objectId || m.object?.objectId === objectId), `${op} of ${objectId ?? 'a record'}`);
  }

  async connect(credentials = { masterKey: this.app.masterKey }) {
    await this.opened;
    this.send({ op: 'connect', applicationId: this.app.appId, ...credentials });
    return this.next((m) => m.op === 'connected' || (m.op === 'error' && m.requestId === undefined), 'connected');
  }

  async subscribe(requestId, query, extra = {}) {
    this.send({ op: 'subscribe', requestId, query, ...extra });
    return this.next((m) => (m.op === 'subscribed' || m.op === 'error') && m.requestId === requestId, `subscribed ${requestId}`);
  }

  close() { this.ws.close(); }
}
