// Issue 20, part 13: once a busy server goes quiet, the memory its busy spell took is given back
// by one full collection (server/runtime/idle-trim.ts). The decisions are checked with a fake process:
// no timing, no memory figures (those belong to bench/memory.ts mixed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IdleTrim, processProbe, QUIET_CPU_SHARE, TRIM_CHECK_MS, TRIM_GROWTH_BYTES, type TrimProbe } from '../../server/runtime/idle-trim.ts';

const MB = 1024 * 1024;

/** A process whose clock, CPU time and resident set the test moves; a collection brings the resident set to `live`. */
function fakeProcess(): TrimProbe & { rssBytes: number; live: number; cpu: number; clock: number; collections: number; step(busyShare: number, rss?: number): void } {
  const fake = {
    rssBytes: 80 * MB,
    live: 80 * MB,
    cpu: 0,
    clock: 0,
    collections: 0,
    rss: () => fake.rssBytes,
    cpuMicros: () => fake.cpu,
    now: () => fake.clock,
    collect: () => {
      fake.collections++;
      fake.rssBytes = fake.live;
      return true;
    },
    /** One check interval passes, with the process busy for `busyShare` of it. */
    step(busyShare: number, rss?: number) {
      fake.clock += TRIM_CHECK_MS;
      fake.cpu += busyShare * TRIM_CHECK_MS * 1000;
      if (rss !== undefined) fake.rssBytes = rss;
    },
  };
  return fake;
}

test('a server that grew under load is trimmed once it goes quiet, and only then', () => {
  const fake = fakeProcess();
  const trim = new IdleTrim(fake);
  fake.step(0);
  assert.equal(trim.check(), true, 'the start (80 MB, quiet) is past an empty baseline: one trim sets the baseline');
  // Under load the resident set grows; no collection is forced while requests are answered.
  for (const rss of [150, 300, 500]) {
    fake.step(0.9, rss * MB);
    assert.equal(trim.check(), false, `busy at ${rss} MB`);
  }
  fake.step(0);
  assert.equal(trim.check(), true, 'quiet after growing by far more than the threshold');
  assert.equal(fake.rssBytes, fake.live);
  assert.equal(fake.collections, 2);
});

test('a quiet server is not trimmed again until it has grown past the threshold', () => {
  const fake = fakeProcess();
  const trim = new IdleTrim(fake);
  fake.step(0);
  trim.check();
  const cases: [string, number, number, boolean][] = [
    ['idle, unchanged', 0, 80 * MB, false],
    ['idle, grown by less than the threshold', 0, 80 * MB + TRIM_GROWTH_BYTES - 1, false],
    ['a little work, grown past it', QUIET_CPU_SHARE * 2, 80 * MB + TRIM_GROWTH_BYTES, false],
    ['quiet again, grown past it', QUIET_CPU_SHARE / 2, 80 * MB + TRIM_GROWTH_BYTES, true],
  ];
  for (const [label, busy, rss, trims] of cases) {
    fake.step(busy, rss);
    assert.equal(trim.check(), trims, label);
  }
});

test('data that really grew is not collected over and over: the trimmed size is the next baseline', () => {
  const fake = fakeProcess();
  const trim = new IdleTrim(fake);
  // The tab grew: what a collection leaves is now 300 MB.
  fake.live = 300 * MB;
  fake.step(0, 400 * MB);
  assert.equal(trim.check(), true);
  for (let i = 0; i < 10; i++) {
    fake.step(0);
    assert.equal(trim.check(), false, `look ${i} after the trim`);
  }
  assert.equal(trim.trims, 1);
});

test('where the runtime offers no full collection, nothing is counted as trimmed', () => {
  const fake = fakeProcess();
  const trim = new IdleTrim({ ...fake, collect: () => false });
  fake.step(0, 500 * MB);
  assert.equal(trim.check(), false);
  assert.equal(trim.trims, 0);
});

test('each runtime offers the full collection, and it leaves no gc function on the global object', () => {
  const probe = processProbe();
  assert.equal(probe.collect(), true);
  assert.equal(typeof (globalThis as { gc?: unknown }).gc, 'undefined');
});
