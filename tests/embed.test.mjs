// Embeds on a documentation page: the example page shipped in dist/ (three embeds), served
// under a sub-path as documentation sites are; an embed opened directly at the frame sizes
// authors use; a page on another origin; and the player's Embed dialog.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from './serve.mjs';
import { launch, loadAxe, guardedPage } from './browser.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = process.env.COORDLAB_DIST || path.join(here, '..', 'dist');
const artifacts = path.join(here, 'artifacts');
const PREFIX = '/docs/coordlab/';
let server, browser, site;

before(async () => {
  fs.mkdirSync(artifacts, { recursive: true });
  server = await serve(dist, 0, '127.0.0.1', PREFIX);
  site = `http://127.0.0.1:${server.address().port}${PREFIX}`;
  browser = await launch();
});

after(async () => {
  await browser?.close();
  server?.close();
});

/** A page that fails the test on any error, policy violation or request outside `allowed`. */
async function newPage(viewport, allowed = [site]) {
  const { page, context, problems } = await guardedPage(browser, viewport, allowed);
  // Every coordlab message the embeds send the page, with the index of the frame that sent it.
  await page.addInitScript(() => {
    window.said = [];
    addEventListener('message', (e) => {
      if (!e.data || e.data.coordlab !== 1) return;
      const frame = [...document.querySelectorAll('iframe')].findIndex((f) => f.contentWindow === e.source);
      window.said.push({ ...e.data, frame });
    });
  });
  return { page, context, problems };
}

const stepOf = async (frame) => Number((await frame.locator('.narration .step-no').textContent()).replace(/\D/g, ''));
const said = (page, pred) => page.evaluate((src) => window.said.filter(new Function('m', `return ${src}`)), pred);
const readyOf = async (page, from) => {
  await page.waitForFunction((i) => window.said.some((m) => m.frame === i && m.type === 'ready'), from);
  return (await said(page, `m.frame === ${from} && m.type === 'ready'`))[0];
};
const beatStep = (ready, key) => ready.beats.find((b) => b.key === key).step;

async function openExample(viewport = { width: 1100, height: 800 }) {
  const opened = await newPage(viewport);
  await opened.page.goto(`${site}embed-example.html`);
  return opened;
}

/** Scrolls an iframe into view (the example's frames load lazily) and waits for its picture. */
async function drawn(page, id) {
  await page.locator(`#${id}`).scrollIntoViewIfNeeded();
  const frame = page.frameLocator(`#${id}`);
  await frame.locator('.topology svg[role=img]').waitFor();
  return frame;
}

test('the example page: every embed draws and stays paused; the page does not scroll or lose focus on load', async () => {
  const { page, context, problems } = await openExample();
  await page.frameLocator('#takeover').locator('.topology svg[role=img]').waitFor();
  await page.waitForTimeout(800);
  assert.equal(await page.evaluate(() => window.scrollY), 0, 'loading an embed does not scroll the page');
  assert.equal(await page.evaluate(() => document.activeElement === document.body), true, 'nor take the focus');
  const frames = {};
  for (const id of ['takeover', 'lost-update', 'driven']) frames[id] = await drawn(page, id);
  const before = {};
  for (const [id, f] of Object.entries(frames)) before[id] = await stepOf(f);
  await page.waitForTimeout(1500);
  for (const [id, f] of Object.entries(frames)) {
    assert.equal(await stepOf(f), before[id], `${id} stays where it is until asked`);
  }
  for (const id of ['takeover', 'lost-update']) {
    assert.match(await frames[id].locator('.embed-bar .play').textContent(), /Play/, `${id} is paused`);
  }
  const steps = await said(page, `m.type === 'step'`);
  assert.ok(steps.length >= 3 && steps.every((m) => m.playing === false), 'every embed reports it is paused');
  // The dark one is dark; the others follow this (light) browser.
  const lum = (f) => f.locator('html').evaluate((el) => {
    const [r, g, b] = getComputedStyle(el).backgroundColor.match(/\d+/g).map(Number);
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
  });
  assert.ok(await lum(frames['lost-update']) < 0.2, 'theme=dark draws on a dark background');
  assert.ok(await lum(frames.takeover) > 0.8, 'theme=auto in a light browser draws light');
  await page.locator('#lost-update').scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(artifacts, 'embed-example.png'), fullPage: false });
  assert.deepEqual(problems, []);
  await context.close();
});

