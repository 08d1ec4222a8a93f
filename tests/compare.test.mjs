// Browser end-to-end test for the side-by-side pair (issue 5): Redis failover and the
// consensus-backed lock, one seed, the same fault clicks, stepping together.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, audit, onScreen } from './browser.mjs';

const { open, shot, origin } = useBrowser();

const side = (page, which) => page.locator(`.compare-side[data-side=${which}]`);
const position = (page) => page.locator('.compare .position').textContent();
const stepOf = async (page) => Number((await position(page)).match(/step (\d+) of/)[1]);
/** The time in the position ("t = 0 ms", "t = 52.125 ms", "t = 1.25 s") in seconds; times are
 *  written as people write them, never "0.000ms". */
const seconds = (text) => {
  const [, value, unit] = text.match(/t = (\d+(?:\.\d+)?) (ms|s)\b/);
  return Number(value) / (unit === 'ms' ? 1000 : 1);
};

test('the library opens Redis failover and the consensus lock side by side', async () => {
  const page = await open('');
  await page.getByRole('link', { name: /Side by side: Redis failover vs the consensus lock/ }).click();
  await page.waitForURL(/#\/compare\/redis-failover\/consensus-lock/);
  await assert.doesNotReject(side(page, 'left').locator('svg[role=img]').waitFor());
  assert.match(await side(page, 'left').locator('h2').textContent(), /Redis failover/);
  assert.match(await side(page, 'right').locator('h2').textContent(), /Consensus lock/);
  // Both columns start safe.
  for (const which of ['left', 'right']) {
    assert.match(await side(page, which).locator('.side-status').textContent(), /every property holds so far/);
  }
  // One failure, two outcomes: at the end Redis has granted the lock twice, consensus once.
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  const left = await side(page, 'left').locator('.side-status').textContent();
  const right = await side(page, 'right').locator('.side-status').textContent();
  assert.match(left, /violated: .*one-holder-per-store/);
  assert.match(left, /at most 2 holder/);
  assert.match(right, /every property holds so far/);
  assert.match(right, /at most 1 holder/);
  await shot(page, '50-compare-end');
  await page.close();
});

test('stepping moves both runs through true time together, by keyboard too', async () => {
  const page = await open('#/compare/redis-failover/consensus-lock');
  await side(page, 'left').locator('svg[role=img]').waitFor();
  assert.equal(await stepOf(page), 0);
  // Every event, one at a time (by default stepping skips heartbeats and acks).
  await page.getByRole('checkbox', { name: /All events/ }).check();
  await page.locator('body').press('ArrowRight');
  await page.locator('body').press('ArrowRight');
  await page.locator('body').press('ArrowRight');
  assert.equal(await stepOf(page), 3);
  // Each step moves one column, marked so the room can follow it.
  assert.equal(await page.locator('.compare-side.moved').count(), 1);
  const times = [];
  for (let i = 0; i < 40; i++) {
    await page.getByRole('button', { name: 'Step forward' }).click();
    times.push(seconds(await position(page)));
  }
  for (let i = 1; i < times.length; i++) assert.ok(times[i] >= times[i - 1], `time went back: ${times}`);
  await page.getByRole('button', { name: 'Step back' }).click();
  assert.equal(await stepOf(page), 42);
  await page.close();
});

test('one fault click forks both runs, and the link brings the same view back', async () => {
  const page = await open('#/compare/redis-failover/consensus-lock');
  await side(page, 'left').locator('svg[role=img]').waitFor();
  await page.getByRole('checkbox', { name: /All events/ }).check();
  for (let i = 0; i < 25; i++) await page.getByRole('button', { name: 'Step forward' }).click();
  await page.getByRole('button', { name: 'Crash worker-b in both runs' }).click();
  await page.waitForURL(/left=\d+%40crash%3A4|left=\d+@crash:4/);
  const url = page.url();
  assert.match(url, /right=\d+(%40|@)crash(%3A|:)4/, url);
  // worker-b is down in both pictures.
  for (const which of ['left', 'right']) {
    assert.equal(await side(page, which).locator('.node.crashed[data-node="worker-b"]').count(), 1, which);
  }
  const here = await position(page);
  const again = await open(url.slice(origin().length + 1));
  await side(again, 'left').locator('svg[role=img]').waitFor();
  assert.equal(await position(again), here);
  await shot(again, '51-compare-forked');
  await again.close();
  await page.close();
});

test('a broken compare link falls back to the default pair with a notice', async () => {
  const page = await open('#/compare/redis-failover/no-such?seed=abc');
  await side(page, 'right').locator('svg[role=img]').waitFor();
  assert.match(await page.locator('.notice').textContent(), /does not name two known scenarios/);
  assert.match(await page.locator('.notice').textContent(), /not a whole number/);
  await page.close();
});

/** The boxes presenter mode must keep on one screen, and whether the page scrolls. */
async function layout(page) {
  return page.evaluate(() => {
    const box = (el) => {
      const r = el.getBoundingClientRect();
      return { left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height };
    };
    const sides = ['left', 'right'].map((which) => {
      const side = document.querySelector(`.compare-side[data-side=${which}]`);
      const picture = side.querySelector('.topology .picture') || side.querySelector('.spacetime-picture');
      const svg = picture.querySelector('svg');
      const caption = side.querySelector('.side-caption');
      const shown = [...caption.querySelectorAll('.beat-title, .beat-text, .event-text')]
        .filter((e) => e.getBoundingClientRect().width > 1 && getComputedStyle(e).display !== 'none');
      return {
        which, picture: box(picture), svg: box(svg), caption: box(caption),
        captionTexts: shown.map((e) => [e.className, e.textContent.trim().slice(0, 40), box(e), parseFloat(getComputedStyle(e).fontSize)]),
      };
    });
    return {
      view: [innerWidth, innerHeight],
      scroll: [document.scrollingElement.scrollWidth, document.scrollingElement.scrollHeight],
      sides,
      transport: box(document.querySelector('.compare .transport')),
      faults: [...document.querySelectorAll('.compare-faults')].filter((e) => e.getClientRects().length).length,
      seed: [...document.querySelectorAll('.compare input[aria-label="Seed for both runs"]')].filter((e) => e.getClientRects().length).length,
    };
  });
}

const inside = (b, [w, h]) => b.top >= -0.5 && b.left >= -0.5 && b.bottom <= h + 0.5 && b.right <= w + 0.5;

for (const [w, h] of [[853, 480], [1280, 720]]) {
  test(`presenter mode at ${w}×${h}: both pictures, both captions and the transport on one screen`, async () => {
    const page = await open('#/compare/redis-failover/consensus-lock?present=1');
    await page.setViewportSize({ width: w, height: h });
    await page.locator('.compare.compare-presenting').waitFor();
    await page.locator('body').press('n');
    await page.locator('body').press('n');
    await page.waitForTimeout(100);
    const l = await layout(page);
    assert.ok(l.scroll[0] <= w && l.scroll[1] <= h, `no page scroll: ${l.scroll}`);
    assert.equal(l.faults, 0, 'the faults step aside');
    assert.equal(l.seed, 0, 'the seed field steps aside');
    assert.ok(inside(l.transport, l.view), `the transport is on screen: ${JSON.stringify(l.transport)}`);
    const [left, right] = l.sides;
    assert.ok(left.picture.right <= right.picture.left, 'two columns, side by side');
    for (const s of l.sides) {
      assert.ok(inside(s.picture, l.view), `${s.which} picture box on screen: ${JSON.stringify(s.picture)}`);
      assert.ok(inside(s.caption, l.view), `${s.which} caption on screen: ${JSON.stringify(s.caption)}`);
      // The picture box is most of its column, and the drawing fills it.
      assert.ok(s.picture.width >= 0.45 * w, `${s.which} picture is ${s.picture.width}px wide`);
      assert.ok(s.picture.height >= 0.5 * h, `${s.which} picture is ${s.picture.height}px high at ${w}×${h}`);
      assert.ok(Math.abs(s.svg.width - s.picture.width) < 1 && Math.abs(s.svg.height - s.picture.height) < 1,
        `${s.which}: the drawing takes its box exactly`);
      // The caption says the beat: its title, and its text at the beat or what just happened.
      assert.ok(s.captionTexts.some(([c]) => /beat-title/.test(c)), `${s.which} caption has the beat title: ${JSON.stringify(s.captionTexts)}`);
      assert.ok(s.captionTexts.length >= 2, `${s.which} caption has more than a title: ${JSON.stringify(s.captionTexts)}`);
      for (const [cls, text, b, size] of s.captionTexts) {
        assert.ok(inside(b, l.view), `${s.which} ${cls} “${text}” is on screen`);
        assert.ok(size >= (w < 1000 ? 14 : 21), `${s.which} ${cls} is ${size}px`);
      }
    }
    await shot(page, `compare-presenter-${w}x${h}`);
    await audit(page, `the side by side in presenter mode at ${w}×${h}`);
    await page.close();
  });
}

test('presenter mode on a phone: the sides stack, the page scrolls, the transport stays in view', async () => {
  const page = await open('#/compare/redis-failover/consensus-lock?present=1');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.locator('.compare.compare-presenting').waitFor();
  await page.locator('body').press('n');
  const l = await layout(page);
  const [left, right] = l.sides;
  assert.ok(left.caption.bottom <= right.picture.top, 'the right run is under the left one');
  for (const s of l.sides) {
    assert.ok(s.picture.width >= 340 && s.picture.height >= 250, `${s.which} picture ${s.picture.width}×${s.picture.height}`);
    assert.ok(s.picture.right <= 390.5, `${s.which} picture within the phone's width`);
  }
  assert.ok(inside(l.transport, l.view), 'the transport is in view');
  assert.ok(l.scroll[0] <= 390, `no sideways scroll: ${l.scroll}`);
  // The phone drawing keeps its size: no text in either picture below 11 px.
  const smallest = await page.evaluate(() => Math.min(...[...document.querySelectorAll('.compare-side .topology svg[role=img]')]
    .flatMap((svg) => [...svg.querySelectorAll('text')].filter((t) => t.getComputedTextLength())
      .map((t) => parseFloat(getComputedStyle(t).fontSize) * svg.getScreenCTM().a))));
  assert.ok(smallest >= 11, `the smallest picture text is ${smallest.toFixed(1)}px`);
  await shot(page, 'compare-presenter-390x844');
  await page.close();
});

test('the side by side has the player’s keys: f, ?, and Escape closes one thing at a time', async () => {
  const page = await open('#/compare/redis-failover/consensus-lock');
  await page.setViewportSize({ width: 853, height: 480 });
  await side(page, 'left').locator('svg[role=img]').waitFor();
  await page.locator('body').press('f');
  await page.locator('.compare.compare-presenting').waitFor();
  await page.waitForURL(/present=1/);
  // Beats, by the clicker's Page Down.
  await page.locator('body').press('PageDown');
  const atBeat = await stepOf(page);
  assert.ok(atBeat > 0, 'Page Down went to the first beat');
  // The key list opens inside the screen, takes the focus and scrolls by keyboard.
  await page.keyboard.press('?');
  const help = page.getByRole('dialog', { name: 'Keys' });
  await help.waitFor();
  assert.ok(await onScreen(page, '.help'), 'the key list is inside the screen');
  // The focus moves in an effect after the dialog is drawn: on a busy machine (two test files
  // at a time on two cores) that can come a moment after the dialog appears.
  await page.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'The list of keys',
    null, { timeout: 3000 });
  assert.equal(await stepOf(page), atBeat, 'opening the list moved nothing');
  // Escape closes the list only; presenter mode stays.
  await page.keyboard.press('Escape');
  await help.waitFor({ state: 'detached' });
  assert.equal(await page.locator('.compare.compare-presenting').count(), 1, 'still presenting');
  // The link opens the same view again, in presenter mode.
  const link = page.url();
  assert.match(link, /present=1/);
  const again = await open(link.slice(origin().length + 1));
  await again.locator('.compare.compare-presenting .compare-side .topology svg[role=img]').first().waitFor();
  assert.equal(await stepOf(again), atBeat);
  await again.close();
  // The next Escape leaves presenter mode.
  await page.keyboard.press('Escape');
  await page.locator('.compare:not(.compare-presenting)').waitFor();
  await page.waitForURL((u) => !/present=1/.test(u));
  await page.close();
});

