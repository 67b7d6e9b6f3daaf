// The journal on a failing disk: a write is acknowledged only when all its bytes and the fsync
// went through (a short write is continued, a failed one cut back, a journal that cannot be cut
// back is replaced), a full disk answers POST with 507 `insufficient_storage`, and nothing
// acknowledged is lost. Faults are injected through the journal's file seam; where this process
// may mount a small tmpfs (root on Linux), a real full disk is tried as well. Also the reader: a
// damaged line in the middle is reported, and the intact lines after it are kept.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmdirSync } from 'node:fs';
import { mkdir, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { test } from 'node:test';
import type { Workbook } from '../../../lib/workbook.ts';
import type { App } from '../../../server/http/request.ts';
import { Journal, journalLine, parseJournal, readJournal, type JournalEntry, type JournalFiles, type JournalHandle } from '../../../server/sources/file/journal.ts';
import { openFileSource } from '../../../server/sources/file/mod.ts';
import { recordingLog, stateFiles, tempFolder, writeFixture } from '../../helpers/file-source.ts';
import { CONTRACT_FIXTURE, dataOf } from '../../helpers/source-contract.ts';
import { appOf } from '../../helpers/app.ts';

type Fault =
  | { readonly on: 'write'; readonly take: number } // the write takes only this many bytes, no error
  | { readonly on: 'write' | 'datasync' | 'truncate'; readonly code: string }; // the call fails

/** The real file system, with faults to hand out to the next calls on an appendable journal. */
class FaultyFiles implements JournalFiles {
  readonly faults: Fault[] = [];
  async open(path: string, flags: 'wx' | 'a', mode?: number): Promise<JournalHandle> {
    const handle = await open(path, flags, mode);
    if (flags === 'wx') return handle;
    const next = (on: Fault['on']): Fault | undefined => {
      const index = this.faults.findIndex((fault) => fault.on === on);
      return index === -1 ? undefined : this.faults.splice(index, 1)[0];
    };
    const fail = (fault: Fault | undefined): void => {
      if (fault !== undefined && 'code' in fault) throw Object.assign(new Error(`${fault.code}: injected`), { code: fault.code });
    };
    return {
      async write(buffer, offset, length) {
        const fault = next('write');
        fail(fault);
        return handle.write(buffer, offset, fault !== undefined && 'take' in fault ? Math.min(fault.take, length) : length);
      },
      async datasync() {
        fail(next('datasync'));
        return handle.datasync();
      },
      sync: () => handle.sync(),
      async truncate(length) {
        fail(next('truncate'));
        return handle.truncate(length);
      },
      close: () => handle.close(),
    };
  }
}

const entry = (name: string): JournalEntry => ({
  plan: { tab: 'People', replaced: [], removed: [], appended: { start: 0, rows: [{ text: [name], value: [name] }] } },
  expected: { dataRows: 0, rows: [] },
});

const appendedName = (journalEntry: JournalEntry): string => String(journalEntry.plan.appended?.rows[0].text[0]);

test('a journal append is acknowledged only when every byte and the fsync went through', async (t) => {
  const cases: [string, Fault[], 'kept' | 'refused', 'broken'?][] = [
    ['a short write is continued', [{ on: 'write', take: 7 }, { on: 'write', take: 1 }], 'kept'],
    ['a short write, then a full disk', [{ on: 'write', take: 20 }, { on: 'write', code: 'ENOSPC' }], 'refused'],
    ['a write that takes nothing', [{ on: 'write', take: 0 }], 'refused'],
    ['a failed fsync', [{ on: 'datasync', code: 'EIO' }], 'refused'],
    ['a short write over quota, then the cut back fails too', [{ on: 'write', take: 30 }, { on: 'write', code: 'EDQUOT' }, { on: 'truncate', code: 'EIO' }], 'refused', 'broken'],
  ];
  for (const [name, faults, outcome, broken] of cases) {
    await t.test(name, async () => {
      const folder = await tempFolder();
      try {
        const files = new FaultyFiles();
        const path = join(folder.dir, 'book.journal');
        const journal = await Journal.create(path, 'base', [entry('before')], files);
        files.faults.push(...faults);
        const appended = journal.append([entry('faulty'), entry('faulty too')]);
        if (outcome === 'kept') await appended;
        else await assert.rejects(appended, (error: { code?: string }) => ['ENOSPC', 'EDQUOT', 'EIO'].includes(error.code ?? ''));
        assert.deepEqual(files.faults, [], 'every fault was met');
        assert.equal(journal.broken, broken === 'broken');
        if (broken === 'broken') {
          // Nothing more is appended after the torn bytes, even once the disk is fine again.
          await assert.rejects(journal.append([entry('after')]));
        } else {
          await journal.append([entry('after')]);
        }
        await journal.close();
        const read = await readJournal(path);
        const expected = outcome === 'kept' ? ['before', 'faulty', 'faulty too', 'after'] : broken === 'broken' ? ['before'] : ['before', 'after'];
        assert.deepEqual(read?.entries.map(appendedName), expected);
        assert.deepEqual(read?.damaged, [], 'no damaged line in the middle');
        if (broken !== 'broken') assert.equal(read?.torn, false, 'cut back to the last good line');
      } finally {
        await folder.cleanup();
      }
    });
  }
});

const ROW = { Name: 'x', Age: 1, City: 'y' };

async function post(app: App, body: unknown): Promise<{ status: number; body: { error?: string; message?: string } }> {
  const response = await app.fetch(new Request('http://x/sheets/book', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }));
  return { status: response.status, body: (await response.json()) as { error?: string; message?: string } };
}

