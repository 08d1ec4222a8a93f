// Shortens the names the WebAssembly and its wasm-bindgen glue call each other by. wasm-bindgen
// names every import after the JavaScript it calls plus a 16-digit hash
// (`__wbg_addEventListener_90e553fdce254421`) and its closure exports after their Rust path
// (`wasm_bindgen__convert__closures_____invoke__h4a96dd2f26cd2bb9`); each name is written in
// both files and the hashes do not compress, about 2 KB of every first load, gzipped. This
// renames them `_0`, `_1`, … in the module's import and export sections and in the glue, and
// leaves everything else byte for byte.
//
//   node scripts/minify-wasm-names.mjs BUNDLE.wasm BUNDLE.js     # rewrites both in place
//
// Run it on wasm-opt's output and wasm-bindgen's glue before terser (whose mangled names could
// be `_0`): it refuses a glue that already has one of the new names, or lacks an old one.
import fs from 'node:fs';
import { reader } from './wasm-items.mjs';

const [wasmFile, jsFile] = process.argv.slice(2);
if (!wasmFile || !jsFile) {
  console.error('usage: node scripts/minify-wasm-names.mjs BUNDLE.wasm BUNDLE.js');
  process.exit(2);
}
// The names wasm-bindgen generates; `main`, `memory` and the rest keep theirs.
const generated = /^(__wbg_|__wbindgen_|__externref_|wasm_bindgen__)/;

const bytes = fs.readFileSync(wasmFile);
const r = reader(bytes);
r.pos = 8; // magic and version
const u32 = r.u32;
const leb = (n) => {
  const out = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return Buffer.from(out);
};
const nameAt = r.name;
const encodeName = (s) => {
  const b = Buffer.from(s, 'utf8');
  return Buffer.concat([leb(b.length), b]);
};
const limits = () => {
  const flags = r.byte();
  u32();
  if (flags & 1) u32();
};

const renamed = new Map(); // old name -> new name
const rename = (name) => {
  if (!generated.test(name)) return name;
  if (!renamed.has(name)) renamed.set(name, '_' + renamed.size.toString(36));
  return renamed.get(name);
};

const parts = [bytes.subarray(0, 8)];
while (r.pos < bytes.length) {
  const start = r.pos;
  const id = r.byte();
  const size = u32();
  const end = r.pos + size;
  if (id !== 2 && id !== 7) {
    parts.push(bytes.subarray(start, end));
    r.pos = end;
    continue;
  }
  const entries = [];
  const count = u32();
  entries.push(leb(count));
  for (let n = 0; n < count; n++) {
    if (id === 2) {
      const module = nameAt();
      const field = nameAt();
      const descStart = r.pos;
      const kind = r.byte();
      if (kind === 0) u32();
      else if (kind === 1) { r.pos++; limits(); }
      else if (kind === 2) limits();
      else if (kind === 3) r.pos += 2;
      else if (kind === 4) { r.pos++; u32(); }
      else throw new Error(`${wasmFile}: import of unknown kind ${kind}`);
      entries.push(encodeName(module), encodeName(rename(field)), bytes.subarray(descStart, r.pos));
    } else {
      const name = nameAt();
      const descStart = r.pos;
      r.pos++;
      u32();
      entries.push(encodeName(rename(name)), bytes.subarray(descStart, r.pos));
    }
  }
  if (r.pos !== end) throw new Error(`${wasmFile}: section ${id} did not parse to its end`);
  const body = Buffer.concat(entries);
  parts.push(Buffer.from([id]), leb(body.length), body);
}

let js = fs.readFileSync(jsFile, 'utf8');
const token = (name) => new RegExp(`(?<![\\w$])${name.replace(/\$/g, '\\$')}(?![\\w$])`, 'g');
for (const [old, short] of renamed) {
  if (token(short).test(js)) throw new Error(`${jsFile} already uses the name ${short}`);
  if (!token(old).test(js)) throw new Error(`${jsFile} never names ${old}`);
}
for (const [old, short] of renamed) js = js.replace(token(old), short);
fs.writeFileSync(wasmFile, Buffer.concat(parts));
fs.writeFileSync(jsFile, js);
console.log(`minify-wasm-names: ${renamed.size} names shortened in ${wasmFile} and ${jsFile}`);
