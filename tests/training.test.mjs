// Browser tests for running a class with coordlab: beats, presenter mode, predict-then-see,
// and keys that cannot misfire. Run: node --test tests/ (after `cargo xtask dist`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, stepLabel, chip, tab, onScreen, audit } from './browser.mjs';

const { open, shot } = useBrowser();
const beatNo = (page) => page.locator('.story .beat-no').textContent();
const beatTitle = (page) => page.locator('.story .beat-title').textContent();

test('n and Page Down go from beat to beat; p and Page Up go back; ticks and the beat list jump', async () => {
  const page = await open('#/play/lost-update');
  await page.locator('body').click({ position: { x: 5, y: 5 } });
  assert.equal(await beatNo(page), 'Before the first beat');
  await page.keyboard.press('n');
  assert.equal(await beatNo(page), 'Beat 1 of 4');
  assert.equal(await beatTitle(page), 'A worker reads ₹100');
  await page.keyboard.press('PageDown');
  assert.equal(await beatNo(page), 'Beat 2 of 4');
  const atTwo = await stepLabel(page);
  await page.keyboard.press('PageDown');
  await page.keyboard.press('n');
  assert.equal(await beatNo(page), 'Beat 4 of 4');
  assert.match(await chip(page, 'no-lost-update').textContent(), /broke at step/);
  assert.match(await chip(page, 'no-lost-update').getAttribute('class'), /violated/);
  await page.keyboard.press('PageUp');
  await page.keyboard.press('p');
  assert.equal(await beatNo(page), 'Beat 2 of 4');
  assert.equal(await stepLabel(page), atTwo);
  // A tick on the timeline is a labelled button that goes to its beat.
  await page.getByRole('button', { name: /Go to beat 3:/ }).click();
  assert.equal(await beatNo(page), 'Beat 3 of 4');
  // The beat list beside the player does the same.
  await tab(page, 'Beats');
  await page.locator('.beats .beat-row button').first().click();
  assert.equal(await beatNo(page), 'Beat 1 of 4');
  assert.match(page.url(), /step=\d+/);
  await page.close();
});

test('Play stops at the next beat', async () => {
  const page = await open('#/play/lost-update');
  await page.getByRole('combobox', { name: /Speed/ }).selectOption({ index: 4 });
  await page.getByRole('button', { name: 'Play', exact: true }).click();
  await page.getByRole('button', { name: 'Play', exact: true }).waitFor();
  assert.equal(await beatNo(page), 'Beat 1 of 4');
  await page.close();
});

test('Space after a button click plays; it does not press the button again', async () => {
  const page = await open('#/play/lost-update?step=8');
  await tab(page, 'Faults');
  await page.getByRole('button', { name: 'Crash worker-2' }).click();
  assert.match(page.url(), /actions=9@crash:2(&|$)/);
  await page.keyboard.press('Space');
  await page.getByRole('button', { name: 'Pause', exact: true }).waitFor();
  await page.keyboard.press('Space');
  await page.getByRole('button', { name: 'Play', exact: true }).waitFor();
  assert.match(page.url(), /actions=9@crash:2(&|$)/, 'no second fault was injected');
  // The same after clicking a transport button.
  await page.getByRole('button', { name: 'Step back' }).click();
  const before = await stepLabel(page);
  await page.keyboard.press('Space');
  await page.getByRole('button', { name: 'Pause', exact: true }).waitFor();
  await page.waitForFunction((b) => document.querySelector('.step-count').textContent !== b, before);
  await page.keyboard.press('Space');
  const [now, then] = [before, await stepLabel(page)].map((l) => Number(l.match(/Step (\d+)/)[1]));
  assert.ok(then > now, 'Space played forwards, it did not step back again');
  await page.close();
});

test('? lists every key; Escape closes the list', async () => {
  const page = await open('#/play/lost-update');
  await page.locator('body').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('?');
  const help = page.getByRole('dialog', { name: 'Keys' });
  await help.waitFor();
  const text = await help.textContent();
  for (const key of ['Page Down', 'Page Up', 'Space', 'Home', 'End', 'Escape']) assert.ok(text.includes(key), key);
  await page.keyboard.press('Escape');
  assert.equal(await help.count(), 0);
  await page.close();
});

