// Built read answers, kept so that a repeated identical read of an unchanged tab is sent again
// instead of being parsed, filtered and formatted again: a repeated filtered read then costs what
// the whole-tab read costs. An answer is a function of the tab object it was built from (tabs are
// immutable: a write or an outside edit makes a new one) and of the request's path and query, so
// an entry is valid exactly while the source still serves that tab object. Entries hold the
// workbook and tab weakly, so a cached answer never keeps old rows alive.
//
// Memory is bounded: the bodies and keys of all entries together stay under `maxBytes`; what goes
// first is chosen as CLOCK does (an answer used since the last sweep gets a second chance), which
// is close to least-recently-used while a hit only sets a flag; an answer larger than an eighth of it is not kept at all (the whole
// tab, the usual large answer, is kept with its table by the engine anyway).
import type { Tab, Workbook } from '../../lib/workbook.ts';
import type { Answer } from './respond.ts';

/** What one entry costs besides its body and key: the objects around them, roughly. */
const ENTRY_OVERHEAD_BYTES = 256;

interface Entry {
  workbook: WeakRef<Workbook>;
  /** The tab the answer was built from; null for `/tabs`, which depends on the whole workbook. */
  readonly tab: WeakRef<Tab> | null;
  /** The tab's name; null when the request named no tab and so read whichever tab is first. */
  readonly tabName: string | null;
  readonly answer: Answer;
  readonly bytes: number;
  /** Used since the eviction sweep last passed it. */
  used: boolean;
}

export class AnswerCache {
  readonly maxBytes: number;
  #bytes = 0;
  readonly #entries = new Map<string, Entry>();

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** Bytes held now (bodies, keys and a fixed overhead per entry). */
  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The answer kept for `key`, if it was built from what `workbook` still holds. */
  get(key: string, workbook: Workbook): Answer | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.workbook.deref() !== workbook) {
      // Another tab was written (or the file reloaded): still valid if this tab is the same object.
      const tab = entry.tab?.deref();
      const now = entry.tabName === null ? workbook.tabs[0] : workbook.tabs.find((candidate) => candidate.name === entry.tabName);
      if (tab === undefined || now !== tab) {
        this.#delete(key, entry);
        return undefined;
      }
      entry.workbook = new WeakRef(workbook);
    }
    entry.used = true;
    return entry.answer;
  }

  /**
   * Keeps a 200 answer built from `tab` of `workbook` (`tab` null: from the whole workbook);
   * `firstTab`: the request named no tab, so the answer holds while `tab` is still the first.
   */
  set(key: string, workbook: Workbook, tab: Tab | null, answer: Answer, firstTab = false): void {
    const bytes = bodyBytes(answer.body) + key.length * 2 + ENTRY_OVERHEAD_BYTES;
    if (bytes > this.maxBytes / 8) return;
    const old = this.#entries.get(key);
    if (old !== undefined) this.#delete(key, old);
    this.#entries.set(key, { workbook: new WeakRef(workbook), tab: tab === null ? null : new WeakRef(tab), tabName: firstTab ? null : (tab?.name ?? null), answer, bytes, used: false });
    this.#bytes += bytes;
    // The sweep starts at the oldest entry: one used since is moved to the back, unmarked (a
    // Map iterator visits entries added meanwhile, so each is seen again at most once).
    for (const [oldest, entry] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break;
      this.#entries.delete(oldest);
      if (entry.used) {
        entry.used = false;
        this.#entries.set(oldest, entry);
      } else {
        this.#bytes -= entry.bytes;
      }
    }
  }

  #delete(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }
}

function bodyBytes(body: string | Uint8Array): number {
  // A string body is held as UTF-16 (or Latin-1) text: at most two bytes a code unit.
  return typeof body === 'string' ? body.length * 2 : body.byteLength;
}
