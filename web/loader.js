// Starts coordlab: picks the WebAssembly bundle that holds the scenario the URL names and
// runs it. Each bundle is the whole player with one chapter's simulations, so a visitor
// downloads only the chapter they open. Every path is relative to this file, so the site works
// from any sub-path. `cargo xtask dist` (xtask/src/dist.rs) fills in the tables below.
const BUNDLES = /*@BUNDLES@*/ {};
const SCENARIOS = /*@SCENARIOS@*/ {};
const ROUTES = /*@ROUTES@*/ {};
const HOME = /*@HOME@*/ '';
const EMBED_STYLE = /*@EMBED_STYLE@*/ '';

/** The parts of a location hash's path: `#//play/x/?seed=1` → ['play', 'x']. */
const pathOf = (hash) => hash.replace(/^#+/, '').split('?')[0].replace(/^\/+|\/+$/g, '').split('/');

/** The bundle a location hash needs: the route's own (the side-by-side view), else the one
 *  that holds the scenario it names, else the home bundle. It reads the hash as the app's router
 *  does (web/src/route.rs), or the app would start in a bundle without the page it parsed: the
 *  slashes around the path do not count, `#/trace` takes nothing after it, and a scenario id is
 *  all that follows `play/` or `embed/`. */
function bundleFor(hash) {
  const [route, ...rest] = pathOf(hash);
  if (ROUTES[route] && (rest.length === 0 || route === 'compare' || route === 'experiment')) return ROUTES[route];
  let id = '';
  try {
    if (['play', 'embed'].includes(route)) id = decodeURIComponent(rest.join('/'));
  } catch {
    // A malformed escape (`%ZZ`) names no scenario: the home bundle says so.
  }
  const bundle = SCENARIOS[id] || HOME;
  // An embed loads its chapter's embed bundle: the simulations without the player around them.
  // A release build's table gives a chapter's bundle as a bare hash, which its embed bundle
  // shares (filesOf); trunk's one bundle, and the home bundle, have none.
  return route === 'embed' && typeof BUNDLES[bundle] === 'string' ? bundle + '-embed' : bundle;
}

/** Adds the stylesheet at `path` (relative to this file) after the site's own. */
function addStyle(path) {
  const style = document.createElement('link');
  style.rel = 'stylesheet';
  style.href = new URL(path, import.meta.url).href;
  document.head.append(style);
}

// An embed is drawn without the site around it and in its theme from the first paint, before
// the WebAssembly arrives (the player sets the same when it starts).
if (pathOf(location.hash)[0] === 'embed') {
  const theme = /[?&]theme=(light|dark)(&|$)/.exec(location.hash);
  document.documentElement.classList.add('embedded');
  document.documentElement.dataset.theme = theme ? theme[1] : 'auto';
  addStyle(EMBED_STYLE);
}

/** A bundle's files. A release build's table gives each bundle the hash its two files are
 *  named with (`coordlab-<bundle>-<hash>.js` and `.wasm`): a chapter's bundle as the bare
 *  hash, which its embed bundle (`<chapter>-embed`, no entry of its own) shares, and any
 *  other as `[hash, stylesheets…]`; `trunk serve`'s one bundle names its files
 *  (`{ js, wasm, css }`). */
function filesOf(bundle) {
  const entry = BUNDLES[bundle] ?? BUNDLES[bundle.replace(/-embed$/, '')];
  if (typeof entry === 'object' && !Array.isArray(entry)) return entry;
  const [hash, ...css] = [].concat(entry);
  const stem = `./coordlab-${bundle}-${hash}`;
  return { js: `${stem}.js`, wasm: `${stem}.wasm`, css };
}

const current = bundleFor(location.hash);
const files = filesOf(current);
// A bundle that draws a page other than the player (the library, the side by side, the
// choosing page, a trace) has that page's rules in a stylesheet of its own, which arrives
// with the WebAssembly, long before the app draws.
for (const sheet of files.css || []) addStyle(sheet);
// The address as opened, before the player rewrites it: web/search.js reads its `why=`.
globalThis.coordlabOpened = location.hash;
// Moving to a scenario of another chapter loads that chapter's bundle (from the cache after
// the first time).
addEventListener('hashchange', () => {
  if (bundleFor(location.hash) !== current) location.reload();
});

// The WebAssembly downloads while the bindings load: the two requests no longer wait on each
// other (the bindings' init awaits the response it is given).
const wasm = fetch(new URL(files.wasm, import.meta.url));
const bindings = await import(new URL(files.js, import.meta.url).href);
await bindings.default({ module_or_path: wasm });
// Tests and host pages can wait for this.
document.documentElement.dataset.coordlab = current;
// The glossary's definitions, which no bundle carries: the narration's term buttons read them
// from here when opened (web/src/glossary.rs). Without them a term shows its name and the link
// to the glossary page, so a failed fetch is no error of the page. The event draws a term
// opened before they came again, with its definition.
fetch(new URL('glossary.json', import.meta.url)).then((r) => r.json()).then((g) => {
  globalThis.coordlabGlossary = g;
  dispatchEvent(new Event('coordlab-glossary'));
})
  .catch(() => {});
// Lessons and "Find a failure" in the player (web/lessons.js, web/search.js), after the app:
// no first download carries them.
if (pathOf(location.hash)[0] !== 'embed') for (const part of ['lessons.js', 'search.js']) import(new URL(part, import.meta.url).href);
// The library's first picture, live (web/start.js), once the library has drawn.
if (current === HOME) import(new URL('start.js', import.meta.url).href);
