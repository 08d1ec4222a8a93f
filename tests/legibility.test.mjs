// Readable from the back row (issue 27, GUIDE §9): walks every scenario's beats, from before
// the first through the last, and measures the rendered size of every text in the picture (font
// size × the SVG's screen scale, in CSS px; tests/picture.mjs says what counts):
// - presenter mode at 853×480 (a 1280×720 projector at 150%): the beat's focus texts (the focus
//   cards' names, state words and badges) ≥ 18 px, with a card in focus at every beat; every
//   drawn picture text ≥ 12 px, and every text of the page around it (the beat, the narration,
//   the chips, the transport) too; raft-figure-8's log-cell terms ≥ 14 px; every question shows
//   all its answers, and its reason once answered (→), wholly on screen and uncut by a scroll box;
// - presenter mode at 1280×720: focus texts ≥ 24 px;
// - an embed in a 400×300 frame: every picture text ≥ 11 px, and every text around it too;
// - in all of these and the 1280×720 player: no label (message, lost message, link state)
//   covers a card or another label by more than 1 px;
// - the 1280×720 player: the transport wholly on screen at every beat, and the next-beat
//   button in the same place (≤ 1 px);
// - the side-by-side view in presenter mode at 853×480: both pictures whole on screen, every
//   text in and around them ≥ 12 px, at every beat.
// Each configuration walks on its own page, all at once. Failures name the scenario, the beat,
// the configuration, the text and its size.
//
// LEGIBILITY_SCENARIOS=raft-figure-8,zombie-worker limits the walk (for a partial build).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser } from './browser.mjs';
import { CONFIGS, hashFor, scenarioIds, settle, load, walkBeats, measure, describe, beatsAboutNoOne } from './picture.mjs';

const { open, origin, shot } = useBrowser();
const only = process.env.LEGIBILITY_SCENARIOS?.split(',');
const scenarios = scenarioIds().filter((id) => !only || only.includes(id));

const FOCUS_853 = 18;
const ALL_853 = 12;
const FOCUS_1280 = 24;
const ALL_EMBED = 11;
const CELL_TERM_853 = 14;
const FIGURE_8 = 'raft-figure-8';

/** Failures found by the walk, by check; each test below asserts one list is empty. */
const found = {
  walk: [], focus853: [], all853: [], chrome853: [], chromeEmbed: [], focus1280: [], embed: [], cells: [], labels: [], transport: [], questions: [],
};
let walked = false;

/** Up to three of the texts under `limit`, smallest first: `“worker” (node-kind) 10.8px`. */
function under(texts, limit) {
  const small = texts.filter((t) => t.px < limit).sort((a, b) => a.px - b.px);
  if (!small.length) return null;
  const named = small.slice(0, 3).map((t) => `“${t.text}” (${t.cls || 'text'}${t.node ? ` on ${t.node}` : ''}) ${t.px}px`).join(', ');
  return `${small.length} text${small.length > 1 ? 's' : ''} under ${limit}px: ${named}${small.length > 3 ? ', …' : ''}`;
}

const noOne = new Map();
/** The beats of `id` about no participant in particular (see `beatsAboutNoOne`), read once. */
const aboutNoOne = (id) => {
  if (!noOne.has(id)) noOne.set(id, beatsAboutNoOne(id));
  return noOne.get(id);
};

