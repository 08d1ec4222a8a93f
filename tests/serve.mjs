// A tiny static file server for the built site (dist/), used by the browser tests and by
// scripts/serve.sh. Serves only files under its root; everything else is a 404.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** Serves `root` at `prefix` (e.g. `/docs/coordlab/`, as a documentation site would host
 *  it); anything outside the prefix is a 404. */
export function serve(root, port = 0, host = '127.0.0.1', prefix = '/') {
  const base = path.resolve(root);
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    if (!url.pathname.startsWith(prefix)) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    let file = path.join(base, decodeURIComponent(url.pathname.slice(prefix.length - 1)));
    if (!file.startsWith(base)) {
      res.writeHead(403).end();
      return;
    }
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
    fs.readFile(file, (err, data) => {
      if (err) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
      }
      res.writeHead(200, { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream' }).end(data);
    });
  });
  return new Promise((resolve) => server.listen(port, host, () => resolve(server)));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = process.argv[2] || 'dist';
  const port = Number(process.argv[3] || 8080);
  const host = process.argv[4] || '127.0.0.1';
  serve(root, port, host).then(() => console.log(`coordlab: serving ${root} at http://${host}:${port}/`));
}
