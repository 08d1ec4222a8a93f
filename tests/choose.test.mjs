// The choosing page and the consensus-throughput chart (both served by the choosing bundle): from
// the library to #/choose, the questions answered by keyboard, the recommendation and its link;
// the chart view runs the experiment in WebAssembly and draws four charts and a table, names the
// cap of each row, shows etcd's published figures with their source, and re-runs the model from
// its form (a bad value refused with the range). axe-core finds no WCAG A/AA violation on
// either, and both are looked at on a projector and a phone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { useBrowser, audit, coordlabCli } from './browser.mjs';

const { open, shot } = useBrowser();
const dist = process.env.COORDLAB_DIST || new URL('../dist', import.meta.url).pathname;
const bundles = JSON.parse(coordlabCli('bundles'));
const builtBundles = new Set(fs.readdirSync(dist).map((f) => f.match(/^coordlab-(.+)-[0-9a-f]{8}\.wasm$/)?.[1]).filter(Boolean));
test('from the library, the choosing page answers the questions by keyboard with a linked recommendation', async () => {
  const page = await open();
  await page.getByRole('heading', { name: 'Scenario library' }).waitFor();
  const link = page.getByRole('link', { name: /Choosing a design/ });
  await link.focus();
  await page.keyboard.press('Enter');
  // The page lives in its own bundle: the loader reloads with it.
  await page.waitForFunction(() => document.documentElement.dataset.coordlab === 'choosing');
  await page.getByRole('heading', { name: 'Choosing a design' }).waitFor();
  await page.setViewportSize({ width: 853, height: 480 });
  const advice = page.locator('.recommendation');
  assert.match(await advice.textContent(), /Answer the questions/);

  // The first question: "Exclusive time" is its second answer.
  await page.getByRole('radio', { name: /^One write/ }).focus();
  await page.keyboard.press('ArrowDown');
  assert.ok(await page.getByRole('radio', { name: /^Exclusive time/ }).isChecked());
  // The resource checks a token; the lock must survive a store node's crash.
  await page.keyboard.press('Tab');
  await page.keyboard.press('Space');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Space');
  // We run etcd: the third answer of the last question.
  await page.keyboard.press('Tab');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  assert.ok(await page.getByRole('radio', { name: /^etcd/ }).isChecked());
  assert.match(await advice.locator('h2').textContent(), /etcd, ZooKeeper or a Kubernetes Lease, with a fencing token/);
  assert.equal(await advice.getByRole('link').getAttribute('href'), '#/play/consensus-lock');
  await shot(page, 'choose-853x480');
  await audit(page, 'the choosing page with a recommendation');

  // Only Redis: never single-instance Redis for correctness.
  await page.keyboard.press('ArrowUp');
  assert.ok(await page.getByRole('radio', { name: /^Redis/ }).isChecked());
  assert.match(await advice.locator('h2').textContent(), /Not Redis/);
  assert.deepEqual(await advice.getByRole('link').evaluateAll((as) => as.map((a) => a.getAttribute('href'))),
    ['#/play/redis-failover', '#/play/consensus-lock']);
  // The store need not survive a crash: Redis with a token from the acquiring script itself.
  await page.getByRole('radio', { name: /^No: while the store is down/ }).check();
  assert.match(await advice.locator('p').textContent(), /in one Lua script that returns the number/);
  assert.doesNotMatch(await advice.textContent(), /from the database/);
  assert.equal(await advice.getByRole('link').first().getAttribute('href'), '#/play/token-sources?source=redis-lua');

  // The rules of thumb: a checklist, each rule linked to the scenario that breaks without it.
  const rules = page.locator('.rules li');
  assert.ok((await rules.count()) >= 10);
  await page.getByRole('checkbox', { name: /fixed global order/ }).check();
  assert.equal(await rules.filter({ hasText: 'fixed global order' }).getByRole('link').getAttribute('href'), '#/play/deadlock?order=opposite');
  assert.equal(await rules.filter({ hasText: 'across a network call' }).getByRole('link').getAttribute('href'), '#/play/lock-across-call');
  assert.equal(await rules.filter({ hasText: 'Set the TTL' }).getByRole('link').getAttribute('href'), '#/play/zombie-worker?ttl_ms=30000&pause_ms=36000');
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, 'choose-390x844');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth + 1);
  assert.equal(overflow, false, 'nothing sticks out sideways on a phone');
  await page.close();
});

