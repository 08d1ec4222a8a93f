// Accessibility: axe-core (WCAG 2 A and AA rules) on every view a class or a reader meets —
// the library; the player of every scenario at its first step and mid-run, with both pictures
// and every tool tab; the key list, the Embed dialog and presenter mode; the side-by-side
// view; embeds in the light and the dark theme; the trace viewer and the glossary. Any
// violation fails, with axe's own explanation. Then what axe cannot judge: the event log is
// one stop for Tab, and the focus ring stands out by 3:1 from whatever it touches.
//
// A11Y_SCENARIOS=lost-update,raft-chaos limits the per-scenario tests (for a partial build).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, tab, audit, stepLabel, coordlabCli } from './browser.mjs';

const { open } = useBrowser();
const coordlab = coordlabCli;
/** Every scenario in the library, as `coordlab list` prints them. */
const scenarios = coordlab('list').split('\n').slice(1).map((l) => l.split(/\s+/)[0]).filter(Boolean)
  .filter((id) => !process.env.A11Y_SCENARIOS || process.env.A11Y_SCENARIOS.split(',').includes(id));
const TABS = ['Beats', 'Parameters', 'Faults', 'Network', 'State', 'Events'];

test('the library and the glossary have no WCAG A/AA violations', async () => {
  const page = await open();
  await page.getByRole('heading', { name: 'Scenario library' }).waitFor();
  await audit(page, 'library');
  await page.close();
  const glossary = await open('#/glossary');
  await glossary.getByRole('heading', { name: /Glossary/ }).waitFor();
  await audit(glossary, 'glossary');
  await glossary.close();
});

for (const id of scenarios) {
  test(`the player of ${id}, at its first step and mid-run, with both pictures and every tool tab, has no WCAG A/AA violations`, async () => {
    const first = await open(`#/play/${id}`);
    await first.locator('.topology svg[role=img]').waitFor();
    await audit(first, `${id}, step 0`);
    const last = Number((await stepLabel(first)).match(/of (\d+)/)[1]);
    await first.close();
    const mid = Math.floor(last / 2);
    const page = await open(`#/play/${id}?step=${mid}&view=both`);
    await page.locator('.spacetime-picture svg').waitFor();
    assert.equal(await stepLabel(page), `Step ${mid} of ${last}`);
    // The whole page with the first tab open; then only the tab strip and the panel, which are
    // all a tab changes.
    let whole = true;
    for (const name of TABS) {
      const button = page.getByRole('tab', { name, exact: true });
      if (!(await button.count())) continue;
      await tab(page, name);
      await audit(page, `${id}, step ${mid}, topology and space-time, ${name} tab`,
        whole ? {} : { within: ['[role=tablist]', '[role=tabpanel]'] });
      whole = false;
    }
    // The space-time diagram alone, on the event-order axis.
    await page.getByRole('button', { name: 'Space-time', exact: true }).click();
    await page.getByRole('button', { name: 'Event order' }).click();
    await audit(page, `${id}, step ${mid}, space-time diagram alone`);
    await page.close();
  });
}

test('the key list, the Embed dialog and presenter mode have no WCAG A/AA violations', async () => {
  const page = await open('#/play/lost-update?step=8');
  await page.locator('body').click({ position: { x: 2, y: 2 } });
  await page.keyboard.press('?');
  await page.getByRole('dialog', { name: 'Keys' }).waitFor();
  await audit(page, 'key list');
  await page.keyboard.press('Escape');
  await page.getByRole('button', { name: /Embed/ }).click();
  await page.getByRole('dialog', { name: 'Embed this run in a page' }).waitFor();
  await audit(page, 'Embed dialog');
  await page.keyboard.press('Escape');
  await page.keyboard.press('f');
  await page.locator('.player.presenting').waitFor();
  await page.keyboard.press('n');
  await audit(page, 'presenter mode, lost-update');
  await page.close();
  const raft = await open('#/play/raft-partition?present=1&step=40');
  await raft.locator('.player.presenting').waitFor();
  await audit(raft, 'presenter mode, raft-partition');
  await raft.close();
});

for (const route of ['redis-failover/consensus-lock?step=300', 'redis-failover/consensus-lock', 'raft-election/raft-partition?seed=4&step=12']) {
  test(`the side-by-side view ${route} has no WCAG A/AA violations`, async () => {
    const page = await open(`#/compare/${route}`);
    await page.locator('.compare-side[data-side=left] svg[role=img]').waitFor();
    await audit(page, `compare ${route}`);
    await page.close();
  });
}

