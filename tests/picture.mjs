// Measuring the picture (issue 27, "readable from the back row"): shared by
// scripts/picture-report.mjs, scripts/gallery.mjs and tests/legibility.test.mjs.
//
// The picture is every `<svg>` inside `figure.topology` (the cards and the `svg.messages`
// layer). A text's rendered size is its font size (in the SVG's user units) times the screen
// scale of its coordinate system, in CSS px. A text counts when it is drawn: not in `<defs>`,
// not `display: none`, not hidden or transparent, not empty, and at least partly inside the
// viewport (on a configuration whose page scrolls, inside the page's width).
//
// The picture's DOM, as the renderer of issue 27 draws it (the old renderer has no focus, so
// what is said about focus is empty there):
// - a card is `g.node[data-node]`, class `focus` when the current beat is about it (else
//   `quiet`); its box is its first `rect.card` child (the old renderer: its first `rect`);
// - focus texts: `g.node.focus` → `.node-name`, `.node-word`, `.badge-value`;
// - Raft log cells: `text.cell-term`, `text.cell-index`;
// - labels: `svg.messages g.msg text`, `text.lost`, `.link-state text`.
import { coordlabCli } from './browser.mjs';

/** The screens the picture is measured on. `route` is `play` or `embed`; `present` opens
 *  presenter mode; `scrolls`: a phone's page scrolls, so a text below the first screen
 *  still counts. */
export const CONFIGS = {
  'presenter-853': { key: 'presenter-853', label: 'presenter 853×480', width: 853, height: 480, route: 'play', present: true },
  'presenter-1280': { key: 'presenter-1280', label: 'presenter 1280×720', width: 1280, height: 720, route: 'play', present: true },
  'player-853': { key: 'player-853', label: 'player 853×480', width: 853, height: 480, route: 'play', present: false },
  'player-1280': { key: 'player-1280', label: 'player 1280×720', width: 1280, height: 720, route: 'play', present: false },
  'embed-400': { key: 'embed-400', label: 'embed 400×300', width: 400, height: 300, route: 'embed', present: false },
  'phone': { key: 'phone', label: 'phone 390×844', width: 390, height: 844, route: 'play', present: false, scrolls: true },
};

/** The app's hash for scenario `id` in configuration `cfg`, optionally at `step`. */
export function hashFor(cfg, id, step) {
  const query = (...parts) => { const q = parts.filter(Boolean).join('&'); return q ? `?${q}` : ''; };
  const at = step === undefined ? null : `step=${step}`;
  if (cfg.route === 'embed') return `#/embed/${id}${query(at, 'controls=min')}`;
  return `#/play/${id}${query(at, cfg.present && 'present=1')}`;
}

/** Every scenario id the command line lists. */
export function scenarioIds() {
  return coordlabCli('list').split('\n').slice(1).map((l) => l.split(/\s+/)[0]).filter(Boolean);
}

/**
 * The scenario's key beat, from the command line's run (seed 1, default parameters, as the
 * player opens it): the beat at or just after the first property violation if the run has
 * one, else the last beat. `{ seq, index (1-based), of, key, title, why }`.
 */
export function keyBeat(id) {
  const lines = coordlabCli('run', id, '--format', 'jsonl').trim().split('\n');
  const summary = JSON.parse(lines.at(-1));
  if (summary.kind !== 'summary') throw new Error(`${id}: the run's last line is not its summary`);
  const beats = summary.beats || [];
  const firsts = (summary.properties || []).map((p) => p.first_violation_seq).filter((s) => s !== null && s !== undefined);
  const broke = firsts.length ? Math.min(...firsts) : null;
  let index = broke === null ? -1 : beats.findIndex((b) => b.seq >= broke);
  const why = index >= 0 ? `first violation at step ${broke}` : broke === null ? 'no violation: the last beat' : `first violation at step ${broke}, after the last beat: the last beat`;
  if (index < 0) index = beats.length - 1;
  const b = beats[index];
  return b ? { seq: b.seq, index: index + 1, of: beats.length, key: b.key, title: b.title, why, lastStep: summary.event_count - 1 }
    : { seq: 0, index: 0, of: 0, key: null, title: '(no beats)', why: 'no beats', lastStep: summary.event_count - 1 };
}

/**
 * The beats (1-based) whose step involves no participant — a heal mends every link at once —
 * and that name no focus: the picture legitimately singles no card out there.
 */