test('every combination of answers gets advice whose links open the scenarios they name', async () => {
  const page = await open('#/choose');
  await page.getByRole('heading', { name: 'Choosing a design' }).waitFor();
  const groups = await page.locator('.questions fieldset').count();
  const sizes = [];
  for (let q = 0; q < groups; q++) sizes.push(await page.locator('.questions fieldset').nth(q).getByRole('radio').count());
  const advice = page.locator('.recommendation');
  const links = new Map();
  const walk = async (q) => {
    if (q === groups) {
      const found = await advice.getByRole('link').evaluateAll((as) => as.map((a) => [a.getAttribute('href'), a.textContent]));
      assert.ok(found.length > 0, 'every combination gets a linked recommendation');
      for (const [href, text] of found) links.set(href, text);
      return;
    }
    for (let i = 0; i < sizes[q]; i++) {
      await page.locator('.questions fieldset').nth(q).getByRole('radio').nth(i).check();
      await walk(q + 1);
    }
  };
  await walk(0);
  assert.equal(sizes.reduce((a, b) => a * b, 1), 24);
  for (const [href, text] of await page.locator('.rules a[href^="#/play/"]').evaluateAll((as) => as.map((a) => [a.getAttribute('href'), a.textContent]))) {
    links.set(href, text);
  }
  await page.close();
  const checked = [];
  for (const [href, text] of links) {
    const id = href.match(/^#\/play\/([a-z0-9-]+)/)?.[1];
    assert.ok(id, `${href}: a player link`);
    assert.ok(text.startsWith(`${id}:`), `${href}: the link names its scenario (${text})`);
    const bundle = bundles.scenarios[id];
    assert.ok(bundle, `${href}: no scenario ${id}`);
    if (!builtBundles.has(bundle)) {
      // Not built here: the loader's route for it is all there is to check.
      assert.ok(process.env.COORDLAB_SOME_BUNDLES, `${id}: its bundle (${bundle}) is not in ${dist}; build it, or set COORDLAB_SOME_BUNDLES=1`);
      continue;
    }
    const title = coordlabCli('describe', id).split('\n')[0].split(' — ').slice(1).join(' — ');
    const player = await open(href);
    await player.waitForFunction((b) => document.documentElement.dataset.coordlab === b, bundle);
    await player.getByRole('heading', { name: title, level: 1 }).waitFor();
    assert.match(await player.evaluate(() => location.hash), new RegExp(`^#/play/${id}\\?`));
    await player.close();
    checked.push(href);
  }
  console.log(`${links.size} links; opened in the player: ${checked.join(', ') || 'none (their bundles are not built)'}`);
});

test('the throughput chart runs the experiment and draws its charts and table', async () => {
  const page = await open('#/experiment/consensus-throughput');
  await page.setViewportSize({ width: 853, height: 480 });
  await page.getByRole('heading', { name: /Consensus is for metadata/ }).waitFor();
  const started = Date.now();
  await page.locator('.experiment table.results tbody tr').first().waitFor();
  const sinceLoad = await page.evaluate(() => Math.round(performance.now()));
  console.log(`the table appeared ${Date.now() - started} ms after the heading, ${sinceLoad} ms after navigation`);
  assert.equal(await page.locator('.experiment .chart svg[role=img]').count(), 4);
  const rows = await page.locator('.experiment table.results:not(.published):not(.setup-result) tbody tr').evaluateAll((trs) =>
    trs.map((tr) => [tr.querySelector('th').textContent, Number(tr.querySelector('td').textContent)]));
  assert.equal(rows.length, 7);
  const [three, five, seven] = rows.slice(0, 3).map((r) => r[1]);
  assert.ok(three > five && five > seven, `7 < 5 < 3 servers: ${JSON.stringify(rows)}`);
  const groups = rows.slice(3).map((r) => r[1]);
  assert.ok(groups.every((w, i) => i === 0 || w > groups[i - 1]), `more groups, more writes: ${JSON.stringify(rows)}`);
  // Each chart's accessible name carries its numbers.
  assert.match(await page.locator('.chart svg title').first().textContent(), /3 servers: writes\/s \d+/);
  // The costs are labelled as assumptions; etcd's published figures and their source stand beside them.
  assert.match(await page.locator('.experiment .assumptions').textContent(), /Illustrative assumptions, not measurements/);
  assert.match(await page.locator('.experiment').textContent(), /Little's law/);
  const published = page.locator('.experiment table.published');
  assert.match(await published.locator('caption').textContent(), /etcd operations guide, "Performance" \(etcd 3\.2\.0; three members of 8 vCPUs/);
  assert.equal(await published.getByRole('link').getAttribute('href'), 'https://etcd.io/docs/v3.4/op-guide/performance/');
  const etcd = await published.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.textContent));
  assert.equal(etcd.length, 3);
  assert.ok(etcd[0].includes('583') && etcd[0].includes('1.6'), etcd[0]);
  assert.ok(etcd[1].includes('44341') && etcd[1].includes('22.0'), etcd[1]);
  assert.ok(etcd[2].includes('50104') && etcd[2].includes('20.0'), etcd[2]);
  // Each row names the cap that holds it: the 16-entry batch for 3 servers, the CPU for 5.
  const held = await page.locator('.experiment table.results:not(.published) tbody td.held-by').allTextContents();
  assert.match(held[0], /^batch \(\d+\)/);
  assert.match(held[1], /^CPU \(\d+\)/);
  await shot(page, 'throughput-853x480');
  await audit(page, 'the throughput chart');

  // The model's controls, by keyboard: a bad value is refused with a message naming the range…
  const batch = page.getByRole('textbox', { name: /Batch size/ });
  await batch.focus();
  await batch.fill('40');
  await page.keyboard.press('Enter');
  await page.getByRole('alert').waitFor();
  assert.match(await page.getByRole('alert').textContent(), /Batch size.*1\.\.=16/);
  assert.equal(await batch.getAttribute('aria-invalid'), 'true');
  await audit(page, 'the throughput form with an error');
  // …and a good one re-runs the model: batches of 4 commit fewer writes in a group of three.
  await batch.fill('4');
  await page.getByRole('textbox', { name: /Clients per group/ }).fill('32');
  await page.getByRole('button', { name: 'Run' }).focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction((before) => {
    const td = document.querySelector('.experiment table.results tbody tr td');
    return td && Number(td.textContent) !== before;
  }, three);
  assert.equal(await page.getByRole('alert').count(), 0);
  const rerun = await page.locator('.experiment table.results tbody tr').first().evaluate((tr) => Number(tr.querySelector('td').textContent));
  assert.ok(rerun < three, `a batch of 4 commits less: ${rerun} vs ${three}`);
  assert.match(await page.locator('.experiment table.results caption').first().textContent(), /32 clients per group.*batches of at most 4/);
  assert.match((await page.locator('.experiment table.results:not(.published) tbody td.held-by').allTextContents())[0], /^batch/);
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, 'throughput-390x844');
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth + 1), false,
    'the charts and the table fit a phone');
  await page.setViewportSize({ width: 400, height: 300 });
  await shot(page, 'throughput-400x300');
  await page.close();
});
