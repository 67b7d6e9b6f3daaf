// Changes made to a workbook behind the server: an edit that keeps the size and puts the mtime
// back; outside saves after the server folded writes into the file (from a fresh copy, from a
// stale copy, with rows deleted or added outside, again and again), which are the truth for
// every folded write (docs/file-source.md); and how soon a read sees an outside save without a
// stat on every request.
import assert from 'node:assert/strict';
import { readFile, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import type { CellObject } from '@e965/xlsx';
import type { Workbook } from '../../../lib/workbook.ts';
import { fingerprint } from '../../../server/durable/disk.ts';
import { journalLine } from '../../../server/sources/file/journal.ts';
import { openFileSource } from '../../../server/sources/file/mod.ts';
import { appOver } from '../../helpers/app.ts';
import { bookBytes, bookOf, recordingLog, shownText, stateFiles, tempFolder, writeFixture } from '../../helpers/file-source.ts';
import { CONTRACT_FIXTURE, appendPlan, dataOf, planned, removePlan, replacePlan, row } from '../../helpers/source-contract.ts';

function names(workbook: Workbook): string[] {
  return dataOf(workbook).map(([text]) => text[0]);
}

test('an outside edit that keeps the size and restores the mtime is still seen', async () => {
  const folder = await tempFolder();
  try {
    const path = await writeFixture(folder.dir, CONTRACT_FIXTURE, 'csv');
    // Whole seconds, so that putting the mtime back restores it exactly.
    const mtime = new Date('2024-03-01T09:30:00Z');
    await utimes(path, mtime, mtime);
    const source = await openFileSource({ path, log: recordingLog().log });
    assert.deepEqual(names(await source.read()), ['Ann', 'Bob', 'Cy']);
    const before = await stat(path);
    const text = await readFile(path, 'utf8');
    await writeFile(path, text.replace('Bob', 'Rob'));
    await utimes(path, mtime, mtime);
    const after = await stat(path);
    assert.equal(after.size, before.size);
    assert.equal(after.mtimeMs, before.mtimeMs);
    assert.deepEqual(names(await source.read({ fresh: true })), ['Ann', 'Rob', 'Cy']);
    await source.write((workbook) => planned(workbook, appendPlan(workbook, [row('Dee', 52, 'Kyiv')]), null));
    await source.close();
    assert.match(await readFile(path, 'utf8'), /Ann,30,Oslo\r\nRob,41,Rome\r\nCy,25,Lima\r\nDee,52,Kyiv/, 'a later write keeps the edit');
  } finally {
    await folder.cleanup();
  }
});

const append = (name: string, age: number) => (workbook: Workbook) => planned(workbook, appendPlan(workbook, [row(name, age, 'x')]), name);
const TWENTY = Array.from({ length: 20 }, (_, n) => `W${n}`);

/** Saves `bytes` over the workbook the way a program saves: a new file renamed over the old one. */
async function saveOver(path: string, bytes: Uint8Array | string): Promise<void> {
  await writeFile(`${path}.other`, bytes);
  await rename(`${path}.other`, path);
}

/** An .xlsx like the fixture's, as another program would save it, with these People rows. */
function xlsxWith(rows: (string | number)[][]): Uint8Array {
  const cells = rows.map((cells) => cells.map((v): CellObject => (typeof v === 'number' ? { t: 'n', v } : { t: 's', v })));
  return bookBytes(bookOf([{ name: 'People', cells }, { name: 'Notes', cells: [[{ t: 's', v: 'Key' }, { t: 's', v: 'Value' }], [{ t: 's', v: 'a' }, { t: 'b', v: true }]] }]), 'xlsx');
}

/** Waits until the file's first tab holds `rows` rows (the folds landed), at most 10 s. */
async function holdsRows(path: string, rows: number): Promise<void> {
  for (let tries = 0; tries < 1000; tries++) {
    if (Object.values(await shownText(path))[0].length === rows) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the file was never folded into');
}

/** The People rows a spreadsheet program shows in the file, numbers as numbers: what it would save again. */
async function rowsIn(path: string): Promise<(string | number)[][]> {
  return (await shownText(path)).People.map((cells) => cells.map((cell) => (/^\d+$/.test(cell) ? Number(cell) : cell)));
}

/** The first cell of each row the writes saved aside in the state folder's conflict files wrote. */
async function setAside(stateDir: string): Promise<string[]> {
  const names: string[] = [];
  for (const file of (await stateFiles(stateDir)).filter((name) => name.includes('.conflict-'))) {
    for (const line of (await readFile(join(stateDir, file), 'utf8')).split('\n').filter((text) => text !== '')) {
      const { plan } = JSON.parse(line) as { plan: { replaced: { row: { text: string[] } }[]; appended: { rows: { text: string[] }[] } | null } };
      names.push(...[...plan.replaced.map((replaced) => replaced.row), ...(plan.appended?.rows ?? [])].map((written) => written.text[0]));
    }
  }
  return names;
}

const HEADER = ['Name', 'Age', 'City'];
const STALE = [HEADER, ['Ann', 30, 'Oslo'], ['Bob', 41, 'Rome'], ['Cy', 25, 'Lima']];
const PENDING = ['P0', 'P1', 'P2'];
const ageOfAnn = (rows: (string | number)[][]) => rows.map((cells) => (cells[0] === 'Ann' ? ['Ann', 31, 'Oslo'] : cells));

test('an outside save is the truth for writes already folded: none is applied again, pending ones are', async (t) => {
  // Twenty writes are folded into the file, three more are pending in the journal; then another
  // program saves. [case, the rows it saves (null: the file's very bytes before the fold) from the
  // rows the file holds after the fold, names served after, names saved aside, Ann's age after]
  const cases: [string, ((folded: (string | number)[][]) => (string | number)[][]) | null, string[], string[], number][] = [
    ['a fresh copy (opened after the fold), edited: Ann is 31', (folded) => ageOfAnn(folded), ['Ann', 'Bob', 'Cy', ...TWENTY, ...PENDING], [], 31],
    ['a stale copy (opened before the fold), saved unchanged: the very bytes it had', null, ['Ann', 'Bob', 'Cy', ...PENDING], TWENTY, 30],
    ['a stale copy, edited and saved by the program: Ann is 31', () => ageOfAnn(STALE), ['Ann', 'Bob', 'Cy', ...PENDING], TWENTY, 31],
    ['rows deleted outside (W5 to W19) stay deleted', (folded) => folded.slice(0, 9), ['Ann', 'Bob', 'Cy', ...TWENTY.slice(0, 5), ...PENDING], TWENTY.slice(5), 30],
    ['rows added outside are kept, and the pending appends land after them', (folded) => [...folded, ['Eve', 1, 'y'], ['Fay', 2, 'z']], ['Ann', 'Bob', 'Cy', ...TWENTY, 'Eve', 'Fay', ...PENDING], [], 30],
  ];
  for (const [name, copy, served, aside, ann] of cases) {
    await t.test(name, async () => {
      const folder = await tempFolder();
      try {
        const path = await writeFixture(folder.dir, CONTRACT_FIXTURE, 'xlsx');
        const original = await readFile(path);
        const recording = recordingLog();
        const source = await openFileSource({ path, foldAfterMs: Infinity, foldAfterEntries: 20, log: recording.log });
        for (const name of TWENTY) await source.write(append(name, 1));
        await holdsRows(path, 24);
        for (const name of PENDING) await source.write(append(name, 2));
        await saveOver(path, copy === null ? original : xlsxWith(copy(await rowsIn(path))));
        assert.deepEqual(names(await source.read({ fresh: true })), served);
        assert.deepEqual(await setAside(join(folder.dir, '.sheetrest')), aside, 'the folded writes the outside save dropped are saved aside, not applied');
        if (aside.length > 0) assert.match(recording.messages.join('\n'), new RegExp(`without the rows of ${aside.length} acknowledged write`));
        await source.close();
        const shown = (await shownText(path)).People;
        assert.deepEqual(shown.slice(1).map((cells) => cells[0]), served, 'and the file holds the same');
        assert.equal(shown.find((cells) => cells[0] === 'Ann')?.[1], String(ann), 'the outside edit is kept');
        const again = await openFileSource({ path, log: recordingLog().log });
        assert.deepEqual(names(await again.read()), served, 'nothing is applied again at the next start');
        await again.close();
      } finally {
        await folder.cleanup();
      }
    });
  }
});

test('repeated outside saves of a five-row file bring no row back and do not grow it', async (t) => {
  const five = [HEADER, ...['A', 'B', 'C', 'D', 'E'].map((name, n) => [name, n, 'x'])];
  const formats: [string, string, Uint8Array | string][] = [
    ['csv', 'People.csv', five.map((cells) => cells.join(',')).join('\r\n') + '\r\n'],
    ['xlsx', 'book.xlsx', xlsxWith(five)],
  ];
  for (const [format, file, bytes] of formats) {
    await t.test(format, async () => {
      const folder = await tempFolder();
      try {
        const path = join(folder.dir, file);
        await writeFile(path, bytes);
        const recording = recordingLog();
        const source = await openFileSource({ path, foldAfterMs: Infinity, foldAfterEntries: 10, log: recording.log });
        for (let round = 0; round < 3; round++) {
          for (let n = 0; n < 10; n++) await source.write(append(`R${round}.${n}`, n));
          await holdsRows(path, 16);
          // The same five rows saved over it each time, as the reporter did.
          await saveOver(path, bytes);
          assert.deepEqual(names(await source.read({ fresh: true })), ['A', 'B', 'C', 'D', 'E'], `after outside save ${round + 1}`);
        }
        assert.equal(recording.messages.filter((message) => /without the rows of 10 acknowledged write/.test(message)).length, 3, 'each save drops only the ten rows folded since the one before');
        await source.write(append('Last', 9));
        await source.close();
        assert.deepEqual(Object.values(await shownText(path))[0], [...five, ['Last', 9, 'x']].map((cells) => cells.map(String)), 'the file holds exactly the five rows and the one written since');
      } finally {
        await folder.cleanup();
      }
    });
  }
});

test('through the API: rows POSTed, folded and deleted by an outside save stay deleted, save after save', async (t) => {
  const folder = await tempFolder();
  const path = join(folder.dir, 'People.csv');
  const five = 'Name,Age,City\r\n' + ['A', 'B', 'C', 'D', 'E'].map((name, n) => `${name},${n},x`).join('\r\n') + '\r\n';
  await writeFile(path, five);
  const source = await openFileSource({ path, foldAfterMs: Infinity, foldAfterEntries: 1, log: recordingLog().log });
  t.after(async () => {
    await source.close();
    await folder.cleanup();
  });
  const call = await appOver(t, source);
  const rowNames = async () => ((await (await call('/sheets/crm', { headers: { 'Cache-Control': 'no-cache' } })).json()) as { Name: string }[]).map((served) => served.Name);
  for (let round = 0; round < 3; round++) {
    const body = JSON.stringify(Array.from({ length: 10 }, (_, n) => ({ Name: `R${round}.${n}`, Age: n, City: 'y' })));
    const posted = await call('/sheets/crm', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
    assert.equal(posted.status, 201);
    await holdsRows(path, 16);
    await saveOver(path, five);
    assert.deepEqual(await rowNames(), ['A', 'B', 'C', 'D', 'E'], `after outside save ${round + 1}`);
  }
  assert.equal((await call('/sheets/crm', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"Name":"Last"}' })).status, 201);
  assert.deepEqual(await rowNames(), ['A', 'B', 'C', 'D', 'E', 'Last']);
});

test('a stale copy or a deletion outside while the server was stopped: the outside version is served', async (t) => {
  await t.test('a stale copy saved while the server was stopped', async () => {
    const folder = await tempFolder();
    try {
      const path = await writeFixture(folder.dir, CONTRACT_FIXTURE, 'xlsx');
      const source = await openFileSource({ path, log: recordingLog().log });
      for (const name of TWENTY) await source.write(append(name, 1));
      await source.close();
      await saveOver(path, xlsxWith(STALE));
      const recording = recordingLog();
      const again = await openFileSource({ path, log: recording.log });
      assert.deepEqual(names(await again.read()), ['Ann', 'Bob', 'Cy']);
      assert.match(recording.messages.join('\n'), /without the rows of 20 acknowledged write/);
      assert.deepEqual(await setAside(join(folder.dir, '.sheetrest')), TWENTY);
      await again.close();
      const third = await openFileSource({ path, log: recordingLog().log });
      assert.deepEqual(names(await third.read()), ['Ann', 'Bob', 'Cy'], 'and stays so at the next start');
      await third.close();
      assert.deepEqual(await setAside(join(folder.dir, '.sheetrest')), TWENTY, 'saved aside once');
    } finally {
      await folder.cleanup();
    }
  });

  await t.test('a folded PATCH that a stale copy overwrote is saved aside; the outside value wins', async () => {
    const folder = await tempFolder();
    try {
      const path = await writeFixture(folder.dir, CONTRACT_FIXTURE, 'xlsx');
      const recording = recordingLog();
      const source = await openFileSource({ path, log: recording.log });
      await source.write((workbook) => planned(workbook, replacePlan(workbook, 1, row('Bob', 42, 'Rome'), [1]), null));
      await source.close();
      // A copy from before the PATCH, in which someone else changed Bob's row as well.
      await saveOver(path, xlsxWith([HEADER, ['Ann', 30, 'Oslo'], ['Bob', 40, 'Rome'], ['Cy', 25, 'Lima']]));
      const again = await openFileSource({ path, log: recording.log });
      assert.equal(dataOf(await again.read())[1][1][1], 40, 'the outside version wins');
      const conflict = (await stateFiles(join(folder.dir, '.sheetrest'))).find((file) => file.includes('.conflict-'));
      assert.ok(conflict !== undefined, 'the overwritten write is saved aside');
      assert.match(await readFile(join(folder.dir, '.sheetrest', conflict), 'utf8'), /"Bob",42/);
      await again.close();
    } finally {
      await folder.cleanup();
    }
  });

  await t.test('a folded DELETE that a stale copy undid: the row is back, nothing saved aside', async () => {
    const folder = await tempFolder();
    try {
      const path = await writeFixture(folder.dir, CONTRACT_FIXTURE, 'xlsx');
      const source = await openFileSource({ path, log: recordingLog().log });
      await source.write((workbook) => planned(workbook, removePlan(workbook, [1]), null));
      await source.close();
      assert.deepEqual((await shownText(path)).People.slice(1).map((cells) => cells[0]), ['Ann', 'Cy'], 'the DELETE was folded');
      // A copy from before the DELETE, still holding Bob.
      await saveOver(path, xlsxWith(STALE));
      const again = await openFileSource({ path, log: recordingLog().log });
      assert.deepEqual(names(await again.read()), ['Ann', 'Bob', 'Cy']);
      assert.deepEqual(await setAside(join(folder.dir, '.sheetrest')), []);
      await again.close();
    } finally {
      await folder.cleanup();
    }
  });

  await t.test('a row written then changed through the API and deleted outside is saved aside as last written', async () => {
    const folder = await tempFolder();
    try {
      const path = await writeFixture(folder.dir, CONTRACT_FIXTURE, 'xlsx');
      const source = await openFileSource({ path, log: recordingLog().log });
      await source.write(append('Dee', 52));
      await source.write((workbook) => planned(workbook, replacePlan(workbook, 3, row('Dee', 53, 'x'), [1]), null));
      await source.write(append('Eve', 1));
      await source.close();
      // A fresh copy without Dee's row.
      await saveOver(path, xlsxWith([...STALE, ['Eve', 1, 'x']]));
      const again = await openFileSource({ path, log: recordingLog().log });
      assert.deepEqual(names(await again.read()), ['Ann', 'Bob', 'Cy', 'Eve']);
      const conflict = (await stateFiles(join(folder.dir, '.sheetrest'))).find((file) => file.includes('.conflict-')) ?? '';
      const lines = (await readFile(join(folder.dir, '.sheetrest', conflict), 'utf8')).trim().split('\n');
      assert.equal(lines.length, 1, 'only the write that last set the row');
      assert.match(lines[0], /"Dee",53/);
      await again.close();
    } finally {
      await folder.cleanup();
    }
  });

  await t.test('a fresh copy edited outside is taken as it is, nothing saved aside', async () => {
    const folder = await tempFolder();
    try {
      const path = await writeFixture(folder.dir, CONTRACT_FIXTURE, 'xlsx');
      const source = await openFileSource({ path, log: recordingLog().log });
      await source.write(append('Dee', 52));
      await source.close();
      // Someone opened the folded file, corrected the row the server added and added one more.
      await saveOver(path, xlsxWith([...STALE, ['Dee', 53, 'x'], ['Eve', 1, 'y']]));
      const recording = recordingLog();
      const again = await openFileSource({ path, log: recording.log });
      assert.deepEqual(names(await again.read()), ['Ann', 'Bob', 'Cy', 'Dee', 'Eve']);
      // Dee's row was edited outside: the write that set it is no longer in the file as written.
      assert.deepEqual(await setAside(join(folder.dir, '.sheetrest')), ['Dee']);
      await again.close();
    } finally {
      await folder.cleanup();
    }
  });
});

test('a crash between a fold and its fresh journal, then an outside save while stopped', async (t) => {
  // The journal as the crash leaves it: its writes, then the mark naming the file the fold
  // wrote. [case, whether the fold's rename landed (the history recorded it), the outside copy's
  // rows, names served after]
  const cases: [string, boolean, (string | number)[][], string[]][] = [
    ['the fold landed: its writes were in the replaced file and are not applied again', true, [...STALE, ['Dee', 1, 'x'], ['Eve', 1, 'x'], ['Out', 7, 'side']], ['Ann', 'Bob', 'Cy', 'Dee', 'Eve', 'Out']],
    ['the fold never landed: its writes were in no file and are applied on the outside copy', false, [...STALE, ['Out', 7, 'side']], ['Ann', 'Bob', 'Cy', 'Out', 'Dee', 'Eve']],
  ];
  for (const [name, landed, copy, served] of cases) {
    await t.test(name, async () => {
      const folder = await tempFolder();
      try {
        const path = await writeFixture(folder.dir, CONTRACT_FIXTURE, 'xlsx');
        const stateDir = join(folder.dir, '.sheetrest');
        const crashed = await openFileSource({ path, foldAfterMs: Infinity, log: recordingLog().log });
        for (const name of ['Dee', 'Eve']) await crashed.write(append(name, 1));
        await crashed.abandon();
        const journal = join(stateDir, (await stateFiles(stateDir)).find((file) => file.endsWith('.journal')) ?? '');
        const oldJournal = await readFile(journal, 'utf8');
        // A second run folds the writes; then the journal is put back as it was before its reset.
        const second = await openFileSource({ path, log: recordingLog().log });
        await second.close();
        await writeFile(journal, oldJournal + journalLine({ compactedTo: fingerprint(await readFile(path)) }));
        if (!landed) await unlink(join(stateDir, (await stateFiles(stateDir)).find((file) => file.endsWith('.compacted')) ?? ''));
        await saveOver(path, xlsxWith(copy));
        const third = await openFileSource({ path, log: recordingLog().log });
        assert.deepEqual(names(await third.read()), served);
        await third.close();
        assert.deepEqual((await shownText(path)).People.slice(1).map((cells) => cells[0]), served);
      } finally {
        await folder.cleanup();
      }
    });
  }
});

test('a plain read sees an outside save without being asked to look (watcher, or at most 100 ms later)', async () => {
  const folder = await tempFolder();
  try {
    const path = await writeFixture(folder.dir, CONTRACT_FIXTURE, 'csv');
    const source = await openFileSource({ path, log: recordingLog().log });
    assert.deepEqual(names(await source.read()), ['Ann', 'Bob', 'Cy']);
    await saveOver(path, (await readFile(path, 'utf8')).replace('Bob', 'Rob'));
    let seen: string[] = [];
    for (let tries = 0; tries < 500 && seen[1] !== 'Rob'; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      seen = names(await source.read());
    }
    assert.deepEqual(seen, ['Ann', 'Rob', 'Cy']);
    await source.close();
  } finally {
    await folder.cleanup();
  }
});