test('a question at a beat: the learner picks an answer, then sees why', async () => {
  const page = await open('#/play/lost-update');
  await page.locator('body').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('n');
  await page.keyboard.press('n');
  const question = page.getByRole('group', { name: 'Question' });
  await question.waitFor();
  await question.getByRole('button', { name: '₹100' }).click();
  assert.match(await question.locator('.answer.wrong').textContent(), /₹100/);
  assert.match(await question.locator('.answer.right').textContent(), /₹70/);
  assert.match(await question.locator('.why').textContent(), /overwrites/);
  await page.close();
});

test('presenter mode from the URL: the answer shows on the next step, Escape leaves', async () => {
  const page = await open('#/play/lost-update?present=1');
  await page.setViewportSize({ width: 853, height: 480 });
  assert.match(await page.locator('.player').getAttribute('class'), /presenting/);
  await page.keyboard.press('n');
  await page.keyboard.press('n');
  const question = page.getByRole('group', { name: 'Question' });
  await question.waitFor();
  const step = await stepLabel(page);
  assert.equal(await question.locator('.why').count(), 0, 'the answer waits for the room');
  for (const s of ['.story .beat-title', '.question', '.property-strip', '.topology svg[role=img]', '.transport']) {
    assert.ok(await onScreen(page, s), `${s} is on the first screen`);
  }
  const size = await page.locator('.story .beat-text').evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
  assert.ok(size >= 17, `beat text is ${size}px at 853×480 (1280×720 at 150%)`);
  await shot(page, 'presenter-question-853x480');
  await page.keyboard.press('ArrowRight');
  await question.locator('.why').waitFor();
  assert.equal(await stepLabel(page), step, 'revealing the answer does not move the run');
  await page.keyboard.press('ArrowRight');
  assert.notEqual(await stepLabel(page), step);
  await page.keyboard.press('Escape');
  assert.doesNotMatch(await page.locator('.player').getAttribute('class'), /presenting/);
  assert.doesNotMatch(page.url(), /present=1/);
  await page.close();
});

test('presenter type is at least 24px at 1280×720', async () => {
  const page = await open('#/play/lost-update?present=1&step=0');
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.locator('body').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('n');
  for (const s of ['.story .beat-text', '.story .beat-title']) {
    const size = await page.locator(s).evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
    assert.ok(size >= 24, `${s} is ${size}px`);
  }
  await page.goto(page.url().replace(/step=\d+/, 'step=9'));
  await page.locator('.narration .notes p').first().waitFor();
  const size = await page.locator('.narration .notes p').first().evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
  assert.ok(size >= 24, `narration is ${size}px`);
  await shot(page, 'presenter-1280x720');
  await page.close();
});

