// Group commit of a Google spreadsheet's writes (server/sources/google/group-commit.ts) against
// the Sheets API emulator: writes queued together go as one request and each gets its own
// answer; a write Google refuses for its value fails alone; a request whose answer was lost
// (500 or a cut connection after Google applied it, or before) is read back, never blindly
// sent again; matched writes read their tab once per batch. Writes queued in one turn of the
// event loop form one batch, so request counts here do not depend on the machine's speed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyPlan } from '../../../lib/apply-plan.ts';
import type { WritePlan } from '../../../lib/write-plan.ts';
import { isApiError } from '../../../lib/errors.ts';
import type { Workbook } from '../../../lib/workbook.ts';
import { Secret } from '../../../server/config/config.ts';
import { startEmulator, type Emulator, type EmulatorCell } from '../../../tools/google-emulator/mod.ts';
import { Budgets, openGoogleSource, type GoogleSourceOptions } from '../../../server/sources/google/mod.ts';
import type { Source } from '../../../server/sources/source.ts';
import type { SpreadsheetCoordination } from '../../../server/sources/google/shared-spreadsheet.ts';
import { appOver } from '../../helpers/app.ts';
import { appendPlan, replacePlan, row } from '../../helpers/source-contract.ts';

const WRITER = 'writer-token';
const FAST_RETRY = { retries: 4, baseDelayMs: 2, maxDelayMs: 10, budgetMs: 5_000 };
const NO_QUOTA = { readPerMinutePerUser: 1e6, writePerMinutePerUser: 1e6, readPerMinutePerProject: 1e6, writePerMinutePerProject: 1e6 };

function people(count: number): EmulatorCell[][] {
  return [['Name', 'Age', 'Note'], ...Array.from({ length: count }, (_, i): EmulatorCell[] => [`p${i}`, i, ''])];
}

function open(emulator: Emulator, spreadsheetId: string, options: Partial<GoogleSourceOptions> = {}) {
  return openGoogleSource({ spreadsheetId, rootUrl: emulator.rootUrl, auth: { kind: 'accessToken', token: new Secret(WRITER) }, retry: FAST_RETRY, timeoutMs: 2_000, freshnessMs: 60_000, budgets: new Budgets(), ...options });
}

/** One POST of `name` planned as the engine plans it: the rows after the table, the next workbook with them. */
function post(source: Source, name: string, note = ''): Promise<string> {
  return source.write((workbook: Workbook) => {
    const plan = appendPlan(workbook, [row(name, 1, note)]);
    return { plan, workbook: applyPlan(workbook, plan), result: name };
  }, { tab: 'People' });
}

const writes = (emulator: Emulator) => emulator.requests.filter((request) => request.method !== 'GET' && request.path.startsWith('/v4/'));
const reads = (emulator: Emulator) => emulator.requests.filter((request) => request.method === 'GET' && request.path.startsWith('/v4/'));
const names = (emulator: Emulator, id: string) => emulator.sheet(id, 'People').rows.slice(1).map((cells) => String(cells[0]?.formattedValue ?? ''));

async function settle<T>(promises: Promise<T>[]): Promise<(T | string)[]> {
  return Promise.all(promises.map((promise) => promise.catch((error: unknown) => (isApiError(error) ? `${error.status} ${error.code}` : String(error)))));
}

