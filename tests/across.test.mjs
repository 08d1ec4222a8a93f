// Browser tests for lock-across-call (its own bundle, across-call): a lease held across a slow
// payment API call. Each opens a variant, moves by beats to the API's payout, checks what the
// story and the state tables say, runs axe-core, and saves screenshots.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, property, tab, audit } from './browser.mjs';

const { open, shot } = useBrowser();
const beatTitle = (page) => page.locator('.story .beat-title').textContent();
const rows = (page, table) => page.locator(`table[data-table="${table}"] tbody tr`).allTextContents();

async function goToBeat(page, title) {
  await page.getByRole('button', { name: new RegExp(`Go to beat \\d+: ${title}`) }).first().click();
  assert.match(await beatTitle(page), new RegExp(title));
}

test('lock-across-call: the call outlives the lease and the API pays out twice', async () => {
  const page = await open('#/play/lock-across-call');
  await page.getByRole('heading', { name: 'A lock held across a network call', level: 1 }).waitFor();
  await goToBeat(page, 'Mid-call, the lease expires: B gets token 34');
  await goToBeat(page, 'B makes the same call');
  assert.match(await page.locator('.unsafe-banner').textContent(), /worker-A and worker-B each believe they own payout-42/);
  await goToBeat(page, 'The API pays out a second time');
  assert.match(await page.locator('.story .beat-text').textContent(), /another ₹10 goes out for payout-42/);
  await tab(page, 'State');
  const payouts = await rows(page, 'payouts');
  assert.equal(payouts.filter((r) => r.includes('✓ sent')).length, 2, payouts.join('\n'));
  assert.ok(payouts.some((r) => r.includes('worker-A')) && payouts.some((r) => r.includes('worker-B')), payouts.join('\n'));
  assert.match(await property(page, 'no-double-payment').textContent(), /violated at step \d+/);
  await audit(page, 'lock-across-call inside-lock, second payout');
  await shot(page, 'across-inside-second-payout');
  await page.close();
});

test('lock-across-call: a keyed call pays once and the late record is refused', async () => {
  const page = await open('#/play/lock-across-call?call=idempotent-fenced');
  await goToBeat(page, "The API pays once: A's call is a replay");
  assert.match(await page.locator('.story .beat-text').textContent(), /nothing is sent/);
  await tab(page, 'State');
  const payouts = await rows(page, 'payouts');
  assert.equal(payouts.filter((r) => r.includes('✓ sent')).length, 1, payouts.join('\n'));
  assert.ok(payouts.some((r) => r.includes('worker-A') && r.includes('payout-42#1') && r.includes('replay')), payouts.join('\n'));
  await goToBeat(page, "A's late record is refused");
  const writes = await rows(page, 'writes');
  assert.ok(writes.some((r) => r.includes('worker-A') && r.includes('✗ rejected')), writes.join('\n'));
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  assert.match(await property(page, 'no-double-payment').textContent(), /holds at every step/);
  await audit(page, 'lock-across-call idempotent-fenced, refused record');
  await shot(page, 'across-idempotent-refused');
  await page.close();
});

test('lock-across-call: claimed outside the lock, B does nothing and the API pays once', async () => {
  const page = await open('#/play/lock-across-call?call=outside-lock');
  await goToBeat(page, 'B takes the lease and finds the job taken');
  await goToBeat(page, 'The API pays out once');
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  await tab(page, 'State');
  const payouts = await rows(page, 'payouts');
  assert.deepEqual(payouts.filter((r) => r.includes('✓ sent')).map((r) => r.includes('worker-A')), [true], payouts.join('\n'));
  assert.match(await property(page, 'no-double-payment').textContent(), /holds at every step/);
  await page.close();
});
