// The site ships its stylesheets minified (scripts/minify-css.mjs, run by `cargo xtask dist`).
// These tests hold the minifier to "same rules, fewer bytes": Chromium parses both versions
// of each real stylesheet, and the rules it reads (selectors, declarations, media and
// supports conditions, keyframes, in order) must be identical.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { launch } from './browser.mjs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/** `css` as the site ships it: minified by the build itself (`cargo xtask minify-css`, or the
 *  xtask program scripts/test.sh built with the workspace's tests, named in COORDLAB_XTASK:
 *  `cargo xtask` alone resolves other features and would compile the simulator again). */
function minifyCss(css) {
  const file = path.join(fs.mkdtempSync(path.join(root, 'target', 'minify-css-')), 'in.css');
  fs.writeFileSync(file, css);
  const [program, ...args] = process.env.COORDLAB_XTASK ? [process.env.COORDLAB_XTASK] : ['cargo', 'xtask'];
  try {
    return execFileSync(program, [...args, 'minify-css', file], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  } finally {
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  }
}
let browser;
after(() => browser?.close());

/** Every rule Chromium reads from `css`, as it serializes them, nested rules flattened. */
async function rulesOf(css) {
  browser ??= await launch();
  const page = await browser.newPage();
  try {
    return await page.evaluate((text) => {
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(text);
      const out = [];
      const walk = (rules) => {
        for (const r of rules) {
          // A style rule (it has `style`; with CSS nesting it has `cssRules` too, so that
          // cannot tell it apart) is compared whole: selector and every declaration. A
          // grouping rule's head (@media, @supports) is serialized as written, so the spaces
          // the minifier drops after ":" and "(" are dropped here too.
          // Custom properties keep their value's text as written, so the spaces the minifier
          // drops after "," and "(" and before ")" are dropped here too; any other declaration
          // is parsed, and one the minifier broke is missing from Chromium's serialization.
          const nested = r.cssRules && r.cssRules.length > 0;
          const tight = (text) => text.replace(/([,(])\s+/g, '$1').replace(/\s+\)/g, ')');
          if (r.style && !nested) out.push(tight(r.cssText));
          else if (r.style) out.push(tight(`${r.selectorText} { ${r.style.cssText} }`));
          else out.push(r.cssRules ? r.cssText.split('{')[0].trim().replace(/([:(])\s+/g, '$1') : r.cssText);
          if (nested) walk(r.cssRules);
        }
      };
      walk(sheet.cssRules);
      return out;
    }, css);
  } finally {
    await page.close();
  }
}

for (const file of ['web/style.css', 'web/library.css', 'web/compare.css', 'web/choose.css', 'web/trace.css', 'web/embed.css', 'web/example/embed-example.css']) {
  test(`${file} minified: Chromium reads the same rules from it, and it is smaller`, async () => {
    const original = fs.readFileSync(path.join(root, file), 'utf8');
    const minified = minifyCss(original);
    const [before, afterMin] = [await rulesOf(original), await rulesOf(minified)];
    assert.ok(before.length > 10, `${file} has rules to compare (${before.length})`);
    assert.deepEqual(afterMin, before);
    assert.ok(minified.length < original.length * 0.9, `${minified.length} of ${original.length} bytes`);
    assert.ok(!minified.includes('/*'), 'no comment is left');
  });
}

test('the minifier keeps strings, url()s and the spaces that carry meaning', () => {
  const css = `/* c */ .a :focus , .b > .c { content: " a  ;  b " ; width: calc( 100% - 2px ) ; font-size: clamp(13px, 0.6vw + 11px, 17px) }
    @media (max-width: 600px) and (orientation: portrait) { .d { background: url( "x y.svg" ) } }`;
  const minified = minifyCss(css);
  // The spaces that change the meaning stay: `.a :focus` is not `.a:focus`, `and (` is not
  // `and(`, calc() needs them around "-", and a string is copied as it is.
  for (const kept of ['.a :focus', '" a  ;  b "', '100% - 2px', '0.6vw + 11px', 'and (orientation', '"x y.svg"']) {
    assert.ok(minified.includes(kept), `${JSON.stringify(kept)} in ${minified}`);
  }
  assert.ok(!minified.includes('/*'), minified);
  assert.ok(minified.length < css.length, minified);
});
