// Browser end-to-end test for the side-by-side pair (issue 5): Redis failover and the
// consensus-backed lock, one seed, the same fault clicks, stepping together.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser } from './browser.mjs';

const { open, shot, origin } = useBrowser();

const side = (page, which) => page.locator(`.compare-side[data-side=${which}]`);
const position = (page) => page.locator('.compare .position').textContent();
const stepOf = async (page) => Number((await position(page)).match(/step (\d+) of/)[1]);

test('the library opens Redis failover and the consensus lock side by side', async () => {
  const page = await open('');
  await page.getByRole('link', { name: /Side by side: Redis failover vs the consensus lock/ }).click();
  await page.waitForURL(/#\/compare\/redis-failover\/consensus-lock/);
  await assert.doesNotReject(side(page, 'left').locator('svg[role=img]').waitFor());
  assert.match(await side(page, 'left').locator('h2').textContent(), /Redis failover/);
  assert.match(await side(page, 'right').locator('h2').textContent(), /Consensus lock/);
  // Both columns start safe.
  for (const which of ['left', 'right']) {
    assert.match(await side(page, which).locator('.side-status').textContent(), /every property holds so far/);
  }
  // One failure, two outcomes: at the end Redis has granted the lock twice, consensus once.
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  const left = await side(page, 'left').locator('.side-status').textContent();
  const right = await side(page, 'right').locator('.side-status').textContent();
  assert.match(left, /violated: .*one-holder-per-store/);
  assert.match(left, /at most 2 holder/);
  assert.match(right, /every property holds so far/);
  assert.match(right, /at most 1 holder/);
  await shot(page, '50-compare-end');
  await page.close();
});

test('stepping moves both runs through true time together, by keyboard too', async () => {
  const page = await open('#/compare/redis-failover/consensus-lock');
  await side(page, 'left').locator('svg[role=img]').waitFor();
  assert.equal(await stepOf(page), 0);
  // Every event, one at a time (by default stepping skips heartbeats and acks).
  await page.getByRole('checkbox', { name: /All events/ }).check();
  await page.locator('body').press('ArrowRight');
  await page.locator('body').press('ArrowRight');
  await page.locator('body').press('ArrowRight');
  assert.equal(await stepOf(page), 3);
  // Each step moves one column, marked so the room can follow it.
  assert.equal(await page.locator('.compare-side.moved').count(), 1);
  const times = [];
  for (let i = 0; i < 40; i++) {
    await page.getByRole('button', { name: 'Step forward' }).click();
    times.push(Number((await position(page)).match(/t = ([\d.]+)ms/)?.[1] ?? 0));
  }
  for (let i = 1; i < times.length; i++) assert.ok(times[i] >= times[i - 1], `time went back: ${times}`);
  await page.getByRole('button', { name: 'Step back' }).click();
  assert.equal(await stepOf(page), 42);
  await page.close();
});

test('one fault click forks both runs, and the link brings the same view back', async () => {
  const page = await open('#/compare/redis-failover/consensus-lock');
  await side(page, 'left').locator('svg[role=img]').waitFor();
  await page.getByRole('checkbox', { name: /All events/ }).check();
  for (let i = 0; i < 25; i++) await page.getByRole('button', { name: 'Step forward' }).click();
  await page.getByRole('button', { name: 'Crash worker-b in both runs' }).click();
  await page.waitForURL(/left=\d+%40crash%3A4|left=\d+@crash:4/);
  const url = page.url();
  assert.match(url, /right=\d+(%40|@)crash(%3A|:)4/, url);
  // worker-b is down in both pictures.
  for (const which of ['left', 'right']) {
    assert.equal(await side(page, which).locator('.node.crashed[data-node="worker-b"]').count(), 1, which);
  }
  const here = await position(page);
  const again = await open(url.slice(origin().length + 1));
  await side(again, 'left').locator('svg[role=img]').waitFor();
  assert.equal(await position(again), here);
  await shot(again, '51-compare-forked');
  await again.close();
  await page.close();
});

test('a broken compare link falls back to the default pair with a notice', async () => {
  const page = await open('#/compare/redis-failover/no-such?seed=abc');
  await side(page, 'right').locator('svg[role=img]').waitFor();
  assert.match(await page.locator('.notice').textContent(), /does not name two known scenarios/);
  assert.match(await page.locator('.notice').textContent(), /not a whole number/);
  await page.close();
});