test('a range-locked embed cannot step outside its range', async () => {
  const { page, context, problems } = await openExample();
  const frame = await drawn(page, 'takeover');
  const ready = await readyOf(page, 0);
  const [from, to] = [beatStep(ready, 'b-takes-over'), beatStep(ready, 'a-write')];
  assert.deepEqual([ready.from, ready.to], [from, to], 'the range is the two beats the link names');
  assert.equal(await stepOf(frame), from, 'it opens at the start of its range');
  const next = frame.locator('.embed-bar .next-beat');
  for (let i = 0; i < 12 && await next.isEnabled(); i++) await next.click();
  assert.equal(await stepOf(frame), to, 'next beat stops at the end of the range');
  assert.ok(await frame.locator('.embed-bar .forward').isDisabled(), 'and stepping on is off there');
  await frame.locator('.embed-story').click();
  for (const key of ['End', 'ArrowRight', 'PageDown']) {
    await page.keyboard.press(key);
    assert.equal(await stepOf(frame), to, `${key} stays in the range`);
  }
  for (const key of ['Home', 'ArrowLeft', 'PageUp']) {
    await page.keyboard.press(key);
    assert.equal(await stepOf(frame), from, `${key} stays in the range`);
  }
  // Seeking outside the range through the API is refused with a reason.
  await page.evaluate(() => document.getElementById('takeover').contentWindow.postMessage({ coordlab: 1, type: 'seek', step: 0 }, location.origin));
  await page.waitForFunction(() => window.said.some((m) => m.frame === 0 && m.type === 'error'));
  assert.match((await said(page, `m.frame === 0 && m.type === 'error'`))[0].message, /outside this embed's steps/);
  assert.equal(await stepOf(frame), from);
  assert.deepEqual(problems, []);
  await context.close();
});

test('the page drives an embed through postMessage and hears its events', async () => {
  const { page, context, problems } = await openExample();
  const frame = await drawn(page, 'driven');
  const ready = await readyOf(page, 2);
  assert.equal(ready.scenario, 'zombie-worker');
  await page.getByRole('button', { name: "A's late write" }).click();
  const target = beatStep(ready, 'a-write');
  await page.waitForFunction((s) => window.said.some((m) => m.frame === 2 && m.type === 'beat' && m.step === s), target);
  assert.equal(await stepOf(frame), target, 'seek by beat moves the embed');
  await page.getByRole('button', { name: 'A freezes' }).click();
  await page.waitForFunction((s) => window.said.some((m) => m.frame === 2 && m.type === 'step' && m.step === s), beatStep(ready, 'a-freezes'));
  await page.evaluate(() => { window.said = []; });
  // Step on, command by command, until the embed reports the broken property.
  for (let i = 0; i < 80; i++) {
    if ((await said(page, `m.frame === 2 && m.type === 'violation'`)).length) break;
    const seen = (await said(page, `m.frame === 2 && m.type === 'step'`)).length;
    await page.evaluate(() => document.getElementById('driven').contentWindow.postMessage({ coordlab: 1, type: 'forward' }, location.origin));
    await page.waitForFunction((n) => window.said.filter((m) => m.frame === 2 && m.type === 'step').length > n, seen);
  }
  const violation = (await said(page, `m.frame === 2 && m.type === 'violation'`))[0];
  assert.ok(violation, 'a violation event arrives where a property breaks');
  assert.equal(await stepOf(frame), violation.step);
  // The example page lists what it heard.
  const items = await page.locator('#said li').allTextContents();
  assert.ok(items.some((t) => /^ready: /.test(t)) && items.some((t) => /^violation: /.test(t)), items.join(' | '));
  assert.deepEqual(problems, []);
  await context.close();
});

test('Space inside an embed plays it without scrolling the page', async () => {
  const { page, context, problems } = await openExample({ width: 900, height: 700 });
  const frame = await drawn(page, 'takeover');
  const top = await page.evaluate(() => window.scrollY);
  await frame.locator('.embed-story').click();
  await page.keyboard.press(' ');
  await frame.locator('.embed-bar .play', { hasText: 'Pause' }).waitFor();
  assert.equal(await page.evaluate(() => window.scrollY), top, 'Space in the frame does not scroll the page');
  await page.keyboard.press(' ');
  await frame.locator('.embed-bar .play', { hasText: 'Play' }).waitFor();
  assert.equal(await page.evaluate(() => window.scrollY), top);
  assert.deepEqual(problems, []);
  await context.close();
});

test('the wheel over an embed scrolls the page, and Tab leaves the frame', async () => {
  const { page, context, problems } = await openExample({ width: 900, height: 700 });
  const frame = await drawn(page, 'takeover');
  const box = await page.locator('#takeover').boundingBox();
  const top = await page.evaluate(() => window.scrollY);
  await page.mouse.move(box.x + box.width / 4, box.y + box.height / 2);
  await page.mouse.wheel(0, 300);
  await page.waitForFunction((t) => window.scrollY > t, top);
  // Tab from the frame's last control goes on to the page's next one (the next frame).
  await frame.locator('.open-full').focus();
  await page.keyboard.press('Tab');
  const outside = await page.evaluate(() => document.activeElement?.id);
  assert.equal(outside, 'lost-update', 'the focus left the frame for the next thing on the page');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a playing embed pauses when it is scrolled out of view', async () => {
  const { page, context, problems } = await openExample({ width: 900, height: 700 });
  await drawn(page, 'driven');
  const ready = await readyOf(page, 2);
  const [freezes, expires] = [beatStep(ready, 'a-freezes'), beatStep(ready, 'expires')];
  await page.getByRole('button', { name: 'A freezes' }).click();
  await page.getByRole('button', { name: 'Play', exact: true }).click();
  // It is moving: a step past the freeze, still playing.
  await page.waitForFunction((f) => window.said.some((m) => m.frame === 2 && m.type === 'step' && m.step > f && m.playing), freezes);
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  await page.waitForFunction(() => window.said.filter((m) => m.frame === 2 && m.type === 'step').at(-1).playing === false);
  const stopped = (await said(page, `m.frame === 2 && m.type === 'step'`)).at(-1).step;
  assert.ok(stopped < expires, `it paused on leaving the view (step ${stopped}), not at the next beat (step ${expires})`);
  const count = (await said(page, `m.frame === 2`)).length;
  await page.waitForTimeout(1200);
  assert.equal((await said(page, `m.frame === 2`)).length, count, 'and stays paused');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a playing embed pauses when its tab is hidden', async () => {
  const { page, context, problems } = await newPage({ width: 720, height: 405 });
  await page.goto(`${site}#/embed/zombie-worker?fencing=write-predicate&from=a-freezes&to=expires`);
  await page.locator('.topology svg[role=img]').waitFor();
  await page.locator('.embed-bar .play').click();
  await page.locator('.embed-bar .play', { hasText: 'Pause' }).waitFor();
  // What the browser does when the reader switches tabs.
  await page.evaluate(() => {
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => true });
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
    document.dispatchEvent(new Event('visibilitychange'));
  });
  // At once, not by reaching the end of its range (a few seconds of play away).
  await page.locator('.embed-bar .play', { hasText: 'Play' }).waitFor({ timeout: 1000 });
  assert.ok(await page.locator('.embed-bar .forward').isEnabled(), 'it paused before the end of its range');
  const step = await stepOf(page);
  await page.waitForTimeout(1200);
  assert.equal(await stepOf(page), step, 'and stays where it paused');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a page on another origin drives an embed only when the embed link names that origin', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coordlab-host-'));
  const host = await serve(dir);
  const hostOrigin = `http://127.0.0.1:${host.address().port}`;
  const embed = `${site}index.html#/embed/zombie-worker?fencing=write-predicate`;
  fs.writeFileSync(path.join(dir, 'index.html'), `<!doctype html><html lang="en"><title>host</title><link rel="icon" href="data:,"><body>
    <iframe id="plain" width="480" height="270" title="not named" src="${embed}"></iframe>
    <iframe id="named" width="480" height="270" title="named" src="${embed}&origin=${encodeURIComponent(hostOrigin)}"></iframe>
  </body></html>`);
  const { page, context, problems } = await newPage({ width: 1100, height: 700 }, [site, hostOrigin]);
  await page.goto(`${hostOrigin}/index.html`);
  const plain = page.frameLocator('#plain');
  const named = page.frameLocator('#named');
  await plain.locator('.topology svg[role=img]').waitFor();
  await named.locator('.topology svg[role=img]').waitFor();
  await page.waitForFunction(() => window.said.some((m) => m.frame === 1 && m.type === 'ready'));
  for (const id of ['plain', 'named']) {
    await page.evaluate((i) => document.getElementById(i).contentWindow.postMessage({ coordlab: 1, type: 'seek', step: 7 }, '*'), id);
  }
  await page.waitForFunction(() => window.said.some((m) => m.frame === 1 && m.type === 'step' && m.step === 7));
  assert.equal(await stepOf(named), 7, 'the named origin drives its embed');
  assert.equal(await stepOf(plain), 0, 'an unnamed origin does not');
  assert.deepEqual(await said(page, 'm.frame === 0'), [], 'and hears nothing from it');
  assert.deepEqual(problems, []);
  await context.close();
  host.close();
});