// One scenario of each chapter's embed bundle, light and dark, the topology and the diagram.
const EMBEDS = ['lost-update', 'skip-locked-queue', 'zombie-worker', 'raft-partition', 'raft-quorum', 'zookeeper-lock', 'redis-failover', 'redlock', 'consensus-lock', 'token-sources']
  .filter((id) => scenarios.includes(id));
for (const theme of ['light', 'dark']) {
  test(`embeds in the ${theme} theme have no WCAG A/AA violations`, async () => {
    for (const id of EMBEDS) {
      for (const [view, size] of [['topology', { width: 720, height: 405 }], ['spacetime', { width: 400, height: 300 }]]) {
        const page = await open(`#/embed/${id}?theme=${theme}&view=${view}&step=12`);
        await page.setViewportSize(size);
        await page.locator('.embed').waitFor();
        assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), theme);
        await audit(page, `embed ${id}, ${theme}, ${view}, ${size.width}×${size.height}`);
        await page.close();
      }
    }
  });
}

test('the trace viewer, empty and with a trace, has no WCAG A/AA violations', async () => {
  const page = await open('#/trace');
  await page.getByRole('heading', { name: 'Open a trace' }).waitFor();
  await audit(page, 'trace viewer, empty');
  const jsonl = coordlab('run', 'zombie-worker', '--seed', '1', '--format', 'jsonl');
  await page.locator('#trace-file').setInputFiles({ name: 'zombie.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(jsonl) });
  await page.locator('.trace-shown .spacetime-picture svg').waitFor();
  await audit(page, 'trace viewer with a trace');
  await page.close();
});

test('the event log is one stop for Tab: ↑ ↓ move through the run inside it, one Tab leaves it', async () => {
  const page = await open('#/play/raft-chaos?step=60');
  await tab(page, 'Events');
  // Reach the log from the Events tab by Tab alone.
  await page.getByRole('tab', { name: 'Events', exact: true }).focus();
  let presses = 0;
  while (!(await page.evaluate(() => document.activeElement.matches('.event-log .log-view')))) {
    await page.keyboard.press('Tab');
    assert.ok(++presses < 10, 'Tab reaches the event log from its tab');
  }
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  assert.notEqual(await stepLabel(page), 'Step 60 of 60', 'the arrows step through the run');
  assert.match(await stepLabel(page), /^Step \d+ of/);
  assert.ok(await page.evaluate(() => document.activeElement.matches('.event-log .log-view')), 'the arrows keep the focus in the log');
  // However many rows it has, one Tab leaves it, and Shift+Tab comes back.
  const rows = await page.locator('.event-log .log-row').count();
  assert.ok(rows > 20, `the log draws ${rows} rows`);
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => Boolean(document.activeElement.closest('.event-log'))), false, 'one Tab is past the log');
  await page.keyboard.press('Shift+Tab');
  assert.ok(await page.evaluate(() => document.activeElement.matches('.event-log .log-view')), 'Shift+Tab returns to the log');
  await page.close();
});

/** WCAG relative luminance and contrast of CSS colours, in the page. */
const contrastKit = () => {
  const rgba = (c) => {
    const m = c.match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const [r, g, b, a = 1] = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return [r, g, b, a];
  };
  const over = (top, under) => top.slice(0, 3).map((v, i) => v * top[3] + under[i] * (1 - top[3])).concat(1);
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  /** The opaque colour an element's box shows: its own background over its ancestors'. */
  const surface = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] === 1) break; }
    }
    return layers.reduceRight((under, top) => over(top, under), [255, 255, 255, 1]);
  };
  return { rgba, ratio, surface };
};

