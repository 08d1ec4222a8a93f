// "Find a failure" in the player (web/search.js, loaded after the app): the bounded search runs
// in a Web Worker — the page shows progress and stays responsive (no main-thread task over
// 50 ms while it runs) — and either loads a witness as the run on screen, its permalink
// carrying the fault and the chain's steps (`why=`), with the chain's words under the property
// strip and its steps marked in both pictures, or states the bounded claim in the command
// line's words.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { useBrowser, chip, tab, audit, stepLabel } from './browser.mjs';

const { open, shot } = useBrowser();
const artifact = (name) => fileURLToPath(new URL(`artifacts/${name}.png`, import.meta.url));

/** Opens `hash`, starts watching for long tasks and for every text the search's status shows,
 *  and opens the Faults tab, where the control is. */
async function openSearch(hash) {
  const page = await open(hash);
  await page.evaluate(() => {
    window.searchSeen = [];
    window.longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.longTasks.push({ start: e.startTime, ms: Math.round(e.duration) });
    }).observe({ type: 'longtask' });
    new MutationObserver(() => {
      const s = document.querySelector('.search-status');
      if (s) window.searchSeen.push([performance.now(), s.textContent]);
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  await tab(page, 'Faults');
  await page.locator('.search').waitFor();
  return page;
}

/** Runs the search with at most `k` faults; returns the long tasks from the click until the
 *  last progress report (what follows it is loading the result, as after any click) and the
 *  status texts seen. */
async function find(page, k, done) {
  await page.getByRole('radio', { name: `${k} fault${k > 1 ? 's' : ''}` }).check();
  const started = await page.evaluate(() => performance.now());
  await page.getByRole('button', { name: 'Find a failure' }).click();
  await done.waitFor({ timeout: 120_000 });
  return page.evaluate((t0) => {
    const progress = window.searchSeen.filter(([, text]) => /schedules checked/.test(text));
    const end = progress.length ? progress[progress.length - 1][0] : t0;
    return {
      seen: window.searchSeen.map(([, text]) => text),
      long: window.longTasks.filter((t) => t.start >= t0 && t.start < end),
      progress: progress.length,
    };
  }, started);
}

test('zombie worker without fencing: the search finds a one-pause witness, loads it and explains it', async () => {
  const page = await openSearch('#/play/zombie-worker?fencing=none');
  await audit(page, 'the Find a failure control');
  await shot(page, 'search-control');
  const { seen, long } = await find(page, 1, page.locator('.search-found'));
  // The witness comes early in the space (a pause at step 5), often within the first part:
  // the running status shows, and the count of schedules checked when a part ends without one
  // (the fenced search below always shows it).
  assert.ok(seen.some((t) => /Starting the search…|\d+ of [\d,]+ schedules checked/.test(t)), seen.join(' | '));
  assert.deepEqual(long.filter((t) => t.ms > 50), [], 'no main-thread task over 50 ms while the search ran');
  assert.match(await page.locator('.search-found').textContent(), /^✗ Found: [a-z-]+ breaks at step \d+ when worker-A freezes for [\d.]+ m?s \(stop-the-world pause\)( after step \d+)?\. That run is now on screen\.$/);
  // The witness is the run on screen: its fault is in the fault script and in the permalink,
  // with the chain's steps.
  await page.waitForFunction(() => /why=[\d.]+/.test(location.hash));
  assert.match(page.url(), /actions=\d+(@|%40)pause/);
  const why = page.url().match(/why=([\d.]+)/)[1].split('.');
  const link = page.url();
  // The property the witness breaks turned red (its chip: ✗ and "broke at step N", not colour alone).
  const broken = (await page.locator('.why-chain summary').textContent()).match(/^Why ([\w-]+) broke/)[1];
  assert.ok(['fence-monotonic', 'no-double-debit'].includes(broken), broken);
  assert.match(await chip(page, broken).getAttribute('class'), /violated/);
  assert.match(await chip(page, broken).textContent(), /broke at step \d+/);
  const chain = page.locator('.why-chain li');
  assert.ok((await chain.count()) >= 3, 'the chain has its steps');
  assert.deepEqual(await page.locator('.why-chain li a').allTextContents(), why.map((s) => `step ${s}`));
  assert.match(await page.locator('.why-chain summary').textContent(), /Why \w[\w-]* broke/);
  assert.match(await chain.first().textContent(), /freezes for/);
  // The step on screen is the violation, the chain's last link: marked in both pictures.
  assert.equal(await page.locator('.why-chain li[aria-current=step]').count(), 1);
  assert.equal(await page.locator('.topology .chain-note').textContent(), `Why it broke: step ${why.length} of ${why.length}`);
  await page.getByRole('button', { name: 'Both', exact: true }).click();
  await page.locator('.spacetime-picture .st-chain').first().waitFor();
  // A link in the chain goes to its step: the note says where it is.
  await page.locator('.why-chain li a').first().click();
  await page.locator('.why-chain li[aria-current=step]').first().waitFor();
  assert.equal(await page.locator('.topology .chain-note').textContent(), `Why it broke: step 1 of ${why.length}`);
  await audit(page, 'a witness loaded, with its chain');
  await shot(page, 'search-witness');
  // What a room sees (a projector at 853×480) and a phone: the control and the witness.
  await tab(page, 'Faults');
  for (const [width, height] of [[853, 480], [390, 844]]) {
    await page.setViewportSize({ width, height });
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    await page.screenshot({ path: artifact(`search-witness-${width}x${height}`) });
    await page.locator('.search').screenshot({ path: artifact(`search-control-${width}x${height}`) });
  }
  // The permalink, opened afresh: the fault, the violation, the marks and the words are back.
  await page.close();
  const again = await open(link.slice(link.indexOf('#')));
  assert.match(await chip(again, broken).getAttribute('class'), /violated/);
  await again.locator('.topology .chain-note').waitFor();
  await again.locator('.why-chain li').first().waitFor();
  assert.equal(await again.locator('.why-chain li').count(), why.length);
  await tab(again, 'Faults');
  assert.match(await again.locator('.tab-panel').textContent(), /freezes for \d+ ms/);
  // Another fault script is another run: the marks and the words go, and so does why=.
  await again.getByRole('button', { name: 'Remove all faults' }).click();
  await again.waitForFunction(() => !/why=/.test(location.hash));
  assert.equal(await again.locator('.topology .chain-note').count(), 0);
  await again.locator('.why-chain').waitFor({ state: 'detached' });
  await again.close();
});

test('zombie worker fenced on takeover: the search states the bounded claim', async () => {
  const page = await openSearch('#/play/zombie-worker?fencing=fence-on-takeover');
  const t0 = Date.now();
  const { seen, long, progress } = await find(page, 1, page.locator('.search-claims'));
  assert.ok(progress > 0, `progress was shown: ${seen.join(' | ')}`);
  const ms = Date.now() - t0;
  assert.ok(seen.some((t) => /schedules checked/.test(t)), seen.join(' | '));
  assert.deepEqual(long.filter((t) => t.ms > 50), [], 'no main-thread task over 50 ms while the search ran');
  const claims = await page.locator('.search-claims li').allTextContents();
  const n = Number(claims[1].match(/([\d,]+) schedules checked/)[1].replace(/,/g, ''));
  console.log(`browser: ${n} schedules in ${ms} ms (${Math.round(n / (ms / 1000))} schedules/s, one worker)`);
  assert.match(claims[0], /story's own fault is off \(pause_ms=0\)/);
  assert.ok(claims.some((c) => /^fence-monotonic: no schedule of ≤ 1 fault \(pauses of [\d, ]+ ms and crashes, at any step\) breaks it — 1,378 schedules checked$/.test(c)), claims.join('\n'));
  await page.close();
});

test('a search can be cancelled', async () => {
  const page = await openSearch('#/play/zombie-worker?fencing=fence-on-takeover');
  // By keyboard: the arrow keys move within the radio group, not the run.
  const step = await stepLabel(page);
  await page.getByRole('radio', { name: '1 fault' }).focus();
  await page.keyboard.press('ArrowRight');
  assert.ok(await page.getByRole('radio', { name: '2 faults' }).isChecked());
  assert.equal(await stepLabel(page), step);
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  await page.getByText(/\d+ of [\d,]+ schedules checked/).waitFor();
  await page.getByRole('button', { name: 'Cancel' }).click();
  await page.getByText(/^Cancelled: /).waitFor();
  await page.getByRole('button', { name: 'Find a failure' }).waitFor();
  await page.close();
});
