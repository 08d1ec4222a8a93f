// Browser end-to-end tests for chapter 6's lock services (the `services` bundle): each
// scenario opened in the player, moved beat by beat to the moment its story turns, with the
// narration, the property strip and an axe audit checked there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, audit, chip } from './browser.mjs';

const { open, shot } = useBrowser();

/** Clicks "next beat" until the beat card's title matches `title`. */
async function toBeat(page, title) {
  const next = page.locator('button.next-beat').first();
  for (let i = 0; i < 12; i++) {
    const card = await page.locator('aside.story').textContent();
    if (title.test(card)) return card;
    await next.click();
  }
  assert.fail(`never reached the beat ${title}`);
}

const CASES = [
  {
    id: 'redisson-watchdog', query: '', heading: "Redisson's watchdog", beat: /A wakes and writes: two writers/,
    narration: /The storage applies client-A's step 3/, broken: 'no-stale-write',
  },
  {
    id: 'redisson-watchdog', query: '?pause=stuck-thread', heading: "Redisson's watchdog", beat: /B is still waiting, three minutes on/,
    narration: /keep-alive/, holds: 'no-stale-write', brokenAtEnd: 'every-client-acquires',
  },
  {
    id: 'scheduled-job-guard', query: '', heading: 'ShedLock: one @Scheduled run', beat: /The job runs twice for one schedule/,
    narration: /the job has now run 2 times for one schedule/, broken: 'one-run-per-schedule',
  },
  {
    id: 'scheduled-job-guard', query: '?lock_at_least_for_ms=55000', heading: 'ShedLock: one @Scheduled run', beat: /ShedLock refuses the lock's settings/,
    narration: /lockAtLeastFor is longer than lockAtMostFor/, holds: 'one-run-per-schedule', refused: true,
  },
  {
    id: 'chubby-sequencer', query: '?check=yes', heading: 'Chubby: sequencer and lock-delay', beat: /A's late write is refused/,
    narration: /client-A's write carries 7, which is lower\. Refused/, holds: 'no-stale-write',
  },
  {
    id: 'hazelcast-fenced-lock', query: '', heading: 'Hazelcast FencedLock', beat: /A's write with fence 41 is refused/,
    narration: /client-A's write carries 41, which is lower\. Refused/, holds: 'no-stale-write',
  },
  {
    id: 'hazelcast-fenced-lock', query: '?pause_ms=10000', heading: 'Hazelcast FencedLock', beat: /B gets the lock once A lets go/,
    narration: /A finishes its steps and unlocks/, holds: 'no-stale-write',
  },
];

for (const c of CASES) {
  test(`${c.id}${c.query}: the key beat is told on screen`, async () => {
    const page = await open(`#/play/${c.id}${c.query}`);
    await page.getByRole('heading', { name: c.heading, level: 1 }).waitFor();
    const card = await toBeat(page, c.beat);
    assert.match(card, c.narration);
    if (c.broken) assert.match(await chip(page, c.broken).textContent(), /violated at step \d+|broke at step \d+/);
    if (c.holds) assert.doesNotMatch(await chip(page, c.holds).textContent(), /violated|broke/);
    if (c.refused) {
      // The app that fired first says so on its card; the other one, once it has fired too.
      const refused = () => page.locator('figure.topology text.node-word', { hasText: 'refused' }).count();
      assert.equal(await refused(), 1);
      await page.getByRole('button', { name: 'Jump to the last step' }).click();
      assert.equal(await refused(), 2);
    }
    await audit(page, `${c.id}${c.query} at its key beat`);
    if (c.brokenAtEnd) {
      // A liveness property is judged when the run ends: B never got the lock.
      assert.match(await chip(page, c.brokenAtEnd).textContent(), /not yet/);
      await page.getByRole('button', { name: 'Jump to the last step' }).click();
      assert.match(await chip(page, c.brokenAtEnd).textContent(), /violated|broke|never/);
    }
    await shot(page, `services-${c.id}${c.query ? '-' + c.query.slice(1).replace(/[=&]/g, '-') : ''}`);
    await page.close();
  });
}
