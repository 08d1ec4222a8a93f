// Measures how long one step takes to redraw with the space-time diagram on screen, for the
// largest runs: raft-chaos with 7 servers (8 lanes, 2,072 events) and consensus-lock (6
// lanes, 1,692 events), on both axes. From the key press to the DOM holding the next step
// (the diagram is redrawn in the same render). Medians of 5 pages × 5 steps, also with the
// CPU throttled 4× (a modest laptop). A report, not a test: timings depend on the machine.
//
//   node scripts/spacetime-timing.mjs [dist]          (after `cargo xtask dist`)
import { serve } from '../tests/serve.mjs';
import { launch } from '../tests/browser.mjs';

const dist = process.argv[2] || 'dist';
const RUNS = [
  ['raft-chaos', 'servers=7&', 1500],
  ['consensus-lock', '', 1200],
];
const PAGES = 5;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const server = await serve(dist);
const origin = `http://127.0.0.1:${server.address().port}`;
const browser = await launch();

/** One step forward: from the key press to the DOM showing the next step (the diagram is
 *  redrawn in the same render). */
const timeStep = (page) => page.evaluate(() => new Promise((resolve) => {
  const label = document.querySelector('.step-count');
  const start = performance.now();
  const seen = new MutationObserver(() => {
    seen.disconnect();
    resolve(performance.now() - start);
  });
  seen.observe(label, { childList: true, characterData: true, subtree: true });
  window.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true }));
}));

async function measure(id, params, step, axis, throttle) {
  const steps = [];
  for (let run = 0; run < PAGES; run++) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    const cdp = await page.context().newCDPSession(page);
    await page.goto(`${origin}/#/play/${id}?${params}all=1&step=${step}&view=spacetime&axis=${axis}`);
    await page.locator('.spacetime-picture svg').waitFor();
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: throttle });
    await page.locator('body').click({ position: { x: 2, y: 2 } });
    for (let i = 0; i < 5; i++) {
      steps.push(await timeStep(page));
    }
    const lanes = await page.locator('.spacetime-picture svg text[font-size="16"]').count();
    const last = await page.locator('.step-count').textContent();
    await page.close();
    if (run === 0) console.log(`   ${id}: ${lanes} lanes, ${last}`);
  }
  return median(steps);
}

/** The same step in the trace viewer (#/trace), where the diagram is nearly all there is to
 *  redraw: the file is the CLI's jsonl of the same run. */
async function measureViewer(jsonl, axis, throttle) {
  const steps = [];
  for (let run = 0; run < PAGES; run++) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    const cdp = await page.context().newCDPSession(page);
    await page.goto(`${origin}/#/trace`);
    await page.locator('#trace-file').setInputFiles({ name: 'run.jsonl', mimeType: 'text/plain', buffer: Buffer.from(jsonl) });
    await page.locator('.spacetime-picture svg').waitFor();
    if (axis === 'order') await page.getByRole('button', { name: 'Event order' }).click();
    await page.locator('body').click({ position: { x: 2, y: 2 } });
    await page.keyboard.press('a');
    for (let i = 0; i < 1500; i += 100) await page.evaluate(() => { for (let k = 0; k < 100; k++) window.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true })); });
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: throttle });
    for (let i = 0; i < 5; i++) {
      steps.push(await timeStep(page));
    }
    await page.close();
  }
  return median(steps);
}

const { execFileSync } = await import('node:child_process');
const chaos = execFileSync('target/release/coordlab', ['run', 'raft-chaos', '--set', 'servers=7', '--format', 'jsonl'], { encoding: 'utf8', maxBuffer: 1 << 28 });
console.log('the diagram alone: raft-chaos (servers=7) opened at #/trace, step ~1500 (median of 25; ms)');
for (const throttle of [1, 4]) {
  for (const axis of ['time', 'order']) {
    const ms = await measureViewer(chaos, axis, throttle);
    console.log(`${(throttle === 1 ? 'this machine' : 'CPU throttled 4×').padEnd(25)}${axis.padEnd(8)}${ms.toFixed(1).padStart(8)}`);
  }
}

if (process.env.VIEWER_ONLY) {
  await browser.close();
  server.close();
  process.exit(0);
}
console.log('run                      axis    one step with the diagram (median of 25; ms)');
for (const throttle of [1, 4]) {
  console.log(throttle === 1 ? '-- this machine' : '-- CPU throttled 4×');
  for (const [id, params, step] of RUNS) {
    for (const axis of ['time', 'order']) {
      const ms = await measure(id, params, step, axis, throttle);
      console.log(`${(id + (params ? ` (${params.replace('&', '')})` : '')).padEnd(25)}${axis.padEnd(8)}${ms.toFixed(1).padStart(8)}`);
    }
  }
}
await browser.close();
server.close();
