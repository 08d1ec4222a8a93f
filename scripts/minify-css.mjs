// Writes a stylesheet without its comments and its layout whitespace: every page's first
// download carries the stylesheet, and its comments (which say why a rule is there) are a
// quarter of it. Quoted strings and url(...) are copied as they are; a run of whitespace
// becomes one space, and none is kept next to { } ; , > where CSS does not need it, after
// ":" and "(", or before ")". Spaces elsewhere (before ":" in `.a :focus`, before "(" in
// `and (`, around "+" and "-" in calc()) are kept: there they can change the meaning. tests/minify-css.test.mjs checks that Chromium reads the same rules
// from the output as from the input.
//
//   node scripts/minify-css.mjs IN.css OUT.css
import fs from 'node:fs';

/** The stylesheet `css` without comments and needless whitespace. */
export function minifyCss(css) {
  let out = '';
  let pendingSpace = false;
  const tight = new Set(['{', '}', ';', ',', '>']);
  // No space is needed after these (a space before ":" can matter: `.a :focus`), nor
  // before ")"; a space before "(" can (`and (` is not `and(`), so it stays.
  const tightAfter = new Set([...tight, ':', '(']);
  const tightBefore = new Set([...tight, ')']);
  const emit = (text) => {
    if (pendingSpace && out && !tightAfter.has(out[out.length - 1]) && !tightBefore.has(text[0])) out += ' ';
    pendingSpace = false;
    out += text;
  };
  let i = 0;
  while (i < css.length) {
    const c = css[i];
    if (c === '/' && css[i + 1] === '*') {
      const end = css.indexOf('*/', i + 2);
      i = end < 0 ? css.length : end + 2;
      pendingSpace = true; // `a/**/b` is two tokens
    } else if (/\s/.test(c)) {
      while (i < css.length && /\s/.test(css[i])) i++;
      pendingSpace = true;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < css.length && css[j] !== c) j += css[j] === '\\' ? 2 : 1;
      emit(css.slice(i, j + 1));
      i = j + 1;
    } else if (css.startsWith('url(', i)) {
      const end = css.indexOf(')', i);
      const j = end < 0 ? css.length : end + 1;
      emit(css.slice(i, j));
      i = j;
    } else {
      // A ";" right before "}" is not needed either.
      if (c === '}' && out.endsWith(';')) out = out.slice(0, -1);
      emit(c);
      i++;
    }
  }
  return out + '\n';
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [input, output] = process.argv.slice(2);
  if (!input || !output) {
    console.error('usage: node scripts/minify-css.mjs IN.css OUT.css');
    process.exit(2);
  }
  fs.writeFileSync(output, minifyCss(fs.readFileSync(input, 'utf8')));
}
