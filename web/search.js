// "Find a failure" in the player (docs/learner.md). web/loader.js imports this after the app
// starts, so no player bundle's first download carries it. The bounded search (what
// `coordlab search` runs) runs in a Web Worker that loads the chapter's embed bundle
// (web/src/search_worker.rs): the page only sends the run's address and shows text, part by
// part (about a tenth of a second each), so it never waits. Two jobs:
//  - the control, in the Faults tab: fault kinds, at most 1 or 2 faults, progress, Cancel
//    (which ends the worker), then the bounded claims in the command line's words or a witness;
//  - a witness is loaded as the run: its permalink (the player's link with its fault script,
//    plus `why=`, the chain's steps) goes in the address bar; this script keeps `why=` there
//    while the run is the witness's (the player rewrites the link at every step and knows
//    nothing of it: the player's download has no room), marks those steps in both pictures,
//    and writes the chain's words ("Why it broke") under the property strip.

const style = document.createElement('link');
style.rel = 'stylesheet';
style.href = new URL('search.css', import.meta.url).href;
document.head.append(style);

const el = (tag, props = {}, ...children) => {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children);
  return e;
};
const grouped = (n) => n.toLocaleString('en-US');
const query = (hash) => new URLSearchParams(hash.split('?')[1] || '');
const onPlayer = () => /^#*\/*play\//.test(location.hash);

// --- The worker: one at a time, ended to cancel. It loads the chapter's embed bundle, which
// has the search (the player's has no room for it). `cargo xtask dist` fills in the bundle
// table (as web/loader.js's). ---
const BUNDLES = /*@BUNDLES@*/ {};
function newWorker() {
  const files = BUNDLES[`${document.documentElement.dataset.coordlab}-embed`];
  if (!files) throw new Error('This build of coordlab has no embed bundle to search in.');
  // The worker's own name as a plain string: the release build renames it to its hashed copy.
  const script = new URL('search-worker.js', import.meta.url);
  script.search = new URLSearchParams(files);
  return new Worker(script, { type: 'module' });
}
let worker = null;
let pending = null;
/** Asks the worker for `call(...args)`; resolves with its text. */
function ask(...message) {
  if (!worker) {
    worker = newWorker();
    worker.onmessage = ({ data }) => pending && pending.resolve(data);
    worker.onerror = () => pending && pending.reject(new Error("The search's worker failed to start."));
  }
  return new Promise((resolve, reject) => {
    pending = { resolve, reject };
    worker.postMessage(message);
  });
}
function endWorker() {
  if (worker) worker.terminate();
  worker = null;
  if (pending) pending.reject(new Error('cancelled'));
  pending = null;
}

// --- The control. ---
const status = el('div', { className: 'search-status' });
status.setAttribute('role', 'status');
status.setAttribute('aria-live', 'polite');
const go = el('button', { className: 'search-go', type: 'button' }, 'Find a failure');
const kind = (code, label) => {
  const box = el('input', { type: 'checkbox', checked: true, value: code });
  return [box, el('label', {}, box, ` ${label}`)];
};
const [pauses, pausesLabel] = kind('pause', 'Pauses');
const [crashes, crashesLabel] = kind('crash', 'Crashes');
const count = (k) => {
  const radio = el('input', { type: 'radio', name: 'search-faults', value: String(k), checked: k === 1 });
  return [radio, el('label', {}, radio, ` ${k} fault${k > 1 ? 's' : ''}`)];
};
const [one, oneLabel] = count(1);
const [two, twoLabel] = count(2);
const kinds = el('fieldset', {}, el('legend', {}, 'Faults'), pausesLabel, crashesLabel);
const most = el('fieldset', {}, el('legend', {}, 'At most'), oneLabel, twoLabel);
// The player's arrow keys step the run wherever the focus is; in the radio group they are
// the group's.
most.addEventListener('keydown', (e) => e.key.startsWith('Arrow') && e.stopPropagation());
const box = el(
  'section',
  { className: 'search' },
  el('h2', { id: 'search-title' }, 'Find a failure'),
  el(
    'p',
    { className: 'hint' },
    "Tries every schedule of these faults — on any participant, at any step, for pauses around the scenario's timeouts — on this run's parameters, fewest faults first. Your own faults are left out.",
  ),
  el('div', { className: 'search-choices' }, kinds, most, go),
  status,
);
box.setAttribute('aria-labelledby', 'search-title');

