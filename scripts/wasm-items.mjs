// What a WebAssembly file holds, biggest first: every function body and data segment with the
// name the compiler gave it (from the `name` section, so run it on cargo's output before
// wasm-bindgen and wasm-opt strip the names), and the same summed by Rust module.
//
//   node scripts/wasm-items.mjs FILE.wasm [N]     # the N biggest items and modules (default 10)
//
// Sizes are before wasm-opt: they rank what to cut, they are not the shipped bytes.
import fs from 'node:fs';

export function reader(bytes) {
  let pos = 0;
  const r = {
    get pos() { return pos; },
    set pos(p) { pos = p; },
    byte: () => bytes[pos++],
    u32() {
      let result = 0, shift = 0, b;
      do {
        b = bytes[pos++];
        result += (b & 0x7f) * 2 ** shift;
        shift += 7;
      } while (b & 0x80);
      return result;
    },
    name() {
      const len = r.u32();
      const s = new TextDecoder().decode(bytes.subarray(pos, pos + len));
      pos += len;
      return s;
    },
  };
  return r;
}

export function wasmItems(bytes) {
  const r = reader(bytes);
  r.pos = 8; // magic and version
  let importedFunctions = 0;
  const bodies = []; // size of each defined function's body
  const data = [];
  const names = new Map();
  while (r.pos < bytes.length) {
    const id = r.byte();
    const size = r.u32();
    const end = r.pos + size;
    if (id === 2) { // imports: count the imported functions, which come first in the index space
      for (let n = r.u32(); n > 0; n--) {
        r.name(); r.name();
        const kind = r.byte();
        if (kind === 0) { r.u32(); importedFunctions++; }
        else if (kind === 1) { r.byte(); const f = r.byte(); r.u32(); if (f & 1) r.u32(); }
        else if (kind === 2) { const f = r.byte(); r.u32(); if (f & 1) r.u32(); }
        else if (kind === 3) { r.byte(); r.byte(); }
        else if (kind === 4) { r.byte(); r.u32(); }
      }
    } else if (id === 10) {
      for (let n = r.u32(); n > 0; n--) {
        const len = r.u32();
        bodies.push(len);
        r.pos += len;
      }
    } else if (id === 11) {
      for (let n = r.u32(), i = 0; i < n; i++) {
        const flags = r.u32();
        if (flags === 2) r.u32();
        if (flags !== 1) { while (r.byte() !== 0x0b) { /* skip the offset expression */ } }
        const len = r.u32();
        data.push({ name: `data segment ${i}`, size: len });
        r.pos += len;
      }
    } else if (id === 0) {
      const section = r.name();
      if (section === 'name') {
        while (r.pos < end) {
          const sub = r.byte();
          const subSize = r.u32();
          const subEnd = r.pos + subSize;
          if (sub === 1) {
            for (let n = r.u32(); n > 0; n--) {
              const index = r.u32();
              names.set(index, r.name());
            }
          }
          r.pos = subEnd;
        }
      }
    }
    r.pos = end;
  }
  const items = bodies.map((size, i) => ({
    name: demangle(names.get(importedFunctions + i) || `function ${importedFunctions + i}`),
    size,
  }));
  return items.concat(data).sort((a, b) => b.size - a.size);
}

const ESCAPES = { SP: '@', BP: '*', RF: '&', LT: '<', GT: '>', LP: '(', RP: ')', C: ',' };

/** Rust's legacy symbol mangling (`_ZN…E`) back to a path, without the trailing hash. */
export function demangle(symbol) {
  if (!symbol.startsWith('_ZN')) return symbol;
  const parts = [];
  let i = 3;
  while (i < symbol.length && symbol[i] !== 'E') {
    const digits = /^\d+/.exec(symbol.slice(i))[0];
    i += digits.length;
    parts.push(symbol.slice(i, i + Number(digits)));
    i += Number(digits);
  }
  if (/^h[0-9a-f]{16}$/.test(parts[parts.length - 1] || '')) parts.pop();
  return parts
    .map((p) => p.replace(/^_\$/, '$').replace(/\$([A-Z]+|u[0-9a-f]+)\$/g, (_, e) =>
      ESCAPES[e] ?? (e.startsWith('u') ? String.fromCharCode(parseInt(e.slice(1), 16)) : e)).replaceAll('..', '::'))
    .join('::');
}

/** `coordlab_sim::kernel::engine::Engine::run` → `coordlab_sim::kernel::engine`. */
export function moduleOf(name) {
  const plain = name.replace(/^<+/, '').replace(/\[[0-9a-f]+\]/g, '').replace(/ as .*$/, '');
  if (plain.startsWith('data segment')) return 'data (strings, tables)';
  const parts = plain.split('::').filter((p) => /^[a-z_][a-z0-9_]*$/.test(p));
  return parts.slice(0, 3).join('::') || 'other';
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = process.argv[2];
  const top = Number(process.argv[3] || 10);
  const items = wasmItems(fs.readFileSync(file));
  const total = items.reduce((s, i) => s + i.size, 0);
  const kib = (b) => `${(b / 1024).toFixed(1).padStart(7)} KiB`;
  console.log(`${file}: ${items.length} items, ${kib(total).trim()} of code and data before wasm-opt`);
  console.log(`  the ${top} biggest items:`);
  for (const i of items.slice(0, top)) console.log(`  ${kib(i.size)}  ${i.name.slice(0, 110)}`);
  const modules = new Map();
  for (const i of items) modules.set(moduleOf(i.name), (modules.get(moduleOf(i.name)) || 0) + i.size);
  console.log(`  the ${top} biggest modules:`);
  for (const [m, s] of [...modules].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${kib(s)}  ${m}`);
}