test('the browser leaving full screen with the key list open closes the list and keeps presenter mode', async () => {
  const page = await open('#/compare/redis-failover/consensus-lock?present=1');
  await page.locator('.compare.compare-presenting').waitFor();
  await page.locator('body').press('?');
  await page.getByRole('dialog', { name: 'Keys' }).waitFor();
  // What the browser sends when its own Escape ends full screen (the page hears no key then).
  await page.evaluate(() => document.dispatchEvent(new Event('fullscreenchange')));
  await page.getByRole('dialog', { name: 'Keys' }).waitFor({ state: 'detached' });
  assert.equal(await page.locator('.compare.compare-presenting').count(), 1, 'presenter mode stays');
  // With nothing open, leaving full screen leaves presenter mode, as before.
  await page.evaluate(() => document.dispatchEvent(new Event('fullscreenchange')));
  await page.locator('.compare:not(.compare-presenting)').waitFor();
  await page.close();
});

test('the side by side outside presenter mode: picture boxes of a definite size, drawings inside them', async () => {
  for (const [w, h] of [[853, 480], [1280, 720], [390, 844]]) {
    const page = await open('#/compare/redis-failover/consensus-lock');
    await page.setViewportSize({ width: w, height: h });
    await side(page, 'left').locator('svg[role=img]').waitFor();
    const l = await layout(page);
    for (const s of l.sides) {
      assert.ok(s.picture.height >= 200, `${w}×${h} ${s.which}: picture ${s.picture.height}px high`);
      assert.ok(Math.abs(s.svg.height - s.picture.height) < 1, `${w}×${h} ${s.which}: the drawing fills its box`);
    }
    assert.ok(l.scroll[0] <= w, `${w}×${h}: no sideways scroll (${l.scroll})`);
    await shot(page, `compare-${w}x${h}`);
    if (w === 1280) await audit(page, 'the side by side at 1280×720');
    await page.close();
  }
});
