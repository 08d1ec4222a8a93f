// How soon a documentation page shows its first embed, next to the same figure for the full
// player: medians of 7 in headless Chromium on loopback, each run in a fresh browser context
// (nothing cached). A report, not a test: timings depend on the machine.
//
//   node scripts/embed-timing.mjs [dist]          (after `cargo xtask dist`)
//
// - example page: navigation start of embed-example.html to its first embed's `ready` message
//   (sent once the embed has drawn);
// - embed alone: navigation to the frame after an embed URL's picture is in the DOM;
// - player: the same for the player at the same run.
import { chromium } from 'playwright-core';
import { serve } from '../tests/serve.mjs';

const dist = process.argv[2] || 'dist';
const RUNS = 7;
const RUN = 'zombie-worker?fencing=write-predicate&seed=1&step=34';
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const server = await serve(dist);
const origin = `http://127.0.0.1:${server.address().port}`;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--no-first-run', '--disable-quic'],
});

/** Milliseconds from navigation to `window.__doneMs`, which `probe` (an init script) sets. */
async function time(url, probe, viewport) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  await page.addInitScript(probe);
  await page.goto(url);
  await page.waitForFunction(() => window.__doneMs !== undefined, null, { polling: 100, timeout: 30_000 });
  const ms = await page.evaluate(() => window.__doneMs);
  await context.close();
  return Math.round(ms);
}

// The frame after the picture is in the DOM.
const drawn = () => {
  const seen = new MutationObserver(() => {
    if (!document.querySelector('.topology svg[role=img]')) return;
    seen.disconnect();
    requestAnimationFrame(() => requestAnimationFrame(() => { window.__doneMs = performance.now(); }));
  });
  seen.observe(document, { childList: true, subtree: true });
};
// The first embed's `ready` message.
const firstReady = () => addEventListener('message', (e) => {
  if (e.data?.coordlab === 1 && e.data.type === 'ready' && window.__doneMs === undefined) window.__doneMs = performance.now();
});

const cases = [
  ['example page, first embed drawn', `${origin}/embed-example.html`, firstReady, { width: 1100, height: 800 }],
  ['embed alone (720×405)', `${origin}/#/embed/${RUN}`, drawn, { width: 720, height: 405 }],
  ['full player (1280×720)', `${origin}/#/play/${RUN}`, drawn, { width: 1280, height: 720 }],
];
console.log(`median of ${RUNS}, ms from navigation`);
for (const [name, url, probe, viewport] of cases) {
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(await time(url, probe, viewport));
  console.log(`${name.padEnd(34)} ${String(median(runs)).padStart(5)}   (${runs.join(', ')})`);
}
await browser.close();
server.close();
