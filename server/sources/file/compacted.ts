// What the last compactions folded into the workbook file, kept in the state folder beside the
// journal, so that a stale copy saved over the file is noticed: someone opened book.xlsx, the
// server then compacted 20 acknowledged writes into it, and they saved their copy over it. The
// 20 writes are in no journal any more; this history still has them, and the file source
// re-applies them (where they fit, as for journaled writes) when the new file lacks them.
import { open, readFile, unlink } from 'node:fs/promises';
import type { WritePlan } from '../../../lib/apply-plan.ts';
import type { SheetRow, Workbook } from '../../../lib/workbook.ts';
import { cannotWriteFile, isMissing, replaceFileDurably } from './disk.ts';
import { journalLine, parseJournal, withoutReceipt, type JournalEntry } from './journal.ts';
import { dataRowCount } from './rebase.ts';

export interface Compaction {
  /** Fingerprint of the file the entries were applied to. */
  readonly base: string;
  /** Fingerprint of the file the compaction wrote. */
  readonly produced: string;
  readonly entries: readonly JournalEntry[];
}

/**
 * The bound on what is kept: the latest compactions, at most this many holding at most this many
 * bytes. When either is passed, the older half is dropped (so the file is rewritten only then).
 */
export const HISTORY_LIMITS = { compactions: 1024, bytes: 16 * 1024 * 1024 } as const;

export class CompactionHistory {
  readonly path: string;
  #records: { compaction: Compaction; line: string }[];
  /** The file ends in a line cut short (an append an older version left on a full disk): the next add rewrites it. */
  #torn: boolean;

  private constructor(path: string, records: { compaction: Compaction; line: string }[], torn = false) {
    this.path = path;
    this.#records = records;
    this.#torn = torn;
  }

