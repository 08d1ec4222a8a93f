// Browser end-to-end tests for the Raft chapter: crash a leader from the UI and watch a new
// leader emerge in a higher term.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, property } from './browser.mjs';

const { open, shot } = useBrowser();

/** Rows of the Servers table as {server, role, term}. */
async function servers(page) {
  const rows = await page.locator('table[data-table=Servers] tbody tr').evaluateAll((trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
  return rows.map(([server, role, term]) => ({ server, role, term: Number(term) }));
}

test('crashing the leader from the UI: a new leader in a higher term', async () => {
  const page = await open('#/play/raft-election');
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  const before = (await servers(page)).find((s) => s.role === 'LEADER');
  assert.ok(before, 'a leader at the end of the undisturbed run');
  // Go to the new leader's first heartbeat and crash it there.
  const texts = await page.locator('.event-log .log-row .text').allTextContents();
  const k = texts.findIndex((t) => t.startsWith(`${before.server} -> `) && t.includes(`heartbeat term ${before.term}`));
  assert.ok(k > 0, `no heartbeat from ${before.server}`);
  await page.locator('.event-log .log-row').nth(k).click();
  await page.getByRole('button', { name: `Crash ${before.server}`, exact: true }).click();
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  const after = await servers(page);
  const leader = after.find((s) => s.role === 'LEADER');
  assert.ok(leader, `no leader after the crash: ${JSON.stringify(after)}`);
  assert.notEqual(leader.server, before.server);
  assert.ok(leader.term > before.term, `${leader.term} should exceed ${before.term}`);
  assert.match(await property(page, 'election-safety').textContent(), /holds at every step/);
  await shot(page, '30-raft-crashed-leader');
  await page.close();
});

test('a partition: the minority leader cannot commit, and its entries are discarded on heal', async () => {
  const page = await open('#/play/raft-partition');
  const texts = await page.locator('.event-log .log-row .text').allTextContents();
  const heal = texts.findIndex((t) => t.includes('the network heals'));
  assert.ok(heal > 0, 'the scenario heals the partition');
  await page.locator('.event-log .log-row').nth(heal - 1).click();
  const logs = await page.locator('table[data-table=Logs] tbody tr').allTextContents();
  assert.ok(logs.some((r) => r.startsWith('S1') && r.includes('not committed')), logs.join('\n'));
  assert.match(await page.locator('.unsafe-banner').textContent(), /believe they lead/);
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  const end = await page.locator('table[data-table=Logs] tbody tr').allTextContents();
  assert.ok(!end.some((r) => r.includes('not committed') && r.startsWith('S1') && r.includes('set z=3')), end.join('\n'));
  assert.match(await page.locator('.outcome').textContent(), /entries discarded: [1-9]/);
  await shot(page, '31-raft-partition-healed');
  await page.close();
});
