// The write journal: one append-only file per workbook in the state folder, holding every
// acknowledged write not yet folded into the workbook file. Each line is `<checksum> <json>`;
// the first line names the fingerprint of the workbook bytes the entries apply on:
//
//   3f0c9a1e5b7d2c44 {"journal":1,"base":"<sha-256 of the workbook file>"}
//   9b1d0e6f2a3c4d5e {"plan":{"tab":"Sheet1",...},"expected":{"dataRows":3,"rows":[]}}
//   77aa01bc3de4f560 {"compactedTo":"<sha-256 of the file about to replace the workbook>"}
//
// (`compactedTo` marks a fold: the key is older than the word "fold", and stays so that every
// journal on disk reads the same.)
//
// Appends are all-or-nothing: every byte is written (a short write is continued) and fdatasynced
// before the write is acknowledged; on any failure the file is cut back to its last good length,
// and if even that fails the journal refuses further appends (`broken`) rather than write after
// garbage: the file source then starts a fresh journal holding what was acknowledged.
//
// Reading: a damaged line at the end (a crash mid-append, or zeros a file system left after a
// power cut) was never acknowledged and is dropped. A damaged line with intact lines after it
// should not exist; if it does (disk corruption, or a journal torn by an older version), the
// intact lines after it are kept and its line number is reported in `damaged`, so recovery can
// log it and re-check the later writes instead of silently dropping them all.
import { open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { WritePlan } from '../../../lib/write-plan.ts';
import type { SheetRow, TypedValue } from '../../../lib/workbook.ts';
import { isReceipt } from '../source.ts';
import type { CarriedEvent, Receipt } from '../source.ts';
import { appendAndSync, cannotWriteFile, commitTempFile, DISK_FILES, fingerprint, fsyncDirectory, isMissing, writeTempFile, type WritableFiles, type WritableHandle } from '../../durable/disk.ts';

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
  /** The write's Idempotency-Key and answer, durable in the same line as the write (source.ts). */
  readonly receipt?: Receipt;
  /**
   * The write's change-feed events for the connection's webhook outbox (Planned.events), durable
   * in the same line as the write: one fsync acknowledges both.
   */
  readonly events?: readonly CarriedEvent[];
}

/** The receipts the entries carry. */
export function receiptsOf(entries: readonly JournalEntry[]): Receipt[] {
  return entries.flatMap((entry) => (entry.receipt === undefined ? [] : [entry.receipt]));
}

/** The change-feed events the entries carry, in journal order. */
export function eventsOf(entries: readonly JournalEntry[]): CarriedEvent[] {
  return entries.flatMap((entry) => entry.events ?? []);
}

/** An entry without its receipt and events, for files that keep writes but not their answers (conflicts, history). */
export function withoutReceipt(entry: JournalEntry): JournalEntry {
  return { plan: entry.plan, expected: entry.expected };
}

export interface JournalContents {
  readonly base: string;
  readonly entries: readonly JournalEntry[];
  /** Folds begun: entries before `entriesBefore` are in the file whose fingerprint is given. */
  readonly folds: readonly { readonly fingerprint: string; readonly entriesBefore: number }[];
  /** Whether the journal ended in a damaged line (a write cut short by a crash). */
  readonly torn: boolean;
  /** 1-based numbers of damaged lines that intact lines follow: lost writes, reported by recovery. */
  readonly damaged: readonly number[];
}

/** What the journal needs of an open file (durable/disk.ts); a seam for tests that fail the disk. */
export type JournalHandle = WritableHandle;
export type JournalFiles = WritableFiles;

/** One journal line: `<checksum> <json>\n`. */
export function journalLine(record: unknown): string {
  const json = JSON.stringify(record);
  return `${fingerprint(json).slice(0, 16)} ${json}\n`;
}

/**
 * Parses a journal: intact lines, in order, around any damaged ones; null when the header is not
 * intact (then nothing says which file the entries apply on).
 */
export function parseJournal(text: string): JournalContents | null {
  let base: string | undefined;
  const entries: JournalEntry[] = [];
  const folds: { fingerprint: string; entriesBefore: number }[] = [];
  /** Damaged lines since the last intact one: torn if nothing intact follows them. */
  let pending: number[] = [];
  const damaged: number[] = [];
  let line = 0;
  for (let start = 0; start < text.length; ) {
    line++;
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    // A last line without its newline is cut short, whatever its checksum says.
    const intact = newline === -1 ? undefined : parseLine(text.slice(start, end));
    const record = intact ?? (newline === -1 ? undefined : resync(text.slice(start, end)));
    // Found after damage within the line: whatever came before it on this line is lost.
    if (intact === undefined && record !== undefined) pending.push(line);
    start = end + 1;
    if (line === 1) {
      if (!isRecord(record) || record.journal !== 1 || typeof record.base !== 'string') return null;
      base = record.base;
    } else if (isRecord(record) && typeof record.compactedTo === 'string') {
      folds.push({ fingerprint: record.compactedTo, entriesBefore: entries.length });
    } else if (isRecord(record) && isRecord(record.plan) && isRecord(record.expected)) {
      const entry: JournalEntry = { plan: revivePlan(record.plan as unknown as WritePlan), expected: record.expected as unknown as Expected };
      const events = Array.isArray(record.events) ? (record.events as unknown[]).filter(isCarriedEvent) : [];
      entries.push({ ...entry, ...(isReceipt(record.receipt) ? { receipt: record.receipt } : {}), ...(events.length > 0 ? { events } : {}) });
    } else {
      pending.push(line);
      continue;
    }
    damaged.push(...pending);
    pending = [];
  }
  if (base === undefined) return null;
  return { base, entries, folds, torn: pending.length > 0, damaged };
}

