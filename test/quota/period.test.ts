// Quota periods (server/quota/period.ts): a day or an hour plan starts again at its boundary (UTC),
// with X-RateLimit-Reset and the 402 text following the period; a month plan answers and saves
// exactly as before periods; counts of every period survive a restart within their span.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BillingPlan } from '../../server/config/config.ts';
import { usageOf } from '../../server/admin/views.ts';
import { PERIOD_NAMES, spanAt, spanClock } from '../../server/quota/period.ts';
import { openQuotaStore, type LocalQuotaStore, type QuotaStoreOptions } from '../../server/quota/quota.ts';

const ALL = ['read', 'create', 'update', 'delete'] as const;
const daily: BillingPlan = { name: 'api', period: 'day', requests: 2, operations: [...ALL] };
const hourly: BillingPlan = { name: 'burst', period: 'hour', requests: 2, operations: [...ALL] };
const monthly: BillingPlan = { name: 'trial', monthlyRequests: 2, operations: [...ALL] };
const seconds = (iso: string): string => String(Date.parse(iso) / 1000);

/** A clock the test moves by hand. */
function clock(iso: string): { now: () => Date; set: (iso: string) => void } {
  let current = new Date(iso);
  return { now: () => current, set: (next) => void (current = new Date(next)) };
}

async function withStateDir(use: (stateDir: string) => Promise<void>): Promise<void> {
  const stateDir = await mkdtemp(join(tmpdir(), 'sheetrest-period-'));
  try {
    await use(stateDir);
  } finally {
    await rm(stateDir, { recursive: true, force: true });
  }
}

async function withStore(options: Omit<QuotaStoreOptions, 'stateDir'>, use: (store: LocalQuotaStore, stateDir: string) => Promise<void>): Promise<void> {
  await withStateDir(async (stateDir) => {
    const store = await openQuotaStore({ stateDir, ...options });
    try {
      await use(store, stateDir);
    } finally {
      await store.close();
    }
  });
}

test('each period has its key and bounds, in UTC', async (t) => {
  const cases: [string, (typeof PERIOD_NAMES)[number], string, string, string][] = [
    ['2024-03-15T12:34:56Z', 'month', '2024-03', '2024-03-01T00:00:00.000Z', '2024-04-01T00:00:00.000Z'],
    ['2024-03-15T12:34:56Z', 'day', '2024-03-15', '2024-03-15T00:00:00.000Z', '2024-03-16T00:00:00.000Z'],
    ['2024-03-15T12:34:56Z', 'hour', '2024-03-15T12', '2024-03-15T12:00:00.000Z', '2024-03-15T13:00:00.000Z'],
    ['2024-12-31T23:59:59.999Z', 'day', '2024-12-31', '2024-12-31T00:00:00.000Z', '2025-01-01T00:00:00.000Z'],
    ['2024-12-31T23:59:59.999Z', 'hour', '2024-12-31T23', '2024-12-31T23:00:00.000Z', '2025-01-01T00:00:00.000Z'],
    ['2024-02-28T23:00:00Z', 'day', '2024-02-28', '2024-02-28T00:00:00.000Z', '2024-02-29T00:00:00.000Z'],
    ['2024-02-29T10:00:00Z', 'day', '2024-02-29', '2024-02-29T00:00:00.000Z', '2024-03-01T00:00:00.000Z'],
    // The night clocks go back in Paris is an ordinary hour in UTC.
    ['2024-10-27T00:30:00Z', 'hour', '2024-10-27T00', '2024-10-27T00:00:00.000Z', '2024-10-27T01:00:00.000Z'],
  ];
  for (const [at, period, key, from, to] of cases) {
    await t.test(`${period} of ${at}`, () => {
      const span = spanAt(period, Date.parse(at));
      assert.deepEqual([span.key, new Date(span.from).toISOString(), new Date(span.to).toISOString()], [key, from, to]);
    });
  }
});

test('a remembered span is reused within its bounds and replaced at the boundary', () => {
  const hourOf = spanClock('hour');
  const first = hourOf(Date.parse('2024-03-15T12:00:00Z'));
  assert.equal(hourOf(Date.parse('2024-03-15T12:59:59.999Z')), first);
  assert.equal(hourOf(Date.parse('2024-03-15T13:00:00Z')).key, '2024-03-15T13');
});

