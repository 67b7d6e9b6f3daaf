// Monthly allowances: remaining counts, 402 throttle, plans without an operation, the month
// turning (UTC), and counts that survive closing and reopening the store.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError } from '../../lib/errors.ts';
import type { BillingPlan } from '../../server/config/config.ts';
import { PERIODS } from '../../server/quota/period.ts';
import { openQuotaStore } from '../../server/quota/quota.ts';
import type { QuotaDecision, QuotaStoreOptions } from '../../server/quota/quota.ts';

const ALL = ['read', 'create', 'update', 'delete'] as const;
const trial: BillingPlan = { name: 'trial', monthlyRequests: 3, operations: [...ALL] };
const MARCH_RESET = String(Date.UTC(2024, 3, 1) / 1000);

async function withStateDir(use: (stateDir: string) => Promise<void>): Promise<void> {
  const stateDir = await mkdtemp(join(tmpdir(), 'sheetrest-quota-'));
  try {
    await use(stateDir);
  } finally {
    await rm(stateDir, { recursive: true, force: true });
  }
}

/** A clock the test moves by hand. */
function clock(iso: string): { now: () => Date; set: (iso: string) => void } {
  let current = new Date(iso);
  return { now: () => current, set: (next) => void (current = new Date(next)) };
}

async function withStore(options: Omit<QuotaStoreOptions, 'stateDir'>, use: (store: Awaited<ReturnType<typeof openQuotaStore>>, stateDir: string) => Promise<void>): Promise<void> {
  await withStateDir(async (stateDir) => {
    const store = await openQuotaStore({ stateDir, ...options });
    try {
      await use(store, stateDir);
    } finally {
      await store.close();
    }
  });
}

function assertThrottled(decision: QuotaDecision): void {
  assert.equal(decision.allowed, false);
  assert.ok(decision.error instanceof ApiError);
  assert.equal(decision.error.code, 'throttle');
  assert.equal(decision.error.status, 402);
}

test('with a limit of 3, requests 1 to 3 are served and the 4th gets 402 throttle', async () => {
  const time = clock('2024-03-15T12:00:00Z');
  await withStore({ now: time.now }, async (store) => {
    for (const remaining of ['2', '1', '0']) {
      const decision = store.take('demo', trial, 'read');
      assert.equal(decision.allowed, true);
      assert.equal(decision.error, undefined);
      assert.deepEqual(decision.headers, {
        'X-RateLimit-Limit': '3',
        'X-RateLimit-Remaining': remaining,
        'X-RateLimit-Plan': 'trial',
        'X-RateLimit-Reset': MARCH_RESET,
      });
    }
    for (let refused = 0; refused < 2; refused++) {
      const decision = store.take('demo', trial, 'create');
      assertThrottled(decision);
      assert.match(decision.error?.message ?? '', /monthly allowance of 3 requests .* renews at 2024-04-01T00:00:00Z/);
      assert.deepEqual(decision.headers, {
        'X-RateLimit-Limit': '3',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Plan': 'trial',
        'X-RateLimit-Reset': MARCH_RESET,
      });
    }
    // Refusals for quota do not count.
    assert.equal(store.used('demo'), 3);
    // Another connection has its own count.
    assert.equal(store.take('other', trial, 'read').headers['X-RateLimit-Remaining'], '2');
  });
});

test('a limit of 0 refuses every request', async () => {
  await withStore({}, async (store) => {
    assertThrottled(store.take('demo', { name: 'closed', monthlyRequests: 0, operations: [...ALL] }, 'read'));
    assert.equal(store.used('demo'), 0);
  });
});

test('without a monthly limit only X-RateLimit-Plan: unlimited is sent', async (t) => {
  const cases: [string, BillingPlan | undefined][] = [
    ['no plan', undefined],
    ['a plan without monthlyRequests', { name: 'team', operations: [...ALL] }],
  ];
  for (const [name, plan] of cases) {
    await t.test(name, async () => {
      await withStore({}, async (store) => {
        for (let request = 0; request < 5; request++) {
          const decision = store.take('demo', plan, 'delete');
          assert.equal(decision.allowed, true);
          assert.deepEqual(decision.headers, { 'X-RateLimit-Plan': 'unlimited' });
        }
        // Still counted, so that a limit added mid-month applies to the month's real use.
        assert.equal(store.used('demo'), 5);
      });
    });
  }
});

test('an operation the plan leaves out gets 402 throttle and does not count', async (t) => {
  const readOnlyPlan: BillingPlan = { name: 'viewer', monthlyRequests: 10, operations: ['read'] };
  for (const operation of ['create', 'update', 'delete'] as const) {
    await t.test(operation, async () => {
      const time = clock('2024-03-15T12:00:00Z');
      await withStore({ now: time.now }, async (store) => {
        const decision = store.take('demo', readOnlyPlan, operation);
        assertThrottled(decision);
        assert.equal(decision.error?.message, `The plan "viewer" does not include ${operation} requests.`);
        assert.equal(decision.headers['X-RateLimit-Remaining'], '10');
        assert.equal(store.used('demo'), 0);
        assert.equal(store.take('demo', readOnlyPlan, 'read').allowed, true);
      });
    });
  }
  await t.test('unlimited plan without the operation', async () => {
    await withStore({}, async (store) => {
      const decision = store.take('demo', { name: 'viewer', operations: ['read'] }, 'create');
      assertThrottled(decision);
      assert.deepEqual(decision.headers, { 'X-RateLimit-Plan': 'unlimited' });
    });
  });
});

