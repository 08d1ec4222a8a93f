// The space-time diagram in the browser: drawn beside the story, following the cursor, a
// click on a mark seeks there, Export SVG saves what `coordlab run … --format svg --step N`
// prints byte for byte, and a jsonl trace file opens read-only at #/trace — or is refused with
// its line and field named. Run: node --test tests/ (after scripts/build-site.sh, which also
// builds the CLI these tests compare with).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { useBrowser, stepLabel, audit, coordlabCli } from './browser.mjs';

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

test('at 1280×720 the diagram\'s text is at least 12 px, with 4 lanes and with 9', async () => {
  for (const hash of ['#/play/zombie-worker?seed=1&step=40&view=spacetime', '#/play/redis-failover?seed=1&step=192&view=spacetime']) {
    const page = await open(hash);
    await page.setViewportSize({ width: 1280, height: 720 });
    const svg = page.locator('.spacetime-picture svg');
    await svg.waitFor();
    // The rendered size of every text: its font size times the drawing's scale on screen.
    const smallest = await svg.evaluate((el) => {
      const scale = el.getScreenCTM().a;
      return Math.min(...[...el.querySelectorAll('text')].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale));
    });
    assert.ok(smallest >= 12, `${hash}: smallest text ${smallest.toFixed(1)} px`);
    await page.close();
  }
});
