// Lessons (docs/trainer.md, "Lessons"): a trainer's file of stops, opened from the site or a
// file, walked in presenter mode with n alone across chapters; a lesson written with "Add this
// view" and "Export" reopens as it was; a malformed file says what is wrong and where.
// Run: node --test tests/lessons.test.mjs (after `cargo xtask dist`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { useBrowser, ready, audit } from './browser.mjs';

const { open, shot } = useBrowser();

/** After a key press or a click that may reload the page (a stop in another chapter). */
async function settled(page) {
  for (let tries = 0; ; tries++) {
    try {
      await page.waitForLoadState();
      await ready(page);
      return;
    } catch (e) {
      if (tries > 5) throw e;
    }
  }
}

const where = (page) => page.locator('.lesson-panel .lesson-where').textContent();

test('a lesson of three stops in three chapters: n alone walks it to the last stop’s question', async () => {
  const page = await open('#/lesson?src=lessons/locks-101.json');
  await page.getByRole('button', { name: 'Present this lesson' }).click();
  await settled(page);
  await page.locator('.player.presenting').waitFor();
  assert.match(await where(page), /stop 1 of 3/);
  assert.match(page.url(), /#\/play\/lost-update\?/);
  const bundles = new Set();
  let presses = 0;
  while (!/stop 3 of 3/.test(await where(page).catch(() => ''))) {
    bundles.add(await page.evaluate(() => document.documentElement.dataset.coordlab));
    await page.keyboard.press('n');
    presses += 1;
    await page.waitForTimeout(60);
    await settled(page);
    await page.locator('.lesson-panel').waitFor();
    assert.ok(presses < 60, 'n reaches the last stop');
  }
  bundles.add(await page.evaluate(() => document.documentElement.dataset.coordlab));
  assert.ok(bundles.size >= 2, `the walk crossed chapters (${[...bundles]})`);
  assert.match(page.url(), /#\/play\/raft-election\?.*present=1/);
  await page.locator('.player.presenting').waitFor();
  const question = page.getByRole('group', { name: 'Lesson question' });
  await question.waitFor();
  assert.match(await question.textContent(), /What does a candidate need to become leader\?/);
  // Answering shows the right answer and why.
  await question.getByRole('button', { name: /The lowest server id/ }).click();
  assert.match(await question.textContent(), /Votes from a majority.*✓/);
  assert.match(await question.textContent(), /two majorities always share a server/);
  await page.setViewportSize({ width: 853, height: 480 });
  await audit(page, 'a lesson stop in presenter mode');
  // Legible on a projector: every text of the stop at 16 CSS px and up, the panel on screen.
  const small = await page.evaluate(() => [...document.querySelectorAll('.lesson-panel, .lesson-panel *')]
    .filter((e) => e.childNodes.length && [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim()))
    .map((e) => [e.textContent.slice(0, 30), parseFloat(getComputedStyle(e).fontSize)])
    .filter(([, px]) => px < 16));
  assert.deepEqual(small, [], 'lesson text under 16 px at 853×480');
  await shot(page, 'lesson-stop-853x480');
  await page.close();
  // On a phone the stop's words go under the picture (the page opened at that size: the
  // picture's layout is chosen for the box it first has).
  const phone = await open('');
  await phone.setViewportSize({ width: 390, height: 844 });
  await phone.goto(`${new URL(phone.url()).origin}/#/lesson?src=lessons/locks-101.json&present=1`);
  await settled(phone);
  await phone.locator('.lesson-panel').waitFor();
  await phone.locator('.player.presenting').waitFor();
  // The stop's page may still be switching bundles when the panel first shows (the library's
  // document hands over to the chapter's): the layout that counts is the one it settles in.
  const under = () => document.querySelector('.lesson-panel').getBoundingClientRect().top
    >= document.querySelector('.player.presenting .controls').getBoundingClientRect().bottom - 1;
  const settledUnder = await phone.waitForFunction(under, null, { timeout: 10_000 }).then(() => true, () => false);
  const measured = await phone.evaluate(() => [document.querySelector('.lesson-panel')?.getBoundingClientRect().top,
    document.querySelector('.player .controls')?.getBoundingClientRect().bottom]);
  assert.ok(settledUnder, `the panel sits under the player (panel top, controls bottom: ${measured})`);
  await shot(phone, 'lesson-stop-390x844');
  await phone.close();
});

test('p at the start of a stop goes back to the previous stop', async () => {
  const page = await open('#/lesson?src=lessons/locks-101.json');
  await page.getByRole('button', { name: 'Present this lesson' }).click();
  await settled(page);
  await page.locator('.lesson-panel').waitFor();
  // Stop 2 (zombie-worker) starts at step 0: from there, p goes back to stop 1.
  await page.evaluate(() => {
    sessionStorage.setItem('coordlab-lesson-at', '1');
    location.hash = JSON.parse(sessionStorage.getItem('coordlab-lesson')).stops[1].hash;
  });
  await settled(page);
  await page.waitForFunction(() => /stop 2 of 3/.test(document.querySelector('.lesson-where')?.textContent));
  await page.keyboard.press('p');
  await settled(page);
  await page.waitForFunction(() => /stop 1 of 3/.test(document.querySelector('.lesson-where')?.textContent));
  assert.match(page.url(), /#\/play\/lost-update\?/);
  await page.close();
});

/** A player link's run: what a stop must reproduce. */
const view = (url) => {
  const hash = new URL(url).hash;
  const q = new URLSearchParams(hash.split('?')[1]);
  for (const key of ['present', 'view', 'axis', 'all']) q.delete(key);
  q.sort();
  return `${hash.split('?')[0]}?${q}`;
};

test('a lesson built with "Add this view" and exported reopens with the same views', async () => {
  const page = await open('#/play/lost-update?lock=row-lock&seed=5&actions=5@pause:1:40&step=7');
  await page.evaluate(() => localStorage.removeItem('coordlab-lesson-draft'));
  await page.reload();
  await ready(page);
  const add = () => page.getByRole('button', { name: 'Add this view to a lesson' }).click();
  await add();
  const views = [view(page.url())];
  await page.evaluate(() => { location.hash = '#/play/zombie-worker?fencing=first-write-only&seed=3&step=4'; });
  await settled(page);
  await page.waitForFunction(() => location.hash.includes('zombie-worker') && document.querySelector('.player'));
  await add();
  views.push(view(page.url()));
  await page.getByRole('status').filter({ hasText: 'Your lesson has 2 stops.' }).waitFor();
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export the lesson' }).click(),
  ]);
  const text = fs.readFileSync(await download.path(), 'utf8');
  assert.equal(JSON.parse(text).stops.length, 2);
  // Reopen it from a file on the lesson page.
  await page.evaluate(() => { location.hash = '#/lesson'; });
  await settled(page);
  await page.locator('input[type=file]').setInputFiles({ name: download.suggestedFilename(), mimeType: 'application/json', buffer: Buffer.from(text) });
  await page.getByRole('button', { name: 'Present this lesson' }).click();
  await settled(page);
  await page.waitForFunction(() => document.querySelector('.lesson-panel'));
  assert.equal(view(page.url()), views[0]);
  const stops = await page.evaluate(() => JSON.parse(sessionStorage.getItem('coordlab-lesson')).stops.map((s) => s.hash));
  assert.deepEqual(stops.map((h) => view(`http://x/${h}`)), views);
  await page.close();
});

const MALFORMED = [
  ['not json', /not JSON/],
  ['{"coordlab_lesson": 7, "title": "t", "stops": [{"scenario": "lost-update"}]}', /“coordlab_lesson” is 7/],
  ['{"coordlab_lesson": 1, "stops": [{"scenario": "lost-update"}]}', /“title” is missing/],
  ['{"coordlab_lesson": 1, "title": "t", "stops": []}', /“stops” is empty/],
  ['{"coordlab_lesson": 1, "title": "t", "stops": [{"scenario": "lost-update"}, {"scenario": "lost-updat"}]}', /Stop 2's “scenario”.*lost-updat/],
  ['{"coordlab_lesson": 1, "title": "t", "stops": [{"scenario": "lost-update", "params": {"lock": "padlock"}}]}', /Stop 1's “params”.*padlock/],
  ['{"coordlab_lesson": 1, "title": "t", "stops": [{"scenario": "lost-update", "steps": [9, 3]}]}', /Stop 1's “steps” runs backwards/],
  ['{"coordlab_lesson": 1, "title": "t", "stops": [{"scenario": "lost-update", "seed": -4}]}', /Stop 1's “seed”/],
  ['{"coordlab_lesson": 1, "title": "t", "stops": [{"scenario": "lost-update", "faults": "9@melt:1"}]}', /Stop 1's “faults”/],
  ['{"coordlab_lesson": 1, "title": "t", "stops": [{"scenario": "raft-election", "question": {"prompt": "?", "answers": ["a", "b"], "correct": [2]}}]}', /Stop 1's question's “correct”/],
];

test('ten malformed lesson files each say what is wrong and where', async () => {
  const page = await open('#/lesson');
  for (const [text, wanted] of MALFORMED) {
    await page.locator('input[type=file]').setInputFiles({ name: 'bad.json', mimeType: 'application/json', buffer: Buffer.from(text) });
    const alert = page.getByRole('alert');
    await page.waitForFunction((w) => new RegExp(w).test(document.querySelector('[role=alert]')?.textContent || ''), wanted.source);
    assert.match(await alert.textContent(), wanted, text);
  }
  await audit(page, 'the lesson page with a problem');
  await page.close();
  // A lesson on another site is refused by name.
  const other = await open('#/lesson?src=https://example.com/lesson.json');
  assert.match(await other.getByRole('alert').textContent(), /not on this site/);
  await other.close();
});

test('the lesson page: the shipped lesson listed, accessible', async () => {
  const page = await open('#/lesson?src=lessons/locks-101.json');
  await page.getByRole('button', { name: 'Present this lesson' }).waitFor();
  assert.equal(await page.locator('.lesson-stops li').count(), 3);
  await audit(page, 'the lesson page');
  await page.close();
});
