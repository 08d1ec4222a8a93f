// Measures how fast the player draws and steps the largest runs in headless Chromium: the
// time from navigation to the first drawn picture (download, compile, simulate, render), and
// the time for one step forward — from the key press until the DOM shows the next step, and
// until the page is laid out again with it (style and layout included; painting, not). Reports medians of 5, also with the
// CPU throttled 4× (a modest laptop). A report, not a test: timings depend on the machine.
//
//   node scripts/ui-timing.mjs [dist]          (after `cargo xtask dist`)
import { serve } from '../tests/serve.mjs';
import { launch } from '../tests/browser.mjs';

const dist = process.argv[2] || 'dist';
const SCENARIOS = ['consensus-lock', 'raft-chaos', 'raft-election', 'zombie-worker'];
const RUNS = 5;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const server = await serve(dist);
const origin = `http://127.0.0.1:${server.address().port}`;
const browser = await launch();

async function measure(id, throttle) {
  const loads = [];
  const steps = [];
  const laidOuts = [];
  for (let run = 0; run < RUNS; run++) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: throttle });
    // Timed inside the page, from the start of navigation (performance.now() is 0 there) to
    // the frame after the picture is in the DOM. Playwright's own polling for a selector
    // would compete for the main thread and add to what it measures.
    await page.addInitScript(() => {
      const seen = new MutationObserver(() => {
        if (!document.querySelector('.topology svg[role=img]')) return;
        seen.disconnect();
        requestAnimationFrame(() => requestAnimationFrame(() => { window.__drawnMs = performance.now(); }));
      });
      seen.observe(document, { childList: true, subtree: true });
    });
    await page.goto(`${origin}/#/play/${id}?all=1`);
    await page.waitForFunction(() => window.__drawnMs !== undefined, null, { polling: 100 });
    loads.push(Math.round(await page.evaluate(() => window.__drawnMs)));
    await page.getByRole('tab', { name: 'Events', exact: true }).click();
    await page.locator('body').click({ position: { x: 2, y: 2 } });
    for (let i = 0; i < 5; i++) {
      // From the key press to the DOM holding the next step (Yew renders in a microtask
      // after the reducer runs), and to the page laid out with it: reading a box makes the
      // browser recompute styles and layout then and there, as it would for the next frame.
      const [dom, laidOut] = await page.evaluate(() => new Promise((resolve) => {
        const label = document.querySelector('.step-count');
        const start = performance.now();
        const seen = new MutationObserver(() => {
          seen.disconnect();
          const dom = performance.now() - start;
          document.body.getBoundingClientRect();
          resolve([dom, performance.now() - start]);
        });
        seen.observe(label, { childList: true, characterData: true, subtree: true });
        window.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true }));
      }));
      steps.push(dom);
      laidOuts.push(laidOut);
    }
    await page.close();
  }
  return { load: median(loads), step: median(steps), laidOut: median(laidOuts) };
}

console.log('scenario          first draw   one step (DOM)   step laid out   (medians of 5; ms)');
for (const throttle of [1, 4]) {
  console.log(throttle === 1 ? '-- this machine' : '-- CPU throttled 4×');
  for (const id of SCENARIOS) {
    const r = await measure(id, throttle);
    console.log(`${id.padEnd(18)}${String(r.load).padStart(8)}   ${r.step.toFixed(1).padStart(14)}   ${r.laidOut.toFixed(1).padStart(13)}`);
  }
}
await browser.close();
server.close();