  /** The history saved at `path`; empty when there is none or it cannot be read (it only helps). */
  static async load(path: string): Promise<CompactionHistory> {
    let text = '';
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if (!isMissing(error)) return new CompactionHistory(path, []);
    }
    const records: { compaction: Compaction; line: string }[] = [];
    for (const line of text.split('\n')) {
      const compaction = parseRecord(line);
      // Kept with its newline, as recordLine makes it: #save joins the lines as they are.
      if (compaction !== null) records.push({ compaction, line: `${line}\n` });
    }
    // A line appended after a torn one would run into it and be lost with it.
    return new CompactionHistory(path, records, text !== '' && !text.endsWith('\n'));
  }

  get compactions(): readonly Compaction[] {
    return this.#records.map((record) => record.compaction);
  }

  /** Records a compaction that just replaced the file: one appended line, or a rewrite without the older half. */
  async add(compaction: Compaction): Promise<void> {
    const line = recordLine(compaction);
    this.#records.push({ compaction, line });
    const bytes = this.#records.reduce((sum, record) => sum + record.line.length, 0);
    if (!this.#torn && this.#records.length <= HISTORY_LIMITS.compactions && bytes <= HISTORY_LIMITS.bytes) return this.#append(line);
    let kept = 0;
    let keep = 0;
    for (let index = this.#records.length - 1; index >= 0 && keep < HISTORY_LIMITS.compactions / 2; index--) {
      kept += this.#records[index].line.length;
      if (kept > HISTORY_LIMITS.bytes / 2) break;
      keep++;
    }
    this.#records = this.#records.slice(this.#records.length - keep);
    await this.#save();
  }

  /**
   * Appends one line, all of it or none: a failed append (a full disk) is cut back to the file's
   * length before it, and a file it created is removed, so no half-written line is left behind.
   */
  async #append(line: string): Promise<void> {
    const handle = await open(this.path, 'a', 0o600).catch((error: unknown) => {
      throw cannotWriteFile(this.path, error);
    });
    let before = 0;
    try {
      before = (await handle.stat()).size;
      await handle.write(line);
      await handle.datasync();
    } catch (error) {
      const cutBack = before === 0 ? unlink(this.path) : handle.truncate(before);
      // Not cut back: the next add rewrites the file whole instead of appending after the torn line.
      await cutBack.catch(() => void (this.#torn = true));
      throw cannotWriteFile(this.path, error);
    } finally {
      await handle.close();
    }
  }

  /**
   * The compactions whose writes a file that changed outside the server lacks, oldest first:
   * every one since the file's own version when the file is byte for byte an earlier version;
   * otherwise the latest ones (walking back) that the file holds none of the rows of, on tabs no
   * longer than before them (a copy saved from before them, perhaps edited).
   */
  missingFrom(workbook: Workbook, print: string): Compaction[] {
    const compactions = this.compactions;
    const exact = compactions.findLastIndex((compaction) => compaction.base === print);
    if (exact !== -1) return compactions.slice(exact);
    const present = rowKeys(workbook);
    let first = compactions.length;
    while (first > 0 && lacks(workbook, present, compactions[first - 1])) first--;
    return compactions.slice(first);
  }

  /** Drops compactions whose writes were taken back into the journal. */
  async forget(compactions: readonly Compaction[]): Promise<void> {
    if (compactions.length === 0) return;
    this.#records = this.#records.filter((record) => !compactions.includes(record.compaction));
    await this.#save();
  }

  /** temp + fsync + rename, mode 0600 like the journal: it holds the same data. */
  async #save(): Promise<void> {
    try {
      await replaceFileDurably(this.path, new TextEncoder().encode(this.#records.map((record) => record.line).join('')), 0o600);
    } catch (error) {
      throw cannotWriteFile(this.path, error);
    }
    this.#torn = false;
  }
}

/** One line per compaction; its entries as a journal of their own, so they are read back (and checked) the same way. */
function recordLine(compaction: Compaction): string {
  // The receipts stay in the key store: a re-applied write is not answered again.
  const journal = journalLine({ journal: 1, base: compaction.base }) + compaction.entries.map((entry) => journalLine(withoutReceipt(entry))).join('');
  return JSON.stringify({ base: compaction.base, produced: compaction.produced, journal }) + '\n';
}

function parseRecord(line: string): Compaction | null {
  try {
    const record: unknown = JSON.parse(line);
    if (typeof record !== 'object' || record === null) return null;
    const { base, produced, journal } = record as Record<string, unknown>;
    if (typeof base !== 'string' || typeof produced !== 'string' || typeof journal !== 'string') return null;
    const parsed = parseJournal(journal);
    return parsed === null || parsed.torn ? null : { base, produced, entries: parsed.entries };
  } catch {
    return null;
  }
}

/** Each tab's rows as comparable keys: what they show and what they hold (a date may come back as text). */
function rowKeys(workbook: Workbook): Map<string, Set<string>> {
  return new Map(workbook.tabs.map((tab) => [tab.name, new Set(tab.rows.flatMap((row) => [textKey(row), valueKey(row)]))]));
}

function textKey(row: SheetRow): string {
  const text = row.text.slice();
  while (text.length > 0 && (text[text.length - 1] ?? '') === '') text.pop();
  return 't' + JSON.stringify(text);
}

function valueKey(row: SheetRow): string {
  const values = row.value.map((value) => value ?? null);
  while (values.length > 0 && values[values.length - 1] === null) values.pop();
  return 'v' + JSON.stringify(values);
}

/** Whether `workbook` holds none of the rows a compaction wrote, on tabs no longer than before it. */
function lacks(workbook: Workbook, present: Map<string, Set<string>>, compaction: Compaction): boolean {
  let written = 0;
  const before = new Map<string, number>();
  for (const { plan, expected } of compaction.entries) {
    if (!before.has(plan.tab)) before.set(plan.tab, expected.dataRows);
    const rows = present.get(plan.tab);
    for (const row of writtenRows(plan)) {
      if (valueKey(row) === 'v[]') continue;
      if (rows !== undefined && (rows.has(textKey(row)) || rows.has(valueKey(row)))) return false;
      written++;
    }
  }
  for (const [name, dataRows] of before) {
    const tab = workbook.tabs.find((candidate) => candidate.name === name);
    if (tab !== undefined && dataRowCount(tab) > dataRows) return false;
  }
  return written > 0;
}

function writtenRows(plan: WritePlan): readonly SheetRow[] {
  return [...plan.replaced.map((replaced) => replaced.row), ...(plan.appended?.rows ?? [])];
}
