// Picture report (issue 27): how large the picture's text is drawn, in CSS px, beat by beat,
// on the screens coordlab is used on — presenter mode at 853×480 (a 1280×720 projector at
// 150%) and 1280×720, the player at 853×480, an embed in a 400×300 frame and a phone
// (390×844) — and whether the controls stay on screen and in place. A report, not a test:
// tests/legibility.test.mjs asserts the limits.
//
//   node scripts/picture-report.mjs DIST [--scenarios a,b] [--configs presenter-853,embed-400]
//        [--json | --json=FILE] [--build "what DIST was built from"] > report.md
//
// Needs the command line (cargo build -p coordlab-cli) for the scenario list and each run's
// beats. For each scenario and configuration it opens the run before its first beat and
// presses `n` (in an embed: the next-beat button) through the last beat, measuring at each:
// every drawn `<text>` of the picture (every `<svg>` in `figure.topology`: the cards and the
// messages layer) as font size × the SVG's screen scale, inside the viewport (on a phone,
// inside the page); the focus texts (names, state words and badges of the beat's focus
// cards; empty on a renderer without focus); Raft log-cell terms; labels drawn over a card or
// another label; whether the transport is wholly on the screen; where the next-beat button is;
// and in presenter mode whether a question's answers and revealed reason are wholly visible.
// The key beat is the beat at or just after the run's first property violation, else the last
// beat. Without --scenarios it also walks the side-by-side view of redis-failover and
// consensus-lock in presenter mode at 853×480 and 1280×720. Markdown on stdout; `--json` prints JSON instead, `--json=FILE` also writes it to FILE.
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { serve } from '../tests/serve.mjs';
import { launch } from '../tests/browser.mjs';
import { CONFIGS, hashFor, scenarioIds, keyBeat, settle, load, walkBeats, measure, stats, smallest, describe } from '../tests/picture.mjs';

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i < 0) return undefined;
  const [, inline] = args[i].split(/=(.*)/s);
  if (inline !== undefined) return inline;
  const next = args[i + 1];
  return next && !next.startsWith('--') ? next : true;
};
const dist = args.find((a, i) => !a.startsWith('--') && !(i > 0 && ['--scenarios', '--configs', '--build'].includes(args[i - 1])));
if (!dist || !fs.existsSync(path.join(dist, 'index.html'))) {
  console.error('usage: node scripts/picture-report.mjs DIST [--scenarios a,b] [--configs c,d] [--json | --json=FILE] [--build TEXT]');
  process.exit(2);
}
// `--json` takes its file only as `--json=FILE`, never from the next argument (DIST).
const json = args.includes('--json') ? true : args.find((a) => a.startsWith('--json='))?.slice('--json='.length);
const REPORTED = ['presenter-853', 'presenter-1280', 'player-853', 'player-1280', 'embed-400', 'phone'];
const configs = (typeof opt('configs') === 'string' ? opt('configs').split(',') : REPORTED).map((k) => {
  if (!CONFIGS[k]) throw new Error(`no configuration ${k} (${Object.keys(CONFIGS).join(', ')})`);
  return CONFIGS[k];
});
const ids = typeof opt('scenarios') === 'string' ? opt('scenarios').split(',') : scenarioIds();
const keys = Object.fromEntries(ids.map((id) => [id, keyBeat(id)]));

// Which build: the loader's and stylesheet's hashed names, and when they were written.
const files = fs.readdirSync(dist);
const loader = files.find((f) => /^loader-.*\.js$/.test(f));
const built = new Date(fs.statSync(path.join(dist, loader || 'index.html')).mtime).toISOString().replace(/\.\d+Z$/, 'Z');
const build = typeof opt('build') === 'string' ? opt('build') : '';

const server = await serve(dist);
const origin = `http://127.0.0.1:${server.address().port}`;
const browser = await launch();
const problems = [];
const started = Date.now();

