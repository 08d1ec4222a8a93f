// The library's first picture, live: beside "Start here", the course's first run playing in
// an embed (docs/embedding.md), over and over. web/loader.js imports this after the library
// has drawn; the embed then loads its own chapter's bundle, so the library's first download
// stays the same. Until the embed has drawn, and for readers who prefer reduced motion or ask
// to save data, the picture is web/start.svg (recorded from the same run).
const FIRST_RUN = '#/embed/lost-update?controls=none&autoplay=1';
// How long the last step stays on screen before the run plays again.
const REST_MS = 4000;

// A phone's column is narrower than the smallest frame an embed is drawn for (400×300):
// there the poster stays, and the embed is not loaded at all (start.css keeps the poster too
// if a wider window is narrowed).
const still =
  matchMedia('(prefers-reduced-motion: reduce), (max-width: 480px)').matches ||
  (navigator.connection && navigator.connection.saveData);

/** Puts the embed beside the poster of a start section that has none yet. */
function liven(poster) {
  const start = poster.closest('.start');
  if (!start || start.querySelector('.start-live')) return;
  const frame = Object.assign(document.createElement('iframe'), {
    src: new URL(FIRST_RUN, location.href.split('#')[0]).href,
    title: 'The first run of the course, playing: two workers read the same balance and one debit is lost',
    className: 'start-live',
    loading: 'eager',
  });
  // Keyboard users reach the course by its link; the picture is not a stop on the way.
  frame.tabIndex = -1;
  let steps = 0;
  let rest = 0;
  addEventListener('message', function heard(event) {
    if (!frame.isConnected) return removeEventListener('message', heard);
    if (event.source !== frame.contentWindow || !event.data || event.data.coordlab !== 1) return;
    const { type, step, playing } = event.data;
    if (type === 'ready') {
      steps = event.data.steps;
      frame.dataset.steps = steps;
      // The poster gives way only once the run is drawn: never an empty frame.
      start.classList.add('live');
    }
    // At the last step, a rest, then the run again from the start.
    if (type === 'step' && !playing && steps && step === steps - 1 && !rest) {
      rest = setTimeout(() => {
        rest = 0;
        const to = frame.contentWindow;
        if (!to) return;
        to.postMessage({ coordlab: 1, type: 'seek', step: 0 }, location.origin);
        to.postMessage({ coordlab: 1, type: 'play' }, location.origin);
      }, REST_MS);
    }
  });
  poster.after(frame);
}

function look() {
  const poster = document.querySelector('.start-picture');
  if (poster) liven(poster);
}

if (!still) {
  const style = document.createElement('link');
  style.rel = 'stylesheet';
  style.href = new URL('start.css', import.meta.url).href;
  document.head.append(style);
  // The library redraws its start section when the reader comes back to it (#/glossary and
  // back): the embed goes with it and comes again.
  new MutationObserver(look).observe(document.body, { childList: true, subtree: true });
  // After the library's own work, so the picture never delays the page it decorates.
  (window.requestIdleCallback || setTimeout)(look);
}
