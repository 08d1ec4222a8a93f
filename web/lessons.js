// Lessons in the player (docs/trainer.md, "Lessons"). web/loader.js imports this after the
// app starts, so no player bundle's first download carries it. Two jobs:
//  - walking a lesson: #/lesson (web/src/components/lesson_page.rs) checks the file and keeps
//    it in sessionStorage; here n / PageDown at the end of a stop's range opens the next stop
//    (another chapter's bundle reloads the page: the stop index survives in sessionStorage),
//    p / PageUp at its start the previous one, and the stop's caption and question show
//    beside the picture;
//  - writing one: "Add this view to a lesson" keeps the player's permalink (localStorage) and
//    "Export" downloads the lesson file those views make.
const LESSON = 'coordlab-lesson';
const AT = 'coordlab-lesson-at';
const ENTER = 'coordlab-lesson-enter';
const DRAFT = 'coordlab-lesson-draft';
// The learner's progress, read by the library (web/src/progress.rs: the same shape).
const PROGRESS = 'coordlab.progress.v1';

const style = document.createElement('link');
style.rel = 'stylesheet';
style.href = new URL('lessons.css', import.meta.url).href;
document.head.append(style);

function el(tag, props = {}, ...children) {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children);
  return e;
}

/** The scenario a player address names, or null off the player. */
function scenarioOf(hash) {
  const m = /^#*\/*play\/([^?]*)/.exec(hash);
  try {
    return m ? decodeURIComponent(m[1].replace(/\/+$/, '')) : null;
  } catch {
    return null;
  }
}
const query = (hash) => new URLSearchParams(hash.split('?')[1] || '');
const stepOf = (hash) => Number(query(hash).get('step') || 0);

/** The lesson and stop being walked, if the player shows that stop's scenario. */
function current() {
  let lesson;
  try {
    lesson = JSON.parse(sessionStorage.getItem(LESSON));
  } catch {
    return null;
  }
  const at = Number(sessionStorage.getItem(AT));
  const stop = lesson && lesson.stops && lesson.stops[at];
  return stop && scenarioOf(location.hash) === stop.scenario ? { lesson, at, stop } : null;
}

/** The steps where the run's beats fall, from the timeline's ticks ("Beat 2: … (step 31)"). */
const beatSteps = () =>
  [...document.querySelectorAll('.timeline .tick')].map((b) => Number((/\(step (\d+)\)$/.exec(b.title) || [])[1]));
const lastStep = () => Number((document.getElementById('timeline') || {}).max || 0);

function range(stop) {
  const last = lastStep();
  if (stop.kind === 'steps') return { start: stop.from, end: stop.to ?? last };
  const beats = beatSteps();
  return { start: beats[stop.from - 1] ?? 0, end: stop.to ? beats[stop.to - 1] ?? last : last };
}

/** Updates one scenario's progress (`change` edits its record); a refusing storage or a
 *  record of another shape leaves the page working, only unremembered. */
function remember(id, change) {
  try {
    let all = JSON.parse(localStorage.getItem(PROGRESS));
    if (!all || all.version !== 1 || typeof all.scenarios !== 'object') all = { version: 1, scenarios: {} };
    const mine = all.scenarios[id] || { beats: 0, seen: 0, answered: false };
    change(mine);
    all.scenarios[id] = mine;
    localStorage.setItem(PROGRESS, JSON.stringify(all));
  } catch {
    // Private mode or a full quota: nothing to do.
  }
}

/** The beat the player shows, from its transport (" · beat 2/5") or its story ("Beat 2 of
 *  5"): marks it seen. */
function rememberBeat() {
  const id = scenarioOf(location.hash);
  const shown = document.querySelector('.beat-count') || document.querySelector('.story .beat-no');
  const m = /beat (\d+)(?:\/| of )(\d+)/i.exec((shown || {}).textContent || '');
  if (!id || !m || Number(m[1]) < 1 || Number(m[2]) > 52) return;
  const beat = Number(m[1]) - 1;
  remember(id, (p) => {
    p.beats = Number(m[2]);
    // Bits as a sum, not |: a bit set past 31 must stay a whole number below 2^53.
    if (Math.floor(p.seen / 2 ** beat) % 2 === 0) p.seen += 2 ** beat;
  });
}

function go(lesson, at) {
  sessionStorage.setItem(AT, String(at));
  sessionStorage.setItem(ENTER, '1');
  location.hash = lesson.stops[at].hash;
}

const typing = (t) => t.matches && t.matches('textarea, select, input:not([type=range]):not([type=button]):not([type=checkbox]):not([type=radio])');