/** Walks every scenario in one configuration on one page; returns { id: result }. */
async function walkConfig(cfg) {
  const page = await browser.newPage({ viewport: { width: cfg.width, height: cfg.height } });
  page.setDefaultTimeout(20_000);
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`${cfg.key}: console error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`${cfg.key}: page error: ${e.message}`));
  await settle(page);
  const out = {};
  for (const id of ids) {
    const states = [];
    try {
      await load(page, origin, hashFor(cfg, id));
      await walkBeats(page, cfg, async (p, kind) => {
        const m = await measure(page, cfg);
        const all = m.texts.map((t) => t.px);
        const focus = m.texts.filter((t) => t.focus);
        const cells = m.texts.filter((t) => t.cellTerm);
        states.push({
          kind, beat: p.beat, of: p.of, title: p.title, step: p.step,
          ...stats(all),
          smallest: smallest(m.texts),
          focus: stats(focus.map((t) => t.px)).min,
          focusSmallest: smallest(focus),
          focusCards: m.cards.filter((c) => c.focus).map((c) => c.node),
          cellTerm: stats(cells.map((t) => t.px)).min,
          overlaps: m.overlaps,
          transport: m.transport?.inside ?? null,
          next: m.next,
          question: m.question,
          answers: m.answers,
          why: m.why,
        });
      });
    } catch (e) {
      problems.push(`${cfg.key} ${id}: ${e.message.split('\n')[0]}`);
    }
    out[id] = summarize(id, states);
    process.stderr.write(`${cfg.key} ${id}: ${states.length} states\n`);
  }
  await page.close();
  return out;
}

/** What the report says about one scenario in one configuration. */
function summarize(id, states) {
  const key = keys[id];
  const beats = states.filter((s) => s.kind === 'beat');
  const atBeats = beats.filter((s) => s.beat > 0);
  const keyState = atBeats.find((s) => s.step >= key.seq) || atBeats.at(-1) || beats.at(-1) || null;
  const mins = (f) => { const xs = states.map(f).filter((x) => x !== null && x !== undefined); return xs.length ? Math.min(...xs) : null; };
  let moved = 0;
  for (let i = 1; i < beats.length; i++) {
    const [a, b] = [beats[i - 1].next, beats[i].next];
    if (a && b) moved = Math.max(moved, Math.hypot(b[0] - a[0], b[1] - a[1]));
  }
  const asked = beats.filter((s) => s.question);
  const answered = states.filter((s) => s.kind === 'answer' || (s.why && s.kind === 'beat'));
  const worst = states.reduce((a, s) => (s.smallest && (!a || s.smallest.px < a.smallest.px) ? s : a), null);
  return {
    key: keyState && {
      where: describe(keyState), min: keyState.min, median: keyState.median, focus: keyState.focus,
      smallest: keyState.smallest, focusCards: keyState.focusCards,
    },
    walk: {
      states: states.length,
      beats: atBeats.length,
      of: beats.find((s) => s.of)?.of ?? 0,
      min: mins((s) => s.min),
      smallest: worst && { ...worst.smallest, where: describe(worst) },
      focus: mins((s) => s.focus),
      cellTerm: mins((s) => s.cellTerm),
      overlapStates: states.filter((s) => s.overlaps.length).length,
      overlaps: [...new Set(states.flatMap((s) => s.overlaps.map((o) => `${describe(s)}: “${o.label}” over ${o.with} (${o.by.join('×')} px)`)))].slice(0, 10),
      transportOn: beats.filter((s) => s.transport).length,
      transportOf: beats.filter((s) => s.transport !== null).length,
      nextMoved: Math.round(moved * 10) / 10,
      questions: asked.length,
      answersShown: asked.filter((s) => s.answers.length && s.answers.every((a) => a.ok)).length,
      reasonsShown: answered.filter((s) => s.why?.ok).length,
      reasonsOf: answered.length,
    },
    states,
  };
}

/** The side-by-side view in presenter mode, walked with `n`: its two pictures' text, and
 *  whether both are wholly on screen. */
async function walkCompare(width, height) {
  const cfg = { key: `compare-${width}`, label: `side by side ${width}×${height}`, width, height, route: 'compare', present: true };
  const page = await browser.newPage({ viewport: { width, height } });
  page.setDefaultTimeout(20_000);
  page.on('pageerror', (e) => problems.push(`${cfg.key}: page error: ${e.message}`));
  await settle(page);
  const states = [];
  try {
    await load(page, origin, `#/compare/${COMPARE.join('/')}?present=1`);
    await walkBeats(page, cfg, async (p) => {
      const m = await measure(page, cfg);
      states.push({ where: describe(p), ...stats(m.texts.map((t) => t.px)), figures: m.figures });
    }, { maxPresses: 40 });
  } catch (e) {
    problems.push(`${cfg.key}: ${e.message.split('\n')[0]}`);
  }
  await page.close();
  const mins = states.map((s) => s.min).filter((x) => x !== null);
  return {
    label: cfg.label,
    start: states[0] && { min: states[0].min, median: states[0].median, figures: states[0].figures.map((f) => f.box) },
    min: mins.length ? Math.min(...mins) : null,
    whole: states.filter((s) => s.figures.length === 2 && s.figures.every((f) => f.ok)).length,
    states: states.length,
  };
}
const COMPARE = ['redis-failover', 'consensus-lock'];

