// The course: from the library's "Start here" through chapter 1 with "Next stop" alone (the
// course is the lesson lessons/course.json), seeing a beat and answering each run's question
// on the way; the library then shows
// that progress, and "Reset progress" clears it. Progress lives in localStorage, so the whole
// walk stays in one page (one browser context). Also axe-core on the library's course parts
// and on a course scenario. Needs the home, locks, db, leases and trace bundles.
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
  assert.equal(await start.getAttribute('href'), '#/lesson?src=lessons/course.json&present=1&at=1');
  await start.click();
  for (const [i, id] of CHAPTER_1.entries()) {
    // The course is a lesson: each run a stop, in presenter mode, its words beside the picture.
    // A stop in another chapter's bundle changes the address before the page reloads: until it
    // has, the old stop is still drawn, so wait for the panel to name this stop.
    await page.waitForFunction(([want, stop]) => location.hash.startsWith(`#/play/${want}`) && document.querySelector('.timeline .tick')
      && document.querySelector('.lesson-panel .lesson-where')?.textContent.includes(`stop ${stop} of`), [id, i + 1]);
    const course = page.locator('.lesson-panel');
    assert.match(await course.locator('.lesson-where').textContent(), new RegExp(`The coordlab course · stop ${i + 1} of \\d+`));
    const caption = await course.locator('.lesson-caption').textContent();
    assert.match(caption, /^Chapter 1: Locks and lost updates\./);
    assert.equal((caption.match(/What this run teaches:/g) || []).length, 1, `${id}: objectives`);
    if (i === 0) assert.match(caption, /Two workers that read, change and write the same row/, 'the chapter opens with its introduction');
    // The first beat, by keyboard (n), counts as seen.
    await page.locator('body').press('n');
    await page.waitForFunction(() => /beat 1\/|Beat 1 of/.test(document.body.textContent));
    await course.locator('.answer').first().click();
    await course.locator('.why').waitFor();
    assert.equal(await course.locator('.answer[disabled]').count(), await course.locator('.answer').count());
    assert.equal(await course.locator('.answer.right').count(), 1);
    if (i === CHAPTER_1.length - 1) {
      assert.match(caption, /What chapter 1 taught:\n• /, 'the chapter ends with its rules');
      assert.equal(await course.getByRole('link', { name: /choosing page's checklist/ }).getAttribute('href'), '#/choose');
    }
    if (i > 0) assert.ok(await course.locator('.lesson-previous').isVisible());
    await course.getByRole('button', { name: 'Next stop →' }).click();
  }
  await page.waitForFunction(() => location.hash.startsWith('#/play/duplicate-job') && document.querySelector('.lesson-panel'));

  await page.goto(page.url().split('#')[0] + '#/');
  await page.getByRole('heading', { name: 'Scenario library' }).waitFor();
  const mine = page.locator('.course-progress');
  assert.match(await mine.textContent(), new RegExp(`${CHAPTER_1.length} of \\d+ runs begun, ${CHAPTER_1.length} questions answered`));
  const chapter = page.locator('section.chapter', { hasText: 'Locks and lost updates' });
  assert.equal(await chapter.locator('.chapter-progress').textContent(), `${CHAPTER_1.length} of ${CHAPTER_1.length} runs begun · ${CHAPTER_1.length} questions answered`);
  // At least the beat the walk stepped to counts as seen.
  assert.match(await chapter.locator('.card .seen').first().textContent(), /^[1-9]\d* of \d+ beats seen · question answered ✓$/);
  // Every question is answered in chapter 1, so the button goes on with chapter 2's first run.
  assert.equal(await page.getByRole('link', { name: 'Continue the course →' }).getAttribute('href'), `#/lesson?src=lessons/course.json&present=1&at=${CHAPTER_1.length + 1}`);
  await shot(page, '60-course-library-progress');

  await page.getByRole('button', { name: 'Reset progress' }).click();
  await page.getByRole('link', { name: 'Start here →' }).waitFor();
  assert.equal(await page.locator('.card .seen').count(), 0);
  await page.reload();
  await page.getByRole('link', { name: 'Start here →' }).waitFor();
  assert.match(await mine.textContent(), /0 of \d+ runs begun, 0 questions answered/);
  await page.close();
});

test('beside Start here, the first run plays live in an embed, and plays again from the start after its end', async () => {
  const page = await open();
  const frame = page.locator('.start-live');
  // The embed takes the poster's place only once it has drawn the run.
  await page.locator('.start.live').waitFor();
  assert.ok(await frame.isVisible());
  assert.ok(!(await page.locator('.start-picture').isVisible()), 'the poster gives way');
  assert.match(await frame.getAttribute('src'), /#\/embed\/lost-update\?controls=none&autoplay=1$/);
  // Never smaller than the smallest frame an embed is drawn for.
  const box = await frame.boundingBox();
  assert.ok(box.width >= 400 && box.height >= 300, `the live frame is ${box.width}×${box.height}`);
  const embed = page.frameLocator('.start-live');
  assert.equal(await embed.locator('html').getAttribute('data-coordlab'), 'locks-embed');
  await embed.locator('.topology').first().waitFor();
  // Sent to its last step, it rests there, then goes back to the start and plays.
  const again = await page.evaluate(() => new Promise((done, fail) => {
    const frame = document.querySelector('.start-live');
    const seen = [];
    addEventListener('message', (e) => {
      if (e.source !== frame.contentWindow || e.data?.type !== 'step') return;
      seen.push([e.data.step, e.data.playing]);
      if (seen.some(([s]) => s > 0) && e.data.step === 0 && e.data.playing) done(seen.length);
    });
    // start.js keeps the step count the embed's ready message gave (data-steps).
    frame.contentWindow.postMessage({ coordlab: 1, type: 'pause' }, location.origin);
    frame.contentWindow.postMessage({ coordlab: 1, type: 'seek', step: Number(frame.dataset.steps) - 1 }, location.origin);
    setTimeout(() => fail(new Error(`no replay: ${JSON.stringify(seen.slice(-5))}`)), 20_000);
  }));
  assert.ok(again > 1);
  await audit(page, 'the library with its live picture');
  await page.close();
});

test('on a phone, narrower than an embed is drawn for, the poster stays and no embed is loaded', async () => {
  const page = await open();
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await page.getByRole('link', { name: 'Start here →' }).waitFor();
  // start.js looks once the library is idle; give it that moment.
  await page.evaluate(() => new Promise((done) => setTimeout(done, 1500)));
  assert.equal(await page.locator('.start-live').count(), 0);
  assert.ok(await page.locator('.start-picture').isVisible());
  await page.close();
});

test('a scenario opened from the library says where the course has it, what it teaches, and links the runs around it', async () => {
  const page = await open('#/play/advisory-locks');
  const here = page.locator('.course-here');
  await here.waitFor();
  assert.match(await here.locator('.course-where').textContent(), /^In the course: run 2 of \d+ · Chapter 1: Locks and lost updates$/);
  const objectives = await here.locator('li').allTextContents();
  assert.ok(objectives.length >= 2 && objectives.length <= 3, `two or three objectives: ${objectives}`);
  assert.equal(await here.getByRole('link', { name: /^← Previous: lost-update$/ }).getAttribute('href'), '#/lesson?src=lessons/course.json&present=1&at=1');
  assert.equal(await here.getByRole('link', { name: /^Next in the course: skip-locked-queue →$/ }).getAttribute('href'), '#/lesson?src=lessons/course.json&present=1&at=3');
  await audit(page, 'a scenario with its place in the course');
  // Previous walks the course from there: the lesson's own panel replaces this one.
  await here.getByRole('link', { name: /Previous/ }).click();
  await page.waitForFunction(() => location.hash.startsWith('#/play/lost-update') && document.querySelector('.lesson-panel'));
  assert.match(await page.locator('.lesson-panel .lesson-where').textContent(), /stop 1 of \d+/);
  assert.equal(await page.locator('.course-here').count(), 0);
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
  const player = await open('#/lesson?src=lessons/course.json&present=1&at=6');
  await player.waitForFunction(() => location.hash.startsWith('#/play/lock-granularity') && document.querySelector('.lesson-panel'));
  await player.locator('.lesson-panel .answer').first().click();
  await player.locator('.lesson-panel .why').waitFor();
  await audit(player, 'lock-granularity as the course\'s stop 6, question answered, chapter rules');
  await player.close();
});
