// The Content Security Policy: every page of the built site declares it, and it is in force —
// an inline style, an inline script and eval are refused, and the guard every browser test
// runs (guardPolicy in tests/browser.mjs) reports each refusal, so any test that makes the app
// break the policy fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { useSite, ready, guardPolicy } from './browser.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = process.env.COORDLAB_DIST || path.join(here, '..', 'dist');
// Only the site's own origin, and WebAssembly compiled from its own bundles.
const POLICY = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self'; "
  + "connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'none'";
const site = useSite(dist);

test('every page declares the policy before anything it loads, and has nothing inline', () => {
  // The guides built into docs/ too.
  const pages = fs.readdirSync(dist, { recursive: true }).filter((f) => f.endsWith('.html'));
  assert.ok(['index.html', 'embed-example.html', 'docs/learner.html'].every((p) => pages.includes(p)), pages.join(', '));
  for (const name of pages) {
    const html = fs.readFileSync(path.join(dist, name), 'utf8');
    const metas = [...html.matchAll(/<meta http-equiv="Content-Security-Policy" content="([^"]*)"/g)];
    assert.deepEqual(metas.map((m) => m[1]), [POLICY], `${name}: one policy, the site's`);
    const head = html.slice(0, html.indexOf('</head>'));
    assert.ok(head.indexOf(metas[0][0]) < head.search(/<link |<script /), `${name}: the policy comes first`);
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>|<style[\s>]/, `${name}: no inline script or style element`);
    // Attributes, in tags only (a guide's code example may show one as text).
    const tags = html.match(/<[a-z][^>]*>/g) || [];
    assert.deepEqual(tags.filter((t) => /\sstyle=|\son[a-z]+=/.test(t)), [], `${name}: no style attribute or handler`);
  }
});

test('the app writes no style attribute (~style sets the CSSOM, which the policy allows)', () => {
  const src = path.join(here, '..', 'web', 'src');
  const files = fs.readdirSync(src, { recursive: true }).filter((f) => f.endsWith('.rs'));
  const found = files.flatMap((f) => fs.readFileSync(path.join(src, f), 'utf8').split('\n')
    .map((line, i) => [line, `web/src/${f}:${i + 1}`])
    .filter(([line]) => !line.trim().startsWith('//') && /(^|[^~\w-])style=\{|set_attribute\("style"/.test(line))
    .map(([, where]) => where));
  assert.deepEqual(found, [], 'a style attribute breaks style-src; write ~style={…} instead');
});

test('the policy is in force, and the guard reports what it refused', async () => {
  const page = await site.browser.newPage();
  const found = [];
  await guardPolicy(page, found);
  // A script of the site's own that calls eval (code the test evaluates is exempt from the
  // policy; a script the page loads is not).
  await page.route(`${site.origin}/probe.js`, (route) => route.fulfill({
    contentType: 'text/javascript',
    body: "try { window.evaluated = eval('1 + 1'); } catch (e) { window.evaluated = e.name; }",
  }));
  await page.goto(`${site.origin}/#/play/lost-update`);
  await ready(page);
  const outcome = await page.evaluate(async () => {
    const h1 = document.querySelector('h1');
    const before = getComputedStyle(h1).color;
    h1.setAttribute('style', 'color: rgb(1, 2, 3)');
    const inline = document.createElement('script');
    inline.textContent = 'window.inlineRan = true';
    document.head.append(inline);
    const probe = document.createElement('script');
    probe.src = './probe.js';
    await new Promise((loaded) => { probe.onload = loaded; document.head.append(probe); });
    // The violation events are queued as tasks: let them arrive.
    await new Promise((r) => setTimeout(r, 100));
    return { styled: getComputedStyle(h1).color !== before, ran: window.inlineRan === true, evaluated: window.evaluated };
  });
  assert.deepEqual(outcome, { styled: false, ran: false, evaluated: 'EvalError' }, 'all three refused');
  const text = found.join('\n');
  assert.equal(found.length, 3, text);
  assert.match(text, /style-src-attr blocked inline/);
  assert.match(text, /script-src-elem blocked inline/);
  assert.match(text, /script-src blocked eval/);
  await page.close();
});
