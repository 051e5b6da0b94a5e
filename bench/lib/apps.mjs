// Many applications in one data folder for the benchmarks of many tenants (tenants.mjs,
// sigterm.mjs): made by `crmd app create` once, listed with their keys in `<dir>/apps.json` (or
// `apps-<prefix>.json`), and read back from there by later runs (making a thousand takes most of
// a minute).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

// `crmd app create` processes at once: one a core (~35 ms each, mostly its own CPU).
const MAKE_IN_FLIGHT = 2;

// The first `count` applications of `dir` whose ids start with `prefix` ({appId, masterKey, ...}),
// made as needed; `productBase` gives new ones the CRM product base.
export async function makeApps(crmd, dir, count, productBase, prefix = 't') {
  const list = path.join(dir, prefix === 't' ? 'apps.json' : `apps-${prefix}.json`);
  const apps = fs.existsSync(list) ? JSON.parse(fs.readFileSync(list, 'utf8')) : [];
  if (apps.length >= count) return apps.slice(0, count);
  console.error(`making ${count - apps.length} applications in ${dir} ...`);
  const create = (id) => new Promise((resolve, reject) => {
    const args = ['app', 'create', '--data', dir, '--id', id];
    if (!productBase) args.push('--no-product-base');
    execFile(crmd, args, { encoding: 'utf8' }, (e, out) => (e ? reject(e) : resolve(JSON.parse(out))));
  });
  // One made by a run that stopped before it listed it is passed over (its keys are lost).
  let n = apps.length;
  const nextId = () => { while (fs.existsSync(path.join(dir, 'apps', `${prefix}${n}`))) n++; return `${prefix}${n++}`; };
  const made = [];
  let started = apps.length;
  await Promise.all(Array.from({ length: MAKE_IN_FLIGHT }, async () => {
    while (started < count) {
      started++;
      made.push(await create(nextId()));
      if (made.length % 100 === 0) fs.writeFileSync(list, JSON.stringify([...apps, ...made]));
    }
  }));
  apps.push(...made);
  fs.writeFileSync(list, JSON.stringify(apps));
  return apps.slice(0, count);
}
