// The port a `crmd serve --listen 127.0.0.1:0` child bound, read from its `listening` log line on
// stderr (the child must be spawned with stderr piped); the rest of stderr is drained unread.
export function listeningPort(server, timeoutMs = 10_000) {
  return new Promise((resolve, reject) => {
    let buf = '';
    let found = false;
    const timer = setTimeout(() => reject(new Error('no listening line')), timeoutMs);
    server.stderr.on('data', (d) => {
      if (found) return;
      buf += d;
      const m = buf.match(/"msg":"listening".*?"port":(\d+)/);
      if (m) { found = true; buf = ''; clearTimeout(timer); resolve(Number(m[1])); }
    });
    server.stderr.resume();
  });
}
