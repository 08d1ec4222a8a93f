// Checks the development loop: with `trunk serve` running in CLONE (a throw-away clone of the
// repository: this script edits its files), opens the served page, edits a stylesheet and a
// component under web/, and reports how long the page took to reload with each change. Fails
// if a change has not shown within 10 minutes.
//
//   git clone . /tmp/dev && (cd /tmp/dev && source scripts/env.sh && trunk serve) &
//   node scripts/trunk-reload-check.mjs /tmp/dev
import { chromium } from 'playwright-core';
import fs from 'node:fs';

const clone = process.argv[2];
if (!clone || !fs.existsSync(`${clone}/Trunk.toml`)) {
  console.error('usage: node scripts/trunk-reload-check.mjs CLONE   (a clone with `trunk serve` running)');
  process.exit(2);
}
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
await page.goto('http://127.0.0.1:8080/#/choose', { waitUntil: 'load' });
await page.waitForSelector('#choose-title', { timeout: 120000 });

/** Replaces `from` by `to` in `file` and waits for a reloaded page on which `shows` holds. */
async function change(file, from, to, shows) {
  await page.evaluate(() => { window.beforeTheChange = true; });
  const started = Date.now();
  const path = `${clone}/${file}`;
  const text = fs.readFileSync(path, 'utf8');
  if (!text.includes(from)) throw new Error(`${file} has no ${from}`);
  fs.writeFileSync(path, text.replace(from, to));
  for (;;) {
    if (Date.now() - started > 600000) throw new Error(`the page never showed the change to ${file}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Throws while the page navigates: then look again.
    const shown = await page.evaluate(shows).catch(() => false);
    const reloaded = await page.evaluate(() => window.beforeTheChange !== true).catch(() => false);
    if (shown && reloaded) break;
  }
  console.log(`${file}: the page reloaded with the change ${((Date.now() - started) / 1000).toFixed(1)} s after it was saved`);
}

await change('web/style.css', ':root {', ':root { --reload-check: 7px;',
  () => getComputedStyle(document.documentElement).getPropertyValue('--reload-check').trim() === '7px');
await change('web/src/components/choose.rs', '"Choosing a design"', '"Choosing a design (edited)"',
  () => document.querySelector('#choose-title')?.textContent === 'Choosing a design (edited)');
await browser.close();
