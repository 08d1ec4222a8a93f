// Browser end-to-end tests for the Raft chapter: crash a leader from the UI and watch a new
// leader emerge in a higher term; partition by groups, cut one link, drop a message, force an
// election timeout, and watch the election-timer arcs run down.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, property, tab, seekTo, logRows } from './browser.mjs';

const { open, shot } = useBrowser();

/** Rows of the Servers table as {server, role, term}. */
async function servers(page) {
  await tab(page, 'State');
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
  await seekTo(page, (t) => t.startsWith(`${before.server} -> `) && t.includes(`heartbeat term ${before.term}`), `${before.server} sends a heartbeat`);
  await tab(page, 'Faults');
  await page.getByRole('button', { name: `Crash ${before.server}`, exact: true }).click();
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  const after = await servers(page);
  const leader = after.find((s) => s.role === 'LEADER');
  assert.ok(leader, `no leader after the crash: ${JSON.stringify(after)}`);
  assert.notEqual(leader.server, before.server);
  assert.ok(leader.term > before.term, `${leader.term} should exceed ${before.term}`);
  await tab(page, 'State');
  assert.match(await property(page, 'election-safety').textContent(), /holds at every step/);
  await shot(page, '30-raft-crashed-leader');
  await page.close();
});

test('a partition: the minority leader cannot commit, and its entries are discarded on heal', async () => {
  const page = await open('#/play/raft-partition');
  await seekTo(page, (t) => t.includes('the network heals'), 'the scenario heals the partition');
  await page.getByRole('button', { name: 'Step back' }).click();
  await tab(page, 'State');
  const logs = await page.locator('table[data-table=Logs] tbody tr').allTextContents();
  assert.ok(logs.some((r) => r.startsWith('S1') && r.includes('not committed')), logs.join('\n'));
  assert.match(await page.locator('.unsafe-banner').textContent(), /believe they lead/);
  await page.getByRole('button', { name: 'Jump to the last step' }).click();
  await tab(page, 'State');
  const end = await page.locator('table[data-table=Logs] tbody tr').allTextContents();
  assert.ok(!end.some((r) => r.includes('not committed') && r.startsWith('S1') && r.includes('set z=3')), end.join('\n'));
  assert.match(await page.locator('.outcome').textContent(), /entries discarded: [1-9]/);
  await shot(page, '31-raft-partition-healed');
  await page.close();
});

// ---- The network controls, user inputs and the Raft card (issue 4, "Controls and views") ----

const card = (page, name) => page.locator(`g.node[data-node="${name}"]`);
/** The picture in words, as screen readers get it: one line per card, word then badges then details. */
const described = (page) => page.locator('figure.topology ul.visually-hidden').textContent();
const timer = (page, name) => page.locator(`.topology g.gauge[data-node="${name}"]`);
const remainingUs = async (page, name) => Number(await timer(page, name).getAttribute('data-remaining-us'));

test('partitioning 2 | 3 by groups: the minority refuses the client\'s write and commits nothing', async () => {
  const page = await open('#/play/raft-partition');
  // Right after S1 has won term 1, before the client's first write (0.5 s).
  await seekTo(page, (t) => t.startsWith('S1 -> S2: heartbeat term 1'), 'S1 sends its first heartbeat');
  await tab(page, 'Network');
  for (const name of ['S1', 'S2', 'client']) {
    await page.locator('.network').getByRole('checkbox', { name, exact: true }).check();
  }
  await page.getByRole('button', { name: '✂ Partition these from the rest (S1, S2, client)', exact: true }).click();
  assert.match(await page.locator('.narration .event-text').innerText(), /network partition cuts off \{S1, S2, client\}/);
  assert.match(decodeURIComponent(page.url()), /actions=\d+@partition:0\+1\+5&/);
  // The client is idle: the input sends its write at once, to S1 (the leader it knows).
  await tab(page, 'Faults');
  await page.getByRole('button', { name: 'Send a client request (client)', exact: true }).click();
  assert.match(await page.locator('.narration').textContent(), /sends request 1 \(set x=1\) to S1/);
  assert.match(await described(page), /client: \w+; writes 0\/5/);

  // Just before the scenario heals the network (1.8 s):
  await seekTo(page, (t) => t === 'the network heals', 'the network heals');
  await page.getByRole('button', { name: 'Step back' }).click();
  // Only what has happened so far (the log lists the future too, greyed).
  const texts = (await logRows(page)).filter((r) => !r.future).map((r) => r.text);
  assert.ok(texts.some((t) => /^S2 -> client: reply \d+: not the leader, try S1$/.test(t)),
    'a minority follower turned the write away');
  assert.ok(!texts.some((t) => /-> client: reply \d+: committed/.test(t)), 'no write was confirmed during the split');
  assert.match(await described(page), /client: \w+; writes 0\/5/);
  // S1 took the write into its log but could not commit it: a dashed cell without a ✓.
  const s1 = card(page, 'S1');
  assert.ok(await s1.locator('.cell.open').count() >= 1, 'S1 holds an uncommitted entry');
  assert.equal(await s1.locator('.cell.committed').count(), 0);
  assert.doesNotMatch(await s1.locator('.cell.open .cell-term').first().textContent(), /✓/);
  await tab(page, 'State');
  const logs = await page.locator('table[data-table=Logs] tbody tr').allTextContents();
  assert.ok(logs.some((r) => r.startsWith('S1') && r.includes('set x=1') && r.includes('not committed')), logs.join('\n'));
  assert.ok(!logs.some((r) => r.includes('✓ committed')), `nothing committed anywhere: ${logs.join('\n')}`);
  await shot(page, '32-raft-partition-by-groups');
  await page.close();
});

