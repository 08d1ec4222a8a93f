// Browser end-to-end tests for the foundation: the library and the Lost update player,
// driven like a user would in real headless Chromium against the release build.
// Run: node --test tests/  (after `cargo xtask dist`; scripts/test.sh does both)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, stepLabel, property, tab } from './browser.mjs';

const { open, shot, origin } = useBrowser();
const balance = (page) => page.locator('table[data-table=accounts] tbody td').nth(1).textContent();

test('the library lists Lost update under its chapter and opens it', async () => {
  const page = await open();
  await page.getByRole('heading', { name: 'Scenario library' }).waitFor();
  const chapter = page.locator('section.chapter', { hasText: 'Locks and lost updates' });
  await chapter.getByRole('link', { name: /Lost update/ }).click();
  await page.getByRole('heading', { name: 'Lost update', level: 1 }).waitFor();
  assert.equal(await stepLabel(page), 'Step 0 of 18');
  assert.match(page.url(), /#\/play\/lost-update\?seed=1&step=0$/);
  assert.equal(await page.getByRole('button', { name: 'Play', exact: true }).count(), 1, 'the player starts paused');
  await shot(page, '01-library-opened');
  await page.close();
});

test('without a lock the run ends at ₹70 with the property violated; row-lock ends at ₹40', async () => {
  const page = await open('#/play/lost-update');
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  await tab(page, 'State');
  assert.equal(await balance(page), '₹70');
  const lost = property(page, 'no-lost-update');
  assert.match(await lost.textContent(), /violated at step 17/);
  assert.equal(await lost.getAttribute('class'), 'property violated');
  await shot(page, '02-none-end');

  await page.getByRole('button', { name: /Go to step 17/ }).click();
  assert.equal(await stepLabel(page), 'Step 17 of 18');
  assert.match(await page.locator('.narration').textContent(), /violated at this step/);

  await tab(page, 'Parameters');
  await page.locator('select[name=lock]').selectOption('row-lock');
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  await tab(page, 'State');
  assert.equal(await balance(page), '₹40');
  assert.match(await property(page, 'no-lost-update').textContent(), /holds at every step/);
  assert.match(page.url(), /lock=row-lock/);
  await shot(page, '03-row-lock-end');
  await page.close();
});

test('stepping back and forward moves through the same states', async () => {
  const page = await open('#/play/lost-update?lock=row-lock');
  const forward = page.getByRole('button', { name: 'Step forward' });
  const back = page.getByRole('button', { name: 'Step back' });
  const seen = [];
  for (let i = 0; i < 12; i++) {
    await forward.click();
    seen.push([await stepLabel(page), await page.locator('.narration .event-text').textContent()]);
  }
  for (let i = 10; i >= 0; i--) {
    await back.click();
    assert.deepEqual([await stepLabel(page), await page.locator('.narration .event-text').textContent()], seen[i]);
  }
  await page.close();
});

test('stepping follows the narrated events; "all events" steps one event at a time', async () => {
  const page = await open('#/play/lost-update');
  const forward = page.getByRole('button', { name: 'Step forward' });
  const steps = [];
  while (!(await forward.isDisabled())) {
    await forward.click();
    steps.push(Number((await stepLabel(page)).match(/Step (\d+)/)[1]));
  }
  assert.ok(steps.length < 18, `narrated stepping skips quiet events (${steps.length} presses)`);
  assert.deepEqual(steps, [...steps].sort((x, y) => x - y), 'always forwards');
  await page.getByRole('checkbox', { name: /All events/ }).check();
  assert.match(page.url(), /[?&]all=1/);
  await page.getByRole('button', { name: 'Restart from the first step' }).click();
  for (let i = 1; i <= 5; i++) {
    await forward.click();
    assert.equal(await stepLabel(page), `Step ${i} of 18`);
  }
  await page.close();
});

test('a fault injected from the UI forks the run and its permalink reproduces the view', async () => {
  const page = await open('#/play/lost-update?lock=row-lock&step=7&all=1');
  await tab(page, 'Events');
  const rows = async () => (await page.locator('.event-log .log-row').evaluateAll((els) =>
    els.map((e) => [Number(e.querySelector('.seq').textContent), e.querySelector('.text').textContent])))
    .filter(([seq]) => seq < 8).sort((x, y) => x[0] - y[0]);
  const before = await rows();
  assert.equal(before.length, 8);
  await tab(page, 'Faults');
  await page.locator('.pause-length input').fill('250');
  await page.getByRole('button', { name: 'Pause 250 ms (worker-2)' }).click();
  assert.equal(await stepLabel(page), `Step 8 of ${await page.locator('#timeline').getAttribute('max')}`);
  assert.match(await page.locator('.narration .event-text').textContent(), /worker-2 freezes for 250 ms/);
  await tab(page, 'Events');
  assert.deepEqual(await rows(), before, 'steps before the fork are unchanged');
  assert.match(page.url(), /actions=8@pause:2:250/);
  await page.getByRole('button', { name: 'Step forward' }).click();
  await page.getByRole('button', { name: 'Step forward' }).click();
  assert.match(await page.locator('g.node.paused').textContent(), /worker-2/);
  await shot(page, '04-paused-worker');

  const link = page.url();
  await tab(page, 'State');
  const view = {
    step: await stepLabel(page),
    narration: await page.locator('.narration').textContent(),
    tables: await page.locator('.inspector').textContent(),
  };
  const again = await open(link.slice(origin().length + 1));
  await tab(again, 'State');
  assert.equal(await stepLabel(again), view.step);
  assert.equal(await again.locator('.narration').textContent(), view.narration);
  assert.equal(await again.locator('.inspector').textContent(), view.tables);
  await shot(again, '05-permalink-reloaded');
  await again.close();

  await page.reload();
  assert.equal(await stepLabel(page), view.step);
  await page.close();
});

test('crashing a worker from the UI changes the outcome', async () => {
  const page = await open('#/play/lost-update?step=8');
  await tab(page, 'Faults');
  await page.getByRole('button', { name: 'Crash worker-2' }).click();
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  await tab(page, 'State');
  assert.match(await property(page, 'every-debit-finishes').textContent(), /never reached/);
  assert.equal(await balance(page), '₹70');
  assert.match(await property(page, 'no-lost-update').textContent(), /holds at every step/);
  await tab(page, 'Faults');
  await page.getByRole('button', { name: 'Remove all faults' }).click();
  assert.doesNotMatch(page.url(), /actions=/);
  await page.close();
});

test('a malformed link shows a friendly message and falls back to defaults', async () => {
  const page = await open('#/play/lost-update?lock=mutex&seed=banana&actions=%%%&step=9999');
  const alert = page.locator('.notice[role=alert]');
  await alert.waitFor();
  const text = await alert.textContent();
  assert.match(text, /not a valid protection/);
  assert.match(text, /not a whole number/);
  await tab(page, 'Parameters');
  assert.equal(await page.locator('select[name=lock]').inputValue(), 'none');
  assert.equal(await page.locator('input[name=seed]').inputValue(), '1');
  await shot(page, '06-malformed-link');
  await page.getByRole('button', { name: 'Dismiss' }).click();
  assert.equal(await alert.count(), 0);

  const unknown = await open('#/play/no-such-scenario');
  assert.match(await unknown.locator('.notice').textContent(), /no scenario called/);
  await unknown.getByRole('heading', { name: 'Scenario library' }).waitFor();
  await unknown.close();
  await page.close();
});

test('the keyboard operates the player', async () => {
  const page = await open('#/play/lost-update?all=1');
  await page.locator('body').click({ position: { x: 5, y: 300 } });
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  assert.equal(await stepLabel(page), 'Step 2 of 18');
  await page.keyboard.press('ArrowLeft');
  assert.equal(await stepLabel(page), 'Step 1 of 18');
  await page.keyboard.press('End');
  assert.equal(await stepLabel(page), 'Step 18 of 18');
  await page.keyboard.press('Home');
  assert.equal(await stepLabel(page), 'Step 0 of 18');
  // Tab reaches the transport buttons and Enter operates them.
  await page.getByRole('button', { name: 'Step forward' }).focus();
  await page.keyboard.press('Enter');
  assert.equal(await stepLabel(page), 'Step 1 of 18');
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  assert.notEqual(outline, 'none', 'focus is visible');
  // An arrow on a focused (closed) drop-down steps the run; it does not change the variant.
  await tab(page, 'Parameters');
  await page.locator('select[name=lock]').focus();
  await page.keyboard.press('ArrowRight');
  assert.equal(await stepLabel(page), 'Step 2 of 18');
  assert.equal(await page.locator('select[name=lock]').inputValue(), 'none');
  // Space plays; playback advances on its own; Space again pauses.
  await page.keyboard.press('Space');
  await page.getByRole('button', { name: 'Pause', exact: true }).waitFor();
  await page.waitForFunction(() => document.querySelector('.step-count').textContent !== 'Step 2 of 18');
  await page.keyboard.press('Space');
  await page.getByRole('button', { name: 'Play', exact: true }).waitFor();
  await page.close();
});