/**
 * A damaged line may end in an intact one: a torn append with no newline runs into the next
 * line written after it. Finds the first intact line starting inside it.
 */
function resync(text: string): unknown {
  for (const candidate of text.matchAll(/[0-9a-f]{16} \{/g)) {
    if (candidate.index === 0) continue;
    const record = parseLine(text.slice(candidate.index));
    if (record !== undefined) return record;
  }
  return undefined;
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

function isCarriedEvent(value: unknown): value is CarriedEvent {
  return isRecord(value) && typeof value.id === 'string';
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
    ...(plan.readsRows === true ? { readsRows: true as const } : {}),
  };
}

function reviveRow(row: SheetRow): SheetRow {
  if (row.formula === undefined || row.formula === null) return { text: row.text, value: row.value };
  return { text: row.text, value: row.value, formula: row.formula.map((formula) => formula ?? undefined) };
}

/**
 * Reads a journal; null when there is none. A journal whose first line is damaged cannot be
 * placed (it names the file its writes apply on), so it is an error for the operator rather
 * than a file to overwrite with a fresh one, which would drop every write in it.
 */
export async function readJournal(path: string): Promise<JournalContents | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
  const contents = parseJournal(text);
  if (contents === null && text !== '') throw new Error('its first line is damaged; move it aside to start without its writes');
  return contents;
}

/** An open journal, appended to with one write and one fdatasync per group of writes. */
export class Journal {
  readonly path: string;
  #handle: JournalHandle;
  /** Bytes known good: a failed append is cut back to this so later lines never follow garbage. */
  #size: number;
  /** Why appends are refused: a failed append could not be cut back. */
  #broken: unknown = null;

  private constructor(path: string, handle: JournalHandle, size: number) {
    this.path = path;
    this.#handle = handle;
    this.#size = size;
  }

  /** Starts a fresh journal on `base` holding `entries`, replacing any old one atomically. */
  static async create(path: string, base: string, entries: readonly JournalEntry[], files: JournalFiles = DISK_FILES): Promise<Journal> {
    const bytes = encoder.encode(journalLine({ journal: 1, base }) + entries.map(journalLine).join(''));
    // Errors name the journal: on a full disk the runtime's own message names no file.
    const { temp } = await writeTempFile(path, bytes, 0o600, files).catch((error: unknown) => {
      throw cannotWriteFile(path, error);
    });
    await commitTempFile(temp, path).catch((error: unknown) => {
      throw cannotWriteFile(path, error);
    });
    return new Journal(path, await files.open(path, 'a'), bytes.byteLength);
  }

  /** Whether appends are refused because a failed one could not be cut back; start a new journal. */
  get broken(): boolean {
    return this.#broken !== null;
  }

  async append(entries: readonly JournalEntry[]): Promise<void> {
    await this.#write(entries.map(journalLine).join(''));
  }

  /** Records, before the rename, which file the entries so far are about to be folded into. */
  async markFold(target: string): Promise<void> {
    await this.#write(journalLine({ compactedTo: target }));
  }

  /** Acknowledged only once every byte is written and fdatasynced; otherwise cut back, or broken. */
  async #write(text: string): Promise<void> {
    if (this.#broken !== null) throw this.#broken;
    const bytes = encoder.encode(text);
    try {
      await appendAndSync(this.#handle, bytes);
    } catch (error) {
      try {
        await this.#handle.truncate(this.#size);
      } catch {
        // The torn bytes stay at the end: appending after them would bury good lines behind
        // garbage, so nothing more is appended to this file.
        this.#broken = error;
      }
      throw error;
    }
    this.#size += bytes.byteLength;
  }

  async close(): Promise<void> {
    await this.#handle.close();
  }
}

const encoder = new TextEncoder();

/**
 * Saves journaled writes that no longer fit the file (someone changed their rows) where a person
 * can find them: `<state>/<file>.conflict-<time>.jsonl`, one `{plan, expected}` per line.
 */
export async function saveConflicts(stateDir: string, fileName: string, conflicts: readonly JournalEntry[]): Promise<string> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const path = join(stateDir, `${fileName}.conflict-${stamp}.jsonl`);
  const handle = await open(path, 'w', 0o600).catch((error: unknown) => {
    throw cannotWriteFile(path, error);
  });
  try {
    await handle.writeFile(conflicts.map((entry) => JSON.stringify(withoutReceipt(entry)) + '\n').join(''));
    await handle.sync();
  } catch (error) {
    // Half a conflict file would pass for all of it: none at all, and the writes stay in the journal.
    await handle.close().catch(() => undefined);
    await unlink(path).catch(() => undefined);
    throw cannotWriteFile(path, error);
  }
  await handle.close();
  await fsyncDirectory(stateDir);
  return path;
}
