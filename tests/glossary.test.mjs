// Browser tests for the glossary: the first use of a term in a run is a button that opens its
// definition (Tab, Enter; Escape or moving away closes it), and #/glossary lists every term.
// Run: node --test tests/glossary.test.mjs (after `cargo xtask dist`; the locks bundle is
// enough).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, stepLabel, ready } from './browser.mjs';

const { open, shot } = useBrowser();

/** Presses Tab until the focus is on `locator`'s element; fails after `max` presses. */
async function tabTo(page, locator, max = 80) {
  const target = await locator.elementHandle();
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((el) => document.activeElement === el, target)) return i + 1;
  }
  assert.fail(`${max} presses of Tab never reached the term`);
}

test('a term’s first use opens its definition with Tab and Enter; Escape closes it', async () => {
  const page = await open('#/play/lost-update');
  await page.setViewportSize({ width: 853, height: 480 });
  await page.locator('body').click({ position: { x: 5, y: 5 } });
  for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight');
  assert.equal(await stepLabel(page), 'Step 3 of 18');
  const term = page.locator('.narration .term-link', { hasText: 'transaction' });
  assert.equal(await term.count(), 1, 'step 3 is the first to say “transaction”');
  assert.equal(await term.getAttribute('aria-expanded'), 'false');
  const pop = page.locator(`#${await term.getAttribute('aria-controls')}`);
  assert.equal(await pop.isVisible(), false);

  const presses = await tabTo(page, term);
  await page.keyboard.press('Enter');
  assert.equal(await term.getAttribute('aria-expanded'), 'true');
  await pop.waitFor({ state: 'visible' });
  assert.equal(await pop.getAttribute('role'), 'dialog');
  assert.match(await pop.textContent(), /Transaction.*reads and writes.*all at once/);
  const size = await pop.evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
  assert.ok(size >= 16, `the definition is ${size}px`);
  await shot(page, 'glossary-popover-853x480');
  console.log(`# reached the term in ${presses} presses of Tab`);

  // Escape closes it and leaves the focus on the term; the run does not move.
  const step = await stepLabel(page);
  await page.keyboard.press('Escape');
  await pop.waitFor({ state: 'hidden' });
  assert.equal(await term.getAttribute('aria-expanded'), 'false');
  assert.ok(await term.evaluate((el) => document.activeElement === el), 'the focus stays on the term');
  assert.equal(await stepLabel(page), step);

  // Moving the focus away closes it too; Tab from the term reaches the glossary link first.
  await page.keyboard.press('Enter');
  await pop.waitFor({ state: 'visible' });
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'All terms →');
  assert.ok(await pop.isVisible(), 'still open while the focus is inside it');
  await page.keyboard.press('Tab');
  await pop.waitFor({ state: 'hidden' });

  // Only the first use in the run is a link: step 4 says “transaction” again, plainly.
  await page.keyboard.press('ArrowRight');
  assert.equal(await stepLabel(page), 'Step 4 of 18');
  assert.match(await page.locator('.narration .notes').textContent(), /transaction/);
  assert.equal(await page.locator('.narration .term-link', { hasText: 'transaction' }).count(), 0);
  // Going back to step 3 shows the link again: it marks the first use up to the step on screen.
  await page.keyboard.press('ArrowLeft');
  assert.equal(await page.locator('.narration .term-link', { hasText: 'transaction' }).count(), 1);
  await page.close();
});

test('a term opened before the definitions arrive shows its definition when they do', async () => {
  const page = await open('#/play/lost-update?step=3');
  // The page again, with glossary.json held back until the term is open (a slow network).
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  await page.route(/\/glossary(-[0-9a-f]{8})?\.json$/, async (route) => { await held; await route.continue(); });
  await page.reload();
  await ready(page);
  const term = page.locator('.narration .term-link', { hasText: 'transaction' });
  await term.click();
  const pop = page.locator(`#${await term.getAttribute('aria-controls')}`);
  await pop.waitFor({ state: 'visible' });
  assert.equal(await pop.locator('.term-def').textContent(), '', 'no definition before glossary.json is in');
  release();
  await pop.locator('.term-def', { hasText: /reads and writes/ }).waitFor();
  assert.equal(await term.getAttribute('aria-expanded'), 'true', 'still open, with nothing pressed');
  await page.close();
});

test('in presenter mode Escape closes the definition before it leaves presenter mode', async () => {
  const page = await open('#/play/lost-update?present=1&step=3');
  await page.setViewportSize({ width: 853, height: 480 });
  const term = page.locator('.narration .term-link', { hasText: 'transaction' });
  await term.click();
  assert.equal(await term.getAttribute('aria-expanded'), 'true');
  await shot(page, 'glossary-popover-presenter-853x480');
  await page.keyboard.press('Escape');
  assert.equal(await term.getAttribute('aria-expanded'), 'false');
  assert.match(await page.locator('.player').getAttribute('class'), /presenting/, 'still presenting');
  await page.keyboard.press('Escape');
  assert.doesNotMatch(await page.locator('.player').getAttribute('class'), /presenting/);
  await page.close();
});

test('Space on a focused term plays the run, as everywhere in the player', async () => {
  const page = await open('#/play/lost-update?step=3');
  const term = page.locator('.narration .term-link', { hasText: 'transaction' });
  await term.focus();
  await page.keyboard.press('Space');
  await page.getByRole('button', { name: 'Pause', exact: true }).waitFor();
  await page.close();
});

test('the glossary page lists every term alphabetically, each with a working scenario link', async () => {
  const page = await open('#/');
  await page.getByRole('link', { name: /Glossary/ }).click();
  await page.getByRole('heading', { name: 'Glossary', level: 1 }).waitFor();
  assert.match(page.url(), /#\/glossary$/);
  const names = await page.locator('.glossary dt').allTextContents();
  assert.ok(names.length >= 25, `${names.length} terms`);
  const sorted = [...names].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));
  assert.deepEqual(names, sorted);
  for (const n of ['AppendEntries', 'Fencing token', 'Lease', 'Term (Raft)', 'PSYNC', 'REPLCONF ACK', 'Revision (etcd)']) {
    assert.ok(names.includes(n), n);
  }
  const hrefs = await page.locator('.glossary .gloss-scenario').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  assert.equal(hrefs.length, names.length);
  for (const h of hrefs) assert.match(h, /^#\/play\/[a-z0-9-]+(\?[a-z_]+=[a-z0-9-]+)?$/);
  await page.setViewportSize({ width: 853, height: 480 });
  await shot(page, 'glossary-page');
  // A term's scenario link opens that scenario (this one is in the locks bundle).
  await page.locator('.gloss', { hasText: 'Row lock' }).getByRole('link').click();
  await page.locator('.player').waitFor();
  assert.match(page.url(), /#\/play\/lost-update\?lock=row-lock/);
  assert.match(await page.locator('.narration').textContent(), /Step 0/);
  // And the popover's link leads back to the glossary.
  await page.goto(page.url().replace(/#.*/, '#/play/lost-update?step=3'));
  await page.locator('.narration .term-link', { hasText: 'transaction' }).click();
  await page.getByRole('link', { name: 'All terms →' }).click();
  await page.getByRole('heading', { name: 'Glossary', level: 1 }).waitFor();
  await page.close();
});
