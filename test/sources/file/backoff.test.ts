// When a failing fold is tried again, and which failures are logged: the wait doubles from
// foldAfterMs up to five minutes, a cause is news once, and a success after failures is news.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FoldBackoff, RETRY_CAP_MS } from '../../../server/sources/file/backoff.ts';

test('FoldBackoff: waits double up to the cap', async (t) => {
  const cases: [number, number[]][] = [
    [200, [200, 400, 800, 1600, 3200]],
    [0, [1, 2, 4, 8]],
    [200_000, [200_000, RETRY_CAP_MS, RETRY_CAP_MS]],
    [Infinity, [RETRY_CAP_MS, RETRY_CAP_MS]],
  ];
  for (const [foldAfterMs, waits] of cases) {
    await t.test(`foldAfterMs ${foldAfterMs}`, () => {
      const backoff = new FoldBackoff(foldAfterMs);
      assert.equal(backoff.waitMs(0), 0);
      for (const [failures, wait] of waits.entries()) {
        backoff.failed('disk full', 1000);
        assert.equal(backoff.waitMs(1000), wait);
        assert.equal(backoff.failures, failures + 1);
      }
      assert.equal(backoff.waitMs(1000 + RETRY_CAP_MS), 0);
    });
  }
});

test('FoldBackoff: a cause is news once, and recovery after failures is news', () => {
  const backoff = new FoldBackoff(200);
  assert.equal(backoff.succeeded(), false, 'nothing had failed');
  assert.equal(backoff.failed('ENOSPC', 0), true);
  assert.equal(backoff.failed('ENOSPC', 0), false);
  assert.equal(backoff.failed('EIO', 0), true);
  assert.equal(backoff.cause, 'EIO');
  assert.equal(backoff.succeeded(), true);
  assert.equal(backoff.cause, null);
  assert.equal(backoff.failures, 0);
  assert.equal(backoff.waitMs(0), 0);
  backoff.stopped('read-only');
  assert.equal(backoff.cause, 'read-only');
});
