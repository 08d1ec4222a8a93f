// A phone (390×844): the page keeps to the screen's width — only the space-time diagram may
// scroll sideways, inside its own box — the topology's text is drawn at 11 px or more, and
// every control is a 44 px target: at least 44 px in its smaller dimension, or spaced so the
// 44×44 square centred on it touches no other control (the spacing rule of WCAG 2.5.8, with
// 44 px for its 24). Offenders are listed by name and size.
//
// Not counted: a glossary term inside a sentence (WCAG's inline exception) and the marks in the
// space-time diagram (each step they go to is also one step button or slider move away).
//
// A11Y_SCENARIOS=lost-update,raft-chaos limits the per-scenario test (for a partial build).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, tab, stepLabel, coordlabCli } from './browser.mjs';

const { open, shot } = useBrowser();
const coordlab = coordlabCli;
const scenarios = coordlab('list').split('\n').slice(1).map((l) => l.split(/\s+/)[0]).filter(Boolean)
  .filter((id) => !process.env.A11Y_SCENARIOS || process.env.A11Y_SCENARIOS.split(',').includes(id));
const PHONE = { width: 390, height: 844 };
const TARGET = 44;

async function openPhone(hash) {
  const page = await open(hash);
  await page.setViewportSize(PHONE);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  return page;
}

/** What a phone shows wrong: the page's width, the controls too small and too close, and the
 *  smallest text in the topology. */
function measure(page) {
  return page.evaluate((target) => {
    const shown = (el) => {
      const r = el.getBoundingClientRect();
      const s = getComputedStyle(el);
      return r.width > 2 && r.height > 2 && s.visibility !== 'hidden' && !el.closest('[inert], [aria-hidden=true]');
    };
    const controls = [...document.querySelectorAll('a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex="-1"])')]
      .filter((el) => !el.closest('.spacetime-picture svg') && !el.matches('.term-link'))
      // A checkbox is tapped through its label.
      .map((el) => (el.matches('input[type=checkbox], input[type=radio]') && el.closest('label')) || el)
      .filter((el, i, all) => all.indexOf(el) === i && shown(el));
    const boxes = controls.map((el) => {
      const r = el.getBoundingClientRect();
      const name = (el.getAttribute('aria-label') || el.textContent || el.getAttribute('title') || el.tagName).replace(/\s+/g, ' ').trim().slice(0, 40);
      const small = Math.min(r.width, r.height) < target;
      // The target: the box itself, grown to the 44×44 square round its centre if smaller.
      const cx = r.left + r.width / 2, cy = r.top + r.height / 2 + scrollY;
      const w = Math.max(r.width, small ? target : 0), h = Math.max(r.height, small ? target : 0);
      return { el, name, w: Math.round(r.width), h: Math.round(r.height), small, t: [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2] };
    });
    const overlap = (a, b) => Math.min(a[2], b[2]) - Math.max(a[0], b[0]) > 0.5 && Math.min(a[3], b[3]) - Math.max(a[1], b[1]) > 0.5;
    const offenders = boxes.filter((a) => a.small && boxes.some((b) => b !== a && !a.el.contains(b.el) && !b.el.contains(a.el) && overlap(a.t, b.t)))
      .map((a) => `${a.name} (${a.w}×${a.h})`);
    const svg = document.querySelector('.topology svg[role=img]');
    let text = null;
    if (svg) {
      const scale = svg.getScreenCTM().a;
      for (const t of svg.querySelectorAll('text')) {
        if (!t.getComputedTextLength()) continue;
        const px = Number.parseFloat(getComputedStyle(t).fontSize) * scale;
        if (text === null || px < text.px) text = { px: Math.round(px * 10) / 10, text: t.textContent.slice(0, 30) };
      }
    }
    return {
      width: document.scrollingElement.scrollWidth,
      smallest: Math.min(...boxes.map((b) => Math.min(b.w, b.h))),
      offenders,
      text,
    };
  }, TARGET);
}

function fits(m, where) {
  assert.ok(m.width <= PHONE.width, `${where}: the page is ${m.width}px wide`);
  assert.deepEqual(m.offenders, [], `${where}: controls under ${TARGET}px that crowd another`);
  if (m.text) assert.ok(m.text.px >= 11, `${where}: the topology draws “${m.text.text}” at ${m.text.px}px`);
}

for (const id of scenarios) {
  test(`${id} on a phone: the player fits 390 px, its picture is legible and every tool's controls are 44 px targets`, async () => {
    const first = await openPhone(`#/play/${id}`);
    await first.locator('.topology svg[role=img]').waitFor();
    const last = Number((await stepLabel(first)).match(/of (\d+)/)[1]);
    await first.close();
    const page = await openPhone(`#/play/${id}?step=${Math.floor(last / 2)}`);
    await page.locator('.topology svg[role=img]').waitFor();
    for (const name of ['Beats', 'Parameters', 'Faults', 'Network', 'State', 'Events']) {
      if (!(await page.getByRole('tab', { name, exact: true }).count())) continue;
      await tab(page, name);
      fits(await measure(page), `${id}, ${name} tab`);
    }
    if (['lost-update', 'zombie-worker', 'raft-chaos', 'redlock'].includes(id)) await shot(page, `phone-${id}`);
    await page.getByRole('button', { name: 'Both', exact: true }).click();
    await page.locator('.spacetime-picture svg').waitFor();
    fits(await measure(page), `${id}, both pictures`);
    await page.close();
  });
}

test('on a phone the library, the glossary, the side-by-side view, the trace viewer, the key list, the Embed dialog and presenter mode fit', async () => {
  const views = [
    ['#/', '.library', 'library'],
    ['#/glossary', '.glossary', 'glossary'],
    ['#/compare/redis-failover/consensus-lock?step=300', '.compare-side[data-side=left] svg[role=img]', 'compare'],
    ['#/trace', '.drop-zone', 'trace-viewer'],
    ['#/play/zombie-worker?step=40&present=1', '.player.presenting', 'presenter'],
  ];
  for (const [hash, ready, name] of views) {
    const page = await openPhone(hash);
    await page.locator(ready).first().waitFor();
    fits(await measure(page), name);
    await shot(page, `phone-${name}`);
    await page.close();
  }
  const trace = await openPhone('#/trace');
  const jsonl = coordlab('run', 'zombie-worker', '--seed', '1', '--format', 'jsonl');
  await trace.locator('#trace-file').setInputFiles({ name: 'zombie.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(jsonl) });
  await trace.locator('.trace-shown .spacetime-picture svg').waitFor();
  fits(await measure(trace), 'trace viewer with a trace');
  await trace.close();
  const page = await openPhone('#/play/lost-update?step=8');
  await page.getByRole('button', { name: /Keys/ }).click();
  await page.getByRole('dialog', { name: 'Keys' }).waitFor();
  fits(await measure(page), 'key list');
  await page.keyboard.press('Escape');
  await page.getByRole('button', { name: /Embed/ }).click();
  await page.getByRole('dialog', { name: 'Embed this run in a page' }).waitFor();
  fits(await measure(page), 'Embed dialog');
  await page.close();
});