test('a day plan refuses the 3rd request of the day and serves again at midnight UTC', async () => {
  const time = clock('2024-03-15T23:59:58Z');
  await withStore({ now: time.now }, async (store) => {
    const served = [store.take('api', daily, 'read'), store.take('api', daily, 'read')];
    assert.deepEqual(served.map((decision) => decision.headers), ['1', '0'].map((remaining) => ({
      'X-RateLimit-Limit': '2',
      'X-RateLimit-Remaining': remaining,
      'X-RateLimit-Plan': 'api',
      'X-RateLimit-Reset': seconds('2024-03-16T00:00:00Z'),
    })));
    const refused = store.take('api', daily, 'read');
    assert.equal(refused.allowed, false);
    assert.equal(refused.error?.status, 402);
    assert.equal(refused.error?.message, 'The daily allowance of 2 requests on the plan "api" is used up; it renews at 2024-03-16T00:00:00Z.');
    assert.equal(store.used('api', daily), 2);

    time.set('2024-03-16T00:00:00Z');
    assert.equal(store.used('api', daily), 0);
    const next = store.take('api', daily, 'read');
    assert.equal(next.allowed, true);
    assert.equal(next.headers['X-RateLimit-Remaining'], '1');
    assert.equal(next.headers['X-RateLimit-Reset'], seconds('2024-03-17T00:00:00Z'));
  });
});