const results = {};
let compare = [];
await Promise.all([
  ...configs.map(async (cfg) => { results[cfg.key] = await walkConfig(cfg); }),
  (async () => { if (!opt('scenarios')) compare = [await walkCompare(853, 480), await walkCompare(1280, 720)]; })(),
]);
const chromium = browser.version();
await browser.close();
server.close();

const report = {
  date: new Date().toISOString().slice(0, 10),
  machine: `${os.cpus().length}-core, headless Chromium ${chromium}`,
  dist: path.resolve(dist),
  loader,
  built,
  build,
  seconds: Math.round((Date.now() - started) / 1000),
  configs: configs.map((c) => ({ key: c.key, label: c.label })),
  scenarios: ids.map((id) => ({ id, keyBeat: keys[id], configs: Object.fromEntries(configs.map((c) => [c.key, results[c.key][id]])) })),
  compare,
  problems,
};

if (typeof json === 'string') fs.writeFileSync(json, JSON.stringify(report, null, 1));
if (json === true) {
  process.stdout.write(`${JSON.stringify(report, null, 1)}\n`);
} else {
  process.stdout.write(markdown(report));
}
if (problems.length) console.error(`${problems.length} problems:\n${problems.slice(0, 20).join('\n')}`);

function markdown(r) {
  const f = (x) => (x === null || x === undefined ? '—' : x.toFixed(1));
  const head = (first) => `| ${first.join(' | ')} | ${r.configs.map((c) => c.label).join(' | ')} |\n|${'---|'.repeat(first.length + r.configs.length)}\n`;
  const rows = (cell, first = (s) => [s.id]) => r.scenarios.map((s) => `| ${first(s).join(' | ')} | ${r.configs.map((c) => (s.configs[c.key] ? cell(s.configs[c.key], s) : '—')).join(' | ')} |\n`).join('');
  const overall = (pick) => r.configs.map((c) => {
    const xs = r.scenarios.map((s) => pick(s.configs[c.key])).filter((x) => x !== null && x !== undefined);
    return xs.length ? f(Math.min(...xs)) : '—';
  });
  const keyName = (s) => (s.keyBeat.index ? `${s.keyBeat.index} of ${s.keyBeat.of} (step ${s.keyBeat.seq})` : '—');
  let md = `# Picture report: rendered text sizes, beat by beat\n\n`;
  md += `- Date: ${r.date}\n- Machine: ${r.machine}\n`;
  md += `- Build: ${r.build ? `${r.build}; ` : ''}\`${r.dist}\` (${r.loader}, written ${r.built})\n`;
  md += `- Made by \`node scripts/picture-report.mjs ${path.basename(r.dist)}\` in ${r.seconds} s; ${r.scenarios.length} scenarios, each walked from before its first beat through its last with \`n\` (an embed: its next-beat button).\n\n`;
  md += `Rendered size = font size × the SVG's screen scale, in CSS px, of every drawn \`<text>\` in the picture (the cards and the messages layer) inside the viewport (phone: inside the page). `;
  md += `The key beat is the beat at or just after the run's first property violation, else the last beat. `;
  md += `Limits (GUIDE §9, issue 27): presenter 853×480 focus ≥ 18 and all ≥ 12; presenter 1280×720 focus ≥ 24; embed 400×300 all ≥ 11.\n\n`;
  md += `## Picture text at the key beat: min / median px (smallest anywhere in the walk)\n\n`;
  md += head(['scenario', 'key beat']);
  md += rows((c) => (c.key ? `${f(c.key.min)} / ${f(c.key.median)} (${f(c.walk.min)})` : '—'), (s) => [s.id, keyName(s)]);
  md += `| **all scenarios** (smallest) | | ${overall((c) => c?.walk.min).join(' | ')} |\n\n`;
  md += `## Focus texts (names, state words, badges of the beat's focus cards): min px at the key beat (smallest in the walk)\n\n`;
  md += `“—”: no card in focus (the renderer before issue 27 marks none).\n\n`;
  md += head(['scenario']);
  md += rows((c) => (c.walk.focus === null ? '—' : `${f(c.key?.focus)} (${f(c.walk.focus)})`));
  md += `| **all scenarios** (smallest) | ${overall((c) => c?.walk.focus).join(' | ')} |\n\n`;
  md += `## The smallest text in each walk\n\n`;
  md += head(['scenario']);
  md += rows((c) => (c.walk.smallest ? `${f(c.walk.smallest.px)} “${c.walk.smallest.text.replace(/\|/g, '\\|')}” (${c.walk.smallest.cls || 'text'})` : '—'));
  md += `\n## Controls: beats with the transport wholly on screen · how far the next-beat button moves between beats (max px)\n\n`;
  md += `The transport is \`.controls .transport\` in the player, \`.embed-bar\` in an embed; a phone's page scrolls, so its transport is rarely on the first screen.\n\n`;
  md += head(['scenario']);
  md += rows((c) => `${c.walk.transportOn}/${c.walk.transportOf} · ${c.walk.nextMoved} px`);
  md += `\n## Labels drawn over a card or another label: walked states with one\n\n`;
  md += head(['scenario']);
  md += rows((c) => `${c.walk.overlapStates}/${c.walk.states}`);
  const examples = r.scenarios.flatMap((s) => r.configs.flatMap((c) => (s.configs[c.key]?.walk.overlaps || []).slice(0, 2).map((o) => `- ${s.id}, ${c.label}, ${o}`)));
  if (examples.length) md += `\nFor example:\n${examples.slice(0, 12).join('\n')}\n`;
  const presenting = r.configs.filter((c) => CONFIGS[c.key].present);
  if (presenting.length) {
    md += `\n## Questions in presenter mode: all answers wholly visible · the revealed reason wholly visible\n\n`;
    md += `Wholly visible: inside the screen and not cut by a scroll box. Scenarios without a question are left out.\n\n`;
    md += `| scenario | ${presenting.map((c) => c.label).join(' | ')} |\n|${'---|'.repeat(presenting.length + 1)}\n`;
    for (const s of r.scenarios) {
      if (!presenting.some((c) => s.configs[c.key]?.walk.questions)) continue;
      md += `| ${s.id} | ${presenting.map((c) => { const w = s.configs[c.key].walk; return `answers ${w.answersShown}/${w.questions} · reason ${w.reasonsShown}/${w.reasonsOf}`; }).join(' | ')} |\n`;
    }
  }
  const withCells = r.scenarios.filter((s) => r.configs.some((c) => s.configs[c.key]?.walk.cellTerm !== null));
  if (withCells.length) {
    md += `\n## Raft log-cell terms (\`text.cell-term\`): smallest px in the walk\n\n`;
    md += head(['scenario']);
    for (const s of withCells) md += `| ${s.id} | ${r.configs.map((c) => f(s.configs[c.key]?.walk.cellTerm)).join(' | ')} |\n`;
  }
  if (r.compare.length) {
    md += `\n## The side-by-side view (\`#/compare/${COMPARE.join('/')}?present=1\`), walked with \`n\`\n\n`;
    md += `| screen | text at the start: min / median px | smallest in the walk | both pictures wholly on screen | pictures at the start (left, top, right, bottom) |\n|---|---|---|---|---|\n`;
    for (const c of r.compare) {
      md += `| ${c.label} | ${c.start ? `${f(c.start.min)} / ${f(c.start.median)}` : '—'} | ${f(c.min)} | ${c.whole}/${c.states} states | ${c.start ? c.start.figures.map((b) => b.map(Math.round).join(', ')).join('; ') : '—'} |\n`;
    }
    md += `\nText counts only inside the screen: a picture below it adds nothing to the sizes.\n`;
  }
  if (r.problems.length) md += `\n## Problems while measuring\n\n${r.problems.slice(0, 30).map((p) => `- ${p}`).join('\n')}\n`;
  return md;
}
