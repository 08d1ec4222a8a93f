// The built site hosted under a sub-path, as documentation sites do (`/docs/coordlab/`):
// every asset is requested relative to the page, so nothing asks for the server's root.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from './serve.mjs';
import { launch, ready, guardPolicy } from './browser.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = process.env.COORDLAB_DIST || path.join(here, '..', 'dist');
const PREFIX = '/docs/coordlab/';
let server, browser, site;

before(async () => {
  server = await serve(dist, 0, '127.0.0.1', PREFIX);
  site = `http://127.0.0.1:${server.address().port}${PREFIX}`;
  browser = await launch();
});

after(async () => {
  await browser?.close();
  server?.close();
});

test('under /docs/coordlab/ a scenario loads, steps and moves to another chapter', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  const outside = [];
  const failed = [];
  page.on('request', (r) => { if (!r.url().startsWith(site) && !r.url().startsWith('data:')) outside.push(r.url()); });
  page.on('response', (r) => { if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`); });
  page.on('pageerror', (e) => failed.push(`page error: ${e.message}`));
  await guardPolicy(page, failed);
  await page.goto(`${site}#/play/zombie-worker`);
  await ready(page);
  await page.locator('.topology svg[role=img]').waitFor();
  await page.locator('body').click({ position: { x: 2, y: 2 } });
  await page.keyboard.press('n');
  await page.keyboard.press('n');
  assert.match(await page.locator('.story .beat-title').textContent(), /A freezes/);
  // Another chapter's scenario lives in another bundle: the loader fetches it from the same
  // sub-path.
  await page.evaluate(() => { location.hash = '#/play/raft-election'; });
  await page.waitForFunction(() => document.documentElement.dataset.coordlab === 'raft');
  await page.locator('.topology svg[role=img]').waitFor();
  assert.deepEqual(outside, [], 'every request stays under the sub-path');
  assert.deepEqual(failed, [], 'nothing failed to load or broke the policy');
  await page.close();
});
