// Issue 17 #14 (moved here from the end-to-end suite by issue 32: a test asserts behaviour, a
// benchmark measures time): a password reset request for a known address must take as long as
// one for an unknown address, or the time tells which addresses have accounts. crmd alone,
// loopback only, about 10 seconds.
//   node bench/reset-timing.mjs [path/to/crmd]
// Prints the medians of 40 requests each, and whether known is within 25% (+0.15 ms) of unknown.
import path from 'node:path';
import { startCrmd } from './lib/crmd.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');
const CRMD = path.resolve(process.argv[2] ?? path.join(ROOT, 'build', 'crmd'));
const COUNT = 40;

async function main() {
  const srv = await startCrmd(CRMD, ['--password-rate', '100000']);
  const { base, master, anonymous } = srv;
  try {
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
    srv.stop();
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
