// Runs browser test files a few at a time, the longest first, each in its own `node --test`,
// and prints each file's report whole when it ends. `node --test --test-concurrency=2` starts
// its files in name order, so the monkey (about 300 s on CI's two cores) started when only
// some 230 s of other work was left, and one core idled for the difference at the end.
// Starting the longest files first leaves only short ones for the end.
//
//   node scripts/browser-tests.mjs 2 tests/a.test.mjs tests/b.test.mjs …
//
// Exits 1 if any file fails (or cannot run), naming them.
import { spawn } from 'node:child_process';

/** The slowest files on CI, slowest first (measured there); the rest follow in name order. A
 *  file missing here only starts later: its report and its verdict are the same. */
const LONGEST = ['monkey', 'a11y', 'legibility', 'embed', 'library', 'phone', 'compare', 'e2e'];

const [lanes, ...files] = process.argv.slice(2);
const parallel = Number(lanes);
if (!Number.isInteger(parallel) || parallel < 1 || files.length === 0) {
  console.error('usage: node scripts/browser-tests.mjs CONCURRENCY FILE...');
  process.exit(2);
}
const rank = (file) => {
  const at = LONGEST.findIndex((name) => file.endsWith(`/${name}.test.mjs`));
  return at < 0 ? LONGEST.length : at;
};
const queue = [...files].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));

const failed = [];
const started = Date.now();

/** Runs one file; resolves once its report is printed. */
function runFile(file) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawn(process.execPath, ['--test', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => out.push(d));
    const finish = (code, why) => {
      const seconds = Math.round((Date.now() - t0) / 1000);
      process.stdout.write(`\n# ${file} (${seconds} s)\n${Buffer.concat(out).toString()}`);
      if (code !== 0) failed.push(`${file}: ${why}`);
      resolve();
    };
    child.on('error', (e) => finish(1, e.message));
    child.on('close', (code, signal) => finish(code ?? 1, signal ? `killed by ${signal}` : `exit code ${code}`));
  });
}

async function lane() {
  for (let file = queue.shift(); file; file = queue.shift()) await runFile(file);
}

await Promise.all(Array.from({ length: Math.min(parallel, files.length) }, lane));
const seconds = Math.round((Date.now() - started) / 1000);
if (failed.length) {
  console.log(`\n# ${failed.length} of ${files.length} test files failed (${seconds} s):\n#   ${failed.join('\n#   ')}`);
  process.exit(1);
}
console.log(`\n# all ${files.length} test files passed (${seconds} s)`);
