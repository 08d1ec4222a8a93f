// Shared harness for the browser tests: a static server for the release build, one headless
// Chromium, and per-page guards — any console error, page error, request outside the site's
// origin or Content Security Policy violation fails the test that caused it. Screenshots land
// in tests/artifacts/.
import { before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { serve } from './serve.mjs';

/** Headless Chromium with the flags every browser test uses. */
export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-quic'],
  });
}

/**
 * Reports every Content Security Policy violation in `target` (a page or a browser context),
 * in any of its frames, into `problems`: the directive broken, what it blocked and where.
 * The built site declares its policy in each page (`cargo xtask dist`); a violation means
 * the app did something the policy forbids, such as writing a `style` attribute.
 */
export async function guardPolicy(target, problems) {
  await target.exposeBinding('coordlabPolicyViolation', ({ frame }, v) => problems.push(
    `CSP violation in ${frame.url()}: ${v.directive} blocked ${v.blocked || '(nothing named)'} at ${v.source}:${v.line}${v.sample ? ` — ${v.sample}` : ''}`));
  await target.addInitScript(() => {
    addEventListener('securitypolicyviolation', (e) => window.coordlabPolicyViolation({
      directive: e.effectiveDirective || e.violatedDirective,
      blocked: e.blockedURI,
      source: e.sourceFile || e.documentURI,
      line: e.lineNumber,
      sample: e.sample,
    }));
  });
}

/**
 * A page in a context of its own at `viewport` that reports into `problems` any console
 * error, page error, policy violation, failed request (400 and up) or request outside
 * `allowed` (prefixes of URLs), in the page or any of its frames.
 */
export async function guardedPage(browser, viewport, allowed) {
  const context = await browser.newContext({ viewport });
  const problems = [];
  await guardPolicy(context, problems);
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    if (!allowed.some((a) => r.url().startsWith(a)) && !r.url().startsWith('data:')) problems.push(`request outside: ${r.url()}`);
  });
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`); });
  return { page, context, problems };
}

/**
 * The built site served at `prefix` and one headless Chromium, for the tests of the file that
 * calls it (its `before` and `after`): `site.origin` and `site.browser` once started.
 */
export function useSite(dist, prefix = '/') {
  const site = {};
  before(async () => {
    site.server = await serve(dist, 0, '127.0.0.1', prefix);
    site.origin = `http://127.0.0.1:${site.server.address().port}`;
    site.browser = await launch();
  });
  after(async () => {
    await site.browser?.close();
    site.server?.close();
  });
  return site;
}

export function useBrowser() {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const dist = process.env.COORDLAB_DIST || path.join(here, '..', 'dist');
  const artifacts = path.join(here, 'artifacts');
  fs.mkdirSync(artifacts, { recursive: true });

  let server, browser, origin;
  let problems = [];

  before(async () => {
    assert.ok(fs.existsSync(path.join(dist, 'index.html')), `no built site at ${dist}; run cargo xtask dist first`);
    server = await serve(dist);
    origin = `http://127.0.0.1:${server.address().port}`;
    browser = await launch();
  });

  after(async () => {
    await browser?.close();
    server?.close();
  });

  afterEach(() => {
    const found = problems;
    problems = [];
    assert.deepEqual(found, [], 'the page reported errors or reached outside its origin');
  });

  async function open(hash = '') {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    // A step that cannot happen must fail the test, not hang it.
    page.setDefaultTimeout(20_000);
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    await guardPolicy(page, problems);
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(origin) || url.startsWith('data:')) return route.continue();
      problems.push(`request outside the origin: ${url}`);
      return route.abort();
    });
    await page.goto(`${origin}/${hash}`);
    await ready(page);
    return page;
  }

  async function shot(page, name) {
    await page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: true });
  }

  /** What the guards have recorded in the current test so far (the harness fails the test
   *  on them at its end; a long test may look sooner). */
  const reported = () => problems;

  return { open, shot, origin: () => origin, reported };
}

/** Waits until the loader has started a bundle and the app has drawn its first view. */
export async function ready(page) {
  await page.waitForFunction(() => document.documentElement.dataset.coordlab
    && document.querySelector('#main > *'));
}

const axePath = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', 'axe-core', 'axe.min.js');

/** WCAG 2.0, 2.1 and 2.2, levels A and AA. */
const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];
/** Rules axe leaves out of its WCAG tags (experimental or best practice) that catch what an
 *  audit once found here: a button whose visible text is not its accessible name, two regions
 *  with one label. */
const EXTRA_RULES = ['label-content-name-mismatch', 'landmark-unique', 'landmark-no-duplicate-main', 'scrollable-region-focusable'];

/** Loads axe-core into the page (or frame) without a `<script>` element, which the site's
 *  policy would refuse as an inline script. */
export async function loadAxe(page) {
  if (!(await page.evaluate(() => Boolean(window.axe)))) await page.evaluate(fs.readFileSync(axePath, 'utf8'));
}