/** The checks of one configuration at one state of the walk. */
function check(cfg, id, p, kind, m, memo) {
  const at = `${id}, ${describe(p)}, ${cfg.label}`;
  const onBeat = kind === 'beat';
  for (const o of m.overlaps) found.labels.push(`${at}: “${o.label}” covers ${o.with} by ${o.by.join('×')}px`);
  const focus = m.texts.filter((t) => t.focus);
  if (cfg.key === 'presenter-853') {
    if (onBeat && p.beat > 0 && !m.cards.some((c) => c.focus) && !aboutNoOne(id).has(p.beat)) found.focus853.push(`${at}: no card is in focus (g.node.focus)`);
    const f = under(focus, FOCUS_853);
    if (f) found.focus853.push(`${at}: focus ${f}`);
    const a = under(m.texts, ALL_853);
    if (a) found.all853.push(`${at}: ${a}`);
    const c = under(m.chrome, ALL_853);
    if (c) found.chrome853.push(`${at}: ${c}`);
    if (id === FIGURE_8) {
      const cells = m.texts.filter((t) => t.cellTerm);
      memo.cells = (memo.cells || 0) + cells.length;
      const c = under(cells, CELL_TERM_853);
      if (c) found.cells.push(`${at}: log-cell terms: ${c}`);
    }
    // A question: its answers on arrival; its reason once → has answered it.
    if (memo.asked && kind !== 'answer') {
      found.questions.push(`${id}, ${describe(memo.asked)}, ${cfg.label}: → did not reveal the answer`);
      memo.asked = null;
    }
    if (kind === 'answer') {
      if (!m.why) found.questions.push(`${at}: no reason (.question .why) after answering`);
      else if (!m.why.ok) found.questions.push(`${at}: the reason “${m.why.text}…” is not wholly visible: ${m.why.why}`);
      memo.asked = null;
    } else if (m.question && !m.why) {
      memo.asked = p;
      if (!m.answers.length) found.questions.push(`${at}: the question shows no answer buttons`);
      for (const ans of m.answers) if (!ans.ok) found.questions.push(`${at}: the answer “${ans.text}” is not wholly visible: ${ans.why}`);
    }
  }
  if (cfg.key === 'presenter-1280') {
    if (onBeat && p.beat > 0 && !m.cards.some((c) => c.focus) && !aboutNoOne(id).has(p.beat)) found.focus1280.push(`${at}: no card is in focus (g.node.focus)`);
    const f = under(focus, FOCUS_1280);
    if (f) found.focus1280.push(`${at}: focus ${f}`);
  }
  if (cfg.key === 'embed-400') {
    const a = under(m.texts, ALL_EMBED);
    if (a) found.embed.push(`${at}: ${a}`);
    const c = under(m.chrome, ALL_EMBED);
    if (c) found.chromeEmbed.push(`${at}: ${c}`);
  }
  if (cfg.key === 'player-1280' && onBeat) {
    if (!m.transport) found.transport.push(`${at}: no transport (.controls .transport)`);
    else if (!m.transport.inside) found.transport.push(`${at}: the transport is at ${m.transport.box.map(Math.round)}, not wholly inside 1280×720`);
    if (!m.next) found.transport.push(`${at}: no next-beat button (.transport .next-beat)`);
    else {
      if (memo.next) {
        const moved = Math.hypot(m.next[0] - memo.next.at[0], m.next[1] - memo.next.at[1]);
        if (moved > 1) found.transport.push(`${at}: the next-beat button moved ${moved.toFixed(1)}px since ${memo.next.where} (${memo.next.at} → ${m.next})`);
      }
      memo.next = { at: m.next, where: describe(p) };
    }
  }
}

/** Walks every scenario in one configuration on one page. */
async function walkConfig(cfg) {
  const page = await open('#/');
  await page.setViewportSize({ width: cfg.width, height: cfg.height });
  await settle(page);
  for (const id of scenarios) {
    const memo = {};
    let last = null;
    try {
      await load(page, origin(), hashFor(cfg, id));
      await walkBeats(page, cfg, async (p, kind) => {
        check(cfg, id, p, kind, await measure(page, cfg), memo);
        last = p;
      }, { answerKey: cfg.present ? 'ArrowRight' : null });
    } catch (e) {
      found.walk.push(`${id}, ${cfg.label}: the walk failed at ${last ? describe(last) : 'the start'}: ${e.message.split('\n')[0]}`);
      continue;
    }
    if (!last || (last.of !== null && last.beat < last.of)) {
      found.walk.push(`${id}, ${cfg.label}: the walk stopped at ${last ? describe(last) : 'the start'}, before the last beat`);
    }
    if (memo.asked) found.questions.push(`${id}, ${describe(memo.asked)}, ${cfg.label}: → did not reveal the answer`);
    if (id === FIGURE_8 && cfg.key === 'presenter-853' && !memo.cells) found.cells.push(`${id}, ${cfg.label}: no log cell (text.cell-term) drawn at any beat`);
  }
  await page.close();
}

/** Fails with the list's entries (once each: a beat and its revealed answer look alike). */
const report = (all, what) => {
  const list = [...new Set(all)];
  const shown = list.slice(0, 40).join('\n  ');
  assert.deepEqual(list.length, 0, `${list.length} ${what}:\n  ${shown}${list.length > 40 ? `\n  … and ${list.length - 40} more` : ''}`);
};

