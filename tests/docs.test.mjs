// The guides built into the site (`cargo xtask dist` renders docs/*.md and the README into
// dist/docs/, xtask/src/docs.rs): every link and picture of every page names a file the site
// has (and a heading that exists, for a #fragment); and the learner's guide in Chromium — each
// live embed in it draws its run inside its frame, the page passes axe-core, and nothing on it
// or in its frames logs an error, breaks the Content Security Policy or reaches outside the
// site. COORDLAB_SOME_BUNDLES=1 passes over an embed whose chapter a partial build left out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { useSite, guardedPage, audit, coordlabCli } from './browser.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = process.env.COORDLAB_DIST || path.join(here, '..', 'dist');
const docs = path.join(dist, 'docs');
const artifacts = path.join(here, 'artifacts');
const bundles = JSON.parse(coordlabCli('bundles'));
const builtBundles = new Set(fs.readdirSync(dist).map((f) => f.match(/^coordlab-(.+)-[0-9a-f]{8}\.wasm$/)?.[1]).filter(Boolean));
const site = useSite(dist);
fs.mkdirSync(artifacts, { recursive: true });

/** The ids a built page gives its headings. */
const ids = (html) => new Set([...html.matchAll(/<h[1-6] id="([^"]+)"/g)].map((m) => m[1]));
/** Every href and src of a built page (entities as the writer escapes them). */
const targets = (html) => [...html.matchAll(/\s(?:href|src)="([^"]*)"/g)].map((m) => m[1].replaceAll('&amp;', '&'));

test('every link and picture of every guide names a file of the site, and a heading that exists', () => {
  const pages = fs.readdirSync(docs).filter((f) => f.endsWith('.html'));
  for (const name of ['index.html', 'readme.html', 'learner.html', 'trainer.html', 'embedding.html', 'cli.html', 'architecture.html', 'testing.html']) {
    assert.ok(pages.includes(name), `${name} is built: ${pages.join(', ')}`);
  }
  let checked = 0;
  for (const name of pages) {
    const html = fs.readFileSync(path.join(docs, name), 'utf8');
    for (const target of targets(html)) {
      if (/^(https?:|mailto:)/.test(target)) continue;
      checked += 1;
      const [file, fragment = ''] = target.split('#');
      const file_ = path.resolve(docs, file || name);
      const served = fs.existsSync(file_) && fs.statSync(file_).isDirectory() ? path.join(file_, 'index.html') : file_;
      assert.ok(served.startsWith(path.resolve(dist)), `${name}: ${target} leaves the site`);
      assert.ok(fs.existsSync(served), `${name}: ${target}: no file ${path.relative(dist, served)}`);
      if (fragment && !fragment.startsWith('/') && served.endsWith('.html')) {
        assert.ok(ids(fs.readFileSync(served, 'utf8')).has(fragment), `${name}: ${target}: no heading #${fragment}`);
      }
    }
  }
  assert.ok(checked > 100, `only ${checked} links: is the extraction broken?`);
});

/** The learner's guide at `viewport`, failing on any error, policy violation, failed request
 *  or request outside the site, in the page or any of its frames. */
async function openGuide(viewport) {
  const { page, context, problems } = await guardedPage(site.browser, viewport, [site.origin]);
  await page.goto(`${site.origin}/docs/learner.html`);
  return { page, context, problems };
}

test('the learner guide: each live embed draws its run, the page passes axe, nothing goes wrong', async () => {
  const { page, context, problems } = await openGuide({ width: 1280, height: 720 });
  assert.match(await page.title(), /coordlab/);
  // The header leads back to the library and to the guides' index.
  assert.equal(await page.locator('header a[href="../"]').count(), 1);
  assert.equal(await page.locator('header a[href="./index.html"]').count(), 1);
  const frames = await page.locator('main iframe').evaluateAll((els) => els.map((f) => ({ src: f.getAttribute('src'), title: f.title })));
  assert.ok(frames.length >= 2, `${frames.length} embeds`);
  const drawn = [];
  for (const [i, { src, title }] of frames.entries()) {
    assert.ok(title.trim(), `${src}: a title for screen readers`);
    const id = src.match(/^\.\.\/#\/embed\/([a-z0-9-]+)/)?.[1];
    assert.ok(id && bundles.scenarios[id], `${src}: the site's embed of a known scenario, as seen from docs/`);
    const bundle = builtBundles.has(`${bundles.scenarios[id]}-embed`) ? `${bundles.scenarios[id]}-embed` : bundles.scenarios[id];
    if (!builtBundles.has(bundle)) {
      assert.ok(process.env.COORDLAB_SOME_BUNDLES, `${id}: its bundle is not in ${dist}; build it, or set COORDLAB_SOME_BUNDLES=1`);
      continue;
    }
    const element = page.locator('main iframe').nth(i);
    await element.scrollIntoViewIfNeeded();
    const frame = await (await element.elementHandle()).contentFrame();
    // The frame's loader has started the chapter's embed bundle and drawn its picture.
    await frame.waitForFunction((b) => document.documentElement.dataset.coordlab === b, bundle);
    await frame.locator('.embed-stage').waitFor({ state: 'visible' });
    const box = await frame.locator('.embed-stage svg').first().boundingBox();
    assert.ok(box && box.width > 100 && box.height > 50, `${src}: a picture is drawn (${JSON.stringify(box)})`);
    // `../` from docs/ is the site's root.
    const opened = new URL(frame.url());
    assert.equal(`${opened.pathname}${opened.hash}`, `/${src.slice(3)}`, `${src}: the frame opened the site's embed`);
    drawn.push(id);
  }
  await page.screenshot({ path: path.join(artifacts, 'docs-learner-1280x720.png'), fullPage: false });
  await audit(page, 'axe-core on docs/learner.html');
  await page.waitForTimeout(200);
  assert.deepEqual(problems, [], 'errors, policy violations or requests outside the site');
  console.log(`embeds drawn: ${drawn.join(', ') || 'none (their bundles are not built)'}`);
  await context.close();
});

test('the learner guide on a phone: nothing wider than the screen but code and tables', async () => {
  const { page, context, problems } = await openGuide({ width: 390, height: 844 });
  const wide = await page.evaluate(() => [...document.querySelectorAll('main > *')]
    .filter((el) => el.getBoundingClientRect().right > innerWidth + 1 && !['PRE', 'TABLE'].includes(el.tagName))
    .map((el) => `${el.tagName} ${el.textContent.slice(0, 40)}`));
  assert.deepEqual(wide, [], 'wider than 390 px');
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth), 'the page does not scroll sideways');
  const size = await page.locator('main p').first().evaluate((p) => parseFloat(getComputedStyle(p).fontSize));
  assert.ok(size >= 16, `body text at ${size} px`);
  await page.screenshot({ path: path.join(artifacts, 'docs-learner-390x844.png'), fullPage: false });
  assert.deepEqual(problems, [], 'errors, policy violations or requests outside the site');
  await context.close();
});
