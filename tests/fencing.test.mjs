// Browser tests for the services bundle's lease stories: where the lease table lives, fence
// mistakes and token sources. Each opens a variant, moves by beats to its key moment, checks
// what the story and the state say, runs axe-core, and saves screenshots at the projector,
// docs-iframe and phone sizes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, property, tab, audit } from './browser.mjs';

const { open, shot } = useBrowser();
const beatTitle = (page) => page.locator('.story .beat-title').textContent();
const writes = (page) => page.locator('table[data-table=writes] tbody tr').allTextContents();

async function goToBeat(page, title) {
  await page.getByRole('button', { name: new RegExp(`Go to beat \\d+: ${title}`) }).first().click();
  assert.match(await beatTitle(page), new RegExp(title));
}

async function sizes(page, name) {
  for (const [w, h, tag] of [[853, 480, 'projector'], [400, 300, 'iframe'], [390, 844, 'phone']]) {
    await page.setViewportSize({ width: w, height: h });
    await page.waitForTimeout(150);
    await shot(page, `${name}-${tag}`);
  }
  await page.setViewportSize({ width: 1400, height: 1000 });
}

test('lease-placement: a lagging read replica gives two holders', async () => {
  const page = await open('#/play/lease-placement?store=read-replica');
  await page.getByRole('heading', { name: 'Where the lease table lives', level: 1 }).waitFor();
  await goToBeat(page, 'Two holders: A with 33, B with 34');
  assert.match(await page.locator('.unsafe-banner').textContent(), /worker-A and worker-B each believe they hold the lease/);
  await audit(page, 'lease-placement read-replica, two holders');
  await sizes(page, 'services-placement-replica');
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  await tab(page, 'State');
  assert.match(await property(page, 'one-grant').textContent(), /violated at step \d+/);
  assert.match(await property(page, 'no-double-debit').textContent(), /violated at step \d+/);
  await page.close();
});

test('lease-placement: a replica that keeps up shows B the lease taken, and A finishes alone', async () => {
  const page = await open('#/play/lease-placement?store=read-replica&lag_ms=0');
  await goToBeat(page, 'B reads the replica: A holds it');
  assert.equal(await page.locator('.unsafe-banner').count(), 0);
  await goToBeat(page, 'B takes the lapsed lease: token 34');
  await audit(page, 'lease-placement read-replica lag 0, B takes the lapsed lease');
  await tab(page, 'State');
  assert.match(await property(page, 'one-grant').textContent(), /holds/);
  await page.close();
});

test('lease-placement: the primary lets one worker in; a store that is down stops the job', async () => {
  const page = await open('#/play/lease-placement?store=primary');
  await goToBeat(page, 'B gets zero rows and backs off');
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  await tab(page, 'State');
  assert.match(await property(page, 'one-grant').textContent(), /holds at every step/);
  assert.match(await page.locator('table[data-table=account_state] tbody').textContent(), /₹60/);
  await page.close();
  const down = await open('#/play/lease-placement?store=store-down');
  // The last beat is the last step: both workers have given up.
  await goToBeat(down, 'The job does not run: by design');
  await tab(down, 'State');
  assert.match(await property(down, 'job-completes').textContent(), /violated|never/);
  assert.match(await property(down, 'one-holder').textContent(), /holds at every step/);
  await down.close();
});

test('fence-mistakes: a timestamp fence refuses the real holder and lets the zombie in', async () => {
  const page = await open('#/play/fence-mistakes?fence=timestamp');
  await page.getByRole('heading', { name: 'Fence mistakes', level: 1 }).waitFor();
  await goToBeat(page, "A's stale write lands");
  await tab(page, 'State');
  const rows = await writes(page);
  assert.ok(rows.some((r) => r.includes('worker-B') && r.includes('✗ refused')), rows.join('\n'));
  assert.match(await property(page, 'no-stale-write').textContent(), /violated at step \d+/);
  await audit(page, 'fence-mistakes timestamp, stale write');
  await sizes(page, 'services-fence-timestamp');
  await page.close();
});

test('fence-mistakes: re-reading the token fences A back in; the lease counter refuses it', async () => {
  const page = await open('#/play/fence-mistakes?fence=reread-token');
  await goToBeat(page, "A's stale write lands");
  await tab(page, 'State');
  const a = (await writes(page)).filter((r) => r.includes('worker-A'));
  assert.match(a[1], /34.*✓ accepted/);
  await page.close();
  const right = await open('#/play/fence-mistakes?fence=lease-counter');
  await goToBeat(right, "A's write with 33 is refused");
  await tab(right, 'State');
  assert.match(await property(right, 'no-stale-write').textContent(), /holds at every step/);
  await right.close();
});

test('token-sources: etcd refuses the zombie; Redis failing over reissues 33', async () => {
  const page = await open('#/play/token-sources?source=etcd');
  await page.getByRole('heading', { name: 'Where a token comes from', level: 1 }).waitFor();
  await goToBeat(page, 'B takes over with a higher token');
  assert.match(await page.locator('.story').textContent(), /35/);
  await goToBeat(page, "A's write with 33 is refused");
  await page.close();
  const redis = await open('#/play/token-sources?source=redis-lua&failover=yes');
  await goToBeat(redis, 'B gets the lease, with token 33 again');
  await tab(redis, 'State');
  assert.match(await property(redis, 'tokens-unique').textContent(), /violated at step \d+/);
  await audit(redis, 'token-sources redis failover, 33 reissued');
  await sizes(redis, 'services-tokens-redis-failover');
  await redis.close();
});
