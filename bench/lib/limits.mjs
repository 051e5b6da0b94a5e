// The limit beside the peer (issue 33): what each database alone does with the statements of the
// bench's workloads, so that crmd's figures can be read as a fraction of it. Used by
// bench/side-by-side.mjs between its read and its write workloads, on the rows its reads saw:
//   pgbenchLimit  PostgreSQL: pgbench, 16 clients, prepared statements, on a copy of crmd's
//                 Accounts and LeadStatuses (`CREATE TABLE ... (LIKE ... INCLUDING ALL)`: the same
//                 columns, types and indexes, the (City, Score) one included, and the same rows) in
//                 a schema of its own in crmd's database, on the same cluster, synchronous_commit on;
//   sqliteLimit   SQLite: bench/sqlite-limit.c (compiled by bench/run) on a copy of crmd's store.
// Each statement is crmd's own (its text in PostgreSQL's log, src/storage/sql/record_statements.cpp);
// where crmd does more per request (an update reads the row first and writes every own column; a
// write takes an advisory lock and a savepoint), the limit leaves it out: it is the least the
// database must do. Processes are started through `ctx.run`, which tracks and bounds them.
import fs from 'node:fs';
import path from 'node:path';
import { CITIES } from './data.mjs';

const SCHEMA = 'bench_limit';
const ACCOUNTS = `"${SCHEMA}"."Accounts"`;
const LEAD_STATUSES = `"${SCHEMA}"."LeadStatuses"`;
const BULK_BATCH = 50;          // rows a transaction in `bulk`: the bench's /batch size
const RUN_ID_START = 5_000_000; // the measured run's first row number per client (warm-up from 0)

const quote = (s) => `'${String(s).replaceAll("'", "''")}'`;
const textArray = (xs) => `ARRAY[${xs.map(quote).join(', ')}]`;
// An insert draws its City in SQL; a where binds it as crmd does, a text parameter (the planner sees
// the value), from one script per city (pgbench picks a script at random, each as likely).
const CITY = `(${textArray(CITIES)})[:ci]`;
const CITY_VARS = CITIES.map((c, i) => `city${i}=${c}`);
const WHERE = (i) => `(t0."City" = :city${i} AND (t0."Score" >= :sc))`;
const RANDOM_SCORE = '\\set sc random(0, 99)';
const QUERY = (i) => `SELECT t0.* FROM ${ACCOUNTS} AS t0 WHERE ${WHERE(i)} ORDER BY t0."createdAt" DESC, t0."objectId" DESC LIMIT 100 OFFSET 0;`;
const perCity = (lines) => CITIES.map((_, i) => lines(i));
// Rows copied into the limit's table are numbered: their objectId is the number, 10 digits.
const BY_NUMBER = `lpad(:n::text, 10, '0')`;

// The workloads, in the order the bench runs them (reads before writes). `rows`: database rows a
// transaction of the script writes (bulk: 50), for rows/s.
export const PG_LIMIT_WORKLOADS = [
  { key: 'get', name: 'get-by-id: SELECT t0.* by objectId' },
  { key: 'query', name: 'query: the where, ORDER BY createdAt DESC, LIMIT 100' },
  { key: 'count', name: 'count: count(*) with the where' },
  { key: 'include', name: 'query + include: the query, then the LeadStatuses of the page by id' },
  { key: 'update', name: 'update: updatedAt, Visits + 1, Status by objectId' },
  { key: 'create', name: 'create: INSERT of the 21-field row' },
  { key: 'bulk', name: 'bulk load: 50 INSERTs in one transaction', rows: BULK_BATCH },
];

// Each workload's scripts: lists of lines, one script or one per city.
function scripts(rows, leadIds, insert) {
  const pick = `\\set n random(1, ${rows})`;
  const create = (prefix) => ['\\set c :c + 1', '\\set ci random(1, 8)', RANDOM_SCORE, `\\set li random(1, ${leadIds.length})`, insert(prefix)];
  return {
    get: [[pick, `SELECT t0.* FROM ${ACCOUNTS} AS t0 WHERE t0."objectId" = ${BY_NUMBER};`]],
    query: perCity((i) => [RANDOM_SCORE, QUERY(i)]),
    count: perCity((i) => [RANDOM_SCORE, `SELECT count(*) FROM ${ACCOUNTS} AS t0 WHERE ${WHERE(i)};`]),
    include: perCity((i) => [RANDOM_SCORE, QUERY(i), `SELECT t0.* FROM ${LEAD_STATUSES} AS t0 WHERE t0."objectId" = ANY(${textArray(leadIds)});`]),
    update: [[pick, '\\set k random(0, 6)',
      `UPDATE ${ACCOUNTS} SET "updatedAt" = now(), "Visits" = "Visits" + 1, "Status" = 'touched ' || :k::text WHERE "objectId" = ${BY_NUMBER};`]],
    create: [create('p')],
    bulk: [['BEGIN;', ...Array.from({ length: BULK_BATCH }, () => create('b')).flat(), 'COMMIT;']],
  };
}

