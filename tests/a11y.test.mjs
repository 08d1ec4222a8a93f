// Accessibility: axe-core (WCAG 2 A and AA rules) on every view a class or a reader meets —
// the library, the player with each tool tab open, the key list, presenter mode and the
// side-by-side view. Any violation fails, with axe's own explanation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, tab, audit } from './browser.mjs';

const { open } = useBrowser();

test('the library has no WCAG A/AA violations', async () => {
  const page = await open();
  await page.getByRole('heading', { name: 'Scenario library' }).waitFor();
  await audit(page, 'library');
  await page.close();
});

test('the player, every tool tab, the key list and presenter mode have no WCAG A/AA violations', async () => {
  const page = await open('#/play/lost-update?step=8');
  await audit(page, 'player, Beats tab');
  for (const name of ['Parameters', 'Faults', 'State', 'Events']) {
    await tab(page, name);
    await audit(page, `player, ${name} tab`);
  }
  await page.locator('body').click({ position: { x: 2, y: 2 } });
  await page.keyboard.press('?');
  await page.getByRole('dialog', { name: 'Keys' }).waitFor();
  await audit(page, 'key list');
  await page.keyboard.press('Escape');
  await page.keyboard.press('f');
  await page.locator('.player.presenting').waitFor();
  await page.keyboard.press('n');
  await audit(page, 'presenter mode');
  await page.close();
});

test('the side-by-side view has no WCAG A/AA violations', async () => {
  const page = await open('#/compare/redis-failover/consensus-lock?step=300');
  await page.locator('.compare-side[data-side=left] svg[role=img]').waitFor();
  await audit(page, 'compare');
  await page.close();
});