test('group commit', async (t) => {
  const emulator = await startEmulator({ quota: NO_QUOTA });
  t.after(() => emulator.close());

  await t.test('50 POSTs queued together are one values.append, each answered with its own result, in order', async () => {
    const id = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: people(3) }], access: { [WRITER]: 'writer' } });
    const source = await open(emulator, id);
    await source.read({ tab: 'People' });
    emulator.resetRequests();
    const sent = Array.from({ length: 50 }, (_, i) => `w${i}`);
    assert.deepEqual(await Promise.all(sent.map((name) => post(source, name))), sent);
    assert.equal(writes(emulator).length, 1, 'one upstream write');
    assert.equal(reads(emulator).length, 0, 'no Sheets read for a POST');
    assert.deepEqual(names(emulator, id), ['p0', 'p1', 'p2', ...sent]);
    // The kept tab took them: a read sees them without asking Google.
    emulator.resetRequests();
    const workbook = await source.read({ tab: 'People' });
    assert.equal(workbook.tabs[0].rows.length, 54);
    assert.equal(emulator.requests.length, 0);
    await source.close();
  });

  await t.test('a lone write is one request, sent at once', async () => {
    const id = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: people(3) }], access: { [WRITER]: 'writer' } });
    const source = await open(emulator, id);
    await source.read({ tab: 'People' });
    emulator.resetRequests();
    assert.equal(await post(source, 'alone'), 'alone');
    assert.deepEqual(emulator.requests.map((request) => `${request.method} ${request.path.split(':').at(-1)}`), ['POST append']);
    await source.close();
  });

  await t.test('one value Google refuses in a batch of 50 fails alone; the 49 others are written once', async () => {
    const id = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: people(3) }], access: { [WRITER]: 'writer' } });
    const source = await open(emulator, id);
    await source.read({ tab: 'People' });
    emulator.resetRequests();
    // Google's limit is 50,000 characters in one cell: the whole request is refused (400).
    const answers = await settle(Array.from({ length: 50 }, (_, i) => post(source, `w${i}`, i === 37 ? 'x'.repeat(50_001) : '')));
    assert.deepEqual(answers.filter((answer) => !answer.startsWith('w')), ['502 upstream_error']);
    assert.equal(answers[37], '502 upstream_error');
    const expected = Array.from({ length: 50 }, (_, i) => `w${i}`).filter((name) => name !== 'w37');
    assert.deepEqual(names(emulator, id), ['p0', 'p1', 'p2', ...expected]);
    assert.ok(writes(emulator).length <= 2 * Math.ceil(Math.log2(50)) + 1, `found by halving (${writes(emulator).length} requests)`);
    await source.close();
  });

  const lost: [string, (emulator: Emulator) => void, number][] = [
    ['500 after applying', (emulator) => emulator.failNext({ status: 500, path: /:append$/, afterApply: true }), 1],
    ['connection reset after applying', (emulator) => emulator.resetNext({ path: /:append$/, afterApply: true }), 1],
    ['connection reset before applying', (emulator) => emulator.resetNext({ path: /:append$/ }), 2],
    ['500 before applying', (emulator) => emulator.failNext({ status: 500, path: /:append$/ }), 2],
    ['no answer within the timeout after applying', (emulator) => emulator.hangNext({ path: /:append$/, afterApply: true }), 0],
  ];
  for (const [fault, inject, appends] of lost) {
    await t.test(`a batch whose answer was lost (${fault}) is read back: every row once, every write answered`, async (t) => {
      const id = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: people(3) }], access: { [WRITER]: 'writer' } });
      // The hung case waits for the timeout (1 s, ample for the read back); the others answer at once.
      const source = await open(emulator, id, { timeoutMs: fault.startsWith('no answer') ? 1_000 : 5_000 });
      await source.read({ tab: 'People' });
      emulator.resetRequests();
      inject(emulator);
      const sent = Array.from({ length: 20 }, (_, i) => `w${i}`);
      assert.deepEqual(await settle(sent.map((name) => post(source, name))), sent);
      assert.deepEqual(names(emulator, id), ['p0', 'p1', 'p2', ...sent]);
      // A hung request is not logged (it never answered): 0 logged appends for it.
      assert.equal(writes(emulator).length, appends, 'sent again only when it had not landed');
      assert.equal(reads(emulator).length, 1, 'one read back');
      await source.close();
    });
  }

  await t.test('a mixed batch (one spreadsheets.batchUpdate) whose answer was lost after Google applied it is answered as written, once', async () => {
    const id = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: people(4) }], access: { [WRITER]: 'writer' } });
    const source = await open(emulator, id);
    await source.read({ tab: 'People' });
    emulator.resetRequests();
    emulator.failNext({ status: 500, path: new RegExp(`${id}:batchUpdate$`), afterApply: true });
    const write = (name: string, plan: (workbook: Workbook) => WritePlan) =>
      source.write((workbook) => {
        const planned = plan(workbook);
        return { plan: planned, workbook: applyPlan(workbook, planned), result: name };
      }, { tab: 'People' });
    const answers = await settle([
      write('patch', (workbook) => replacePlan(workbook, 0, row('p0', 99, 'patched'), [1, 2])),
      write('post', (workbook) => appendPlan(workbook, [row('new', 5, '')])),
      write('delete', () => ({ tab: 'People', replaced: [], removed: [1], appended: null })),
    ]);
    assert.deepEqual(answers, ['patch', 'post', 'delete']);
    assert.deepEqual(emulator.sheet(id, 'People').rows.slice(1).map((cells) => cells.map((cell) => cell.formattedValue ?? '').join(' ').trim()), ['p0 99 patched', 'p2 2', 'p3 3', 'new 5']);
    assert.equal(writes(emulator).length, 1, 'one atomic request, not sent again');
    assert.equal(reads(emulator).length, 2, 'the batch read, and the read back');
    await source.close();
  });

  await t.test('with the revision check, a PATCH after our own batch plans on the kept tab while Drive says nothing else changed', async (t) => {
    const id = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: people(5) }], access: { [WRITER]: 'writer' } });
    const source = await open(emulator, id, { revisionCheck: true });
    const other = await open(emulator, id);
    const call = await appOver(t, source);
    const patch = async (name: string, note: string) => {
      const answer = await call(`/sheets/crm/Name/${name}`, { method: 'PATCH', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ Note: note }) });
      return `${answer.status} ${await answer.text()}`;
    };
    const drive = () => emulator.requests.filter((request) => request.path.startsWith('/drive/')).length;
    // The check after a batch runs once its clients are answered: wait for it (an event, not a time).
    const driveReaches = async (count: number) => {
      for (let tries = 0; tries < 500 && drive() < count; tries++) await new Promise((resolve) => setTimeout(resolve, 10));
      return drive();
    };
    await call('/sheets/crm');
    emulator.resetRequests();
    assert.equal(await patch('p1', 'one'), '200 [{"Name":"p1","Age":"1","Note":"one"}]');
    assert.equal(reads(emulator).length, 1, 'the first matched write reads its tab');
    assert.equal(await driveReaches(1), 1, "and asks Drive's modifiedTime right after its write");
    emulator.resetRequests();
    assert.equal(await patch('p2', 'two'), '200 [{"Name":"p2","Age":"2","Note":"two"}]');
    assert.equal(reads(emulator).length, 0, 'the next plans on the kept tab: nothing changed outside');
    assert.equal(await driveReaches(2), 2, 'one Drive check before, one after');
    // Someone else removes a row: Drive's modifiedTime moves, and the next matched write reads again.
    await other.write((workbook) => {
      const plan: WritePlan = { tab: 'People', replaced: [], removed: [0], appended: null };
      return { plan, workbook: applyPlan(workbook, plan), result: null };
    }, { tab: 'People' });
    emulator.resetRequests();
    assert.equal(await patch('p3', 'three'), '200 [{"Name":"p3","Age":"3","Note":"three"}]');
    assert.equal(reads(emulator).length, 1, 'changed outside: read again');
    assert.deepEqual(emulator.sheet(id, 'People').rows.slice(1).map((cells) => cells.map((cell) => cell.formattedValue ?? '').join(' ').trim()), ['p1 1 one', 'p2 2 two', 'p3 3 three', 'p4 4']);
    await other.close();
  });

  await t.test('POST, PATCH and DELETE by match of different rows queued together leave what a serial run leaves, reading the tab once', async (t) => {
    const operations: [string, string, string?][] = [];
    for (let i = 0; i < 30; i++) {
      // Text that looks like a number, a date, a boolean: stored with the same types whichever request carries them.
      if (i % 3 === 0) operations.push(['POST', '/sheets/crm', JSON.stringify({ Name: `n${i}`, Age: i % 2 === 0 ? '007' : i, Note: i % 2 === 0 ? '2024-03-01' : true })]);
      else if (i % 3 === 1) operations.push(['PATCH', `/sheets/crm/Name/p${i}`, JSON.stringify({ Note: i % 2 === 0 ? `patched ${i}` : '2024-03-01 09:30:00', Age: '' })]);
      else operations.push(['DELETE', `/sheets/crm/Name/p${i}`]);
    }
    const run = async (together: boolean) => {
      const id = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: people(40) }], access: { [WRITER]: 'writer' } });
      const source = await open(emulator, id);
      const call = await appOver(t, source);
      await call('/sheets/crm');
      emulator.resetRequests();
      const send = ([method, path, body]: [string, string, string?]) => call(path, { method, headers: { 'Content-Type': 'application/json' }, ...(body === undefined ? {} : { body }) }).then(async (answer) => `${answer.status} ${await answer.text()}`);
      const answers: string[] = [];
      if (together) answers.push(...(await Promise.all(operations.map(send))));
      else for (const operation of operations) answers.push(await send(operation));
      // Concurrent requests reach the source in any order: they touch different rows, and the appended rows are compared as a set.
      return { answers, rows: emulator.sheet(id, 'People').rows.map((cells) => JSON.stringify(cells.map((cell) => [cell.formattedValue ?? '', cell.effectiveValue ?? null, cell.numberFormat?.type ?? '']))).sort(), reads: reads(emulator).length, writes: writes(emulator).length };
    };
    const serial = await run(false);
    const together = await run(true);
    assert.deepEqual(together.answers, serial.answers);
    assert.deepEqual(together.rows, serial.rows);
    // The first write goes alone (nothing in flight yet); the other 29 queue behind it: one read, one atomic request.
    assert.ok(together.writes <= 2, `two upstream writes together (${together.writes}), ${serial.writes} one by one`);
    assert.ok(together.reads <= 2, `at most a read per batch together (${together.reads}), ${serial.reads} one by one`);
  });

  await t.test('with several instances, a batch takes the lease once, checks the fence before each request and bumps the version once per request', async () => {
    const id = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: people(3) }], access: { [WRITER]: 'writer' } });
    const counted = { leases: 0, fences: 0, bumps: 0 };
    let version = 100;
    // Redis's part, in memory: one instance alone, so the lease is always free.
    const shared: SpreadsheetCoordination = {
      version: async () => version,
      changed: async () => {
        counted.bumps++;
        return ++version;
      },
      underLease: async (step) => {
        counted.leases++;
        return step(async () => {
          counted.fences++;
        });
      },
    };
    const source = await open(emulator, id, { shared: () => shared });
    await source.read({ tab: 'People' });
    emulator.resetRequests();
    const sent = Array.from({ length: 30 }, (_, i) => `w${i}`);
    assert.deepEqual(await Promise.all(sent.map((name) => post(source, name))), sent);
    assert.deepEqual(counted, { leases: 1, fences: 1, bumps: 1 });
    assert.equal(writes(emulator).length, 1);
    // The kept tab is at the new version: the next POST plans on it, under a lease of its own.
    assert.equal(await post(source, 'after'), 'after');
    assert.deepEqual(counted, { leases: 2, fences: 2, bumps: 2 });
    assert.equal(reads(emulator).length, 0, 'no read: the kept tab was at the current version');
    assert.deepEqual(names(emulator, id), ['p0', 'p1', 'p2', ...sent, 'after']);
    await source.close();
  });
});
