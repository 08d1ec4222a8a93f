// Browser end-to-end tests for the lease chapter: the zombie worker with and without a
// fence, the unsafe-window band, and a GC pause injected from the UI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, stepLabel, property, tab, seekTo } from './browser.mjs';

const { open, shot } = useBrowser();
const writes = (page) => page.locator('table[data-table=writes] tbody tr').allTextContents();

test('zombie worker without fencing: the stale token-33 write is accepted', async () => {
  const page = await open('#/play/zombie-worker?fencing=none');
  await page.getByRole('heading', { name: 'Zombie worker', level: 1 }).waitFor();
  assert.equal(await page.locator('.marks .band.unsafe').count(), 1, 'the unsafe window is marked on the timeline');
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  await tab(page, 'State');
  const rows = await writes(page);
  // A wrote step 1 before its pause; its step 2, after the takeover, is the stale one.
  const stale = rows.filter((r) => r.includes('worker-A') && r.includes('STALE'));
  assert.equal(stale.length, 1, rows.join('\n'));
  assert.match(stale[0], /✓ accepted — STALE \(33 < 34\)/);
  assert.match(await property(page, 'fence-monotonic').textContent(), /violated at step \d+/);
  assert.match(await property(page, 'no-double-debit').textContent(), /violated at step \d+/);
  // Inside the window — A has woken and still believes it holds the lease — the banner
  // names both believers.
  await page.getByRole('button', { name: /Go to beat \d+: A wakes/ }).click();
  assert.match(await page.locator('.unsafe-banner').textContent(), /worker-A and worker-B each believe they own account-42/);
  await shot(page, '10-zombie-none');
  await page.close();
});

test('zombie worker with the write predicate: 34 accepted, 33 rejected', async () => {
  const page = await open('#/play/zombie-worker?fencing=write-predicate');
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  await tab(page, 'State');
  const rows = await writes(page);
  assert.equal(rows.filter((r) => r.includes('worker-B') && r.includes('34') && r.includes('✓ accepted')).length, 3, rows.join('\n'));
  // A's step 1 before the pause, then its step 2 after the takeover.
  const a = rows.filter((r) => r.includes('worker-A'));
  assert.equal(a.length, 2);
  assert.match(a[1], /✗ rejected: token 33 < 34/);
  assert.match(await property(page, 'fence-monotonic').textContent(), /holds at every step/);
  assert.match(await page.locator('table[data-table=account_state] tbody').textContent(), /₹60/);
  assert.equal(await page.locator('.marks .band.unsafe').count(), 1);
  await shot(page, '11-zombie-write-predicate');
  await page.close();
});

test('a GC pause injected from the UI turns a clean run into a zombie write', async () => {
  const page = await open('#/play/zombie-worker?fencing=none&pause_ms=0');
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  await tab(page, 'State');
  assert.match(await property(page, 'no-double-debit').textContent(), /holds at every step/);
  assert.equal(await page.locator('.marks .band.unsafe').count(), 0, 'no pause, no overlap');
  // Go to the moment A starts its first step, then freeze A for 40 s.
  const k = await seekTo(page, (t) => t.includes('ledger -> worker-A: 0 step(s) done'), 'A reads its progress');
  assert.equal(await stepLabel(page), `Step ${k} of ${await page.locator('#timeline').getAttribute('max')}`);
  await tab(page, 'Faults');
  await page.locator('.pause-length input').fill('40000');
  await page.getByRole('button', { name: 'Pause 40000 ms (worker-A)' }).click();
  assert.match(await page.locator('.narration .event-text').textContent(), /worker-A freezes for 40000 ms/);
  assert.match(page.url(), new RegExp(`actions=${k + 1}@pause:1:40000`));
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  await tab(page, 'State');
  assert.match(await property(page, 'no-double-debit').textContent(), /violated at step/);
  assert.equal(await page.locator('.marks .band.unsafe').count(), 1, 'the pause opened an unsafe window');
  await shot(page, '12-zombie-injected-pause');
  await page.close();
});

test('a clock step injected from the UI makes A outlive its lease', async () => {
  // Without the scenario's own clock step, A stops in time and B works alone.
  const page = await open('#/play/clock-skew?offset_ms=0');
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  await tab(page, 'State');
  assert.match(await property(page, 'no-double-debit').textContent(), /holds at every step/);
  // Right after A learns how far the job got, step its clock back 5 s.
  const k = await seekTo(page, (t) => t.includes('ledger -> worker-A: 0 step(s) done'), 'A reads its progress');
  await tab(page, 'Faults');
  await page.locator('.pause-length input').fill('5000');
  await page.getByRole('button', { name: "Clock −5000 ms (worker-A's clock steps back)" }).click();
  assert.match(page.url(), new RegExp(`actions=${k + 1}@clock-jump:1:-5000`));
  assert.match(await page.locator('.faults .script').textContent(), /worker-A/);
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  await tab(page, 'State');
  assert.match(await property(page, 'no-double-debit').textContent(), /violated at step/);
  assert.equal(await page.locator('.marks .band.unsafe').count(), 1, 'A and B both believed they held the lease');
  await page.close();
});

test('picking first-write-only brings its own timings: refused at step 1, through at step 2', async () => {
  const page = await open('#/play/zombie-worker');
  await tab(page, 'Parameters');
  assert.equal(await page.locator('input[name=pause_start_ms]').inputValue(), '5000');
  await page.locator('select[name=fencing]').selectOption('first-write-only');
  await page.waitForFunction(() => document.querySelector('input[name=pause_start_ms]').value === '2000');
  assert.equal(await page.locator('input[name=heartbeat_ms]').inputValue(), '0');
  // The variant's own defaults stay out of the link, which opens the same run.
  assert.match(page.url(), /#\/play\/zombie-worker\?fencing=first-write-only&seed=1/);
  assert.doesNotMatch(page.url(), /pause_start_ms|heartbeat_ms/);
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  await tab(page, 'State');
  const cells = await page.locator('table[data-table=writes] tbody tr')
    .evaluateAll((rows) => rows.map((r) => [...r.cells].map((c) => c.textContent).join(' | ')));
  const a = cells.filter((r) => r.startsWith('worker-A'));
  assert.match(a[0], /^worker-A \| 1 \| 33 \| ✗ rejected: token 33 < 34/, a.join('\n'));
  assert.match(a[1], /^worker-A \| 2 \| 33 \(unchecked\) \| ✓ accepted — STALE \(33 < 34\)/, a.join('\n'));
  assert.match(await property(page, 'no-double-debit').textContent(), /violated at step/);
  await page.close();
});