test(`walks every scenario's beats (${scenarios.length}) in presenter mode at 853×480 and 1280×720, the 1280×720 player and a 400×300 embed`, async () => {
  const configs = ['presenter-853', 'presenter-1280', 'player-1280', 'embed-400'].map((k) => CONFIGS[k]);
  await Promise.all(configs.map(walkConfig));
  walked = true;
  report(found.walk, 'walks did not reach the last beat');
});

const after = (t) => { if (!walked) t.skip('the walk failed'); return walked; };

test(`presenter 853×480: a card is in focus at every beat and the focus texts are at least ${FOCUS_853}px`, (t) => {
  if (after(t)) report(found.focus853, 'beats with focus texts too small or no focus');
});

test(`presenter 853×480: every drawn picture text is at least ${ALL_853}px`, (t) => {
  if (after(t)) report(found.all853, 'beats with picture text too small');
});

test(`presenter 853×480: every text around the picture (beat, narration, chips, transport) is at least ${ALL_853}px`, (t) => {
  if (after(t)) report(found.chrome853, 'beats with page text too small');
});

test(`presenter 1280×720: a card is in focus at every beat and the focus texts are at least ${FOCUS_1280}px`, (t) => {
  if (after(t)) report(found.focus1280, 'beats with focus texts too small');
});

test(`a 400×300 embed: every drawn picture text is at least ${ALL_EMBED}px`, (t) => {
  if (after(t)) report(found.embed, 'beats with picture text too small');
});

test(`a 400×300 embed: every text around the picture (beat, warning, narration, controls) is at least ${ALL_EMBED}px`, (t) => {
  if (after(t)) report(found.chromeEmbed, 'beats with page text too small');
});

test(`${FIGURE_8}: the log cells' terms are at least ${CELL_TERM_853}px in presenter mode at 853×480`, (t) => {
  if (!scenarios.includes(FIGURE_8)) return t.skip(`${FIGURE_8} is not walked`);
  if (after(t)) report(found.cells, 'beats with log-cell terms too small');
});

test('no label covers a card or another label', (t) => {
  if (after(t)) report(found.labels, 'labels over a card or a label');
});

test('the 1280×720 player: the transport is on screen at every beat and the next-beat button stays put', (t) => {
  if (after(t)) report(found.transport, 'beats where the transport is off screen or moved');
});

test('presenter 853×480: every question shows all its answers, and its reason once answered, wholly on screen', (t) => {
  if (after(t)) report(found.questions, 'questions not wholly visible');
});

test('the side-by-side view in presenter mode at 853×480: both pictures whole on screen, every text at least 12px, at every beat', async () => {
  const cfg = { key: 'compare-853', label: 'side by side, presenter 853×480', width: 853, height: 480, route: 'compare', present: true };
  const page = await open('#/');
  await page.setViewportSize({ width: cfg.width, height: cfg.height });
  await settle(page);
  await load(page, origin(), '#/compare/redis-failover/consensus-lock?present=1');
  const problems = [];
  let states = 0;
  await walkBeats(page, cfg, async (p) => {
    states++;
    const m = await measure(page, cfg);
    const at = `redis-failover / consensus-lock, ${describe(p)}, ${cfg.label}`;
    if (m.figures.length !== 2) problems.push(`${at}: ${m.figures.length} pictures (figure.topology), not 2`);
    m.figures.forEach((f, i) => { if (!f.ok) problems.push(`${at}: picture ${i + 1} at ${f.box.map(Math.round)} is not whole on screen: ${f.why}`); });
    const a = under(m.texts, ALL_853);
    if (a) problems.push(`${at}: ${a}`);
    const c = under(m.chrome, ALL_853);
    if (c) problems.push(`${at}: around the pictures, ${c}`);
    for (const o of m.overlaps) problems.push(`${at}: “${o.label}” covers ${o.with} by ${o.by.join('×')}px`);
  }, { maxPresses: 40 });
  await shot(page, 'legibility-compare-853x480');
  await page.close();
  assert.ok(states > 1, 'n moved the side-by-side view');
  report(problems, 'states of the side-by-side view not legible');
});