test('an hour plan refuses the 3rd request of the hour and serves again on the hour', async () => {
  const time = clock('2024-03-15T12:30:00Z');
  await withStore({ now: time.now }, async (store) => {
    store.take('burst', hourly, 'read');
    assert.equal(store.take('burst', hourly, 'create').headers['X-RateLimit-Reset'], seconds('2024-03-15T13:00:00Z'));
    const refused = store.take('burst', hourly, 'read');
    assert.equal(refused.error?.message, 'The hourly allowance of 2 requests on the plan "burst" is used up; it renews at 2024-03-15T13:00:00Z.');
    assert.deepEqual(refused.headers, { 'X-RateLimit-Limit': '2', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Plan': 'burst', 'X-RateLimit-Reset': seconds('2024-03-15T13:00:00Z') });

    time.set('2024-03-15T12:59:59.999Z');
    assert.equal(store.take('burst', hourly, 'read').allowed, false);
    time.set('2024-03-15T13:00:00Z');
    const next = store.take('burst', hourly, 'read');
    assert.deepEqual(next.headers, { 'X-RateLimit-Limit': '2', 'X-RateLimit-Remaining': '1', 'X-RateLimit-Plan': 'burst', 'X-RateLimit-Reset': seconds('2024-03-15T14:00:00Z') });
  });
});

test('a month plan answers as before periods, with or without "period": "month" or "requests"', async (t) => {
  const plans: [string, BillingPlan][] = [
    ['monthlyRequests', monthly],
    ['period month', { ...monthly, period: 'month' }],
    ['requests', { name: 'trial', period: 'month', requests: 2, operations: [...ALL] }],
  ];
  for (const [name, plan] of plans) {
    await t.test(name, async () => {
      const time = clock('2024-03-31T23:30:00Z');
      await withStore({ now: time.now }, async (store, stateDir) => {
        assert.deepEqual(store.take('crm', plan, 'read').headers, { 'X-RateLimit-Limit': '2', 'X-RateLimit-Remaining': '1', 'X-RateLimit-Plan': 'trial', 'X-RateLimit-Reset': '1711929600' });
        store.take('crm', plan, 'read');
        assert.equal(store.take('crm', plan, 'read').error?.message, 'The monthly allowance of 2 requests on the plan "trial" is used up; it renews at 2024-04-01T00:00:00Z.');
        await store.flush();
        // The file a month plan has always written: no "periods".
        assert.equal(await readFile(join(stateDir, 'quota.json'), 'utf8'), '{\n  "version": 1,\n  "month": "2024-03",\n  "counts": {\n    "crm": 2\n  }\n}\n');
      });
    });
  }
});

test('each connection counts in its own plan\'s period, and a connection without a plan by the month', async () => {
  const time = clock('2024-03-15T12:00:00Z');
  await withStore({ now: time.now }, async (store) => {
    store.take('api', daily, 'read');
    store.take('burst', hourly, 'read');
    store.take('open', undefined, 'read');
    store.take('team', { name: 'team', period: 'hour', operations: [...ALL] }, 'read');
    time.set('2024-03-15T13:00:00Z');
    assert.deepEqual([store.used('api', daily), store.used('burst', hourly), store.used('open'), store.used('team', hourly)], [1, 0, 1, 0]);
    time.set('2024-03-16T00:00:00Z');
    assert.deepEqual([store.used('api', daily), store.used('open')], [0, 1]);
    // A plan whose period changed counts afresh in the new one.
    assert.equal(store.used('open', daily), 0);
  });
});

test('a restart keeps the counts of the current day and hour, and drops those of a past one', async () => {
  const time = clock('2024-03-15T12:10:00Z');
  await withStateDir(async (stateDir) => {
    const first = await openQuotaStore({ stateDir, now: time.now, flushDelayMs: 60_000 });
    first.take('api', daily, 'read');
    first.take('burst', hourly, 'read');
    first.take('burst', hourly, 'read');
    first.take('crm', monthly, 'read');
    await first.close();
    assert.deepEqual(JSON.parse(await readFile(join(stateDir, 'quota.json'), 'utf8')), {
      version: 1,
      month: '2024-03',
      counts: { crm: 1 },
      periods: { day: { key: '2024-03-15', counts: { api: 1 } }, hour: { key: '2024-03-15T12', counts: { burst: 2 } } },
    });

    time.set('2024-03-15T12:50:00Z');
    const second = await openQuotaStore({ stateDir, now: time.now });
    assert.deepEqual([second.used('api', daily), second.used('burst', hourly), second.used('crm', monthly)], [1, 2, 1]);
    assert.equal(second.take('burst', hourly, 'read').allowed, false);
    assert.equal(second.take('api', daily, 'read').headers['X-RateLimit-Remaining'], '0');
    await second.close();

    // Reopened the next hour: the hour's counts belong to the past, the day's and month's do not.
    time.set('2024-03-15T13:00:00Z');
    const third = await openQuotaStore({ stateDir, now: time.now });
    assert.deepEqual([third.used('api', daily), third.used('burst', hourly), third.used('crm', monthly)], [2, 0, 1]);
    await third.close();
    const saved = JSON.parse(await readFile(join(stateDir, 'quota.json'), 'utf8'));
    assert.deepEqual(saved.periods, { day: { key: '2024-03-15', counts: { api: 2 } } });
  });
});

test('the admin API\'s usage view names the span after the plan\'s period', async (t) => {
  const now = new Date('2024-03-15T12:34:56Z');
  const cases: [string, BillingPlan | undefined, object][] = [
    ['no plan', undefined, { month: '2024-03', requests: 7, plan: 'unlimited', limit: null, remaining: null, reset: 1711929600, resetAt: '2024-04-01T00:00:00Z' }],
    ['a month plan', monthly, { month: '2024-03', requests: 7, plan: 'trial', limit: 2, remaining: 0, reset: 1711929600, resetAt: '2024-04-01T00:00:00Z' }],
    ['a day plan', daily, { day: '2024-03-15', requests: 7, plan: 'api', limit: 2, remaining: 0, reset: 1710547200, resetAt: '2024-03-16T00:00:00Z' }],
    ['an hour plan', { ...hourly, requests: 10 }, { hour: '2024-03-15T12', requests: 7, plan: 'burst', limit: 10, remaining: 3, reset: 1710507600, resetAt: '2024-03-15T13:00:00Z' }],
  ];
  for (const [name, plan, expected] of cases) {
    await t.test(name, () => {
      const usage = usageOf({ plan }, 7, now);
      assert.deepEqual(usage, expected);
      // The span's name comes first, as "month" always did.
      assert.equal(Object.keys(usage)[0], Object.keys(expected)[0]);
    });
  }
});
