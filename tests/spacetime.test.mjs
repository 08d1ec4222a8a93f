// The space-time diagram in the browser: drawn beside the story, following the cursor, a
// click on a mark seeks there, Export SVG saves what `coordlab run … --format svg --step N`
// prints byte for byte, and a jsonl trace file opens read-only at #/trace — or is refused with
// its line and field named. Run: node --test tests/ (after `cargo xtask dist`, and a build of
// the CLI these tests compare with: `cargo test` or `cargo build -p coordlab-cli`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { useBrowser, stepLabel, audit, coordlabCli, onScreen } from './browser.mjs';

const { open, shot } = useBrowser();
const coordlab = coordlabCli;

test('the diagram draws a lane per participant, and clicking a mark seeks the player there', async () => {
  const page = await open('#/play/zombie-worker?seed=1&step=40&view=spacetime');
  const svg = page.locator('.spacetime-picture svg');
  await svg.waitFor();
  for (const lane of ['lease-store', 'worker-A', 'worker-B', 'ledger']) {
    assert.equal(await svg.locator('text', { hasText: new RegExp(`^${lane}$`) }).count(), 1, lane);
  }
  assert.equal(await page.locator('.topology').count(), 0, 'the diagram replaces the topology');
  // Nothing after the cursor is drawn.
  const drawn = await svg.locator('[data-seq]').evaluateAll((els) => els.map((e) => Number(e.dataset.seq)));
  assert.ok(Math.max(...drawn) === 40, `marks up to the cursor: ${Math.max(...drawn)}`);
  await svg.locator('.st-mark[data-seq="34"]').click();
  assert.equal(await stepLabel(page), 'Step 34 of 58');
  assert.match(page.url(), /step=34/);
  assert.match(page.url(), /view=spacetime/);
  // The diagram follows the cursor: stepping draws the next event.
  await page.locator('body').click({ position: { x: 2, y: 2 } });
  await page.keyboard.press('ArrowRight');
  const now = Number((await stepLabel(page)).match(/Step (\d+)/)[1]);
  assert.ok(now > 34, `stepped on to ${now}`);
  assert.equal(await svg.locator(`.st-mark[data-seq="${now}"]`).count(), 1, 'the new step is drawn');
  assert.equal(await svg.locator(`[data-seq="${now + 1}"]`).count(), 0, 'and nothing after it');
  // d cycles the pictures: both, then the topology alone.
  await page.keyboard.press('d');
  await page.locator('.topology').waitFor();
  assert.equal(await page.locator('.spacetime-picture svg').count(), 1, 'both pictures');
  await audit(page, 'player with both pictures');
  await page.keyboard.press('d');
  assert.equal(await page.locator('.spacetime-picture').count(), 0, 'the topology alone');
  assert.doesNotMatch(page.url(), /view=/);
  await page.getByRole('button', { name: 'Space-time', exact: true }).click();
  await page.getByRole('button', { name: 'Event order' }).click();
  assert.match(page.url(), /axis=order/);
  await shot(page, 'spacetime-player');
  await page.close();
});

test('Export SVG saves exactly what coordlab run --format svg --step prints', async () => {
  for (const axis of ['time', 'order']) {
    const page = await open(`#/play/zombie-worker?seed=1&step=40&view=spacetime&axis=${axis}`);
    await page.locator('.spacetime-picture svg').waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: /Export SVG/ }).click(),
    ]);
    assert.equal(download.suggestedFilename(), 'coordlab-zombie-worker-step-40.svg');
    const saved = fs.readFileSync(await download.path(), 'utf8');
    const printed = coordlab('run', 'zombie-worker', '--seed', '1', '--format', 'svg', '--step', '40', '--axis', axis);
    assert.ok(saved.length > 1000, 'a whole diagram');
    assert.equal(saved, printed, `the ${axis} export and the CLI agree byte for byte`);
    await page.close();
  }
});