/** Runs axe-core (WCAG 2.0, 2.1 and 2.2 A and AA rules, and EXTRA_RULES) on the page, or only
 *  on the parts `within` names (selectors: what changed since a whole-page audit); any
 *  violation fails, with axe's own explanation and `where` it was. One run takes the tags and
 *  the extra rules together: two runs cost a third more for the same findings. */
export async function audit(page, where, { within } = {}) {
  await loadAxe(page);
  const result = await page.evaluate(async ([tags, extra, include]) => window.axe.run(
    include ? { include } : document,
    {
      runOnly: { type: 'tag', values: tags },
      rules: Object.fromEntries(extra.map((rule) => [rule, { enabled: true }])),
      // Only violations fail a test: axe then builds its selectors for those alone, not for
      // every node that passed (most of its time on a page as large as the player's).
      resultTypes: ['violations'],
    },
  ), [WCAG_TAGS, EXTRA_RULES, within]);
  const found = result.violations.map((v) =>
    `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
  assert.deepEqual(found, [], where);
}

export const stepLabel = (page) => page.locator('.step-count').textContent();
export const property = (page, name) => page.locator(`[data-property="${name}"]`);
/** Opens one of the player's tool tabs (Beats, Parameters, Faults, Network, State, Events). */
export const tab = (page, name) => page.getByRole('tab', { name, exact: true }).click();
/** A property's chip in the strip under the story. */
export const chip = (page, name) => page.locator(`.property-strip [data-chip="${name}"]`);

/** Whether the element's box lies inside the viewport (the first screen, no scrolling). */
export async function onScreen(page, selector) {
  return page.locator(selector).first().evaluate((el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0
      && r.bottom <= window.innerHeight + 1 && r.right <= window.innerWidth + 1;
  });
}


/** Turns on "all events" (stepping and the log take every event, heartbeats and acks too). */
export async function allEvents(page) {
  const box = page.getByRole('checkbox', { name: /All events/ });
  if (!(await box.isChecked())) await box.check();
}

/**
 * Seeks to the first step whose event text satisfies `pred`, by scrolling the event log (it
 * draws only the rows in view) with every event shown; returns the step. Leaves the Events tab
 * open.
 */
export async function seekTo(page, pred, what) {
  await allEvents(page);
  await tab(page, 'Events');
  const view = page.locator('.event-log .log-view');
  await view.evaluate((v) => { v.scrollTop = 0; });
  for (;;) {
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const rows = (await page.locator('.event-log .log-row:not(.fold)').evaluateAll((els) =>
      els.map((e) => [Number(e.querySelector('.seq').textContent), e.querySelector('.text').textContent])))
      .sort((a, b) => a[0] - b[0]);
    const hit = rows.find(([, text]) => pred(text));
    if (hit) {
      await page.locator('.event-log .log-row:not(.fold)', { has: page.locator('.seq', { hasText: new RegExp(`^${hit[0]}$`) }) }).click();
      return hit[0];
    }
    const end = await view.evaluate((v) => {
      const atEnd = v.scrollTop + v.clientHeight >= v.scrollHeight - 1;
      v.scrollTop += v.clientHeight - 30;
      return atEnd;
    });
    if (end) assert.fail(`no step where ${what}`);
  }
}

/** Every row of the event log as {seq, text, future}, by scrolling it from top to bottom. */
export async function logRows(page) {
  await tab(page, 'Events');
  const view = page.locator('.event-log .log-view');
  const top = await view.evaluate((v) => v.scrollTop);
  await view.evaluate((v) => { v.scrollTop = 0; });
  const seen = new Map();
  for (;;) {
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    for (const row of await page.locator('.event-log .log-row:not(.fold)').evaluateAll((els) => els.map((e) => ({
      seq: Number(e.querySelector('.seq').textContent),
      text: e.querySelector('.text').textContent,
      future: e.classList.contains('future'),
    })))) seen.set(row.seq, row);
    const end = await view.evaluate((v) => {
      const atEnd = v.scrollTop + v.clientHeight >= v.scrollHeight - 1;
      v.scrollTop += v.clientHeight - 30;
      return atEnd;
    });
    if (end) break;
  }
  await view.evaluate((v, t) => { v.scrollTop = t; }, top);
  return [...seen.values()].sort((a, b) => a.seq - b.seq);
}

/**
 * Runs the command line and returns what it prints: the test build (`target/debug`, built by
 * `cargo test` or `cargo build -p coordlab-cli`), else a release build.
 */
export function coordlabCli(...args) {
  const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
  const built = ['debug', 'release'].map((p) => path.join(root, 'target', p, 'coordlab')).find((f) => fs.existsSync(f));
  if (!built) throw new Error('no coordlab binary under target/debug or target/release: run cargo build -p coordlab-cli');
  return execFileSync(built, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
}
