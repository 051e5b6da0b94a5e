// A Unix-socket proxy in front of the test cluster's PostgreSQL, to lose a connection at the one
// moment a test needs: around a COMMIT. crmd connects to the proxy's directory as it would to the
// cluster's (`?host=<dir>`), and every byte is passed through until the proxy is armed.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

// The end of the simple query crmd commits with ("COMMIT", after the statements that travel with
// it: the generations its writes moved).
const COMMIT = Buffer.from('COMMIT\0');

// `socketDir`: the directory of the cluster's socket (.s.PGSQL.5432).
export async function startPgProxy(socketDir) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'crmd-pg-proxy-'));
  const sockets = new Set();
  // {mode, marker}: mode 'after' (the COMMIT reaches the server, its answer is lost) or 'before'
  // (it is never sent), for the first COMMIT of a transaction whose statements carried `marker`.
  let armed = null;
  let dropped = 0;
  const server = net.createServer((client) => {
    const upstream = net.connect(path.join(socketDir, '.s.PGSQL.5432'));
    sockets.add(client).add(upstream);
    let cutting = false;
    let marked = false;  // this connection's transaction carried the armed marker
    const cut = () => {
      client.destroy();
      upstream.destroy();
      dropped++;
    };
    client.on('data', (chunk) => {
      if (armed && chunk.includes(armed.marker)) marked = true;
      if (armed && marked && chunk.includes(COMMIT)) {
        const { mode } = armed;
        armed = null;
        if (mode === 'before') return cut();
        cutting = true;  // the server's answer to it is not passed on
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (cutting) return cut();
      client.write(chunk);
    });
    for (const s of [client, upstream]) {
      s.on('error', () => {});
      s.on('close', () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      });
    }
  });
  await new Promise((resolve) => server.listen(path.join(dir, '.s.PGSQL.5432'), resolve));
  return {
    dir,
    // The COMMIT of the next transaction that sends `marker` (a value of the write, which the
    // server's other transactions, the request log's, do not carry): 'after' lets the server
    // commit and loses its answer; 'before' drops the connection instead of sending it.
    arm(mode, marker) { armed = { mode, marker: Buffer.from(marker) }; },
    get armed() { return armed; },
    get dropped() { return dropped; },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