// The copy, and the INSERT of a row like the bench's creates: the newest row's values (the last
// row loaded, accountRow(ROWS - 1): the limits run before crmd's creates), bound as pgbench
// variables, with a new objectId, the time, and City, Score and LeadStatusId drawn as the bench's
// rows vary them.
function prepare(ctx, crmdSchema) {
  const { psql } = ctx;
  const src = `"${crmdSchema}"`;
  psql(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`, `CREATE SCHEMA ${SCHEMA}`,
    `CREATE TABLE ${ACCOUNTS} (LIKE ${src}."Accounts" INCLUDING ALL)`,
    `CREATE TABLE ${LEAD_STATUSES} (LIKE ${src}."LeadStatuses" INCLUDING ALL)`,
    `INSERT INTO ${LEAD_STATUSES} SELECT * FROM ${src}."LeadStatuses"`);
  const columns = psql(`SELECT column_name FROM information_schema.columns WHERE table_schema = '${crmdSchema}' AND table_name = 'Accounts' ORDER BY ordinal_position`).split('\n');
  const rest = columns.filter((c) => c !== 'objectId').map((c) => `"${c}"`).join(', ');
  psql(`INSERT INTO ${ACCOUNTS} ("objectId", ${rest}) SELECT lpad((row_number() OVER (ORDER BY "createdAt", "objectId"))::text, 10, '0'), ${rest} FROM ${src}."Accounts"`,
    `VACUUM ANALYZE ${ACCOUNTS}`, `ANALYZE ${LEAD_STATUSES}`);
  const rows = Number(psql(`SELECT count(*) FROM ${ACCOUNTS}`));
  const leadIds = psql(`SELECT "objectId" FROM ${LEAD_STATUSES} ORDER BY 1`).split('\n').filter(Boolean);
  const sample = JSON.parse(psql(`SELECT json_build_object(${columns.map((c) => `${quote(c)}, "${c}"::text`).join(', ')}) FROM (SELECT * FROM ${src}."Accounts" ORDER BY "createdAt" DESC, "objectId" DESC LIMIT 1) AS t`));
  const vars = [];
  const values = columns.map((c) => {
    switch (c) {
      case 'objectId': return `'PREFIX' || lpad(:client_id::text, 2, '0') || lpad(:c::text, 7, '0')`;
      case 'createdAt': case 'updatedAt': return 'now()';
      case 'City': return CITY;
      case 'Score': return ':sc';
      case 'LeadStatusId': return `(${textArray(leadIds)})[:li]`;
      default:
        if (sample[c] === null) return 'NULL';
        vars.push(`v${vars.length}=${sample[c]}`);
        return `:v${vars.length - 1}`;
    }
  });
  const insert = (prefix) => `INSERT INTO ${ACCOUNTS} (${columns.map((c) => `"${c}"`).join(', ')}) VALUES (${values.join(', ').replace('PREFIX', prefix)}) ON CONFLICT DO NOTHING RETURNING 1;`;
  return { rows, leadIds, vars, insert, synchronousCommit: psql('SHOW synchronous_commit'), indexes: psql(`SELECT indexdef FROM pg_indexes WHERE schemaname = '${SCHEMA}' AND tablename = 'Accounts' ORDER BY 1`).split('\n') };
}

// ctx: { pg: {port, pid}, pgBin, psql(...statements) -> stdout (database crmd), run(name, cmd, args, ms) ->
// Promise<{code, out}>, cpuSnapshot(), cpuDelta(before), dir, warmup, duration, clients, log }.
export async function pgbenchLimit(ctx, crmdSchema) {
  const p = prepare(ctx, crmdSchema);
  const all = scripts(p.rows, p.leadIds, p.insert);
  fs.mkdirSync(ctx.dir, { recursive: true });
  const out = { rows: p.rows, synchronousCommit: p.synchronousCommit, indexes: p.indexes, clients: ctx.clients, workloads: {} };
  for (const w of PG_LIMIT_WORKLOADS) {
    const files = all[w.key].map((lines, i) => {
      const file = path.join(ctx.dir, `${w.key}${all[w.key].length > 1 ? `-${i}` : ''}.sql`);
      fs.writeFileSync(file, `${lines.join('\n')}\n`);
      return file;
    });
    const pgbench = async (seconds, start, tag) => {
      const args = ['-h', '127.0.0.1', '-p', String(ctx.pg.port), '-U', 'postgres', '-n', '-M', 'prepared',
        '-c', String(ctx.clients), '-j', '1', '-T', String(seconds), '-D', `c=${start}`,
        ...[...CITY_VARS, ...p.vars].flatMap((v) => ['-D', v]), ...files.flatMap((f) => ['-f', `${f}@1`]), 'crmd'];
      const r = await ctx.run(`pgbench-${tag}`, `${ctx.pgBin}/pgbench`, args, (seconds + 60) * 1000);
      fs.writeFileSync(path.join(ctx.dir, `${tag}.txt`), `pgbench ${args.join(' ')}\n${r.out}`);
      const num = (re) => Number(r.out.match(re)?.[1] ?? NaN);
      const processed = num(/number of transactions actually processed: (\d+)/);
      if (r.code !== 0 || !Number.isFinite(processed)) throw new Error(`pgbench ${tag} failed (exit ${r.code}): ${r.out.slice(-600)}`);
      return { transactions: processed, failed: num(/number of failed transactions: (\d+)/) || 0,
        tps: num(/tps = ([\d.]+) \(without initial connection time\)/), latencyMs: num(/latency average = ([\d.]+) ms/) };
    };
    ctx.log(`  pgbench ${w.key}: ${ctx.clients} clients, ${ctx.duration} s after ${ctx.warmup} s`);
    const warm = await pgbench(ctx.warmup, 0, `${w.key}-warmup`);
    const before = ctx.cpuSnapshot();
    const r = await pgbench(ctx.duration, RUN_ID_START, w.key);
    r.cpu = ctx.cpuDelta(before); // server: all of PostgreSQL; wrkCores: pgbench itself
    r.cpu.msPerTransaction = r.transactions ? (r.cpu.serverCpuSeconds * 1000) / r.transactions : null;
    r.rowsPerTransaction = w.rows ?? 1;
    r.warmupTransactions = warm.transactions;
    out.workloads[w.key] = r;
    ctx.log(`    ${Math.round(r.tps)} tps, ${r.latencyMs} ms average, PostgreSQL ${r.cpu.msPerTransaction?.toFixed(3)} ms CPU a transaction`);
  }
  // Every insert made its row (ON CONFLICT DO NOTHING would hide a repeated id).
  const made = (prefix) => Number(ctx.psql(`SELECT count(*) FROM ${ACCOUNTS} WHERE "objectId" LIKE '${prefix}%'`));
  const c = out.workloads.create; const b = out.workloads.bulk;
  out.insertsComplete = made('p') === c.transactions + c.warmupTransactions &&
    made('b') === (b.transactions + b.warmupTransactions) * BULK_BATCH;
  ctx.psql(`DROP SCHEMA ${SCHEMA} CASCADE`);
  return out;
}

// SQLite: bench/sqlite-limit.c on a copy of crmd's store `source`. ctx: { bin, dir, seconds, group,
// readers, run }. The modes as the program names them (create-each, create-group, ...).
export async function sqliteLimit(ctx, source) {
  fs.mkdirSync(ctx.dir, { recursive: true });
  const work = path.join(ctx.dir, 'limit.db');
  const args = [source, work, String(ctx.seconds), String(ctx.group), String(ctx.readers)];
  const r = await ctx.run('sqlite-limit', ctx.bin, args, (ctx.seconds * 7 + 7 + 300) * 1000);
  fs.writeFileSync(path.join(ctx.dir, 'sqlite-limit.txt'), `${ctx.bin} ${args.join(' ')}\n${r.out}`);
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(work + suffix, { force: true });
  if (r.code !== 0) throw new Error(`sqlite-limit failed (exit ${r.code}): ${r.out.slice(-600)}`);
  const modes = {};
  for (const m of r.out.matchAll(/^LIMIT_RESULT (.*)$/gm)) { const x = JSON.parse(m[1]); modes[x.mode] = x; }
  return { seconds: ctx.seconds, group: ctx.group, readers: ctx.readers, sqlite: r.out.match(/SQLite ([\d.]+)/)?.[1], modes };
}
