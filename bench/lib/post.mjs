// POSTs a JSON body over keep-alive connections with node's http module, for the bulk loads. The loading
// client shares the machine's two cores with the server it measures: a 50-row batch costs it ~0.5 ms of
// CPU this way and ~1.5 ms through fetch() (0.77 of a core at crmd's load rate), so fetch() took CPU from
// the server under test. Parse Server, bound by itself at ~2,000 rows/s, loads the same either way.
import http from 'node:http';

// A function (path, body string) -> Promise<{status, text, json}> posting to `base` with `headers`
// on at most `sockets` connections; json is null when the answer is no JSON.
export function poster(base, headers, sockets, timeoutMs) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  const { hostname, port } = new URL(base);
  return (path, body) => new Promise((resolve, reject) => {
    const req = http.request({
      hostname, port, path, method: 'POST', agent, timeout: timeoutMs,
      headers: { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json = null;
        try { json = JSON.parse(text); } catch { /* not JSON */ }
        resolve({ status: res.statusCode, text, json });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}
