// The write journal: one append-only file per workbook in the state folder, holding every
// acknowledged write not yet compacted into the workbook file. Each line is `<checksum> <json>`;
// the first line names the fingerprint of the workbook bytes the entries apply on:
//
//   3f0c9a1e5b7d2c44 {"journal":1,"base":"<sha-256 of the workbook file>"}
//   9b1d0e6f2a3c4d5e {"plan":{"tab":"Sheet1",...},"expected":{"dataRows":3,"rows":[]}}
//   77aa01bc3de4f560 {"compactedTo":"<sha-256 of the file about to replace the workbook>"}
//
// A line cut short by a crash (or failing its checksum) ends the journal: everything before it
// was acknowledged, nothing after it was.
import { open, readFile, rename } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { WritePlan } from '../../../lib/apply-plan.ts';
import type { SheetRow, TypedValue } from '../../../lib/workbook.ts';
import { fingerprint, fsyncDirectory, isMissing, tempPathFor } from './disk.ts';

/** What a plan's target rows held when it was planned, so it can be re-checked on a changed file. */
export interface Expected {
  /** Data rows in the tab before the write: appends move by however many rows were added since. */
  readonly dataRows: number;
  /** The values of each replaced or removed row, by data-row index. */
  readonly rows: readonly (readonly [number, readonly TypedValue[]])[];
}

export interface JournalEntry {
  readonly plan: WritePlan;
  readonly expected: Expected;
}

export interface JournalContents {
  readonly base: string;
  readonly entries: readonly JournalEntry[];
  /** Compactions begun: entries before `entriesBefore` are in the file whose fingerprint is given. */
  readonly compactions: readonly { readonly fingerprint: string; readonly entriesBefore: number }[];
  /** Whether the journal ended in a damaged line (a write cut short by a crash). */
  readonly torn: boolean;
}

/** One journal line: `<checksum> <json>\n`. */
export function journalLine(record: unknown): string {
  const json = JSON.stringify(record);
  return `${fingerprint(json).slice(0, 16)} ${json}\n`;
}

/** Parses a journal, keeping the intact prefix; null when not even the header is intact. */
export function parseJournal(text: string): JournalContents | null {
  const records: unknown[] = [];
  let torn = false;
  let start = 0;
  while (start < text.length) {
    const end = text.indexOf('\n', start);
    const record = end === -1 ? undefined : parseLine(text.slice(start, end));
    if (record === undefined) {
      torn = true;
      break;
    }
    records.push(record);
    start = end + 1;
  }
  const header = records[0];
  if (!isRecord(header) || header.journal !== 1 || typeof header.base !== 'string') return null;
  const entries: JournalEntry[] = [];
  const compactions: { fingerprint: string; entriesBefore: number }[] = [];
  for (const record of records.slice(1)) {
    if (isRecord(record) && typeof record.compactedTo === 'string') {
      compactions.push({ fingerprint: record.compactedTo, entriesBefore: entries.length });
    } else if (isRecord(record) && isRecord(record.plan) && isRecord(record.expected)) {
      entries.push({ plan: revivePlan(record.plan as unknown as WritePlan), expected: record.expected as unknown as Expected });
    } else {
      torn = true;
      break;
    }
  }
  return { base: header.base, entries, compactions, torn };
}

function parseLine(text: string): unknown {
  const space = text.indexOf(' ');
  if (space !== 16) return undefined;
  const json = text.slice(17);
  if (fingerprint(json).slice(0, 16) !== text.slice(0, 16)) return undefined;
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON writes a missing formula as null; the model wants it absent. */
function revivePlan(plan: WritePlan): WritePlan {
  return {
    tab: plan.tab,
    replaced: plan.replaced.map((replaced) => ({ ...replaced, row: reviveRow(replaced.row) })),
    removed: plan.removed,
    appended: plan.appended === null ? null : { start: plan.appended.start, rows: plan.appended.rows.map(reviveRow) },
  };
}

function reviveRow(row: SheetRow): SheetRow {
  if (row.formula === undefined || row.formula === null) return { text: row.text, value: row.value };
  return { text: row.text, value: row.value, formula: row.formula.map((formula) => formula ?? undefined) };
}

export async function readJournal(path: string): Promise<JournalContents | null> {
  try {
    return parseJournal(await readFile(path, 'utf8'));
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

/** An open journal, appended to with one write and one fdatasync per group of writes. */
export class Journal {
  readonly path: string;
  #handle: FileHandle;
  /** Bytes known good: a failed append is cut back to this so later lines never follow garbage. */
  #size: number;

  private constructor(path: string, handle: FileHandle, size: number) {
    this.path = path;
    this.#handle = handle;
    this.#size = size;
  }

  /** Starts a fresh journal on `base` holding `entries`, replacing any old one atomically. */
  static async create(path: string, base: string, entries: readonly JournalEntry[]): Promise<Journal> {
    const text = journalLine({ journal: 1, base }) + entries.map(journalLine).join('');
    const temp = tempPathFor(path);
    const handle = await open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
    await fsyncDirectory(dirname(path));
    return new Journal(path, await open(path, 'a'), byteLength(text));
  }

  async append(entries: readonly JournalEntry[]): Promise<void> {
    await this.#write(entries.map(journalLine).join(''));
  }

  /** Records, before the rename, which file the entries so far are about to be folded into. */
  async markCompaction(target: string): Promise<void> {
    await this.#write(journalLine({ compactedTo: target }));
  }

  async #write(text: string): Promise<void> {
    try {
      await this.#handle.write(text);
      await this.#handle.datasync();
      this.#size += byteLength(text);
    } catch (error) {
      await this.#handle.truncate(this.#size).catch(() => undefined);
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.#handle.close();
  }
}

function byteLength(text: string): number {
  return new TextEncoder().encode(text).byteLength;
}

/**
 * Saves journaled writes that no longer fit the file (someone changed their rows) where a person
 * can find them: `<state>/<file>.conflict-<time>.jsonl`, one `{plan, expected}` per line.
 */
export async function saveConflicts(stateDir: string, fileName: string, conflicts: readonly JournalEntry[]): Promise<string> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const path = join(stateDir, `${fileName}.conflict-${stamp}.jsonl`);
  const handle = await open(path, 'w', 0o600);
  try {
    await handle.writeFile(conflicts.map((entry) => JSON.stringify(entry) + '\n').join(''));
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fsyncDirectory(stateDir);
  return path;
}
