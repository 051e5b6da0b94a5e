// Debian's Chromium (scripts/install-deps), driven headless by playwright-core's library: no
// browser of its own is ever downloaded. A fresh profile per launch (playwright's temporary one);
// the flags keep Chromium off the network, which this machine closes (Google's hosts, updates).
// Also: the axe-core check every console and sign-in page must pass, and screenshots kept as the
// test run's output, under the build folder.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

import { CRMD_BIN } from './harness.mjs';

export const CHROMIUM = process.env.CRMD_CHROMIUM || '/usr/bin/chromium';
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];

export async function launchBrowser() {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
}

// Where a test file's screenshots go: <build>/test-output/<label>/.
export function screenshotDir(label) {
  const dir = path.join(path.dirname(CRMD_BIN), 'test-output', label);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

// axe-core on the page as it is: no violation of impact serious or critical (WCAG 2 A and AA
// rules). axe is evaluated through the DevTools protocol, which the page's CSP does not govern,
// so the page keeps its own policy while it is checked.
export async function assertAccessible(page, what) {
  await page.evaluate(axeSource);
  const result = await page.evaluate(() => window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }));
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join('; ')})`), [],
    `${what}: axe-core found serious or critical violations`);
}