/** The focus ring of the focused element: its two bands, what they touch, and the contrasts. */
async function ring(page) {
  return page.evaluate((kitSource) => {
    const { rgba, ratio, surface } = (0, eval)(`(${kitSource})()`);
    const el = document.activeElement;
    const s = getComputedStyle(el);
    const outline = rgba(s.outlineColor);
    const shadow = s.boxShadow.match(/rgba?\([^)]+\)\s+0px 0px 0px (\d+(?:\.\d+)?)px/);
    const behind = surface(el.parentElement);
    const fill = surface(el);
    // The halo fills the gap between the box and the outline; without one the gap shows what
    // is behind.
    const halo = shadow && Number(shadow[1]) >= Number.parseFloat(s.outlineOffset) ? rgba(shadow[0]) : behind;
    const c = { outerVsBehind: ratio(outline, behind), outerVsHalo: ratio(outline, halo), haloVsFill: ratio(halo, fill) };
    return {
      what: `${el.tagName.toLowerCase()}${el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : ''} “${(el.getAttribute('aria-label') || el.textContent || '').trim().slice(0, 24)}”`,
      visible: el.matches(':focus-visible'),
      style: s.outlineStyle,
      width: Number.parseFloat(s.outlineWidth),
      contrasts: Object.fromEntries(Object.entries(c).map(([k, v]) => [k, Math.round(v * 100) / 100])),
      // One band stands out from everything it touches: the outline from what is behind and
      // from the halo, or the halo from the outline and from the control's own fill.
      ok: (c.outerVsBehind >= 3 && c.outerVsHalo >= 3) || (c.outerVsHalo >= 3 && c.haloVsFill >= 3),
    };
  }, contrastKit.toString());
}

test('focus is visible on every kind of control: a ring whose one band differs by 3:1 or more from all it touches', async () => {
  const checks = [];
  const check = async (page, locator, where) => {
    await locator.first().focus();
    const r = await ring(page);
    checks.push(`${where}: ${r.what} ${JSON.stringify(r.contrasts)}`);
    assert.ok(r.visible, `${where}: ${r.what} shows a focus ring`);
    assert.equal(r.style, 'solid', `${where}: ${r.what}`);
    assert.ok(r.width >= 2, `${where}: ${r.what}'s ring is ${r.width}px`);
    assert.ok(r.ok, `${where}: ${r.what}'s ring contrasts ${JSON.stringify(r.contrasts)}`);
  };
  const library = await open();
  await library.getByRole('heading', { name: 'Scenario library' }).waitFor();
  await check(library, library.locator('.site-header .brand'), 'the dark header');
  await check(library, library.locator('.card a'), 'a scenario card');
  await check(library, library.locator('.glossary-link a'), 'a link on the page');
  await library.close();

  const question = await open('#/play/lost-update?step=8');
  await check(question, question.locator('.answer'), 'an answer on a question (yellow)');
  await question.close();

  const page = await open('#/play/zombie-worker?step=56');
  await page.locator('.topology svg[role=img]').waitFor();
  await check(page, page.locator('.transport .play'), 'the play button (accent fill)');
  await check(page, page.locator('.transport button:not(.play)'), 'a plain button');
  await check(page, page.locator('.picture-switch .selected'), 'a selected switch (dark fill)');
  await check(page, page.locator('.tick.current'), 'the current beat tick');
  await check(page, page.locator('#timeline'), 'the timeline slider');
  await check(page, page.locator('.speed select'), 'a select');
  await check(page, page.locator('.all-events input'), 'a checkbox');
  await check(page, page.locator('.chip.violated button'), 'a link button on a red chip');
  // Tabs opened by keyboard: after a click the browser rightly shows no ring.
  const keyTab = async (name) => {
    await page.getByRole('tab', { name, exact: true }).focus();
    await page.keyboard.press('Enter');
  };
  await keyTab('Parameters');
  await check(page, page.locator('.tab.selected'), 'the selected tab (dark fill)');
  await check(page, page.locator('.tab-panel input:not([type=checkbox]), .tab-panel select'), 'a field in a tool');
  await keyTab('Events');
  await check(page, page.locator('.event-log .log-view'), 'the event log');
  await page.close();

  for (const theme of ['light', 'dark']) {
    const embed = await open(`#/embed/zombie-worker?theme=${theme}&step=34`);
    await embed.setViewportSize({ width: 720, height: 405 });
    await embed.locator('.embed-bar .play').waitFor();
    await check(embed, embed.locator('.embed-bar .play'), `an embed (${theme}), its play button`);
    await check(embed, embed.locator('.embed-bar button:not(.play)'), `an embed (${theme}), a plain button`);
    await check(embed, embed.locator('.embed-bar a'), `an embed (${theme}), its link`);
    await check(embed, embed.locator('.embed-story'), `an embed (${theme}), its story`);
    await embed.close();
  }
  console.log(checks.join('\n'));
});
