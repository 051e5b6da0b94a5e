// Runs one end-to-end test file on the PostgreSQL store (CRMD_E2E_STORE=postgresql), leaving out
// the tests tests/e2e/postgresql-skips.json lists for it, each named with its reason in the output.
// Usage: node on-postgresql.mjs <file.test.mjs>
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const file = process.argv[2];
const list = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'postgresql-skips.json'), 'utf8'));
const skips = list.skips[path.basename(file)] || {};
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const args = ['--test', '--test-reporter=spec'];
const names = Object.keys(skips);
for (const name of names) console.log(`skipped on PostgreSQL: ${name}: ${skips[name]}`);
if (names.length > 0) args.push(`--test-name-pattern=^(?!(${names.map(escape).join('|')})$)`);
args.push(file);
const run = spawnSync(process.execPath, args, { stdio: 'inherit', env: { ...process.env, CRMD_E2E_STORE: 'postgresql' } });
process.exit(run.status ?? 1);
