// The PostgreSQL store under the end-to-end suite (issue 22): with CRMD_E2E_STORE=postgresql the
// harness gives every data directory a database of its own in one throw-away PostgreSQL 15
// cluster: the test run's (CRMD_TEST_PG_DIR, tests/support/pg-fixture), or one of the test file's
// own (initdb and pg_ctl in a temporary directory, a Unix socket there and no TCP port, run as the
// postgres user when the tests run as root), and passes it as `--store`.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const BIN = '/usr/lib/postgresql/15/bin';
export const ON_POSTGRESQL = process.env.CRMD_E2E_STORE === 'postgresql';

let cluster;  // {dir}
const databases = new Map();  // data dir -> URL

function asPostgres(command, args, opts = {}) {
  const root = process.getuid?.() === 0;
  const [cmd, argv] = root ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  return execFileSync(cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000, ...opts });
}

function startCluster() {
  // The test run's cluster, when ctest started one (tests/support/pg-fixture): databases of this
  // process are made in it, and it is left running.
  if (process.env.CRMD_TEST_PG_DIR) {
    cluster = { dir: process.env.CRMD_TEST_PG_DIR, shared: true };
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'crmd-e2e-pg-'));
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres:', dir]);
  asPostgres(`${BIN}/initdb`, ['-D', `${dir}/data`, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  // fsync stays on: the suite's durability tests kill crmd, not PostgreSQL, but a commit crmd
  // acknowledged must be as durable as in production.
  asPostgres(`${BIN}/pg_ctl`, ['start', '-w', '-t', '60', '-D', `${dir}/data`, '-l', `${dir}/server.log`,
    '-o', `-k ${dir} -c listen_addresses='' -c max_connections=300`]);
  cluster = { dir };
  process.on('exit', stopCluster);
}

export function stopCluster() {
  if (!cluster) return;
  if (cluster.shared) {
    cluster = undefined;
    return;
  }
  try {
    asPostgres(`${BIN}/pg_ctl`, ['stop', '-w', '-t', '30', '-m', 'immediate', '-D', `${cluster.dir}/data`]);
  } catch { /* already stopped */ }
  fs.rmSync(cluster.dir, { recursive: true, force: true });
  cluster = undefined;
}

// The --store URL of `dataDir`'s database (made on first use).
export function storeUrl(dataDir) {
  let url = databases.get(dataDir);
  if (url) return url;
  if (!cluster) startCluster();
  const name = `db${process.pid}_${databases.size + 1}`;  // unique in a shared cluster
  asPostgres(`${BIN}/createdb`, ['-h', cluster.dir, '-U', 'postgres', name]);
  url = `postgresql://postgres@/${name}?host=${cluster.dir}`;
  databases.set(dataDir, url);
  return url;
}

// `args` of a crmd command with `--store` after its `--data DIR` when the suite runs on PostgreSQL.
export function withStore(args) {
  if (!ON_POSTGRESQL || args.includes('--store')) return args;
  const at = args.indexOf('--data');
  if (at < 0 || at + 1 >= args.length) return args;
  return [...args.slice(0, at + 2), '--store', storeUrl(args[at + 1]), ...args.slice(at + 2)];
}

// The directories where the store keeps `dataDir`'s records besides `dataDir` itself: the
// cluster's data directory on PostgreSQL (tables and WAL), none on SQLite.
export function storeDirs(dataDir) {
  if (!ON_POSTGRESQL || !databases.has(dataDir)) return [];
  return [`${cluster.dir}/data`];
}

// Stops the cluster's server and starts it again, for the tests of a PostgreSQL restart under
// crmd. `fast` closes open connections cleanly; `immediate` is a crash (no shutdown checkpoint,
// recovery at the next start).
export function stopPostgres({ mode = 'fast' } = {}) {
  if (cluster?.shared) throw new Error('this test stops PostgreSQL: it needs a cluster of its own (tests/CMakeLists.txt)');
  asPostgres(`${BIN}/pg_ctl`, ['stop', '-w', '-t', '60', '-m', mode, '-D', `${cluster.dir}/data`]);
}
export function startPostgres() {
  asPostgres(`${BIN}/pg_ctl`, ['start', '-w', '-t', '60', '-D', `${cluster.dir}/data`, '-l', `${cluster.dir}/server.log`,
    '-o', `-k ${cluster.dir} -c listen_addresses='' -c max_connections=300`]);
}