let running = false;
let reopen = false;
const say = (...children) => status.replaceChildren(...children);
const checked = (done, total) => (total ? `${grouped(done)} of ${grouped(total)} schedules checked` : 'Starting the search…');
function setRunning(on) {
  running = on;
  kinds.disabled = most.disabled = on;
  go.textContent = on ? 'Cancel' : 'Find a failure';
  choose();
}
function choose() {
  go.disabled = !running && !pauses.checked && !crashes.checked;
}
pauses.addEventListener('change', choose);
crashes.addEventListener('change', choose);

let done = 0;
let total = 0;
go.addEventListener('click', () => (running ? cancel() : search()));

function cancel() {
  endWorker();
  setRunning(false);
  say(el('p', {}, `Cancelled: ${checked(done, total)}.`));
}

/** A fault in words with its long durations in seconds: `freezes for 26519 ms` reads as
 *  `freezes for 26.5 s` (a trainer reads it aloud). */
function inSeconds(faults) {
  return faults.replace(/\b(\d{4,}) ms\b/g, (_, ms) => `${Number((ms / 1000).toFixed(1))} s`);
}

async function search() {
  const chosen = [pauses, crashes].filter((b) => b.checked).map((b) => b.value);
  (done = 0), (total = 0);
  setRunning(true);
  say(el('progress', { max: 1, value: 0 }), el('p', {}, checked(0, 0)));
  try {
    const first = await ask('search_start', location.hash, two.checked ? 2 : 1, chosen.join(','));
    let message = first;
    for (;;) {
      // A failure to start comes back as a reply, not a message.
      const reply = /^(found|clean|failed|progress)\b/.test(message) ? message : await ask('search_part', message);
      const [head, ...lines] = reply.split('\n');
      const words = head.split(' ');
      if (words[0] === 'progress') {
        (done = Number(words[1])), (total = Number(words[2]));
        const bar = el('progress', { max: total, value: done });
        bar.setAttribute('aria-hidden', 'true');
        say(bar, el('p', {}, checked(done, total)));
        message = first.replace(/^\d+/, String(done));
        continue;
      }
      setRunning(false);
      if (words[0] === 'found') {
        const [step, property] = words.slice(1);
        const [link, faults, ...chain] = lines;
        remember(link, [property, ...chain].join('\n'));
        witness = witnessOf(link);
        say(
          el(
            'p',
            { className: 'search-found' },
            el('strong', {}, '✗ Found: '),
            `${property} breaks at step ${step} when ${inSeconds(faults)}. That run is now on screen.`,
          ),
        );
        // A new run opens on the Beats tab: back to this one once the player shows the witness.
        reopen = true;
        location.hash = link;
      } else if (words[0] === 'clean') {
        say(el('ul', { className: 'search-claims' }, ...lines.map((c) => el('li', {}, c))));
      } else {
        say(el('p', { className: 'field-error' }, lines.join(' ') || head));
      }
      return;
    }
  } catch (e) {
    if (e.message === 'cancelled') return;
    setRunning(false);
    say(el('p', { className: 'field-error' }, e.message));
  }
}

// --- The witness on screen: its run and its chain's steps (the link's why=). ---
/** What makes a run: the address without the step on screen, the pictures shown and why=. */
function runKey(hash) {
  const q = query(hash);
  for (const k of ['step', 'view', 'axis', 'present', 'all', 'why']) q.delete(k);
  return `${hash.split('?')[0]}?${q}`;
}
/** The witness a link names: its run, and its steps (digits only), or null. */
function witnessOf(hash) {
  const steps = (query(hash).get('why') || '').split('.').filter((s) => /^\d+$/.test(s));
  return steps.length ? { key: runKey(hash), why: steps } : null;
}
let witness = witnessOf(globalThis.coordlabOpened || location.hash);
/** The witness, while the run on screen is its run; once the run changes it is gone. Keeps
 *  why= in the address bar, which the player rewrites without it. */
function current() {
  if (!witness || !onPlayer()) return null;
  if (runKey(location.hash) !== witness.key) return (witness = null);
  if (!query(location.hash).get('why')) history.replaceState(history.state, '', `${location.hash}&why=${witness.why.join('.')}`);
  return witness;
}

// --- "Why it broke": the chain's words, under the property strip. ---
const explained = new Map();
function remember(link, text) {
  explained.set(runKey(link), text);
}
/** The chain for the witness on screen: kept from the search, else asked of the worker (a
 *  permalink opened afresh carries the steps but not the words). */
