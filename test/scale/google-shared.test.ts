// The Google source's per-tab reads (issue 12) with a spreadsheet's shared version and write
// lease (issue 11, server/sources/google/shared-spreadsheet.ts), against the emulator and an in-memory stand-in
// for Redis: a tab kept from before another instance's write is read again (that tab only, and
// the same object when unchanged); a write runs under the lease, checks its fence before sending
// and bumps the version before answering; the written tab is kept at the new version only when
// its basis was at the version just before. Redis itself is exercised in redis-cluster.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiError } from '../../lib/errors.ts';
import { Secret } from '../../server/config/config.ts';
import { startEmulator } from '../../tools/google-emulator/mod.ts';
import type { SpreadsheetCoordination } from '../../server/sources/google/shared-spreadsheet.ts';
import { openGoogleSource } from '../../server/sources/google/mod.ts';
import { appOver } from '../helpers/app.ts';
import { upstreamReads } from '../helpers/google.ts';

const TOKEN = 'writer-token';
const TABS = ['People', 'Orders'];

interface Context {
  after(fn: () => unknown): void;
}

/** Redis as one spreadsheet's coordination sees it, in memory; `others` stands for other instances. */
class FakeShared implements SpreadsheetCoordination {
  current = 0;
  /** null: Redis cannot say. */
  answer: 'version' | null = 'version';
  /** How much the next changed() adds (2: another instance's write slipped in, as after a Redis restart). */
  step = 1;
  lost = false;
  readonly calls: string[] = [];

  version(): Promise<number | null> {
    this.calls.push('version');
    return Promise.resolve(this.answer === null ? null : this.current);
  }

  changed(): Promise<number | null> {
    this.calls.push('changed');
    this.current += this.step;
    this.step = 1;
    return Promise.resolve(this.current);
  }

  async underLease<T>(step: (fence: () => Promise<void>) => Promise<T>): Promise<T> {
    this.calls.push('lease');
    try {
      return await step(() => {
        this.calls.push('fence');
        return this.lost ? Promise.reject(apiError('upstream_unavailable', 'The write lease was lost; nothing more was sent.')) : Promise.resolve();
      });
    } finally {
      this.calls.push('release');
    }
  }

  /** A write on another instance. */
  elsewhere(): void {
    this.current++;
  }
}

async function setUp(t: Context) {
  const emulator = await startEmulator();
  const spreadsheetId = emulator.createSpreadsheet({
    sheets: TABS.map((title, n) => ({ title, rows: [['Name', 'Tab'], ...Array.from({ length: 20 }, (_, i) => [`${title} ${i}`, n])] })),
    access: { [TOKEN]: 'writer' },
  });
  const shared = new FakeShared();
  const source = await openGoogleSource({
    spreadsheetId,
    rootUrl: emulator.rootUrl,
    auth: { kind: 'accessToken', token: new Secret(TOKEN) },
    freshnessMs: 60_000,
    retry: { retries: 0 },
    shared: () => shared,
  });
  t.after(async () => {
    await source.close();
    await emulator.close();
  });
  const call = await appOver(t, source);
  return { emulator, source, shared, call };
}

const json = (method: string, body: unknown): RequestInit => ({ method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

test('a read with a shared version: a tab kept from an older one is read again, that tab only, the same object when unchanged', async (t) => {
  const { emulator, source, shared } = await setUp(t);
  const orders = (await source.read({ tab: 'Orders' })).tabs.find((tab) => tab.name === 'Orders');
  await source.read({ tab: 'People' });
  emulator.resetRequests();
  await source.read({ tab: 'Orders' });
  assert.deepEqual(upstreamReads(emulator), [], 'the same version, within the window: from memory');
  shared.elsewhere();
  const again = (await source.read({ tab: 'Orders' })).tabs.find((tab) => tab.name === 'Orders');
  assert.deepEqual(upstreamReads(emulator), ["tab 'Orders'!1:10000"], 'another instance wrote: the tab asked for, and only it');
  assert.ok(orders !== undefined && again === orders, 'read again unchanged: the same object (kept answers stay valid)');
  await source.read({ tab: 'Orders' });
  assert.equal(emulator.requests.length, 1, 'kept at the new version now');
  shared.answer = null;
  shared.elsewhere();
  await source.read({ tab: 'People' });
  assert.equal(emulator.requests.length, 1, 'Redis cannot say: what is kept is served within the window');
  shared.answer = 'version';
  await source.read({ tab: 'People' });
  assert.deepEqual(upstreamReads(emulator).slice(1), ["tab 'People'!1:10000"], 'Redis answers again: People is behind and read again');
});

test('a write under the lease: fence before sending, version bumped before the answer, the tab kept at the new version', async (t) => {
  const cases: { name: string; before: (shared: FakeShared) => void; upstream: string[]; after: string[] }[] = [
    { name: 'POST on a tab kept at the current version plans on it', before: () => undefined, upstream: ["POST 'People'!A22:append"], after: [] },
    {
      name: 'POST after another instance wrote reads the tab fresh first',
      before: (shared) => shared.elsewhere(),
      upstream: ["tab 'People'!1:10000", "POST 'People'!A22:append"],
      after: [],
    },
    {
      name: 'a version that jumped by two: the written tab is read again on the next read',
      before: (shared) => {
        shared.step = 2;
      },
      upstream: ["POST 'People'!A22:append"],
      after: ["tab 'People'!1:10000"],
    },
  ];
  for (const { name, before, upstream, after } of cases) {
    await t.test(name, async (t) => {
      const { emulator, shared, call } = await setUp(t);
      assert.equal((await call('/sheets/crm/tabs/People')).status, 200);
      before(shared);
      emulator.resetRequests();
      shared.calls.length = 0;
      assert.equal((await call('/sheets/crm/tabs/People', json('POST', { Name: 'New' }))).status, 201);
      assert.deepEqual(upstreamReads(emulator), upstream);
      assert.deepEqual(shared.calls, ['lease', 'version', 'fence', 'changed', 'release'], 'the fence right before the append; the version bumped before the lease ends');
      emulator.resetRequests();
      const rows = await (await call('/sheets/crm/tabs/People/20:')).json();
      assert.deepEqual(rows, [{ Name: 'New', Tab: '' }]);
      assert.deepEqual(upstreamReads(emulator), after);
    });
  }
});

test('a PATCH by match reads its tab fresh under the lease; a lost lease sends nothing', async (t) => {
  const { emulator, shared, call } = await setUp(t);
  await call('/sheets/crm/tabs/Orders');
  emulator.resetRequests();
  shared.calls.length = 0;
  assert.equal((await call('/sheets/crm/tabs/Orders/Name/Orders%203', json('PATCH', { Tab: 'x' }))).status, 200);
  assert.deepEqual(upstreamReads(emulator), ["tab 'Orders'!1:10000", 'POST values:batchUpdate']);
  assert.deepEqual(shared.calls, ['lease', 'version', 'fence', 'changed', 'release']);
  emulator.resetRequests();
  shared.lost = true;
  const refused = await call('/sheets/crm/tabs/Orders/Name/Orders%204', json('PATCH', { Tab: 'y' }));
  assert.equal(refused.status, 503);
  assert.deepEqual(upstreamReads(emulator), ["tab 'Orders'!1:10000"], 'the fresh read, then nothing sent');
  shared.lost = false;
  const row = await (await call('/sheets/crm/tabs/Orders/Name/Orders%204')).json();
  assert.deepEqual(row, [{ Name: 'Orders 4', Tab: '1' }], 'nothing written');
});