test('autoplay=1 plays once in view, unless the reader prefers reduced motion', async () => {
  for (const [reducedMotion, plays] of [['no-preference', true], ['reduce', false]]) {
    const { page, context, problems } = await newPage({ width: 720, height: 405 });
    await page.emulateMedia({ reducedMotion });
    await page.goto(`${site}#/embed/zombie-worker?fencing=write-predicate&autoplay=1`);
    await page.locator('.topology svg[role=img]').waitFor();
    await page.waitForTimeout(1500);
    const step = await stepOf(page);
    assert.equal(step > 0, plays, `${reducedMotion}: at step ${step}`);
    assert.deepEqual(problems, []);
    await context.close();
  }
});

for (const [w, h] of [[400, 300], [720, 405], [1280, 800]]) {
  test(`an embed fits ${w}×${h} without scrollbars, with controls of 24 px and up and no WCAG A/AA violations`, async () => {
    const { page, context, problems } = await newPage({ width: w, height: h });
    await page.goto(`${site}#/embed/zombie-worker?fencing=write-predicate&seed=1&step=34`);
    await page.locator('.topology svg[role=img]').waitFor();
    const fit = await page.evaluate(() => {
      const root = document.scrollingElement;
      const box = (sel) => document.querySelector(sel).getBoundingClientRect();
      const pic = box('.topology svg[role=img]');
      const overlay = box('.topology svg.messages');
      return {
        scroll: [root.scrollWidth, root.scrollHeight, innerWidth, innerHeight],
        picture: pic.top >= 0 && pic.left >= 0 && pic.bottom <= innerHeight && pic.right <= innerWidth && pic.height > 60,
        overlay: Math.abs(pic.width - overlay.width) < 2 && Math.abs(pic.height - overlay.height) < 2,
        controls: [...document.querySelectorAll('.embed-bar button, .embed-bar a')].map((b) => {
          const r = b.getBoundingClientRect();
          return [b.textContent.trim(), Math.round(r.width), Math.round(r.height), r.right <= innerWidth];
        }),
      };
    });
    assert.ok(fit.scroll[0] <= fit.scroll[2] && fit.scroll[1] <= fit.scroll[3], `no scrollbars: ${fit.scroll}`);
    assert.ok(fit.picture, 'the whole picture is in the frame');
    assert.ok(fit.overlay, 'the messages layer covers the picture exactly');
    for (const [name, bw, bh, inside] of fit.controls) {
      assert.ok(bw >= 24 && bh >= 24 && inside, `${name}: ${bw}×${bh}, inside the frame: ${inside}`);
    }
    assert.ok(fit.controls.some(([name]) => /coordlab/.test(name)), 'an “open in coordlab” link');
    await page.screenshot({ path: path.join(artifacts, `embed-${w}x${h}.png`) });
    await loadAxe(page);
    const result = await page.evaluate(() => window.axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
      resultTypes: ['violations'],
    }));
    assert.deepEqual(result.violations.map((v) => `${v.id}: ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`), []);
    assert.deepEqual(problems, []);
    await context.close();
  });
}