test('a session on zombie-worker by keyboard alone, in presenter mode at 853×480', async () => {
  const page = await open('#/play/zombie-worker');
  await page.setViewportSize({ width: 853, height: 480 });
  await page.locator('body').click({ position: { x: 2, y: 2 } });
  await page.keyboard.press('f');
  await page.locator('.player.presenting').waitFor();
  const titles = [];
  for (let presses = 1; presses <= 12; presses++) {
    await page.keyboard.press('n');
    const title = await beatTitle(page);
    titles.push(title);
    for (const s of ['.topology svg[role=img]', '.story .beat-title', '.property-strip']) {
      assert.ok(await onScreen(page, s), `beat “${title}”: ${s} is on the first screen`);
    }
    // The picture stays big, banner or not (the unsafe-window banner once sat beside it and
    // squeezed it to a thumbnail).
    const width = await page.locator('.topology svg[role=img]').evaluate((el) => el.getBoundingClientRect().width);
    assert.ok(width >= 0.4 * 853, `beat “${title}”: the picture is ${width}px wide`);
    // A beat that asks a question shows the answer on the next press: press again to move on.
    if (await page.getByRole('group', { name: 'Question' }).count()) {
      await page.keyboard.press('n');
      await page.locator('.question .why').waitFor();
      await page.keyboard.press('n');
      titles.push(await beatTitle(page));
    }
    if (/A's write/.test(titles.at(-1))) break;
  }
  assert.match(titles.at(-1), /A's write lands/, titles.join(' → '));
  assert.match(await chip(page, 'no-double-debit').getAttribute('class'), /violated/, 'the strip turns red');
  assert.ok(await onScreen(page, '.property-strip .chip.violated'));
  await shot(page, 'presenter-zombie-853x480');
  await page.close();
});

test('the side-by-side double grant is reached in at most 8 key presses', async () => {
  const page = await open('#/compare/redis-failover/consensus-lock');
  await page.locator('.compare-side[data-side=left] svg[role=img]').waitFor();
  await page.locator('body').click({ position: { x: 2, y: 2 } });
  const left = page.locator('.compare-side[data-side=left]');
  // v: to the next step where a property breaks (the token is reissued, then the lock is
  // held twice).
  let presses = 0;
  while (presses < 8 && !/one-holder-per-store/.test(await left.locator('.side-status').textContent())) {
    await page.keyboard.press('v');
    presses++;
  }
  assert.match(await left.locator('.side-status').textContent(), /violated: .*one-holder-per-store/, `after ${presses} presses`);
  assert.equal(await left.locator('.beat.now .beat-title').textContent(), 'Two holders');
  assert.match(await page.locator('.compare-side[data-side=right] .side-status').textContent(), /every property holds so far/);
  // Beat by beat (both runs' beats, in time order) tells the story up to it.
  await page.keyboard.press('Home');
  const titles = [];
  for (let presses = 0; presses < 12 && !titles.includes('Two holders'); presses++) {
    await page.keyboard.press('n');
    if (await left.locator('.beat.now').count()) titles.push(await left.locator('.beat.now .beat-title').textContent());
  }
  assert.ok(titles.includes('Two holders'), titles.join(' → '));
  // The shared timeline shows both runs' beats as ticks that go there.
  await page.keyboard.press('Home');
  await page.getByRole('button', { name: /Go to beat \d+: Redis failover.*: Two holders/ }).click();
  assert.equal(await left.locator('.beat.now .beat-title').textContent(), 'Two holders');
  await shot(page, 'compare-double-grant');
  await page.close();
});

test('raft-election: the new leader after the crash is reached in at most 12 presses of n', async () => {
  const page = await open('#/play/raft-election');
  await page.locator('body').click({ position: { x: 2, y: 2 } });
  let crashed = false;
  for (let presses = 1; presses <= 12; presses++) {
    await page.keyboard.press('n');
    const title = await beatTitle(page);
    if (/crash/i.test(title)) crashed = true;
    if (crashed && /new leader|wins/i.test(title)) return page.close();
  }
  assert.fail('no new-leader beat after the crash within 12 presses');
});

// ---- Legible from the back of a room (issue 11, item 4) ----

/** The smallest type of what the cards say (each participant's name and state lines) on
 *  screen, in CSS pixels. */
const smallestCardText = (page) => page.evaluate(() => {
  const svg = document.querySelector('.topology svg[role=img]');
  const scale = svg.getScreenCTM().a;
  let min = Infinity;
  for (const t of svg.querySelectorAll('.node .node-name, .node .node-line')) min = Math.min(min, parseFloat(getComputedStyle(t).fontSize) * scale);
  return min;
});

test('at 853×480 the cards are readable and the properties leave the beat in view', async () => {
  const page = await open('#/play/zombie-worker?step=40');
  await page.setViewportSize({ width: 853, height: 480 });
  // The picture is drawn again for its new box (one drawing unit to a CSS pixel).
  await page.waitForFunction(() => Math.abs(document.querySelector('.topology svg[role=img]')?.getScreenCTM()?.a - 1) < 0.01);
  const plain = await smallestCardText(page);
  assert.ok(plain >= 9, `card text is ${plain.toFixed(1)}px in the player at 853×480`);
  await page.keyboard.press('f');
  await page.locator('.player.presenting').waitFor();
  const presenting = await smallestCardText(page);
  assert.ok(presenting >= 12, `card text is ${presenting.toFixed(1)}px in presenter mode at 853×480`);
  await shot(page, 'presenter-cards-853x480');
  // Eight properties: the holding ones fold into one chip, so the beat's text stays visible
  // above the strip rather than under it.
  await page.goto(page.url().replace(/#.*/, '#/play/raft-election?step=150'));
  await page.locator('.story .beat-text').waitFor();
  const [beat, strip] = await Promise.all(['.story .beat-text', '.story .property-strip'].map((s) =>
    page.locator(s).evaluate((el) => { const r = el.getBoundingClientRect(); return { top: r.top, bottom: r.bottom }; })));
  assert.ok(beat.bottom <= strip.top + 1, `the beat text ends at ${beat.bottom}px, the strip starts at ${strip.top}px`);
  assert.ok(strip.bottom <= 480, `the strip ends at ${strip.bottom}px`);
  assert.match(await page.locator('.property-strip .holds-summary').textContent(), /✓ 8 hold/);
  await shot(page, 'raft-election-853x480');
  await page.close();
});

// Where each message dot and label is drawn, and where each card is, in page pixels; and how
// the layer of messages and the picture each map the drawing onto the page.
const drawnMarks = (page) => page.evaluate(() => {
  const picture = document.querySelector('.topology svg[role=img]');
  const layer = document.querySelector('.topology svg.messages');
  const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const ctm = (svg) => { const m = svg.getScreenCTM(); return [m.a, m.e, m.f]; };
  return {
    picture: ctm(picture),
    layer: ctm(layer),
    cards: [...picture.querySelectorAll('g.node > rect')].map((r) => [r.closest('g.node').getAttribute('data-node'), box(r)]),
    marks: [...layer.querySelectorAll('.msg')].flatMap((g) =>
      [...g.querySelectorAll('circle, text')].map((el) => [g.querySelector('text')?.textContent || g.dataset.msg, box(el)])),
  };
});
const overlaps = (a, b) => Math.min(a[2], b[2]) - Math.max(a[0], b[0]) > 0.5 && Math.min(a[3], b[3]) - Math.max(a[1], b[1]) > 0.5;

test('at 853×480 message dots and labels sit on the picture as drawn, off every card', async () => {
  for (const present of [false, true]) {
    for (const step of [12, 25, 40]) {
      const page = await open(`#/play/zombie-worker?step=${step}${present ? '&present=1' : ''}`);
      // No glide: read where each mark ends up, not where it is on its way.
      await page.emulateMedia({ reducedMotion: 'reduce' });
      await page.setViewportSize({ width: 853, height: 480 });
      await page.locator('.topology svg.messages').waitFor();
      const drawn = await drawnMarks(page);
      const where = `${present ? 'presenter' : 'player'}, step ${step}`;
      // The picture's height is capped on a short screen; the layer must scale alike.
      drawn.layer.forEach((v, i) => assert.ok(Math.abs(v - drawn.picture[i]) < 0.01,
        `${where}: the messages' layer maps the drawing as ${drawn.layer}, the picture as ${drawn.picture}`));
      assert.ok(drawn.marks.length > 0, `${where}: a message is in flight`);
      for (const [what, m] of drawn.marks) for (const [card, c] of drawn.cards) {
        assert.ok(!overlaps(m, c), `${where}: “${what}” at ${m.map(Math.round)} covers ${card} at ${c.map(Math.round)}`);
      }
      await page.close();
    }
  }
});

/** Where the key list is, whether its list scrolls and has the focus, and its type size. */
const keyList = (page) => page.evaluate(() => {
  const r = document.querySelector('.help').getBoundingClientRect();
  const list = document.querySelector('.help-keys');
  return {
    box: [r.left, r.top, r.right, r.bottom],
    view: [innerWidth, innerHeight],
    scrolls: list.scrollHeight > list.clientHeight + 1,
    top: list.scrollTop,
    focused: document.activeElement === list,
    font: parseFloat(getComputedStyle(list.querySelector('dd')).fontSize),
  };
});

for (const [w, h] of [[853, 480], [1280, 720]]) {
  test(`at ${w}×${h} the key list fits the screen in the player and in presenter mode, scrolls, and Escape closes it first`, async () => {
    for (const present of [false, true]) {
      const page = await open(`#/play/zombie-worker${present ? '?present=1' : ''}`);
      await page.setViewportSize({ width: w, height: h });
      await page.locator('.topology svg[role=img]').waitFor();
      await page.locator('body').press('n');
      const step = await stepLabel(page);
      await page.keyboard.press('?');
      const help = page.getByRole('dialog', { name: 'Keys' });
      await help.waitFor();
      const where = `${present ? 'presenter mode' : 'player'} at ${w}×${h}`;
      // The list takes the focus once the dialog has drawn (an effect, a frame later): wait
      // for it up to 2 s; if it never comes, the assertion below says so.
      await page.waitForFunction(() => document.activeElement === document.querySelector('.help-keys'), null,
        { timeout: 2_000 }).catch(() => {});
      const k = await keyList(page);
      const [left, top, right, bottom] = k.box;
      assert.ok(left >= 0 && top >= 0 && right <= w && bottom <= h, `${where}: the key list ${k.box} is inside the screen`);
      assert.ok(k.focused, `${where}: the list has the focus, so the keyboard scrolls it`);
      assert.ok(await onScreen(page, '.help dt'), `${where}: “n or Page Down” is in view`);
      assert.ok(await onScreen(page, '.help .close'), `${where}: Close is in view`);
      if (present) assert.ok(k.font >= 18, `${where}: the list's type is ${k.font}px`);
      await audit(page, `the key list, ${where}`);
      if (k.scrolls) {
        // The list keeps Page Down and End for itself while it has the focus.
        await page.keyboard.press('End');
        await page.waitForFunction(() => {
          const list = document.querySelector('.help-keys');
          return list.scrollTop + list.clientHeight >= list.scrollHeight - 1;
        });
        assert.ok(await onScreen(page, '.help dl > dt:last-of-type'), `${where}: the last key scrolls into view`);
        assert.equal(await stepLabel(page), step, `${where}: scrolling the list moved nothing`);
      }
      await shot(page, `keys-${present ? 'presenter' : 'player'}-${w}x${h}`);
      await page.keyboard.press('Escape');
      await help.waitFor({ state: 'detached' });
      const presenting = () => page.locator('.player.presenting').count();
      assert.equal(await presenting(), present ? 1 : 0, `${where}: Escape closed the list and nothing else`);
      if (present) {
        await page.keyboard.press('Escape');
        await page.locator('.player:not(.presenting)').waitFor();
      }
      await page.close();
    }
  });
}

test('Close shuts the key list and gives the focus back to the Keys button', async () => {
  const page = await open('#/play/zombie-worker');
  await page.getByRole('button', { name: /Keys/ }).click();
  const help = page.getByRole('dialog', { name: 'Keys' });
  await help.getByRole('button', { name: 'Close' }).click();
  await help.waitFor({ state: 'detached' });
  await page.waitForFunction(() => document.activeElement?.id === 'help-button');
  await page.close();
});

test('Escape closes the key list before the Embed dialog', async () => {
  const page = await open('#/play/zombie-worker');
  await page.getByRole('button', { name: /Embed/ }).click();
  const embed = page.getByRole('dialog', { name: 'Embed this run in a page' });
  await embed.waitFor();
  await page.keyboard.press('?');
  const help = page.getByRole('dialog', { name: 'Keys' });
  await help.waitFor();
  await page.keyboard.press('Escape');
  await help.waitFor({ state: 'detached' });
  assert.equal(await embed.count(), 1, 'the Embed dialog is still open');
  await page.keyboard.press('Escape');
  await embed.waitFor({ state: 'detached' });
  await page.close();
});

test('the browser leaving full screen with the key list open closes only the list', async () => {
  const page = await open('#/play/zombie-worker?present=1');
  await page.locator('.player.presenting').waitFor();
  await page.locator('body').press('?');
  const help = page.getByRole('dialog', { name: 'Keys' });
  await help.waitFor();
  // The browser's own Escape in full screen: the page hears only this event.
  await page.evaluate(() => document.dispatchEvent(new Event('fullscreenchange')));
  await help.waitFor({ state: 'detached' });
  assert.equal(await page.locator('.player.presenting').count(), 1, 'presenter mode stays');
  assert.match(page.url(), /present=1/);
  await page.evaluate(() => document.dispatchEvent(new Event('fullscreenchange')));
  await page.locator('.player:not(.presenting)').waitFor();
  await page.close();
});

test('times read as people write them: "t = 0 ms", never "0.000ms"', async () => {
  const page = await open('#/play/zombie-worker');
  assert.match(await page.locator('.sim-time').textContent(), /^ · t = 0 ms$/);
  await page.locator('body').press('End');
  assert.match(await page.locator('.sim-time').textContent(), /^ · t = \d+(\.\d{1,3})? s$/);
  await tab(page, 'Events');
  const times = await page.locator('.event-log .log-row .time').allTextContents();
  assert.ok(times.length > 0);
  for (const t of times) assert.match(t, /^\d+(\.\d{1,3})? (ms|s)$/, t);
  await page.close();
});