test('the month turning (UTC) starts the count again', async () => {
  const time = clock('2024-01-31T23:59:59Z');
  await withStore({ now: time.now }, async (store) => {
    for (let request = 0; request < 3; request++) store.take('demo', trial, 'read');
    const refused = store.take('demo', trial, 'read');
    assertThrottled(refused);
    assert.equal(refused.headers['X-RateLimit-Reset'], String(Date.UTC(2024, 1, 1) / 1000));
    time.set('2024-02-01T00:00:00Z');
    const served = store.take('demo', trial, 'read');
    assert.equal(served.allowed, true);
    assert.equal(served.headers['X-RateLimit-Remaining'], '2');
    assert.equal(served.headers['X-RateLimit-Reset'], String(Date.UTC(2024, 2, 1) / 1000));
  });
});

test('the reset is the first second of the next month, UTC', async (t) => {
  const cases: [string, string, string][] = [
    ['2024-03-15T12:00:00Z', '2024-03', '2024-04-01T00:00:00.000Z'],
    ['2024-12-31T23:59:59.999Z', '2024-12', '2025-01-01T00:00:00.000Z'],
    ['2024-02-29T10:00:00Z', '2024-02', '2024-03-01T00:00:00.000Z'],
    // 1 April 01:30 in Paris is still March in UTC.
    ['2024-03-31T23:30:00Z', '2024-03', '2024-04-01T00:00:00.000Z'],
  ];
  for (const [at, month, reset] of cases) {
    await t.test(at, () => {
      assert.equal(PERIODS.month.key(new Date(at)), month);
      assert.equal(new Date(PERIODS.month.next(new Date(at))).toISOString(), reset);
    });
  }
});

test('counts survive closing and reopening the store', async () => {
  const time = clock('2024-03-15T12:00:00Z');
  await withStateDir(async (stateDir) => {
    const first = await openQuotaStore({ stateDir, now: time.now, flushDelayMs: 60_000 });
    first.take('demo', trial, 'read');
    first.take('demo', trial, 'read');
    first.take('open', undefined, 'read');
    await first.close();
    assert.throws(() => first.take('demo', trial, 'read'), /closed/);

    const second = await openQuotaStore({ stateDir, now: time.now });
    assert.equal(second.used('demo'), 2);
    assert.equal(second.used('open'), 1);
    assert.equal(second.take('demo', trial, 'read').headers['X-RateLimit-Remaining'], '0');
    assertThrottled(second.take('demo', trial, 'read'));
    await second.close();

    // Reopened in the next month, the saved counts belong to the past.
    time.set('2024-04-01T00:00:00Z');
    const third = await openQuotaStore({ stateDir, now: time.now });
    assert.equal(third.used('demo'), 0);
    await third.close();
    const saved = JSON.parse(await readFile(join(stateDir, 'quota.json'), 'utf8'));
    assert.deepEqual(saved, { version: 1, month: '2024-04', counts: {} });
  });
});

test('counts reach the disk by themselves within the flush window', async () => {
  await withStore({ flushDelayMs: 20 }, async (store, stateDir) => {
    store.take('demo', trial, 'read');
    store.take('__proto__', trial, 'read');
    const file = join(stateDir, 'quota.json');
    let saved: { counts?: Record<string, number> } = {};
    for (let attempt = 0; attempt < 100 && saved.counts?.demo !== 1; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      saved = JSON.parse(await readFile(file, 'utf8').catch(() => '{}'));
    }
    assert.equal(saved.counts?.demo, 1);
    assert.equal(Object.hasOwn(saved.counts ?? {}, '__proto__'), true);
  });
});

test('flushSync writes pending counts at once', async () => {
  await withStore({ flushDelayMs: 60_000 }, async (store, stateDir) => {
    store.take('demo', trial, 'read');
    store.flushSync();
    const saved = JSON.parse(await readFile(join(stateDir, 'quota.json'), 'utf8'));
    assert.equal(saved.counts.demo, 1);
  });
});

test('a damaged quota file stops the start-up instead of handing out a new allowance', async (t) => {
  for (const text of ['{"version": 1, "month": "2024-03", "counts": {"demo": "many"}}', '{"version": 1, "mon', '']) {
    await t.test(text, async () => {
      await withStateDir(async (stateDir) => {
        await writeFile(join(stateDir, 'quota.json'), text);
        await assert.rejects(openQuotaStore({ stateDir }), /quota\.json is damaged; fix it, or delete it/);
      });
    });
  }
});

test('the state folder is created when missing', async () => {
  await withStateDir(async (parent) => {
    const stateDir = join(parent, 'nested', '.sheetrest');
    const store = await openQuotaStore({ stateDir });
    store.take('demo', undefined, 'read');
    await store.close();
    const saved = JSON.parse(await readFile(join(stateDir, 'quota.json'), 'utf8'));
    assert.equal(saved.counts.demo, 1);
  });
});
