// Workbook files for the file source's tests: a temp folder per test, fixtures written with
// SheetJS (xlsx, ods) or by hand (csv), and a way to look at a file without the source.
import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as XLSX from '@e965/xlsx';
import type { CellObject, WorkBook } from '@e965/xlsx';
import type { FileFormat } from '../../server/sources/file/mod.ts';
import type { ContractFixture, FixtureCell } from './source-contract.ts';

export interface TempFolder {
  readonly dir: string;
  cleanup(): Promise<void>;
}

export async function tempFolder(): Promise<TempFolder> {
  const dir = await mkdtemp(join(tmpdir(), 'sheetrest-file-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A cell written the way a person would type it into a spreadsheet. */
function fixtureCell(cell: FixtureCell): CellObject | undefined {
  if (cell === null || cell === '') return undefined;
  if (typeof cell === 'number') return { t: 'n', v: cell };
  if (typeof cell === 'boolean') return { t: 'b', v: cell };
  return { t: 's', v: cell };
}

export function bookOf(tabs: readonly { name: string; cells: readonly (readonly (CellObject | undefined)[])[] }[]): WorkBook {
  const book = XLSX.utils.book_new();
  for (const tab of tabs) {
    const width = Math.max(1, ...tab.cells.map((cells) => cells.length));
    const sheet = { '!data': tab.cells.map((cells) => cells.slice()), '!ref': XLSX.utils.encode_range({ s: { r: 0, c: 0 }, e: { r: Math.max(tab.cells.length - 1, 0), c: width - 1 } }) };
    XLSX.utils.book_append_sheet(book, sheet as XLSX.WorkSheet, tab.name);
  }
  return book;
}

export function bookBytes(book: WorkBook, format: 'xlsx' | 'ods'): Uint8Array {
  return new Uint8Array(XLSX.write(book, { type: 'array', bookType: format }) as ArrayBuffer);
}

/** CSV text of the first tab: fields as their displayed text, quoted where RFC 4180 needs it. */
export function csvOf(rows: readonly (readonly FixtureCell[])[]): string {
  const field = (cell: FixtureCell) => {
    const text = cell === null ? '' : typeof cell === 'boolean' ? (cell ? 'TRUE' : 'FALSE') : String(cell);
    return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  };
  return rows.map((cells) => cells.map(field).join(',')).join('\r\n') + '\r\n';
}

/** Writes `fixture` as a workbook file in `dir`; a CSV file is named after the first tab. */
export async function writeFixture(dir: string, fixture: ContractFixture, format: FileFormat): Promise<string> {
  if (format === 'csv') {
    const path = join(dir, `${fixture.tabs[0].name}.csv`);
    await writeFile(path, csvOf(fixture.tabs[0].rows));
    return path;
  }
  const path = join(dir, `book.${format}`);
  const book = bookOf(fixture.tabs.map((tab) => ({ name: tab.name, cells: tab.rows.map((cells) => cells.map(fixtureCell)) })));
  await writeFile(path, bookBytes(book, format));
  return path;
}

/** What a spreadsheet program would find in the file: each tab's rows as displayed text. */
export async function shownText(path: string): Promise<Record<string, string[][]>> {
  const book = XLSX.read(await readFile(path), { type: 'buffer', dense: true, raw: path.endsWith('.csv') });
  return Object.fromEntries(
    book.SheetNames.map((name) => [name, XLSX.utils.sheet_to_json<string[]>(book.Sheets[name], { header: 1, raw: false, defval: '' })]),
  );
}

/** The journals and other files the source keeps in its state folder. */
export async function stateFiles(stateDir: string): Promise<string[]> {
  return (await readdir(stateDir).catch(() => [] as string[])).sort();
}

/** A logger that keeps what it is told, for asserting on (and for keeping test output clean). */
export function recordingLog(): { log: (message: string) => void; messages: string[] } {
  const messages: string[] = [];
  return { log: (message: string) => messages.push(message), messages };
}

/** Makes a file unwritable even for root (which ignores permission bits): chattr +i where it can. */
export async function makeUnwritable(path: string): Promise<() => Promise<void>> {
  if (process.getuid?.() === 0) {
    try {
      execFileSync('chattr', ['+i', path], { stdio: 'ignore' });
      return async () => void execFileSync('chattr', ['-i', path], { stdio: 'ignore' });
    } catch {
      // no chattr, or a file system without the immutable flag: fall back to the mode bits
    }
  }
  await chmod(path, 0o444);
  return () => chmod(path, 0o644);
}