addEventListener(
  'keydown',
  (e) => {
    const forward = e.key === 'n' || e.key === 'PageDown';
    const back = e.key === 'p' || e.key === 'PageUp';
    if ((!forward && !back) || e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
    const c = current();
    if (!c) return;
    const { start, end } = range(c.stop);
    const step = stepOf(location.hash);
    const to = forward && step >= end ? c.at + 1 : back && step <= start ? c.at - 1 : -1;
    if (to < 0 || to >= c.lesson.stops.length) return;
    // The player must not also move: this key press is the lesson's.
    e.preventDefault();
    e.stopImmediatePropagation();
    go(c.lesson, to);
  },
  true,
);

/** On arriving at a stop with a beat range: move to its first beat once the player is drawn. */
function enter(c, tries = 0) {
  if (sessionStorage.getItem(ENTER) !== '1') return;
  if (c.stop.kind !== 'beats') return sessionStorage.removeItem(ENTER);
  const tick = document.querySelectorAll('.timeline .tick')[c.stop.from - 1];
  if (tick) {
    sessionStorage.removeItem(ENTER);
    tick.click();
  } else if (tries < 50) {
    setTimeout(() => enter(c, tries + 1), 100);
  } else {
    sessionStorage.removeItem(ENTER);
  }
}

/** A caption's text, with each `[words](#/…)` made a link to that view of the site (only
 *  the site's own addresses: a lesson file cannot send the room elsewhere). */
function linked(text) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(/\[([^\]]+)\]\((#\/[^)\s]*)\)/g)) {
    out.push(text.slice(last, m.index), el('a', { href: m[2] }, m[1]));
    last = m.index + m[0].length;
  }
  out.push(text.slice(last));
  return out;
}

function panel(c) {
  const { lesson, at, stop } = c;
  const aside = el('aside', { className: 'lesson-panel' });
  aside.setAttribute('aria-label', 'Lesson');
  aside.append(el('p', { className: 'lesson-where' }, `${lesson.title} · stop ${at + 1} of ${lesson.stops.length}`));
  if (stop.caption) aside.append(el('p', { className: 'lesson-caption' }, ...linked(stop.caption)));
  const q = stop.question;
  if (q) {
    const why = el('p', { className: 'why', hidden: true }, q.explanation || '');
    const answers = q.answers.map((text, i) => {
      const b = el('button', { className: 'answer', type: 'button' }, text);
      b.addEventListener('click', () => {
        remember(stop.scenario, (p) => (p.answered = true));
        answers.forEach((a, k) => {
          a.disabled = true;
          if (q.correct.includes(k)) a.classList.add('right'), a.append(' ✓');
          else if (k === i) a.classList.add('wrong'), a.append(' ✗');
        });
        why.hidden = !q.explanation;
      });
      return b;
    });
    const group = el('div', { className: 'question lesson-question' }, el('p', { className: 'prompt' }, q.prompt), el('div', { className: 'answers' }, ...answers), why);
    group.setAttribute('role', 'group');
    group.setAttribute('aria-label', 'Lesson question');
    aside.append(group);
  }
  const nav = el('nav', { className: 'lesson-nav' });
  nav.setAttribute('aria-label', 'Lesson stops');
  if (at > 0) {
    const back = el('button', { className: 'lesson-previous', type: 'button' }, '← Previous stop');
    back.addEventListener('click', () => go(lesson, at - 1));
    nav.append(back, ' ');
  }
  if (at + 1 < lesson.stops.length) {
    const next = el('button', { className: 'lesson-next', type: 'button' }, 'Next stop →');
    next.addEventListener('click', () => go(lesson, at + 1));
    nav.append(next);
  } else {
    nav.append(el('a', { className: 'lesson-done', href: '#/' }, 'The last stop: back to the library'));
  }
  aside.append(nav);
  const hint = at + 1 < lesson.stops.length ? 'Or n at the end of this stop. ' : '';
  const leave = el('button', { className: 'lesson-leave', type: 'button' }, 'Leave the lesson');
  leave.addEventListener('click', () => {
    sessionStorage.removeItem(LESSON);
    show();
  });
  aside.append(el('p', { className: 'lesson-keys' }, hint, leave));
  return aside;
}

function download(name, text) {
  const a = el('a', { href: URL.createObjectURL(new Blob([text], { type: 'application/json' })), download: name });
  document.body.append(a);
  a.click();
  a.remove();
}

/** A player permalink as a lesson stop (docs/trainer.md): what the lesson page reads back. */
function stopOf(hash) {
  const stop = { scenario: scenarioOf(hash) };
  const params = {};
  for (const [key, value] of query(hash)) {
    // A seed is a 64-bit number: written as typed, not through a double.
    if (key === 'seed') stop.seed = `@seed:${value}@`;
    else if (key === 'actions') stop.faults = value;
    else if (key === 'step') stop.steps = [Number(value)];
    else if (!['present', 'all', 'view', 'axis'].includes(key)) params[key] = value;
  }
  if (Object.keys(params).length) stop.params = params;
  return stop;
}

function draft() {
  try {
    return JSON.parse(localStorage.getItem(DRAFT)) || [];
  } catch {
    return [];
  }
}

function tools() {
  const box = el('section', { className: 'lesson-tools' });
  box.setAttribute('aria-label', 'Write a lesson');
  const status = el('span', { className: 'lesson-status' });
  status.setAttribute('role', 'status');
  const add = el('button', { type: 'button' }, 'Add this view to a lesson');
  const save = el('button', { type: 'button' }, 'Export the lesson');
  const clear = el('button', { type: 'button' }, 'Start a new lesson');
  const say = () => {
    const n = draft().length;
    save.disabled = clear.disabled = n === 0;
    status.textContent = n ? `Your lesson has ${n} stop${n > 1 ? 's' : ''}.` : '';
  };
  add.addEventListener('click', () => {
    localStorage.setItem(DRAFT, JSON.stringify([...draft(), location.hash]));
    say();
  });
  save.addEventListener('click', () => {
    const lesson = { coordlab_lesson: 1, title: 'A coordlab lesson', stops: draft().map(stopOf) };
    download('coordlab-lesson.json', JSON.stringify(lesson, null, 2).replace(/"@seed:(\d+)@"/g, '$1') + '\n');
  });
  clear.addEventListener('click', () => {
    localStorage.removeItem(DRAFT);
    say();
  });
  box.append(add, ' ', save, ' ', clear, ' ', status);
  say();
  return box;
}

// The course (lessons/course.json, the library's Start here) on a scenario opened outside
// it: where the run sits in the course, what it teaches, and the runs before and after it.
// Fetched only on a player page with no lesson walked, once.
let course = null;
function courseStops() {
  course ??= fetch(new URL('lessons/course.json', import.meta.url))
    .then((r) => (r.ok ? r.json() : null))
    .then((c) => (c && Array.isArray(c.stops) ? c.stops : []))
    .catch(() => []);
  return course;
}

/** The lines of a course caption from `heading` to the next line that ends with a colon. */
function bullets(caption, heading) {
  const lines = caption.split('\n');
  const from = lines.indexOf(heading);
  if (from < 0) return [];
  const out = [];
  for (const line of lines.slice(from + 1)) {
    if (!line.startsWith('• ')) break;
    out.push(line.slice(2));
  }
  return out;
}

function courseHere(stops, i) {
  const stop = stops[i];
  const box = el('aside', { className: 'course-here' });
  box.setAttribute('aria-label', 'In the course');
  const chapter = (/^Chapter \d+: [^\n]*?\.?$/m.exec(stop.caption || '') || [''])[0].replace(/\.$/, '');
  box.append(el('p', { className: 'course-where' }, `In the course: run ${i + 1} of ${stops.length}${chapter ? ` · ${chapter}` : ''}`));
  const teaches = bullets(stop.caption || '', 'What this run teaches:');
  if (teaches.length) {
    box.append(el('p', {}, 'What this run teaches:'), el('ul', {}, ...teaches.map((t) => el('li', {}, t))));
  }
  const nav = el('nav', { className: 'lesson-nav' });
  nav.setAttribute('aria-label', 'The course');
  // Through the lesson page, which opens the stop as the course sets it and walks on from it,
  // as Start here does.
  const at = (k) => `#/lesson?src=lessons/course.json&present=1&at=${k + 1}`;
  if (i > 0) nav.append(el('a', { className: 'course-previous', href: at(i - 1) }, `← Previous: ${stops[i - 1].scenario}`), ' ');
  if (i + 1 < stops.length) nav.append(el('a', { className: 'course-next', href: at(i + 1) }, `Next in the course: ${stops[i + 1].scenario} →`));
  box.append(nav);
  return box;
}

let courseShown = null;
async function showCourse(c) {
  const id = c ? null : scenarioOf(location.hash);
  if (id === courseShown) return;
  courseShown = id;
  document.querySelector('.course-here')?.remove();
  if (!id) return;
  const stops = await courseStops();
  const i = stops.findIndex((s) => s.scenario === id);
  // The page may have moved on while the course loaded.
  if (i < 0 || courseShown !== id || document.querySelector('.course-here')) return;
  // Above the trainer's tools: the learner's part first.
  const tools = document.querySelector('.lesson-tools');
  if (tools) tools.before(courseHere(stops, i));
  else document.body.append(courseHere(stops, i));
}

let shownKey = null;
let toolBox = null;
function show() {
  const c = current();
  showCourse(c);
  const key = c ? `${c.at}:${sessionStorage.getItem(LESSON).length}` : null;
  const old = document.querySelector('.lesson-panel');
  if (key !== shownKey || (key && !old)) {
    if (old) old.remove();
    if (c) document.body.append(panel(c));
    shownKey = key;
  }
  if (c) enter(c);
  const onPlayer = scenarioOf(location.hash) !== null;
  if (onPlayer && !toolBox) document.body.append((toolBox = tools()));
  if (!onPlayer && toolBox) toolBox.remove(), (toolBox = null);
}

addEventListener('hashchange', show);
show();
// Stepping and playing redraw the transport's " · beat i/n" without a hashchange: watch the
// page, at most once a frame, and remember a beat only when it is new.
let lastBeat = '';
let queued = false;
new MutationObserver(() => {
  if (queued) return;
  queued = true;
  requestAnimationFrame(() => {
    queued = false;
    const key = `${location.hash.split('?')[0]} ${(document.querySelector('.beat-count') || {}).textContent}`;
    if (key !== lastBeat) (lastBeat = key), rememberBeat();
  });
}).observe(document.body, { childList: true, subtree: true, characterData: true });
