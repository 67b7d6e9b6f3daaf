// The change feed of every connection: `feed.wrote('crm', plan, before, after)` once a write is
// acknowledged -> its events in the log (event-log.ts) and out to every listener, on this
// instance and, through Redis, on the others; a source's outside edits, once noticed, ->
// `tab.changed`. While anyone listens to a connection, its source is read every `watchEveryMs`,
// so an outside edit is noticed within the source's freshness window even when nobody reads.
import type { WritePlan } from '../../lib/write-plan.ts';
import type { Workbook } from '../../lib/workbook.ts';
import type { Logger } from '../log.ts';
import type { Source } from '../sources/source.ts';
import type { EventLog, Unsubscribe } from './event-log.ts';
import { tabChangedEvent, writeEvents, type DraftEvent, type FeedEvent } from './event.ts';

/** What the feed needs of a connection. */
export interface FeedConnection {
  readonly id: string;
  readonly source: Source;
}

/** Where the events of connections with webhooks go durably (server/webhooks/): resolves once they are on disk; null for a connection without. */
export interface Outbox {
  record(connection: string, drafts: readonly DraftEvent[]): Promise<void> | null;
  /** Whether a write's events can ride in a source's journal line instead (an outbox in the state folder). */
  carries?(connection: string): boolean;
  /** Numbers a write's events for its journal line; `settle` once the write is answered or failed. */
  carry?(connection: string, drafts: readonly DraftEvent[]): { readonly events: readonly FeedEvent[]; settle(): void } | null;
}

/** A write's events numbered for the outbox while it is planned, to ride in its journal line (Feed.carry). */
export interface CarriedWrite {
  readonly drafts: readonly DraftEvent[];
  /** The drafts numbered by the outbox: what the journal line carries. */
  readonly events: readonly FeedEvent[];
  /** The write was answered or failed: it no longer holds deliveries back. */
  settle(): void;
}

export interface FeedOptions {
  readonly outbox?: Outbox;
  /** How often a listened-to connection's source is read, to notice outside edits (default 1 s). */
  readonly watchEveryMs?: number;
}

export const DEFAULT_WATCH_EVERY_MS = 1_000;

interface Watch {
  listeners: number;
  readonly timer: ReturnType<typeof setInterval>;
}

export class Feed {
  readonly events: EventLog;
  readonly #log: Logger;
  readonly #watchEveryMs: number;
  readonly #outbox: Outbox | undefined;
  /** Sources whose outside edits are told to the feed, with the connection id they were told for. */
  readonly #hooked = new WeakMap<Source, string>();
  readonly #unhooks: (() => void)[] = [];
  readonly #watches = new Map<Source, Watch>();
  readonly #ends = new Set<() => void>();
  #closed = false;

  constructor(events: EventLog, log: Logger, options: FeedOptions = {}) {
    this.events = events;
    this.#log = log;
    this.#watchEveryMs = options.watchEveryMs ?? DEFAULT_WATCH_EVERY_MS;
    this.#outbox = options.outbox;
  }

  /**
   * A write being planned by a source that journals it (the file source, Planned.events): for a
   * connection with webhooks, its events made and numbered now, for the journal line to carry,
   * so that the write's one fsync makes them durable too; null otherwise (then `wrote` records
   * them in the outbox, which fsyncs them itself). Never throws.
   */
  carry(connection: string, plan: WritePlan, before: Workbook, after: Workbook): CarriedWrite | null {
    const outbox = this.#outbox;
    if (outbox?.carry === undefined || outbox.carries?.(connection) !== true) return null;
    try {
      const drafts = writeEvents(connection, plan, before, after);
      const carried = outbox.carry(connection, drafts);
      return carried === null ? null : { drafts, events: carried.events, settle: () => carried.settle() };
    } catch (error) {
      this.#log.error('the change feed could not make the events of a write', { connection, error: String(error) });
      return null;
    }
  }

  /**
   * An acknowledged write: its events, appended to the log without waiting. For a connection
   * with webhooks, a promise that resolves once they are in its durable outbox (the answer waits
   * for that fsync, never for a receiver); null otherwise, and null when its journal line carried
   * them (`carried`: already durable, and in the outbox). Never throws or rejects: the answer
   * goes out whatever happens here.
   */
  wrote(connection: string, plan: WritePlan, before: Workbook, after: Workbook, carried: CarriedWrite | null = null): Promise<void> | null {
    try {
      if (carried !== null) {
        this.events.append(connection, carried.drafts);
        return null;
      }
      const drafts = writeEvents(connection, plan, before, after);
      if (drafts.length === 0) return null;
      this.events.append(connection, drafts);
      const durable = this.#outbox?.record(connection, drafts) ?? null;
      return durable?.catch((error: unknown) => this.#log.error('the webhook outbox could not keep the events of an acknowledged write', { connection, error: String(error) })) ?? null;
    } catch (error) {
      this.#log.error('the change feed could not record a write', { connection, error: String(error) });
      return null;
    }
  }

  /** From the first request to a connection on: its source tells the feed of outside edits (where it can). */
  know(connection: FeedConnection): void {
    const { source, id } = connection;
    if (this.#hooked.get(source) === id || source.watchOutsideChanges === undefined) return;
    this.#hooked.set(source, id);
    this.#unhooks.push(
      source.watchOutsideChanges((changes) => {
        if (changes.length === 0 || this.#hooked.get(source) !== id) return;
        const drafts = changes.map((change) => tabChangedEvent(id, change.tab, change.rowCount));
        this.events.append(id, drafts);
        this.#outbox?.record(id, drafts)?.catch((error: unknown) => this.#log.error('the webhook outbox could not keep an outside edit', { connection: id, error: String(error) }));
      }),
    );
  }

  /**
   * Listens to a connection's events from now on; while anyone does, its source is looked at
   * every `watchEveryMs`. Resolves once nothing appended after it can be missed.
   */
  async listen(connection: FeedConnection, listener: (event: FeedEvent) => void, ended?: () => void): Promise<Unsubscribe> {
    if (this.#closed) throw new Error('the change feed is closed');
    this.know(connection);
    const unsubscribe = await this.events.subscribe(connection.id, listener);
    const source = connection.source;
    let watch = this.#watches.get(source);
    if (watch === undefined) {
      const timer = setInterval(() => void source.read().catch(() => undefined), this.#watchEveryMs);
      timer.unref?.();
      this.#watches.set(source, (watch = { listeners: 0, timer }));
    }
    watch.listeners++;
    let done = false;
    const end = () => ended?.();
    this.#ends.add(end);
    return () => {
      if (done) return;
      done = true;
      this.#ends.delete(end);
      unsubscribe();
      const current = this.#watches.get(source);
      if (current === undefined || --current.listeners > 0) return;
      clearInterval(current.timer);
      this.#watches.delete(source);
    };
  }

  /** Ends every listener's stream (they hear `ended`), stops watching sources, closes the log. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const end of [...this.#ends]) end();
    for (const watch of this.#watches.values()) clearInterval(watch.timer);
    this.#watches.clear();
    for (const unhook of this.#unhooks.splice(0)) unhook();
    await this.events.close();
  }
}
