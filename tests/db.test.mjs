// Browser end-to-end tests for chapter 1's database-lock scenarios (bundle `db`): each opens,
// moves by beats to its key moment, shows the lock state and the wait-for edges on screen,
// reports no console error, and passes axe-core.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, tab, property, audit } from './browser.mjs';

const { open, shot } = useBrowser();
const table = (page, title) => page.locator(`table[data-table="${title}"] tbody`).textContent();
const beat = (page, title) => page.getByRole('button', { name: new RegExp(`Go to beat \\d+: ${title}`) }).click();

/** Screenshots at the projector, docs-iframe and phone sizes. */
async function sizes(page, name) {
  for (const [w, h, label] of [[853, 480, 'projector'], [400, 300, 'iframe'], [390, 844, 'phone']]) {
    await page.setViewportSize({ width: w, height: h });
    await shot(page, `${name}-${label}`);
  }
  await page.setViewportSize({ width: 1400, height: 1000 });
}

test('skip-locked-queue: every worker holds its own job and nobody waits', async () => {
  const page = await open('#/play/skip-locked-queue');
  await page.getByRole('heading', { name: 'A job queue in a table', level: 1 }).waitFor();
  await beat(page, 'Every worker has its own job');
  await tab(page, 'State');
  const jobs = await table(page, 'jobs');
  for (const w of ['worker-1', 'worker-2', 'worker-3']) assert.match(jobs, new RegExp(w), jobs);
  assert.match(await table(page, 'waits for'), /nobody/);
  await audit(page, 'skip-locked-queue at its key beat');
  await sizes(page, '40-skip-locked-queue');
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  assert.match(await property(page, 'no-job-done-twice').textContent(), /holds at every step/);
  await page.close();
});

test('skip-locked-queue with a plain SELECT: a job is done twice', async () => {
  const page = await open('#/play/skip-locked-queue?claim=plain');
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  await tab(page, 'State');
  assert.match(await property(page, 'no-job-done-twice').textContent(), /violated at step \d+/);
  await page.close();
});

test('deadlock: each transfer waits for the other, then one is aborted with 40P01', async () => {
  const page = await open('#/play/deadlock');
  await page.getByRole('heading', { name: 'Deadlock', level: 1 }).waitFor();
  await beat(page, 'Each waits for the other');
  await tab(page, 'State');
  const waits = await table(page, 'waits for');
  assert.match(waits, /transfer-1\s*transfer-2/, waits);
  assert.match(waits, /transfer-2\s*transfer-1/, waits);
  await audit(page, 'deadlock at the cycle');
  await sizes(page, '41-deadlock-cycle');
  await beat(page, 'deadlock detected');
  assert.match(await page.locator('main').textContent(), /40P01/);
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  assert.match(await property(page, 'money-conserved').textContent(), /holds at every step/);
  assert.match(await table(page, 'accounts'), /₹110[\s\S]*₹90/);
  await page.close();
});

test('row-lock-modes: a foreign-key insert shares the row with an update of the name', async () => {
  const page = await open('#/play/row-lock-modes');
  await page.getByRole('heading', { name: 'Row lock modes', level: 1 }).waitFor();
  await beat(page, 'Transaction 2 asks');
  await tab(page, 'State');
  const locks = await table(page, 'row locks');
  assert.match(locks, /txn-1 FOR NO KEY UPDATE, txn-2 FOR KEY SHARE/, locks);
  await audit(page, 'row-lock-modes');
  await sizes(page, '42-row-lock-modes');
  await page.close();
});

test('row-lock-modes: the state panel shows PostgreSQL\'s conflict table', async () => {
  const page = await open('#/play/row-lock-modes');
  await beat(page, 'Transaction 2 asks');
  assert.match(await page.locator('main').textContent(), /InnoDB differs/);
  await tab(page, 'State');
  const conflicts = await table(page, 'row-lock conflicts (PostgreSQL)');
  assert.match(conflicts, /KEY SHARE\s*ok\s*ok\s*ok\s*waits/, conflicts);
  assert.match(conflicts, /NO KEY UPDATE\s*ok\s*waits\s*waits\s*waits/, conflicts);
  await page.close();
});

test('lock-granularity: at REPEATABLE READ an insert waits for InnoDB\'s gap lock', async () => {
  const page = await open('#/play/lock-granularity?other=insert');
  await beat(page, 'Support\'s insert waits for a gap');
  assert.match(await page.locator('main').textContent(), /PostgreSQL takes no gap locks/);
  await tab(page, 'State');
  assert.match(await table(page, 'waits for'), /support\s*billing\s*users#supremum X insert-intention lock/);
  await page.close();
});

test('lock-granularity: without an index, an unrelated update waits', async () => {
  const page = await open('#/play/lock-granularity');
  await page.getByRole('heading', { name: 'Lock granularity', level: 1 }).waitFor();
  await beat(page, 'Support waits for an unrelated row');
  await tab(page, 'State');
  assert.match(await table(page, 'waits for'), /support\s*billing\s*users#7/);
  await audit(page, 'lock-granularity');
  await sizes(page, '43-lock-granularity');
  await page.close();
});
