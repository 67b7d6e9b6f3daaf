// A source holds one spreadsheet: a workbook file or a Google spreadsheet. The server reads
// through `read` and writes through `write`, which runs the engine's planning step against the
// latest rows, in arrival order, and resolves only once the change is durable.
import type { WritePlan } from '../../lib/write-plan.ts';
import type { Workbook } from '../../lib/workbook.ts';

/**
 * What a write callback answers: the plan to make durable (null: nothing to write) and the next
 * workbook, which must be the plan applied to the workbook the callback was given (the engine's
 * `result.workbook`); sources take it as it is instead of applying the plan a second time.
 */
export interface Planned<T> {
  readonly plan: WritePlan | null;
  readonly workbook: Workbook;
  readonly result: T;
  /**
   * What an Idempotency-Key keeps of this write (server/idempotency/idempotency.ts), to be made durable in
   * the same step as the plan. A source with a journal writes it in the plan's own journal line,
   * so no crash can keep the write and lose the key; other sources ignore it.
   */
  readonly receipt?: Receipt;
  /**
   * The write's change-feed events, numbered for the connection's webhook outbox, to be made
   * durable in the same step as the plan: a source with a journal calls it while it plans (in
   * arrival order) when it has an EventSink, writes them in the plan's own journal line, and
   * hands them to the sink once the line is fsynced; then the outbox needs no fsync of its own
   * before the write is answered. Other sources never call it (the outbox then fsyncs them).
   */
  readonly events?: () => readonly CarriedEvent[];
}

/** A change-feed event carried in a journal line (server/webhooks/outbox.ts gives it): opaque JSON to a source, but for its id. */
export interface CarriedEvent {
  /** `<ms>-<seq>`, increasing per connection. */
  readonly id: string;
}

/** An Idempotency-Key's record: the request it was first used with and the answer given. */
export interface Receipt {
  readonly key: string;
  /** SHA-256 of the request (server/idempotency/idempotency.ts, requestFingerprint). */
  readonly fingerprint: string;
  /** When the key was first used (epoch ms); it expires a fixed time later. */
  readonly at: number;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** Whether a value (from the store, or from a journal line) has a receipt's shape. */
export function isReceipt(value: unknown): value is Receipt {
  if (typeof value !== 'object' || value === null) return false;
  const { key, fingerprint: print, at, status, headers, body } = value as Record<string, unknown>;
  return (
    typeof key === 'string' &&
    typeof print === 'string' &&
    typeof at === 'number' &&
    typeof status === 'number' &&
    typeof body === 'string' &&
    typeof headers === 'object' &&
    headers !== null &&
    Object.values(headers).every((header) => typeof header === 'string')
  );
}

/**
 * Where a journaling source hands the receipts it journaled (server/idempotency/file-store.ts): told
 * of each once it is durable with its write, and asked to keep them elsewhere before the journal
 * forgets them (a fold into the file, a journal rebuilt after an outside change, recovery).
 */
export interface ReceiptSink {
  /** Receipts now durable in the journal with their writes: answer retries with them from now on. */
  journaled(receipts: readonly Receipt[]): void;
  /** Resolves once these receipts are durable outside the journal; throws when they are not. */
  keep(receipts: readonly Receipt[]): Promise<void>;
}

/**
 * Where a journaling source hands the change-feed events its journal lines carry (the
 * connection's webhook outbox, server/webhooks/webhooks.ts), as ReceiptSink does the receipts.
 */
export interface EventSink {
  /**
   * Events now durable in the journal: delivered from now on. Also told at open of the events
   * the last run's journal holds (a crash may have kept them from the outbox); events it
   * already has are ignored.
   */
  journaled(events: readonly CarriedEvent[]): void;
  /** Resolves once these events are durable outside the journal (before a fold or a rebase makes it forget them). */
  keep(events: readonly CarriedEvent[]): Promise<void>;
}

export interface ReadOptions {
  /** Skip any freshness window and look at the backing store (a client's `Cache-Control: no-cache`). */
  readonly fresh?: boolean;
  /**
   * The one tab the caller will use (null: the first tab); left out: any tab. A source that
   * reads tab by tab (Google) then needs only that tab's rows to be current: the workbook lists
   * every tab, but others' rows may be older, or empty if never read. Sources may ignore it.
   */
  readonly tab?: string | null;
}

export interface WriteOptions {
  /** The tab the write addresses (null: the first), as for reads. */
  readonly tab?: string | null;
}

/** A tab changed behind the server's back (server/feed/: `tab.changed`), with its data rows now. */
export interface TabChange {
  readonly tab: string;
  readonly rowCount: number;
}

export interface Source {
  /** A short description for logs, never holding a secret: `file fixtures/demo.xlsx`. */
  readonly description: string;
  /** Whether writes can succeed at all (a read-only file or connection answers 403 write_error). */
  readonly writable: boolean;
  /**
   * The workbook as of the last acknowledged write, picking up changes made behind the
   * server's back. Throws ApiError (not_found, upstream_*) when the store cannot be read.
   */
  read(options?: ReadOptions): Promise<Workbook>;
  /**
   * What `read` would give, when the source has it without waiting for anything (nothing to look
   * at first); undefined otherwise, and then the caller reads. Lets a kept answer go out in the
   * same turn. Left out: every read waits for `read`.
   */
  readNow?(options?: ReadOptions): Workbook | undefined;
  /**
   * Runs `plan` against the latest workbook (including writes accepted but not yet durable),
   * one call at a time in arrival order, then makes its plan durable and resolves with its
   * result. Throws ApiError(write_error) when the store refuses the write; nothing is written then.
   */
  write<T>(plan: (workbook: Workbook) => Planned<T>, options?: WriteOptions): Promise<T>;
  /**
   * When the rows `read` answers last changed (ms since the epoch), where the source knows it:
   * the answers' `Last-Modified`. Left out where it does not (Google: the Sheets API does not say).
   */
  lastModified?(): number | undefined;
  /**
   * Tells `listener` of the tabs an outside edit changed (a file saved by another program, a
   * Google spreadsheet edited in the browser), once the source notices it (a read looking at the
   * store), never of the server's own writes. Returns what stops it. Left out: the source cannot tell.
   */
  watchOutsideChanges?(listener: (changes: readonly TabChange[]) => void): () => void;
  /** Finishes the writes in flight, flushes, and releases the store. */
  close(): Promise<void>;
}
