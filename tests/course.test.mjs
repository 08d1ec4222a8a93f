// The course: from the library's "Start here" through chapter 1 with "Next in the course"
// alone, seeing a beat and answering each run's question on the way; the library then shows
// that progress, and "Reset progress" clears it. Progress lives in localStorage, so the whole
// walk stays in one page (one browser context). Also axe-core on the library's course parts
// and on a course scenario. Needs the home, locks and db bundles.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, audit } from './browser.mjs';

const { open, shot } = useBrowser();
const CHAPTER_1 = ['lost-update', 'advisory-locks', 'skip-locked-queue', 'deadlock', 'row-lock-modes', 'lock-granularity'];

test('Start here, then Next alone through chapter 1, answering; the library shows it, and reset clears it', async () => {
  const page = await open();
  const start = page.getByRole('link', { name: 'Start here →' });
  await start.waitFor();
  assert.equal(await page.locator('.start-picture').getAttribute('src'), 'start.svg');
  await start.click();
  for (const [i, id] of CHAPTER_1.entries()) {
    await page.waitForFunction((want) => location.hash.startsWith(`#/play/${want}`) && document.querySelector('.course'), id);
    const course = page.locator('.course');
    assert.match(await course.locator('h2').textContent(), new RegExp(`chapter 1 · ${i + 1} of ${CHAPTER_1.length}`));
    const objectives = await course.locator('.objectives li').count();
    assert.ok(objectives >= 2 && objectives <= 3, `${id}: ${objectives} objectives`);
    if (i === 0) assert.ok(await course.locator('.chapter-intro').isVisible(), 'the chapter opens with its introduction');
    // The first beat, by keyboard (n), counts as seen.
    await page.locator('body').press('n');
    await page.locator('.beat-no', { hasText: /^Beat 1 of/ }).waitFor();
    await course.locator('.answer').first().click();
    await course.locator('.why').waitFor();
    assert.equal(await course.locator('.answer[disabled]').count(), await course.locator('.answer').count());
    assert.equal(await course.locator('.answer.right').count(), 1);
    if (i === CHAPTER_1.length - 1) {
      assert.ok((await course.locator('.chapter-rules li').count()) >= 1, 'the chapter ends with its rules');
      assert.equal(await course.getByRole('link', { name: /checklist/ }).getAttribute('href'), '#/choose');
      assert.equal(await course.locator('.course-next').getAttribute('href'), '#/play/duplicate-job');
    } else {
      await course.locator('.course-next').click();
    }
  }
  assert.equal(await page.locator('.course-previous').getAttribute('href'), '#/play/row-lock-modes');

  await page.locator('.site-header .brand').click();
  await page.getByRole('heading', { name: 'Scenario library' }).waitFor();
  const mine = page.locator('.course-progress');
  assert.match(await mine.textContent(), new RegExp(`${CHAPTER_1.length} of \\d+ runs begun, ${CHAPTER_1.length} questions answered`));
  const chapter = page.locator('section.chapter', { hasText: 'Locks and lost updates' });
  assert.equal(await chapter.locator('.chapter-progress').textContent(), `${CHAPTER_1.length} of ${CHAPTER_1.length} runs begun · ${CHAPTER_1.length} questions answered`);
  assert.match(await chapter.locator('.card .seen').first().textContent(), /^1 of \d+ beats seen · question answered ✓$/);
  // Every question is answered in chapter 1, so the button goes on with chapter 2.
  assert.equal(await page.getByRole('link', { name: 'Continue the course →' }).getAttribute('href'), '#/play/duplicate-job');
  await shot(page, '60-course-library-progress');

  await page.getByRole('button', { name: 'Reset progress' }).click();
  await page.getByRole('link', { name: 'Start here →' }).waitFor();
  assert.equal(await page.locator('.card .seen').count(), 0);
  await page.reload();
  await page.getByRole('link', { name: 'Start here →' }).waitFor();
  assert.match(await mine.textContent(), /0 of \d+ runs begun, 0 questions answered/);
  await page.close();
});

test('corrupt saved progress leaves the library working, as no progress', async () => {
  const page = await open();
  await page.evaluate(() => localStorage.setItem('coordlab.progress.v1', '{"version":1,"scenarios":{"lost-update":'));
  await page.reload();
  await page.getByRole('link', { name: 'Start here →' }).waitFor();
  assert.match(await page.locator('.course-progress').textContent(), /0 of \d+ runs begun/);
  await page.close();
});

test('the library with its course and a course scenario have no WCAG A/AA violations', async () => {
  const page = await open();
  await page.getByRole('link', { name: 'Start here →' }).waitFor();
  await audit(page, 'library, first screen with Start here');
  await page.close();
  const player = await open('#/play/lock-granularity');
  await player.locator('.course .answer').first().click();
  await player.locator('.course .why').waitFor();
  await audit(player, 'lock-granularity with its course panel, question answered, chapter rules');
  await player.close();
});