test('a jsonl trace file opens at #/trace and is drawn read-only', async () => {
  const page = await open('#/trace');
  await page.getByRole('heading', { name: 'Open a trace' }).waitFor();
  await audit(page, 'trace viewer, empty');
  const jsonl = coordlab('run', 'zombie-worker', '--seed', '1', '--format', 'jsonl');
  await page.locator('#trace-file').setInputFiles({ name: 'zombie.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(jsonl) });
  await page.getByRole('heading', { name: /zombie-worker · seed 1/ }).waitFor();
  const svg = page.locator('.spacetime-picture svg');
  await svg.waitFor();
  assert.equal(await stepLabel(page), 'Step 0 of 58');
  await page.locator('body').click({ position: { x: 2, y: 2 } });
  await page.keyboard.press('End');
  assert.equal(await stepLabel(page), 'Step 58 of 58');
  assert.equal(await svg.locator('text', { hasText: /^paused 36 s$/ }).count(), 1, 'the pause is drawn');
  assert.equal(await svg.locator('text', { hasText: /⚠ unsafe window/ }).count(), 1, 'the unsafe window is drawn');
  // Beats work as in the player: the second is A's freeze.
  await page.keyboard.press('Home');
  await page.keyboard.press('n');
  await page.keyboard.press('n');
  assert.equal(await stepLabel(page), 'Step 15 of 58');
  assert.match(await page.locator('.narration').textContent(), /frozen/);
  await svg.locator('.st-mark[data-seq="6"]').click();
  assert.equal(await stepLabel(page), 'Step 6 of 58');
  await audit(page, 'trace viewer with a trace');
  await shot(page, 'spacetime-trace-viewer');
  await page.close();
});

test('a malformed trace file is refused with its line and field named; a good one (picked or dropped) replaces it', async () => {
  const page = await open('#/trace');
  const bad = '{"seq":0,"time_us":0,"kind":"start","text":"a starts","nodes":["a"]}\n'
    + '{"seq":1,"time_us":"later","kind":"timer","text":"a ticks","nodes":["a"]}\n'
    + '{"kind":"summary","scenario":"mine","nodes":[{"name":"a","kind":"x"}]}\n';
  await page.locator('#trace-file').setInputFiles({ name: 'broken.jsonl', mimeType: 'text/plain', buffer: Buffer.from(bad) });
  const error = page.locator('.trace-error');
  await error.waitFor();
  const text = await error.textContent();
  assert.match(text, /broken\.jsonl/);
  assert.match(text, /line 2/);
  assert.match(text, /time_us/);
  assert.equal(await page.locator('.spacetime-picture').count(), 0, 'nothing is drawn');
  // A good file after a bad one is drawn, and the error goes.
  const good = bad.replace('"later"', '5');
  await page.locator('#trace-file').setInputFiles({ name: 'fixed.jsonl', mimeType: 'text/plain', buffer: Buffer.from(good) });
  await page.locator('.spacetime-picture svg').waitFor();
  assert.equal(await page.locator('.trace-error').count(), 0);
  // Dropping a file on the zone opens it too.
  const dropped = await page.evaluateHandle((text) => {
    const t = new DataTransfer();
    t.items.add(new File([text], 'dropped.jsonl', { type: 'text/plain' }));
    return t;
  }, good.replace('"mine"', '"dropped-one"'));
  await page.locator('.drop-zone').dispatchEvent('drop', { dataTransfer: dropped });
  await page.getByRole('heading', { name: /dropped-one · seed 0/ }).waitFor();
  await page.close();
});

test('an embed can show the diagram: view=spacetime in its link', async () => {
  const page = await open('#/embed/zombie-worker?seed=1&step=40&view=spacetime&controls=full');
  await page.locator('.embed .spacetime-picture svg').waitFor();
  assert.equal(await page.locator('.embed .topology').count(), 0);
  await page.locator('.spacetime-picture .st-mark[data-seq="34"]').click();
  assert.equal(await page.locator('.embed-slider').inputValue(), '34');
  await page.close();
});

test('at 1280×720 and 853×480 the player draws the diagram for its box: every text at least 13 px, none cut off, with 4 lanes and with 9', async () => {
  for (const [w, h] of [[1280, 720], [853, 480]]) {
    for (const hash of ['#/play/zombie-worker?seed=1&step=40&view=spacetime', '#/play/redis-failover?seed=1&step=192&view=spacetime']) {
      if (!builtBundles.has(bundles.scenarios[hash.match(/play\/([a-z-]+)/)[1]]) && process.env.COORDLAB_SOME_BUNDLES) continue;
      const page = await open(hash);
      await page.setViewportSize({ width: w, height: h });
      const svg = page.locator('.spacetime-picture svg');
      await page.locator('.spacetime-picture svg .st-lane-name').first().waitFor();
      // Drawn again for the new window's box: one unit to a pixel.
      await page.waitForFunction(() => document.querySelector('.spacetime-picture svg')?.getScreenCTM()?.a === 1);
      // The rendered size of every text: its font size times the drawing's scale on screen.
      const m = await measureSettled(svg);
      const where = `${hash} at ${w}×${h}`;
      assert.ok(m.smallest >= 13, `${where}: smallest text ${m.smallest.toFixed(1)} px`);
      if (w === 1280) {
        // Room for every lane: the whole picture on the first screen, names at the page's 16 px.
        checkDiagram(m, where, { big: 16 });
      }
      await shot(page, `spacetime-player-${hash.match(/play\/([a-z-]+)/)[1]}-${w}x${h}`);
      await page.close();
    }
  }
});

// ── Presenter mode: the diagram follows the beat, in type the room reads ─────────────────
// Every scenario's beats, walked with n in presenter mode on the diagram at 853×480 (a
// 1280×720 projector at 150%): every text at least 12 px as drawn (font size times the
// drawing's scale on screen), lane names and the current beat's title at least 18 px, the
// title whole (the beat's own words, no ellipsis), no beat title or marker over another, and
// the picture and its texts on the screen. COORDLAB_SOME_BUNDLES=1 skips the scenarios whose
// bundle a partial build (`cargo xtask dist --bundles …`) left out; otherwise each must run.

const dist = process.env.COORDLAB_DIST || new URL('../dist', import.meta.url).pathname;
const bundles = JSON.parse(coordlab('bundles'));
const builtBundles = new Set(fs.readdirSync(dist).map((f) => f.match(/^coordlab-(.+)-[0-9a-f]{8}\.wasm$/)?.[1]).filter(Boolean));
const scenariosToWalk = Object.values(bundles.bundles).filter((b) => !b.embed && b.features.includes('player'))
  .flatMap((b) => b.scenarios);

/** Each beat's title and step, from the CLI's summary of the run (the same run the page makes). */
function beatsOf(id) {
  const lines = coordlab('run', id, '--format', 'jsonl').trim().split('\n');
  return JSON.parse(lines.at(-1)).beats.filter((b) => b.seq != null);
}

/** What the diagram draws, measured on the page: sizes in CSS px as rendered. */
function measureDiagram(svg) {
  const scale = svg.getScreenCTM().a;
  const px = (t) => parseFloat(getComputedStyle(t).fontSize) * scale;
  const box = (el) => { const r = el.getBoundingClientRect(); return { l: r.left, t: r.top, r: r.right, b: r.bottom }; };
  const texts = [...svg.querySelectorAll('text')].filter((t) => t.textContent.trim() !== '');
  const title = svg.querySelector('.st-beat-title');
  const picture = box(svg);
  return {
    scale,
    picture,
    viewport: { w: innerWidth, h: innerHeight },
    smallest: Math.min(...texts.map(px)),
    smallestText: texts.map((t) => [px(t), t.textContent]).sort((a, b) => a[0] - b[0])[0],
    names: [...svg.querySelectorAll('.st-lane-name')].map((t) => [t.textContent, px(t)]),
    title: title && { size: px(title), text: [...title.querySelectorAll('tspan')].map((t) => t.textContent).join(' ') },
    // The beat title's lines, its badge and every marker: none may cover another.
    boxes: [...svg.querySelectorAll('.st-beat-title tspan, .st-beat-badge, .st-beat-marker')]
      .map((el) => ({ what: el.getAttribute('class') || `title “${el.textContent}”`, ...box(el) })),
    // Texts that leave the picture: cut off on the screen.
    outside: texts.map((t) => ({ text: t.textContent, ...box(t) }))
      .filter((b) => b.l < picture.l - 1 || b.r > picture.r + 1 || b.t < picture.t - 1 || b.b > picture.b + 1)
      .map((b) => b.text),
  };
}

// A press re-renders the diagram: a text measured while Yew swaps it out has no computed
// font size (NaN, seen once in CI at raft-election's second press). Measure again until every
// size is a number; a size that stays NaN still fails in checkDiagram.
async function measureSettled(svg) {
  let m = await svg.evaluate(measureDiagram);
  for (let i = 0; i < 5 && !Number.isFinite(m.smallest); i++) {
    await new Promise((done) => setTimeout(done, 50));
    m = await svg.evaluate(measureDiagram);
  }
  return m;
}

function checkDiagram(m, where, { big }) {
  assert.equal(m.scale, 1, `${where}: drawn one unit to a pixel`);
  assert.ok(m.smallest >= 12, `${where}: smallest text ${m.smallestText[0].toFixed(1)} px (“${m.smallestText[1]}”)`);
  assert.ok(m.names.length > 0, `${where}: lane names`);
  for (const [name, size] of m.names) assert.ok(size >= big, `${where}: lane ${name} is ${size.toFixed(1)} px`);
  const p = m.picture;
  assert.ok(p.l >= 0 && p.t >= 0 && p.r <= m.viewport.w + 0.5 && p.b <= m.viewport.h + 0.5,
    `${where}: the picture is on the screen (${JSON.stringify(p)})`);
  assert.deepEqual(m.outside, [], `${where}: texts cut off at the picture's edge`);
  const overlap = (a, b) => a.l < b.r - 0.5 && b.l < a.r - 0.5 && a.t < b.b - 0.5 && b.t < a.b - 0.5;
  for (let i = 0; i < m.boxes.length; i++) {
    for (let j = i + 1; j < m.boxes.length; j++) {
      assert.ok(!overlap(m.boxes[i], m.boxes[j]), `${where}: ${m.boxes[i].what} overlaps ${m.boxes[j].what}`);
    }
  }
}

test('presenter mode at 853×480: the diagram follows every beat of every scenario, its text large and its titles whole', async () => {
  const skipped = [];
  const stepTimes = [];
  for (const id of scenariosToWalk) {
    const bundle = bundles.scenarios[id];
    if (!builtBundles.has(bundle)) {
      assert.ok(process.env.COORDLAB_SOME_BUNDLES, `${id}: its bundle (${bundle}) is not in ${dist}; build it, or set COORDLAB_SOME_BUNDLES=1`);
      skipped.push(id);
      continue;
    }
    const beats = beatsOf(id);
    const page = await open(`#/play/${id}?view=spacetime&present=1&step=0`);
    await page.setViewportSize({ width: 853, height: 480 });
    const svg = page.locator('.spacetime-picture svg');
    await svg.waitFor();
    await page.locator('body').click({ position: { x: 2, y: 2 } });
    const stops = [...new Set(beats.map((b) => b.seq))].sort((a, b) => a - b);
    for (const stop of stops) {
      // n goes to the next beat (a question's answer takes a press of its own).
      for (let presses = 0; presses < 4; presses++) {
        const at = Number((await stepLabel(page)).match(/Step (\d+)/)[1]);
        if (at === stop) break;
        await page.keyboard.press('n');
      }
      assert.match(await stepLabel(page), new RegExp(`^Step ${stop} of`), `${id}: n reaches the beat at step ${stop}`);
      // The beat being told: the last (in story order) reached by this step.
      const now = beats.filter((b) => b.seq <= stop).at(-1);
      const where = `${id}, beat “${now.title}” (step ${stop})`;
      await page.waitForFunction((title) => document.querySelector('.spacetime-picture svg .st-beat-now title')?.textContent.endsWith(title), now.title);
      const m = await measureSettled(svg);
      checkDiagram(m, where, { big: 18 });
      assert.ok(m.title, `${where}: the beat's title is in the diagram`);
      assert.equal(m.title.text, now.title, `${where}: the title whole`);
      assert.ok(m.title.size >= 18, `${where}: the title is ${m.title.size.toFixed(1)} px`);
    }
    // A step is drawn at once: the time from the key to the new diagram in the page.
    for (let k = 0; k < 3; k++) {
      stepTimes.push(await page.evaluate(() => new Promise((resolve) => {
        const box = document.querySelector('.spacetime-picture');
        const t0 = performance.now();
        new MutationObserver((_, o) => { o.disconnect(); box.getBoundingClientRect(); resolve(performance.now() - t0); })
          .observe(box, { childList: true, subtree: true, characterData: true, attributes: true });
        document.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowLeft', bubbles: true }));
      })));
    }
    await page.close();
  }
  stepTimes.sort((a, b) => a - b);
  console.log(`space-time presenter: a step drawn in ${stepTimes[stepTimes.length >> 1]?.toFixed(1)} ms (median), ${stepTimes.at(-1)?.toFixed(1)} ms (slowest of ${stepTimes.length})${skipped.length ? `; skipped (bundle not built): ${skipped.join(', ')}` : ''}`);
});

test('presenter mode at 1280×720: lane names and the beat title at least 24 px; the controls stay put from beat to beat', async () => {
  for (const id of ['zombie-worker', 'raft-election']) {
    if (!builtBundles.has(bundles.scenarios[id]) && process.env.COORDLAB_SOME_BUNDLES) continue;
    const page = await open(`#/play/${id}?view=spacetime&present=1&step=0`);
    await page.setViewportSize({ width: 1280, height: 720 });
    const svg = page.locator('.spacetime-picture svg');
    await svg.waitFor();
    await page.locator('body').click({ position: { x: 2, y: 2 } });
    const transport = async () => page.locator('.transport').evaluate((el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.width, r.height].map(Math.round).join(','); });
    const placed = await transport();
    for (let k = 0; k < 4; k++) {
      await page.keyboard.press('n');
      await page.locator('.spacetime-picture svg .st-beat-title').waitFor();
      const m = await measureSettled(svg);
      checkDiagram(m, `${id} at 1280×720, press ${k + 1}`, { big: 24 });
      assert.ok(m.title.size >= 24, `${id}: the title is ${m.title.size.toFixed(1)} px`);
      assert.equal(await transport(), placed, `${id}: the transport stays put`);
    }
    await shot(page, `spacetime-presenter-${id}-1280x720`);
    await page.close();
  }
});

test('presenter mode on the diagram passes axe, and d still switches the pictures', async () => {
  const page = await open('#/play/zombie-worker?view=spacetime&present=1&step=51');
  await page.setViewportSize({ width: 853, height: 480 });
  await page.locator('.spacetime-picture svg .st-beat-title').waitFor();
  await shot(page, 'spacetime-presenter-853x480');
  await audit(page, 'presenter mode, space-time diagram');
  // A beat's marker seeks like any mark.
  const earlier = page.locator('.spacetime-picture .st-beat').first();
  const seq = await earlier.getAttribute('data-seq');
  assert.notEqual(seq, '51', 'an earlier beat is in view');
  await earlier.click();
  assert.equal(await stepLabel(page), `Step ${seq} of 58`);
  await page.locator('body').click({ position: { x: 2, y: 2 } });
  await page.keyboard.press('d');
  await page.locator('.topology').waitFor();
  const both = await page.locator('.spacetime-picture svg').evaluate(measureDiagram);
  // Under the topology the diagram has half the height: its text shrinks to fit its four
  // lanes, never below 13 px.
  checkDiagram(both, 'presenter mode, both pictures', { big: 13 });
  assert.ok(await onScreen(page, '.spacetime-picture svg'), 'both pictures on the screen');
  await shot(page, 'spacetime-presenter-both-853x480');
  await page.close();
});
