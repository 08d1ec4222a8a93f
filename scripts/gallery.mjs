// Gallery (issue 27): screenshots of every scenario's key beat on the screens coordlab is
// used on, for looking at by eye — presenter mode at 853×480 (a 1280×720 projector at 150%)
// and at 1280×720, an embed in a 400×300 frame on a small documentation-like page, and the
// player on a phone (390×844, the whole page) — and OUTDIR/index.html showing them in a grid
// with captions.
//
//   node scripts/gallery.mjs DIST OUTDIR [--scenarios a,b]
//
// Needs the command line (cargo build -p coordlab-cli) for the scenario list and each run's
// key beat: the beat at or just after the run's first property violation, else its last beat
// (tests/picture.mjs). Each shot opens the run at that beat's step (`step=`), without motion.
import fs from 'node:fs';
import path from 'node:path';
import { serve } from '../tests/serve.mjs';
import { launch, coordlabCli } from '../tests/browser.mjs';
import { CONFIGS, hashFor, keyBeat, settle, load } from '../tests/picture.mjs';

const args = process.argv.slice(2);
const i = args.indexOf('--scenarios');
const only = i >= 0 ? args.splice(i, 2)[1].split(',') : null;
const [dist, outdir] = args;
if (!dist || !outdir || !fs.existsSync(path.join(dist, 'index.html'))) {
  console.error('usage: node scripts/gallery.mjs DIST OUTDIR [--scenarios a,b]');
  process.exit(2);
}
fs.mkdirSync(outdir, { recursive: true });

// The list's columns: ID, CHAPTER, TITLE.
const [header, ...lines] = coordlabCli('list').split('\n').filter(Boolean);
const titleAt = header.indexOf('TITLE');
const scenarios = lines.map((l) => ({ id: l.split(/\s+/)[0], title: l.slice(titleAt).trim() }))
  .filter((s) => !only || only.includes(s.id));
for (const s of scenarios) s.key = keyBeat(s.id);

const HOST = '/__gallery-host.html';
/** A documentation page around a 400×300 embed, as an author would put one in. */
const hostPage = (src) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>docs page</title>
<style>body{font:16px/1.5 system-ui,sans-serif;margin:16px;color:#222;background:#fff;max-width:440px}
iframe{border:1px solid #ccc;display:block;margin:12px 0}</style></head><body>
<p>Step through the run below, then read on.</p>
<iframe width="400" height="300" title="coordlab" src="${src.replace(/&/g, "&amp;")}"></iframe>
<p>The text continues after the embed.</p></body></html>`;

const SHOTS = [
  { ...CONFIGS['presenter-853'], file: 'presenter-853x480' },
  { ...CONFIGS['presenter-1280'], file: 'presenter-1280x720' },
  { ...CONFIGS['embed-400'], file: 'embed-400x300', host: { width: 472, height: 400 } },
  { ...CONFIGS.phone, file: 'phone-390x844', fullPage: true },
];

const server = await serve(dist);
const origin = `http://127.0.0.1:${server.address().port}`;
const browser = await launch();
const problems = [];

async function shoot(cfg) {
  const page = await browser.newPage({ viewport: cfg.host || { width: cfg.width, height: cfg.height } });
  page.setDefaultTimeout(20_000);
  page.on('pageerror', (e) => problems.push(`${cfg.file}: ${e.message}`));
  await settle(page);
  await page.route(`${origin}${HOST}?*`, (route) => {
    const q = new URL(route.request().url()).searchParams;
    route.fulfill({ contentType: 'text/html; charset=utf-8', body: hostPage(`./index.html${hashFor(cfg, q.get('id'), Number(q.get('step')))}`) });
  });
  for (const s of scenarios) {
    const file = path.join(outdir, `${s.id}-${cfg.file}.png`);
    try {
      if (cfg.host) {
        await page.goto('about:blank');
        await page.goto(`${origin}${HOST}?id=${encodeURIComponent(s.id)}&step=${s.key.seq}`);
        await page.frameLocator('iframe').locator('figure.topology svg').first().waitFor();
        await page.waitForTimeout(300);
      } else {
        await load(page, origin, hashFor(cfg, s.id, s.key.seq));
        await page.waitForTimeout(200);
      }
      await page.screenshot({ path: file, fullPage: Boolean(cfg.fullPage) });
    } catch (e) {
      problems.push(`${s.id} ${cfg.file}: ${e.message.split('\n')[0]}`);
    }
    process.stderr.write(`${path.basename(file)}\n`);
  }
  await page.close();
}

await Promise.all(SHOTS.map(shoot));
const chromium = browser.version();
await browser.close();
server.close();

const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>coordlab gallery: key beats</title>
<style>
body{font:15px/1.4 system-ui,sans-serif;margin:20px;color:#1a1a1a;background:#f4f4f4}
section{background:#fff;border:1px solid #ddd;border-radius:8px;padding:12px 16px;margin:0 0 20px}
h2{font-size:18px;margin:0 0 4px} p.key{margin:0 0 10px;color:#444}
.row{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
.tall{display:block;max-height:640px;overflow:auto;border:1px solid #bbb}.tall img{border:0}
figure{margin:0} figcaption{font-size:13px;color:#444;margin-top:4px}
img{display:block;border:1px solid #bbb;height:auto}
img.presenter-853x480{width:427px} img.presenter-1280x720{width:640px} img.phone-390x844{width:195px}
</style></head><body>
<h1>coordlab gallery: each scenario's key beat</h1>
<p>Built from <code>${esc(path.resolve(dist))}</code> on ${new Date().toISOString().slice(0, 10)} (headless Chromium ${esc(chromium)}).
The key beat is the beat at or just after the run's first property violation, else the last beat.
Presenter shots and the phone (its whole page, in a box that scrolls) are shown at half size, the embed at full size; click a picture for full size.</p>
${scenarios.map((s) => `<section id="${esc(s.id)}"><h2>${esc(s.id)}: ${esc(s.title)}</h2>
<p class="key">Key beat ${s.key.index} of ${s.key.of}, step ${s.key.seq}: “${esc(s.key.title)}” (${esc(s.key.why)})</p>
<div class="row">${SHOTS.map((c) => `<figure><a${c.fullPage ? ' class="tall"' : ''} href="${esc(`${s.id}-${c.file}.png`)}"><img class="${c.file}" src="${esc(`${s.id}-${c.file}.png`)}" alt="${esc(`${s.id}, ${c.label}`)}" loading="lazy"></a>
<figcaption>${esc(c.label)}${c.host ? ' (in a docs page)' : ''}${c.fullPage ? ' (whole page)' : ''}</figcaption></figure>`).join('\n')}</div></section>`).join('\n')}
</body></html>
`;
fs.writeFileSync(path.join(outdir, 'index.html'), html);
console.log(`${scenarios.length * SHOTS.length} screenshots and index.html in ${outdir}`);
if (problems.length) {
  console.error(`${problems.length} problems:\n${problems.join('\n')}`);
  process.exitCode = 1;
}