test('the player’s Embed dialog gives a snippet for the beat on screen, copied with one click', async () => {
  const { page, context, problems } = await newPage({ width: 1280, height: 800 });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(site).origin });
  await page.goto(`${site}#/play/zombie-worker?fencing=write-predicate&step=34`);
  await page.locator('.topology svg[role=img]').waitFor();
  await page.getByRole('button', { name: /Embed/ }).click();
  const dialog = page.getByRole('dialog', { name: 'Embed this run in a page' });
  await dialog.waitFor();
  // The focus moves in an effect after the dialog is drawn, which a busy machine can delay.
  await page.waitForFunction(() => document.activeElement?.id === 'embed-title', null, { timeout: 3000 });
  // The sizes offered start at the smallest frame an embed is designed for.
  const sizes = (await dialog.getByRole('group', { name: 'Size' }).getByRole('button').allTextContents())
    .map((t) => t.split('×').map(Number));
  assert.deepEqual(sizes[0], [400, 300]);
  for (const [w, h] of sizes) assert.ok(w >= 400 && h >= 300, `${w}×${h}`);
  await dialog.getByRole('button', { name: '400×300' }).click();
  // By default the embed is locked to the beat on screen, by the keys of that beat and the next.
  const part = dialog.getByRole('group', { name: 'Part of the run' });
  assert.equal(await part.getByRole('button', { name: 'This beat', exact: true }).getAttribute('aria-pressed'), 'true');
  const said = await dialog.locator('.embed-span').textContent();
  const [, from, to] = said.match(/steps (\d+) to (\d+) of \d+, opening at step \1\./).map(Number);
  assert.ok(from <= 34 && 34 < to, `the beat on screen: ${said}`);
  let html = await dialog.getByLabel(/^HTML/).inputValue();
  assert.match(html, /^<iframe src="http:\/\/127\.0\.0\.1:\d+\/docs\/coordlab\/#\/embed\/zombie-worker\?fencing=write-predicate&amp;seed=1&amp;from=[a-z0-9-]+&amp;to=[a-z0-9-]+" width="400" height="300" title="[^"]+" loading="lazy"/);
  const markdown = await dialog.getByLabel(/^Markdown/).inputValue();
  assert.match(markdown, new RegExp(`\\]\\(http://127\\.0\\.0\\.1:\\d+/docs/coordlab/#/play/zombie-worker\\?fencing=write-predicate&seed=1&step=${from}\\)$`));
  await dialog.getByRole('button', { name: 'Copy HTML' }).click();
  await dialog.getByRole('status').filter({ hasText: 'Copied the HTML.' }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), html);
  const url = await dialog.getByLabel('Embed address').inputValue();
  // From this beat to the end: no `to`.
  await part.getByRole('button', { name: 'This beat to the end' }).click();
  assert.match(await dialog.getByLabel('Embed address').inputValue(), /&from=[a-z0-9-]+$/);
  // The whole run opens at the step on screen, as before.
  await part.getByRole('button', { name: 'Whole run' }).click();
  html = await dialog.getByLabel(/^HTML/).inputValue();
  assert.match(html, /#\/embed\/zombie-worker\?fencing=write-predicate&amp;seed=1&amp;step=34" width="400" height="300"/);
  assert.match(await dialog.getByLabel(/^Markdown/).inputValue(), /&seed=1&step=34\)$/);
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  await page.waitForFunction(() => document.activeElement.id === 'embed-button');
  // The beat's address opens that embed at the beat, and it stops at the next one.
  const other = await context.newPage();
  await other.goto(url);
  await other.locator('.embed .topology svg[role=img]').waitFor();
  const embedStep = async () => Number((await other.locator('.narration .step-no').textContent()).replace(/\D/g, ''));
  assert.equal(await embedStep(), from);
  for (let i = 0; i < 12 && (await embedStep()) < to; i++) await other.locator('body').press('n');
  assert.equal(await embedStep(), to, 'the range ends at the next beat');
  await other.locator('body').press('n');
  assert.equal(await embedStep(), to, 'and the embed goes no further');
  assert.deepEqual(problems, []);
  await context.close();
});

test('when the browser refuses the clipboard, the text is selected for Ctrl+C', async () => {
  const { page, context, problems } = await newPage({ width: 1280, height: 800 });
  await page.addInitScript(() => {
    Object.defineProperty(navigator, 'clipboard', { value: { writeText: () => Promise.reject(new Error('denied')) } });
  });
  await page.goto(`${site}#/play/lost-update`);
  await page.locator('.topology svg[role=img]').waitFor();
  await page.getByRole('button', { name: /Embed/ }).click();
  await page.getByRole('button', { name: 'Copy link' }).click();
  await page.getByRole('status').filter({ hasText: /did not allow copying.*press Ctrl\+C/ }).waitFor();
  const selected = await page.evaluate(() => {
    const a = document.getElementById('embed-url');
    return a.value.slice(a.selectionStart, a.selectionEnd);
  });
  assert.match(selected, /#\/embed\/lost-update\?seed=1$/);
  assert.deepEqual(problems, []);
  await context.close();
});
