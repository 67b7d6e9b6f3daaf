// How quota snapshots reach the disk: a write that stalls (waiting for the file thread pool or
// its fsync) does not hold back later flushes, an older snapshot finishing late never replaces a
// newer one, flushSync covers a snapshot still on its way, and quota.json is private (0600).
// Stalls are injected through the store's writer, never timed on a real disk.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { BillingPlan } from '../../server/config/config.ts';
import { openQuotaStore, type LocalQuotaStore } from '../../server/quota/quota.ts';
import { diskWriter, type AtomicWriter } from '../../server/durable/state.ts';

const plan: BillingPlan = { name: 'trial', monthlyRequests: 100, operations: ['read', 'create', 'update', 'delete'] };

/** The disk writer, except that the snapshots numbered in `stalled` wait for `release()` before they start. */
function stallingWriter(stalled: readonly number[]): { writer: AtomicWriter; release: () => void; discarded: string[] } {
  let prepared = 0;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const discarded: string[] = [];
  return {
    release,
    discarded,
    writer: {
      async prepare(path, data) {
        prepared += 1;
        if (stalled.includes(prepared)) await gate;
        return diskWriter.prepare(path, data);
      },
      commit: (temporary, path) => diskWriter.commit(temporary, path),
      async discard(temporary) {
        discarded.push(temporary);
        await diskWriter.discard(temporary);
      },
    },
  };
}

async function withStateDir(use: (stateDir: string) => Promise<void>): Promise<void> {
  const stateDir = await mkdtemp(join(tmpdir(), 'sheetrest-quota-writes-'));
  try {
    await use(stateDir);
  } finally {
    await rm(stateDir, { recursive: true, force: true });
  }
}

async function saved(stateDir: string): Promise<number | undefined> {
  const text = await readFile(join(stateDir, 'quota.json'), 'utf8').catch(() => '{}');
  return (JSON.parse(text) as { counts?: Record<string, number> }).counts?.demo;
}

function take(store: LocalQuotaStore, times: number): void {
  for (let i = 0; i < times; i++) assert.equal(store.take('demo', plan, 'read').allowed, true);
}

/** Fails instead of hanging when `promise` is held back; generous, as it only guards a hang. */
function unlessHeld<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const held = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} was held back by the stalled write`)), 5000);
  });
  return Promise.race([promise, held]).finally(() => clearTimeout(timer));
}

test('a stalled quota write does not hold back a later flush, and never overwrites it when it ends', async () => {
  await withStateDir(async (stateDir) => {
    const stall = stallingWriter([1]);
    const store = await openQuotaStore({ stateDir, flushDelayMs: 60_000, writer: stall.writer });
    take(store, 1);
    const first = store.flush(); // stalls
    take(store, 2);
    await unlessHeld(store.flush(), 'the second flush');
    assert.equal(await saved(stateDir), 3, 'the newer counts are on disk while the first write is still stuck');
    stall.release();
    await first;
    assert.equal(await saved(stateDir), 3, 'the older snapshot, finished late, was dropped');
    assert.equal(stall.discarded.length, 1);
    await store.close();
    assert.deepEqual((await readdir(stateDir)).sort(), ['quota.json'], 'no temp file left');
  });
});

test('flushSync writes counts whose snapshot is still on its way', async () => {
  await withStateDir(async (stateDir) => {
    const stall = stallingWriter([1]);
    const store = await openQuotaStore({ stateDir, flushDelayMs: 60_000, writer: stall.writer });
    take(store, 4);
    const stuck = store.flush();
    // The process is about to exit: the stuck write will never finish.
    store.flushSync();
    assert.equal(await saved(stateDir), 4);
    stall.release();
    await stuck;
    assert.equal(await saved(stateDir), 4);
    await store.close();
  });
});

test('quota.json is readable by its owner only, like the journals', async () => {
  await withStateDir(async (stateDir) => {
    const cases: [string, (store: LocalQuotaStore) => Promise<void> | void][] = [
      ['flush', (store) => store.flush()],
      ['flushSync', (store) => store.flushSync()],
    ];
    for (const [name, write] of cases) {
      const store = await openQuotaStore({ stateDir, flushDelayMs: 60_000 });
      take(store, 1);
      await write(store);
      assert.equal(((await stat(join(stateDir, 'quota.json'))).mode & 0o777).toString(8), '600', name);
      await store.close();
      await rm(join(stateDir, 'quota.json'));
    }
  });
});