const names = (workbook: Workbook): string[] => dataOf(workbook).map(([text]) => text[0]);

test('a full disk answers POST with 507 and loses nothing acknowledged', async (t) => {
  const cases: [string, Fault[]][] = [
    ['ENOSPC after a short write', [{ on: 'write', take: 25 }, { on: 'write', code: 'ENOSPC' }]],
    ['EDQUOT at the fsync', [{ on: 'datasync', code: 'EDQUOT' }]],
    ['ENOSPC, and the journal cannot even be cut back', [{ on: 'write', take: 25 }, { on: 'write', code: 'ENOSPC' }, { on: 'truncate', code: 'ENOSPC' }]],
  ];
  for (const [name, faults] of cases) {
    await t.test(name, async () => {
      const folder = await tempFolder();
      try {
        const path = await writeFixture(folder.dir, CONTRACT_FIXTURE, 'xlsx');
        const files = new FaultyFiles();
        const log = recordingLog();
        const source = await openFileSource({ path, foldAfterMs: Infinity, log: log.log, journalFiles: files });
        const app = appOf(source);
        const before = names(await source.read());
        assert.equal((await post(app, { ...ROW, Name: 'Dee' })).status, 201);
        files.faults.push(...faults);
        const full = await post(app, { ...ROW, Name: 'Lost' });
        assert.equal(full.status, 507, JSON.stringify(full.body));
        assert.equal(full.body.error, 'insufficient_storage');
        assert.match(full.body.message ?? '', /disk is full; nothing was written/);
        assert.deepEqual(names(await source.read()), [...before, 'Dee'], 'the refused write is not served');
        const stateDir = join(folder.dir, '.sheetrest');
        const journal = await readJournal(join(stateDir, (await stateFiles(stateDir)).find((name) => name.endsWith('.journal')) ?? ''));
        assert.deepEqual({ torn: journal?.torn, entries: journal?.entries.length }, { torn: false, entries: 1 }, 'the journal ends with the last acknowledged line');
        // Space is freed: writes go on, after the last acknowledged line.
        assert.equal((await post(app, { ...ROW, Name: 'Eve' })).status, 201);
        assert.match(log.messages.join('\n'), /could not save writes to the journal .*ENOSPC|EDQUOT/);
        await source.abandon();
        // After a crash, what was acknowledged is there once, and the refused write is not.
        const recovered = await openFileSource({ path, log: recordingLog().log });
        assert.deepEqual(names(await recovered.read()), [...before, 'Dee', 'Eve']);
        await recovered.close();
      } finally {
        await folder.cleanup();
      }
    });
  }
});

test('the journal reader keeps intact lines after a damaged one and reports it', async (t) => {
  const header = journalLine({ journal: 1, base: 'b' });
  const [a, b, c] = ['a', 'b', 'c'].map((name) => journalLine(entry(name)));
  const cases: [string, string, { names: string[]; torn: boolean; damaged: number[] } | null][] = [
    ['an intact journal', header + a + b, { names: ['a', 'b'], torn: false, damaged: [] }],
    ['a last line cut short', header + a + b.slice(0, 30), { names: ['a'], torn: true, damaged: [] }],
    ['a last line of zeros (a power cut)', header + a + '\0'.repeat(40), { names: ['a'], torn: true, damaged: [] }],
    ['a middle line failing its checksum', header + a + b.replace('"b"', '"B"') + c, { names: ['a', 'c'], torn: false, damaged: [3] }],
    // What older versions left on a full disk: a torn line, zeros, then a line appended after them.
    ['a torn line padded with zeros, then an intact line', header + a + b.slice(0, 30) + '\0'.repeat(25) + c, { names: ['a', 'c'], torn: false, damaged: [3] }],
    ['two damaged lines, then a torn tail', header + 'garbage\n' + a + 'more garbage\n' + b.slice(0, 9), { names: ['a'], torn: true, damaged: [2] }],
    ['a damaged header', header.replace('"b"', '"x"') + a, null],
  ];
  for (const [name, text, expected] of cases) {
    await t.test(name, () => {
      const parsed = parseJournal(text);
      if (expected === null) return assert.equal(parsed, null);
      assert.deepEqual({ names: parsed?.entries.map(appendedName), torn: parsed?.torn, damaged: parsed?.damaged }, expected);
    });
  }
});