export function beatsAboutNoOne(id) {
  const lines = coordlabCli('run', id, '--format', 'jsonl').trim().split('\n').map((l) => JSON.parse(l));
  const summary = lines.at(-1);
  const bySeq = new Map(lines.filter((l) => l.kind !== 'summary').map((l) => [l.seq, l]));
  return new Set((summary.beats || []).flatMap((b, i) => {
    const e = bySeq.get(b.seq);
    return e && !(e.nodes || []).length && !e.message && !(b.focus || []).length ? [i + 1] : [];
  }));
}

/** Settles the page: no glide, so marks are read where they end up. */
export async function settle(page) {
  await page.emulateMedia({ reducedMotion: 'reduce' });
}

/**
 * Waits until the picture has stopped changing: the same markup and boxes in two frames in a
 * row (a renderer that picks its level of detail from the space it gets may draw twice), at
 * most 30 frames.
 */
const frames = (page) => page.evaluate(() => new Promise((resolve) => {
  const look = () => [...document.querySelectorAll('figure.topology')].map((f) => {
    const r = f.getBoundingClientRect();
    return `${f.innerHTML.length}:${r.left},${r.top},${r.width},${r.height}`;
  }).join('|');
  let last = look();
  let same = 0;
  let n = 0;
  const tick = () => {
    const now = look();
    same = now === last ? same + 1 : 0;
    last = now;
    if (same >= 2 || ++n >= 30) resolve();
    else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}));

/** Loads `hash` afresh (a full load, so nothing of the previous scenario is left) and waits
 *  for the picture. */
export async function load(page, origin, hash) {
  await page.goto('about:blank');
  await page.goto(`${origin}/${hash}`);
  await page.waitForFunction(() => document.documentElement.dataset.coordlab && document.querySelector('figure.topology svg'));
  await frames(page);
}

/** Where the run is, as the page says it: step, beat `k of n` and title, whether the answer
 *  of a question is shown. */
function where() {
  const txt = (s) => document.querySelector(s)?.textContent.trim() ?? '';
  const stepText = txt('.step-count') || txt('.narration .step-no') || txt('.compare .position');
  const beatText = txt('.story .beat-no') || txt('.embed-beat .beat-no');
  // The side-by-side view names the beat each side is at.
  const sides = [...document.querySelectorAll('.compare-side .beat.now .beat-title')].map((e) => e.textContent.trim());
  const title = txt('.story .beat-title') || txt('.embed-beat strong') || sides.join(' / ');
  const step = Number((stepText.match(/(\d+)/) || [])[1] ?? NaN);
  const m = beatText.match(/Beat (\d+) of (\d+)/);
  const next = document.querySelector('.transport .next-beat, .embed-bar .next-beat');
  return {
    step,
    beat: m ? Number(m[1]) : 0,
    of: m ? Number(m[2]) : null,
    title: m || sides.length ? title : 'before the first beat',
    question: Boolean(document.querySelector('.question')),
    answered: Boolean(document.querySelector('.question .why')),
    atEnd: !next || next.disabled,
    sig: `${stepText}|${beatText}|${Boolean(document.querySelector('.question .why'))}|${location.hash}`,
  };
}

/** Reads where the run is (see `where`). */
export const position = (page) => page.evaluate(where);

/** Describes a position for a message: `beat 3 of 7 “B takes over” (step 34)`. */
export const describe = (p) => (p.beat ? `beat ${p.beat} of ${p.of} “${p.title}” (step ${p.step})`
  : p.title && p.title !== 'before the first beat' ? `step ${p.step} (“${p.title}”)` : `before the first beat (step ${p.step})`);

/**
 * Walks the open scenario beat by beat, from where it is (before the first beat) through the
 * last: `n` in the player, the next-beat button in an embed. Calls `onState(position, kind)`
 * at the start and at each beat (`kind` 'beat'), and when a question's answer is revealed
 * (`'answer'`: presenter mode shows it on the press after the question). At an unanswered
 * question, `answerKey` (e.g. 'ArrowRight') is pressed instead of `n`; a press that moves the
 * run without reaching a beat or revealing an answer is reported as `'step'`. Stops after the
 * last beat (its answer revealed, if it asks one), at the end of the run, or when a press
 * changes nothing.
 */
export async function walkBeats(page, cfg, onState, { maxPresses = 80, answerKey = null } = {}) {
  let now = await position(page);
  await onState(now, 'beat');
  for (let presses = 0; presses < maxPresses; presses++) {
    const lastBeat = now.of !== null && now.beat >= now.of;
    const open = now.question && !now.answered;
    if (now.atEnd || (lastBeat && !open)) return;
    const before = now.sig;
    if (cfg.route === 'embed') await page.locator('.embed-bar .next-beat').click();
    else {
      await page.evaluate(() => document.activeElement?.blur?.());
      await page.keyboard.press(open && answerKey ? answerKey : 'n');
    }
    try {
      await page.waitForFunction((s) => {
        const txt = (q) => document.querySelector(q)?.textContent.trim() ?? '';
        return `${txt('.step-count') || txt('.narration .step-no') || txt('.compare .position')}|${txt('.story .beat-no') || txt('.embed-beat .beat-no')}|${Boolean(document.querySelector('.question .why'))}|${location.hash}` !== s;
      }, before, { timeout: 5000, polling: 'raf' });
    } catch {
      return;
    }
    await frames(page);
    const next = await position(page);
    const sameBeat = next.beat === now.beat;
    const kind = sameBeat && next.step === now.step && next.answered && !now.answered ? 'answer'
      : sameBeat && next.beat > 0 ? 'step' : 'beat';
    now = next;
    await onState(now, kind);
  }
}

/**
 * Measures the picture and the controls where the page is. Runs in the page.
 * Returns { texts: [{ fig, cls, text, px, node, focus, cellTerm, label }], cards, labels,
 * overlaps, figures, transport, next, answers, why }.
 */
export function measure(page, cfg) {
  return page.evaluate(({ scrolls }) => {
    const vw = innerWidth;
    const vh = scrolls ? Math.max(document.scrollingElement.scrollHeight, innerHeight) : innerHeight;
    const dy = scrolls ? scrollY : 0;
    const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top + dy, r.right, r.bottom + dy]; };
    const round = (x) => Math.round(x * 10) / 10;
    const figures = [...document.querySelectorAll('figure.topology')];
    // Drawn: laid out, not hidden, not transparent, not a definition.
    const drawn = (el) => {
      if (el.closest('defs, marker, pattern, symbol, clipPath, mask')) return false;
      const s = getComputedStyle(el);
      if (s.visibility === 'hidden' || s.visibility === 'collapse') return false;
      for (let a = el; a && a !== document.body; a = a.parentElement) {
        const st = a === el ? s : getComputedStyle(a);
        if (st.display === 'none' || Number(st.opacity) === 0) return false;
      }
      const b = box(el);
      return b[2] - b[0] > 0 && b[3] - b[1] > 0 && b[2] > 0 && b[0] < vw && b[3] > 0 && b[1] < vh;
    };
    const texts = [];
    const labels = [];
    figures.forEach((figure, fig) => {
      for (const t of figure.querySelectorAll('svg text')) {
        const text = t.textContent.replace(/\s+/g, ' ').trim();
        if (!text || !drawn(t)) continue;
        const m = t.getScreenCTM();
        if (!m) continue;
        const px = Number.parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
        const g = t.closest('g.node');
        const label = Boolean(t.closest('svg.messages g.msg') || t.matches('text.lost') || t.closest('.link-state'));
        const entry = {
          fig,
          cls: t.getAttribute('class') || '',
          text: text.slice(0, 40),
          px: round(px),
          node: g?.getAttribute('data-node') ?? null,
          focus: Boolean(t.closest('g.node.focus') && t.matches('.node-name, .node-word, .badge-value')),
          cellTerm: t.matches('.cell-term'),
          label,
        };
        texts.push(entry);
        if (label) labels.push({ fig, text: entry.text, box: box(t) });
      }
    });
    // The page's own words around the pictures (the beat, the narration, the chips, the
    // transport): every text node outside an SVG, drawn, and not one kept for screen readers
    // only (clipped to a pixel). Its size is its element's computed font size in CSS px.
    const forEyes = (el) => {
      for (let a = el; a && a !== document.body; a = a.parentElement) {
        const st = getComputedStyle(a);
        if (st.clip && st.clip !== 'auto') return false;
        if (st.clipPath && st.clipPath !== 'none') return false;
        const r = a.getBoundingClientRect();
        if (st.overflow !== 'visible' && (r.width <= 1 || r.height <= 1)) return false;
      }
      return true;
    };
    const chrome = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      const text = n.textContent.replace(/\s+/g, ' ').trim();
      if (!text || !el || el.closest('svg, script, style, noscript, template')) continue;
      if (!drawn(el) || !forEyes(el)) continue;
      chrome.push({ text: text.slice(0, 40), cls: `${el.tagName.toLowerCase()}${el.classList.length ? `.${[...el.classList].join('.')}` : ''}`, px: round(Number.parseFloat(getComputedStyle(el).fontSize)) });
    }
    const cards = [];
    figures.forEach((figure, fig) => {
      for (const g of figure.querySelectorAll('g.node')) {
        const r = g.querySelector(':scope > rect.card') || g.querySelector(':scope > rect');
        if (r && drawn(r)) cards.push({ fig, node: g.getAttribute('data-node'), focus: g.classList.contains('focus'), box: box(r) });
      }
    });
    // Boxes that share more than 1 px each way (1 px is rounding).
    const cover = (a, b) => {
      const w = Math.min(a[2], b[2]) - Math.max(a[0], b[0]);
      const h = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
      return w > 1 && h > 1 ? [round(w), round(h)] : null;
    };
    const overlaps = [];
    labels.forEach((l, i) => {
      for (const c of cards) {
        const o = c.fig === l.fig && cover(l.box, c.box);
        if (o) overlaps.push({ label: l.text, with: `card ${c.node}`, by: o });
      }
      for (const k of labels.slice(i + 1)) {
        const o = k.fig === l.fig && cover(l.box, k.box);
        if (o) overlaps.push({ label: l.text, with: `label “${k.text}”`, by: o });
      }
    });
    // Fully visible: inside the viewport and not cut by a scrolling or clipping ancestor.
    const name = (el) => `${el.tagName.toLowerCase()}${el.classList.length ? `.${[...el.classList].join('.')}` : ''}`;
    const visible = (el) => {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) return { ok: false, why: 'not drawn' };
      const off = [];
      if (r.top < -1) off.push(`${Math.round(-r.top)}px above the screen`);
      if (r.bottom > innerHeight + 1) off.push(`${Math.round(r.bottom - innerHeight)}px below the screen`);
      if (r.left < -1) off.push(`${Math.round(-r.left)}px left of the screen`);
      if (r.right > innerWidth + 1) off.push(`${Math.round(r.right - innerWidth)}px right of the screen`);
      for (let a = el.parentElement; a && a !== document.documentElement; a = a.parentElement) {
        const s = getComputedStyle(a);
        if ([s.overflowX, s.overflowY].every((o) => o === 'visible')) continue;
        const c = a.getBoundingClientRect();
        const cut = Math.max(c.top - r.top, r.bottom - c.bottom, c.left - r.left, r.right - c.right);
        if (cut > 1) off.push(`cut by ${name(a)} (overflow ${s.overflowY}) by ${Math.round(cut)}px`);
      }
      return { ok: off.length === 0, why: off.join('; ') };
    };
    const transportEl = document.querySelector('.controls .transport') || document.querySelector('.embed-bar') || document.querySelector('.transport');
    const transport = transportEl ? (() => {
      const r = transportEl.getBoundingClientRect();
      return { box: [r.left, r.top, r.right, r.bottom].map(round), inside: r.top >= -1 && r.left >= -1 && r.bottom <= innerHeight + 1 && r.right <= innerWidth + 1 };
    })() : null;
    const nextEl = document.querySelector('.transport .next-beat') || document.querySelector('.embed-bar .next-beat');
    const next = nextEl ? (() => { const r = nextEl.getBoundingClientRect(); return [round(r.left + scrollX), round(r.top + scrollY)]; })() : null;
    const answers = [...document.querySelectorAll('.question .answer')].map((a) => ({ text: a.textContent.trim().slice(0, 60), ...visible(a) }));
    const whyEl = document.querySelector('.question .why');
    return {
      texts,
      chrome,
      cards,
      labels,
      overlaps,
      figures: figures.map((f) => {
        const r = f.getBoundingClientRect();
        return { box: [r.left, r.top, r.right, r.bottom].map(round), ...visible(f) };
      }),
      transport,
      next,
      question: Boolean(document.querySelector('.question')),
      answers,
      why: whyEl ? { text: whyEl.textContent.trim().slice(0, 60), ...visible(whyEl) } : null,
    };
  }, { scrolls: Boolean(cfg.scrolls) });
}

/** The smallest and the median of a list of px (null when empty). */
export function stats(pxs) {
  if (!pxs.length) return { min: null, median: null };
  const s = [...pxs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  return { min: s[0], median: Math.round(median * 10) / 10 };
}

/** The smallest text of a list, as `“text” (class) 9.9px`. */
export function smallest(texts) {
  const t = texts.reduce((a, b) => (a && a.px <= b.px ? a : b), null);
  return t && { text: t.text, cls: t.cls, node: t.node, px: t.px };
}
