// Every scenario in the library opens, and every variant of its choice parameters plays to
// its last step without a console error — a smoke test over the whole catalogue.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, stepLabel, tab } from './browser.mjs';

const { open, shot } = useBrowser();

test('the library groups every scenario under its chapter', async () => {
  const page = await open();
  await page.getByRole('heading', { name: 'Scenario library' }).waitFor();
  const chapters = await page.locator('section.chapter h2').allTextContents();
  assert.ok(chapters.some((c) => c.includes('Locks and lost updates')), chapters.join(' | '));
  assert.ok(chapters.some((c) => c.includes('Leases')), chapters.join(' | '));
  assert.ok(chapters.some((c) => c.includes('alive but late')), chapters.join(' | '));
  const lease = page.locator('section.chapter', { hasText: 'When the holder is alive but late' });
  assert.equal(await lease.getByRole('link', { name: /Zombie worker/ }).count(), 1);
  await shot(page, '20-library');
  await page.close();
});

test('every scenario and variant plays to its last step without errors', async () => {
  const lib = await open();
  await lib.getByRole('heading', { name: 'Scenario library' }).waitFor();
  // Scenario cards only; the side-by-side card has its own test (compare.test.mjs).
  const links = await lib.locator('.card a[href^="#/play/"]').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  await lib.close();
  assert.ok(links.length >= 9, `only ${links.length} scenarios`);
  for (const href of links) {
    const page = await open(href);
    await page.locator('.player-head h1').waitFor();
    await tab(page, 'Parameters');
    const selects = await page.locator('.settings select').evaluateAll((ss) =>
      ss.map((s) => ({ name: s.name, values: [...s.options].map((o) => o.value) })));
    const variants = selects.length ? selects[0].values.map((v) => [selects[0].name, v]) : [[null, null]];
    for (const [name, value] of variants) {
      if (name) {
        await tab(page, 'Parameters');
        await page.locator(`select[name="${name}"]`).selectOption(value);
      }
      const toEnd = page.getByRole('button', { name: 'Jump to the last step' });
      // A shorter variant may already leave the cursor on its last step.
      if (await toEnd.isEnabled()) await toEnd.click();
      const label = await stepLabel(page);
      const [, cur, last] = label.match(/Step (\d+) of (\d+)/);
      assert.equal(cur, last, `${href} ${name}=${value}: not at the end (${label})`);
      assert.ok(Number(last) > 3, `${href} ${name}=${value}: suspiciously short run`);
      assert.ok((await page.locator('.property-strip li.chip').count()) > 0, `${href}: no properties shown`);
      // Every beat the story declares is reached in this variant (the timeline marks each).
      const ticks = await page.locator('.timeline .tick').count();
      const listed = await page.locator('.beat-count').count();
      if (listed) assert.ok(ticks > 0, `${href} ${name}=${value}: beats declared but none reached`);
    }
    await page.close();
  }
});