function explain(w) {
  if (!explained.has(w.key)) {
    explained.set(w.key, null);
    const args = ['search_why', location.hash, Number(w.why[w.why.length - 1])];
    // While a search runs, its worker is busy: a separate one answers.
    const answer = running
      ? new Promise((resolve) => {
          const other = newWorker();
          other.onmessage = ({ data }) => (other.terminate(), resolve(data));
          other.postMessage(args);
        })
      : ask(...args);
    answer.then(
      (text) => (explained.set(w.key, text), refresh()),
      () => explained.delete(w.key),
    );
  }
  return explained.get(w.key);
}

const stepLink = (step) => {
  const q = query(location.hash);
  q.set('step', String(step));
  return `${location.hash.split('?')[0]}?${q}`.replace(/%40/g, '@').replace(/%3A/gi, ':');
};
let whyShown = '';
let whyList = null;
function showWhy(w) {
  const strip = document.querySelector('.story .property-strip');
  const text = w ? explain(w) : null;
  const step = query(location.hash).get('step');
  const key = `${text}\n${step}`;
  if (!text || !strip) {
    if (whyList) whyList.remove(), (whyList = null), (whyShown = '');
    return;
  }
  if (key === whyShown && whyList && whyList.previousElementSibling === strip) return;
  const [property, ...chain] = text.split('\n');
  const items = chain.map((line) => {
    const [seq, ...words] = line.split(' ');
    const li = el('li', {}, el('a', { href: stepLink(seq), className: 'why-step' }, `step ${seq}`), ` ${words.join(' ')}`);
    if (seq === step) li.setAttribute('aria-current', 'step'), li.classList.add('now');
    return li;
  });
  const list = el(
    'details',
    { className: 'why-chain', open: true },
    el('summary', {}, `Why ${property} broke: ${chain.length} steps`),
    el('ol', {}, ...items),
  );
  if (whyList) whyList.remove();
  strip.after(list);
  (whyList = list), (whyShown = key);
}

// --- The chain's steps marked in both pictures: a dashed ring on each of their marks in the
// space-time diagram, and at one of them a dashed frame and a note in the topology. ---
function mark(w) {
  const q = query(location.hash);
  const why = w ? w.why : [];
  for (const m of document.querySelectorAll('.player .st-mark')) {
    if (m.classList.contains('st-chain') !== why.includes(m.dataset.seq)) m.classList.toggle('st-chain');
  }
  const at = why.indexOf(q.get('step') || '0');
  const note = at < 0 ? '' : `Why it broke: step ${at + 1} of ${why.length}`;
  for (const figure of document.querySelectorAll('.player .topology')) {
    let p = figure.querySelector(':scope > .chain-note');
    if (note && !p) {
      p = el('p', { className: 'chain-note' });
      p.setAttribute('role', 'status');
      figure.prepend(p);
    }
    if (p && !note) p.remove();
    if (note && p.textContent !== note) p.textContent = note;
    if (figure.classList.contains('in-chain') !== !!note) figure.classList.toggle('in-chain');
  }
}

// --- Keeping all three in place as the player redraws. ---
function refresh() {
  const w = current();
  mark(w);
  const panel = document.querySelector('.tools .tab-panel');
  const tab = document.querySelector('.tools .tab.selected');
  const faults = onPlayer() && panel && tab && tab.textContent === 'Faults';
  if (reopen && faults && panel.querySelector('.script')) reopen = false;
  if (reopen && tab && !faults) {
    const button = [...document.querySelectorAll('.tools .tab')].find((b) => b.textContent === 'Faults');
    if (button) button.click();
  }
  if (faults && box.parentElement !== panel) panel.prepend(box);
  if (!faults && box.isConnected) box.remove();
  showWhy(w);
}
// At most once a frame, whatever the player redrew.
let frame = 0;
const later = () => (frame = 0, refresh());
new MutationObserver(() => (frame ||= requestAnimationFrame(later))).observe(document.body, { childList: true, subtree: true });
addEventListener('hashchange', () => {
  // A link to a witness (another one, or pasted): its steps are the ones to keep.
  witness = witnessOf(location.hash) || witness;
  // Another scenario: a search of the last one no longer fits.
  if (running && !onPlayer()) cancel();
  refresh();
});
refresh();
