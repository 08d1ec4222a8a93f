// The Web Worker "Find a failure" (web/search.js) runs the search in: it loads the chapter's
// embed bundle named in its address (`?js=…&wasm=…`), whose start draws nothing where there is
// no page, and answers each message — a call and its arguments, e.g. ['search_part', message]
// (web/src/search_worker.rs) — with the call's text. A message that comes while the bundle
// loads waits for it.
const files = new URL(import.meta.url).searchParams;
const at = (name) => new URL(files.get(name), import.meta.url);
const wasm = fetch(at('wasm'));
const bindings = import(at('js').href).then((b) => b.default({ module_or_path: wasm }).then(() => b));
onmessage = async ({ data: [call, ...args] }) => postMessage((await bindings)[call](...args));
