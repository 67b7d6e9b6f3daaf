// What the folds since the last outside save folded into the workbook file, kept in the
// state folder beside the journal (`<file>.<hash>.compacted`, a name older than the word
// "fold", kept so that existing state folders read the same), so that an outside save which drops them is noticed: someone
// opened book.xlsx, the server then folded 20 acknowledged writes into it, and they saved their
// copy over it (or they deleted those rows on purpose). The outside save is the truth for what
// was folded before it (docs/file-source.md, "Files changed behind the server"): the 20 writes are
// never applied again, since nothing tells a stale copy from a deliberate deletion and applying
// them brought deleted rows back on every save. This history only lets the file source save the
// dropped writes aside (a conflict file) instead of losing them without a trace; it is cleared
// once an outside save is taken, and records the folds after it.
import { open, readFile, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { WritePlan } from '../../../lib/write-plan.ts';
import type { SheetRow, Workbook } from '../../../lib/workbook.ts';
import { appendAndSync, cannotWriteFile, fsyncDirectory, isMissing, replaceFileDurably } from '../../durable/disk.ts';
import { journalLine, parseJournal, withoutReceipt, type JournalEntry } from './journal.ts';

export interface Fold {
  /** Fingerprint of the file the entries were applied to. */
  readonly base: string;
  /** Fingerprint of the file the fold wrote. */
  readonly produced: string;
  readonly entries: readonly JournalEntry[];
}

/**
 * The bound on what is kept: the latest folds, at most this many holding at most this many
 * bytes. When either is passed, the older half is dropped (so the file is rewritten only then).
 */
export const HISTORY_LIMITS = { folds: 1024, bytes: 16 * 1024 * 1024 } as const;

export class FoldHistory {
  readonly path: string;
  #records: { fold: Fold; line: string }[];
  /** Whether the file exists: the first append creates it, and its folder entry is then flushed. */
  #onDisk: boolean;
  /** The file ends in a line cut short (an append an older version left on a full disk): the next add rewrites it. */
  #torn: boolean;

  private constructor(path: string, records: { fold: Fold; line: string }[], onDisk: boolean, torn = false) {
    this.path = path;
    this.#records = records;
    this.#onDisk = onDisk;
    this.#torn = torn;
  }

  /** The history saved at `path`; empty when there is none or it cannot be read (it only helps). */
  static async load(path: string): Promise<FoldHistory> {
    let text = '';
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      return new FoldHistory(path, [], !isMissing(error));
    }
    const records: { fold: Fold; line: string }[] = [];
    for (const line of text.split('\n')) {
      const fold = parseRecord(line);
      // Kept with its newline, as recordLine makes it: #save joins the lines as they are.
      if (fold !== null) records.push({ fold, line: `${line}\n` });
    }
    // A line appended after a torn one would run into it and be lost with it.
    return new FoldHistory(path, records, true, text !== '' && !text.endsWith('\n'));
  }

  get folds(): readonly Fold[] {
    return this.#records.map((record) => record.fold);
  }

  /** Records a fold that just replaced the file: one appended line, or a rewrite without the older half. */
  async add(fold: Fold): Promise<void> {
    const line = recordLine(fold);
    this.#records.push({ fold, line });
    const bytes = this.#records.reduce((sum, record) => sum + record.line.length, 0);
    if (!this.#torn && this.#records.length <= HISTORY_LIMITS.folds && bytes <= HISTORY_LIMITS.bytes) return this.#append(line);
    let kept = 0;
    let keep = 0;
    for (let index = this.#records.length - 1; index >= 0 && keep < HISTORY_LIMITS.folds / 2; index--) {
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
   * Durable once it returns: recovery takes a fold this history records for one whose rename
   * landed (file-source.ts), so a new file's folder entry is flushed too.
   */
  async #append(line: string): Promise<void> {
    const handle = await open(this.path, 'a', 0o600).catch((error: unknown) => {
      throw cannotWriteFile(this.path, error);
    });
    let before = 0;
    try {
      before = (await handle.stat()).size;
      await appendAndSync(handle, new TextEncoder().encode(line));
    } catch (error) {
      const cutBack = before === 0 ? unlink(this.path).then(() => void (this.#onDisk = false)) : handle.truncate(before);
      // Not cut back: the next add rewrites the file whole instead of appending after the torn line.
      await cutBack.catch(() => void (this.#torn = true));
      throw cannotWriteFile(this.path, error);
    } finally {
      await handle.close();
    }
    if (!this.#onDisk) await fsyncDirectory(dirname(this.path));
    this.#onDisk = true;
  }

  /** Whether a fold recorded here produced the file with this fingerprint (its rename landed). */
  produced(print: string): boolean {
    return this.folds.some((fold) => fold.produced === print);
  }

  /**
   * The recorded writes whose rows a file saved outside the server no longer holds, oldest first:
   * a write counts when a row it wrote, and no later recorded write replaced or removed, is not
   * in `workbook` (compared by what it shows or holds). Those rows were in the file the outside
   * save replaced; they were deleted outside, or the save came from a copy opened before they
   * were folded. Either way they are not applied again: the file source saves them aside.
   */
  droppedBy(workbook: Workbook): JournalEntry[] {
    // Rows written and still standing after the last recorded write, per tab and value, latest last.
    const standing = new Map<string, { entry: JournalEntry; row: SheetRow }[]>();
    const at = (tab: string, key: string) => `${tab}\u0000${key}`;
    for (const fold of this.folds) {
      for (const entry of fold.entries) {
        // The rows this write replaced or removed held these values: a row written earlier is gone.
        for (const [, values] of entry.expected.rows) standing.get(at(entry.plan.tab, 'v' + JSON.stringify(values)))?.pop();
        for (const row of writtenRows(entry.plan)) {
          if (valueKey(row) === 'v[]') continue;
          const key = at(entry.plan.tab, valueKey(row));
          const same = standing.get(key);
          if (same === undefined) standing.set(key, [{ entry, row }]);
          else same.push({ entry, row });
        }
      }
    }
    const present = rowKeys(workbook);
    const dropped = new Set<JournalEntry>();
    for (const written of standing.values()) {
      for (const { entry, row } of written) {
        const rows = present.get(entry.plan.tab);
        if (rows === undefined || !(rows.has(textKey(row)) || rows.has(valueKey(row)))) dropped.add(entry);
      }
    }
    return this.folds.flatMap((fold) => fold.entries.filter((entry) => dropped.has(entry)));
  }

  /**
   * Forgets every fold: a file saved outside the server replaced what they folded in, and
   * is from now on what a later outside save is compared with.
   */
  async clear(): Promise<void> {
    if (this.#records.length === 0) return;
    this.#records = [];
    await this.#save();
  }

  /** temp + fsync + rename, mode 0600 like the journal: it holds the same data. */
  async #save(): Promise<void> {
    try {
      await replaceFileDurably(this.path, new TextEncoder().encode(this.#records.map((record) => record.line).join('')), 0o600);
    } catch (error) {
      throw cannotWriteFile(this.path, error);
    }
    this.#onDisk = true;
    this.#torn = false;
  }
}

/** One line per fold; its entries as a journal of their own, so they are read back (and checked) the same way. */
function recordLine(fold: Fold): string {
  // The receipts stay in the key store: a re-applied write is not answered again.
  const journal = journalLine({ journal: 1, base: fold.base }) + fold.entries.map((entry) => journalLine(withoutReceipt(entry))).join('');
  return JSON.stringify({ base: fold.base, produced: fold.produced, journal }) + '\n';
}

function parseRecord(line: string): Fold | null {
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

function writtenRows(plan: WritePlan): readonly SheetRow[] {
  return [...plan.replaced.map((replaced) => replaced.row), ...(plan.appended?.rows ?? [])];
}
