// Two crmd binaries on the same workloads, alternated (issue 33: "no workload of the SQLite table
// slower than before"). Runs bench/quick.mjs for A and B in the order A B B A, repeated, so that
// whatever else the machine does weighs on both alike, and prints each workload's median req/s and
// server CPU per request, B against A. Loopback only, bounded: quick.mjs's runs, one at a time.
//   node bench/ab.mjs path/to/crmd-A path/to/crmd-B
// Environment: BENCH_ROUNDS (2: each round runs A B B A), and quick.mjs's own (BENCH_ROWS,
// BENCH_DURATION, BENCH_ONLY, ...).
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const [a, b] = process.argv.slice(2).map((p) => path.resolve(p));
if (!a || !b) {
  console.error('usage: node bench/ab.mjs path/to/crmd-A path/to/crmd-B');
  process.exit(2);
}
const ROUNDS = Number(process.env.BENCH_ROUNDS || 2);
const QUICK = path.join(import.meta.dirname, 'quick.mjs');

// quick.mjs's lines: "<key> <n> req/s ... cpu <ms> ms/req ...", and "load: <n> rows in ... = <r> rows/s, cpu <ms> ms/row".
function run(bin) {
  const out = execFileSync(process.execPath, [QUICK, bin], { encoding: 'utf8', timeout: 1_800_000, stdio: ['ignore', 'pipe', 'inherit'] });
  const figures = {};
  for (const line of out.split('\n')) {
    const load = line.match(/^load: .* = (\d+) rows\/s, cpu ([\d.]+) ms\/row/);
    if (load) figures.load = { rate: Number(load[1]), cpu: Number(load[2]) };
    const w = line.match(/^(\S+)\s+(\d+) req\/s .* cpu ([\d.]+) ms\/req/);
    if (w) figures[w[1]] = { rate: Number(w[2]), cpu: Number(w[3]) };
  }
  return figures;
}

const runs = { a: [], b: [] };
for (let round = 1; round <= ROUNDS; ++round) {
  for (const which of ['a', 'b', 'b', 'a']) {
    console.error(`[ab] round ${round}/${ROUNDS}: ${which === 'a' ? a : b}`);
    runs[which].push(run(which === 'a' ? a : b));
  }
}
const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
console.log(`A: ${a}\nB: ${b}\n${ROUNDS * 2} runs each (A B B A per round), medians:\n`);
console.log('| workload | A req/s | B req/s | B/A | A CPU ms/req | B CPU ms/req | B/A CPU |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const key of Object.keys(runs.a[0])) {
  const of = (which, field) => median(runs[which].map((r) => r[key]?.[field]).filter((v) => v !== undefined));
  const [ra, rb, ca, cb] = [of('a', 'rate'), of('b', 'rate'), of('a', 'cpu'), of('b', 'cpu')];
  console.log(`| ${key === 'load' ? 'bulk load (rows/s, ms/row)' : key} | ${Math.round(ra)} | ${Math.round(rb)} | ${(rb / ra).toFixed(2)} | ${ca.toFixed(4)} | ${cb.toFixed(4)} | ${(cb / ca).toFixed(2)} |`);
}