test('recovery re-checks the writes after a damaged journal line, and says so', async () => {
  const folder = await tempFolder();
  try {
    const path = await writeFixture(folder.dir, CONTRACT_FIXTURE, 'xlsx');
    const crashed = await openFileSource({ path, foldAfterMs: Infinity, log: recordingLog().log });
    const app = appOf(crashed);
    for (const name of ['Dee', 'Eve', 'Fay']) assert.equal((await post(app, { ...ROW, Name: name })).status, 201);
    await crashed.abandon();
    const stateDir = join(folder.dir, '.sheetrest');
    const journal = join(stateDir, (await stateFiles(stateDir)).find((name) => name.endsWith('.journal')) ?? '');
    const lines = (await readFile(journal, 'utf8')).split('\n');
    // Damage Eve's line (the third): Fay's, after it, is intact.
    lines[2] = lines[2].replace('Eve', 'Evf');
    await writeFile(journal, lines.join('\n'));
    const log = recordingLog();
    const recovered = await openFileSource({ path, log: log.log });
    assert.deepEqual(names(await recovered.read()).slice(-2), ['Dee', 'Fay'], 'the writes after the damaged line are kept');
    assert.match(log.messages.join('\n'), /line\(s\) 3 are damaged and their writes lost/);
    await recovered.close();
  } finally {
    await folder.cleanup();
  }
});

test('a journal whose first line is damaged stops the start instead of being overwritten', async () => {
  const folder = await tempFolder();
  try {
    const path = await writeFixture(folder.dir, CONTRACT_FIXTURE, 'xlsx');
    const stateDir = join(folder.dir, '.sheetrest');
    const crashed = await openFileSource({ path, foldAfterMs: Infinity, log: recordingLog().log });
    assert.equal((await post(appOf(crashed), { ...ROW, Name: 'Dee' })).status, 201);
    await crashed.abandon();
    const journal = join(stateDir, (await stateFiles(stateDir)).find((name) => name.endsWith('.journal')) ?? '');
    const damaged = 'x' + (await readFile(journal, 'utf8')).slice(1);
    await writeFile(journal, damaged);
    await assert.rejects(openFileSource({ path, log: recordingLog().log }), /cannot read the journal .*first line is damaged; move it aside/);
    assert.equal(await readFile(journal, 'utf8'), damaged, 'the journal is left for the operator');
  } finally {
    await folder.cleanup();
  }
});

/** Mounts a tmpfs of `size` at a fresh folder; a reason instead when this process cannot. */
function mountTmpfs(size: string): { dir: string; resize(size: string): void; unmount(): void } | string {
  if (process.platform !== 'linux') return `tmpfs needs Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root';
  const dir = join(tmpdir(), `sheetrest-tmpfs-${process.pid}-${Date.now()}`);
  try {
    execFileSync('mkdir', ['-p', dir]);
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    return `mount -t tmpfs failed here (${String(error).split('\n')[0]})`;
  }
  return {
    dir,
    resize: (next) => void execFileSync('mount', ['-o', `remount,size=${next}`, dir]),
    unmount: () => {
      execFileSync('umount', [dir]);
      rmdirSync(dir);
    },
  };
}

test('on a real full disk (a small tmpfs), POST answers 507 and every acknowledged row survives', async (t) => {
  const mounted = mountTmpfs('256k');
  if (typeof mounted === 'string') return t.skip(mounted);
  const folder = await tempFolder();
  try {
    const path = await writeFixture(folder.dir, CONTRACT_FIXTURE, 'xlsx');
    const stateDir = join(mounted.dir, 'state');
    await mkdir(stateDir);
    const source = await openFileSource({ path, stateDir, foldAfterMs: Infinity, log: recordingLog().log });
    const app = appOf(source);
    const acknowledged: string[] = [];
    let refused: { status: number; body: { error?: string } } | undefined;
    // Rows of 20 KB: the journal fills the 256 KB disk in a dozen writes, the last one torn.
    for (let i = 0; i < 40 && refused === undefined; i++) {
      const answer = await post(app, { ...ROW, Name: `r${i}`, City: 'n'.repeat(20_000) });
      if (answer.status === 201) acknowledged.push(`r${i}`);
      else refused = answer;
    }
    assert.deepEqual(refused, { status: 507, body: { error: 'insufficient_storage', message: "The server's disk is full; nothing was written. Try again once space is freed." } });
    assert.ok(acknowledged.length > 3, `${acknowledged.length} writes fit`);
    await source.abandon();
    const journal = await readJournal(join(stateDir, (await stateFiles(stateDir)).find((name) => name.endsWith('.journal')) ?? ''));
    assert.deepEqual(journal?.entries.map((e) => String(e.plan.appended?.rows[0].text[0])), acknowledged, 'the journal holds exactly the acknowledged rows');
    assert.equal(journal?.torn, false, 'the torn append was cut back');
    // Space is freed; a restart serves every acknowledged row once.
    mounted.resize('8m');
    const recovered = await openFileSource({ path, stateDir, log: recordingLog().log });
    assert.deepEqual(names(await recovered.read()).slice(-acknowledged.length), acknowledged);
    await recovered.close();
  } finally {
    await folder.cleanup();
    await rm(join(mounted.dir, 'state'), { recursive: true, force: true });
    mounted.unmount();
  }
});