test('cutting one direction of a link draws it, that way only', async () => {
  const page = await open('#/play/raft-election');
  await seekTo(page, (t) => t.startsWith('S1 -> S2: heartbeat term 1'), 'S1 sends its first heartbeat');
  await tab(page, 'Network');
  const net = page.locator('.network');
  await net.getByRole('combobox', { name: 'From' }).selectOption({ label: 'S2' });
  await net.getByRole('combobox', { name: 'To' }).selectOption({ label: 'S3' });
  await page.getByRole('button', { name: '✂ Cut S2→S3 one way', exact: true }).click();
  assert.match(await page.locator('.narration .event-text').textContent(), /link S2 -> S3 is cut/);
  assert.match(decodeURIComponent(page.url()), /actions=\d+@cut:1:2&/);
  const drawn = page.locator('g.link-state.cut[data-link="S2->S3"]');
  assert.equal(await drawn.count(), 1);
  assert.equal(await drawn.locator('title').textContent(), '✂ cut S2 → S3');
  assert.equal(await page.locator('g.link-state[data-link="S3->S2"]').count(), 0, 'the other direction still works');
  assert.match(await net.locator('.broken-links').textContent(), /S2 → S3 cut: messages are lost/);
  await page.getByRole('button', { name: 'Heal all cut links' }).click();
  assert.equal(await page.locator('g.link-state').count(), 0, 'healed');
  await page.close();
});

test('dropping a message in flight removes it from the wire and the picture', async () => {
  const page = await open('#/play/raft-election');
  await seekTo(page, (t) => t.startsWith('S1: heartbeat round'), 'S1 sends a heartbeat round');
  await tab(page, 'Network');
  const rows = page.locator('.network .in-flight li');
  assert.ok(await rows.count() >= 2, 'heartbeats are in flight');
  const id = await rows.first().getAttribute('data-msg');
  assert.equal(await page.locator(`g.msg[data-msg="${id}"]`).count(), 1, 'drawn before the drop');
  await rows.first().getByRole('button', { name: /^Drop message m\d+ from S1 to S\d: heartbeat/ }).click();
  assert.match(await page.locator('.narration .event-text').textContent(), new RegExp(`message m${id} is lost$`));
  assert.equal(await page.locator(`.network .in-flight li[data-msg="${id}"]`).count(), 0);
  assert.equal(await page.locator(`g.msg[data-msg="${id}"]`).count(), 0);
  // Nor does it ever arrive: stepping on, the in-flight list never shows it again.
  for (let i = 0; i < 6; i++) {
    await page.getByRole('button', { name: 'Step forward' }).click();
    assert.equal(await page.locator(`.network .in-flight li[data-msg="${id}"]`).count(), 0);
  }
  await page.close();
});

