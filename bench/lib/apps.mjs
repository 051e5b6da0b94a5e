// Many applications in one data folder for the benchmarks of many tenants (tenants.mjs,
// sigterm.mjs): made by `crmd app create` once, listed with their keys in `<dir>/apps.json`, and
// read back from there by later runs (making a thousand takes most of a minute).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

// The first `count` applications of `dir` ({appId, masterKey, ...}), made as needed; `productBase`
// gives new ones the CRM product base.
export function makeApps(crmd, dir, count, productBase) {
  const list = path.join(dir, 'apps.json');
  const apps = fs.existsSync(list) ? JSON.parse(fs.readFileSync(list, 'utf8')) : [];
  if (apps.length < count) console.error(`making ${count - apps.length} applications in ${dir} ...`);
  for (let n = apps.length; apps.length < count; n++) {
    // One made by a run that stopped before it listed it is passed over (its keys are lost).
    if (fs.existsSync(path.join(dir, 'apps', `t${n}`))) continue;
    const args = ['app', 'create', '--data', dir, '--id', `t${n}`];
    if (!productBase) args.push('--no-product-base');
    apps.push(JSON.parse(execFileSync(crmd, args, { encoding: 'utf8' })));
    if (apps.length % 100 === 0 || apps.length === count) fs.writeFileSync(list, JSON.stringify(apps));
  }
  return apps.slice(0, count);
}
