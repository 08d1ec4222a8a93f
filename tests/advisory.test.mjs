// Browser end-to-end test of `advisory-locks` (bundle `locks`): with colliding job names it
// moves by beats to the refusal of the unrelated invoice job, shows the narration and the
// advisory-lock table (the key as a number, who holds it, in which scope), reports no
// console error, and passes axe-core.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, tab, property, audit } from './browser.mjs';

const { open, shot } = useBrowser();
const table = (page, title) => page.locator(`table[data-table="${title}"] tbody`).textContent();
const beat = (page, title) => page.getByRole('button', { name: new RegExp(`Go to beat \\d+: ${title}`) }).click();

test('advisory-locks with colliding names: the unrelated invoice job is refused', async () => {
  const page = await open('#/play/advisory-locks?names=colliding');
  await page.getByRole('heading', { name: 'Advisory locks', level: 1 }).waitFor();
  await beat(page, 'The unrelated invoice job is refused');
  const main = await page.locator('main').textContent();
  assert.match(main, /hashtext\('job:invoice-21142'\) is also 1980164416/, 'the narration names the shared key');
  await tab(page, 'State');
  const locks = await table(page, 'advisory locks (pg_locks)');
  assert.match(locks, /1980164416\s*worker-1 \(pid 4101\)\s*transaction\s*job:report-5661/, locks);
  const jobs = await table(page, 'jobs');
  assert.match(jobs, /job:invoice-21142\s*1980164416/, jobs);
  await audit(page, 'advisory-locks at the collision');
  await shot(page, '43-advisory-locks-collision');
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  assert.match(await property(page, 'unrelated-jobs-never-exclude').textContent(), /violated at step \d+/);
  await page.close();
});