test('holding one message in flight keeps it on the wire until it is released', async () => {
  const page = await open('#/play/raft-election');
  await seekTo(page, (t) => t.startsWith('S1: heartbeat round'), 'S1 sends a heartbeat round');
  await tab(page, 'Network');
  const rows = page.locator('.network .in-flight li');
  const id = await rows.first().getAttribute('data-msg');
  await rows.first().getByRole('button', { name: /^Hold message m\d+ from S1 to S\d/ }).click();
  assert.match(await page.locator('.narration .event-text').textContent(), new RegExp(`message m${id} is held where it is$`));
  const held = page.locator(`.network .in-flight li[data-msg="${id}"]`);
  for (let i = 0; i < 8; i++) {
    await page.getByRole('button', { name: 'Step forward' }).click();
    assert.match(await held.textContent(), /held until released/, `step ${i}`);
  }
  await held.getByRole('button', { name: /^Release message/ }).click();
  assert.match(await held.textContent(), /arrives /);
  // It arrives once, a little later.
  let arrived = false;
  for (let i = 0; i < 15 && !arrived; i++) {
    await page.getByRole('button', { name: 'Step forward' }).click();
    arrived = (await held.count()) === 0;
  }
  assert.ok(arrived, 'the released message was delivered');
  await page.close();
});

test('forcing a timeout on a follower makes it a candidate in a higher term', async () => {
  const page = await open('#/play/raft-election');
  await seekTo(page, (t) => t.startsWith('S1 -> S3: heartbeat term 1'), 'S1 sends S3 a heartbeat');
  const before = (await servers(page)).find((s) => s.server === 'S3');
  assert.equal(before.role, 'FOLLOWER');
  await tab(page, 'Faults');
  assert.equal(await page.getByRole('button', { name: 'Force election timeout (S1)' }).count(), 0, 'the leader offers none');
  await page.getByRole('button', { name: 'Force election timeout (S3)', exact: true }).click();
  assert.match(decodeURIComponent(page.url()), /actions=\d+@input:2:timeout&/);
  assert.match(await page.locator('.narration').textContent(), /S3's election timer is forced to run out now/);
  const after = (await servers(page)).find((s) => s.server === 'S3');
  assert.equal(after.role, 'CANDIDATE');
  assert.equal(after.term, before.term + 1);
  assert.match(await card(page, 'S3').textContent(), /candidate/);
  assert.match(await described(page), new RegExp(`S3: candidate; term ${before.term + 1};`));
  await shot(page, '33-raft-forced-timeout');
  await page.close();
});

test('every follower shows an election-timer arc whose time left runs down as you step', async () => {
  const page = await open('#/play/raft-election');
  await seekTo(page, (t) => t.startsWith('S1: heartbeat round'), 'S1 sends a heartbeat round');
  assert.equal(await timer(page, 'S1').count(), 0, 'the leader runs no election timer');
  let decreases = 0;
  for (let i = 0; i < 8; i++) {
    const a = await remainingUs(page, 'S4');
    await page.getByRole('button', { name: 'Step forward' }).click();
    const b = await remainingUs(page, 'S4');
    const text = await page.locator('.narration .event-text').textContent();
    // A heartbeat delivered to S4 restarts its timer; at any other step the arc only shrinks.
    if (/S1 -> S4: heartbeat/.test(text)) continue;
    assert.ok(b < a, `step ${text}: ${b} µs left should be under ${a} µs`);
    decreases++;
  }
  assert.ok(decreases >= 4, `the timer ran down at ${decreases} steps`);
  const gauge = timer(page, 'S4');
  const ms = Math.floor((await remainingUs(page, 'S4')) / 1000);
  // The time left in words where the card has room for it; always in the tooltip.
  if (await gauge.locator('.gauge-text').count()) assert.equal(await gauge.locator('.gauge-text').textContent(), `${ms} ms`);
  assert.match(await gauge.locator('title').textContent(), new RegExp(`^election timeout in ${ms} ms`));
  assert.match(await gauge.locator('.gauge-arc').getAttribute('stroke-dasharray'), /^\d{1,3} 100$/);
  // Screen readers get the same in words.
  assert.match(await described(page), new RegExp(`S4: follower[^]*election timeout in ${ms} ms`));
  await shot(page, '34-raft-election-timers');
  await page.close();
});

test('an input the node cannot take is kept in the script, marked as having had no effect', async () => {
  // S1 leads from early on; a leader runs no election timer to force.
  const page = await open('#/play/raft-election?actions=30@input:0:timeout&step=30');
  assert.match(await page.locator('.narration').textContent(), /S1 does not act on `timeout`: S1 is the leader/);
  await tab(page, 'Faults');
  assert.match(await page.locator('.faults .script').textContent(),
    /after step 29: user input `timeout` to S1 — no effect: S1 is the leader/);
  await tab(page, 'State');
  assert.match(await property(page, 'election-safety').textContent(), /holds/);
  await page.close();
});
