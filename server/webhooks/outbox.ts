// A connection's durable outbox: `outbox.record([draft])` before a write is answered -> the event
// numbered (`1718000000000-0`, the same shape as the feed's ids) and appended as one JSON line to
// `<stateDir>/webhooks/crm.outbox`, fsynced with every other event queued meanwhile (group
// commit), so an acknowledged write's events survive kill -9. Each webhook keeps its own cursor
// (`crm.<name>.cursor`, the last id it is done with); a restart starts every webhook after its
// cursor. The file is rewritten without the events every webhook is done with once they are many.
import { mkdir, open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { GroupCommit, Serial } from '../durable/group-commit.ts';
import { appendAndSync, isMissing, removeStaleTempFiles, replaceFileDurably, type WritableHandle } from '../durable/disk.ts';
import { compareEventIds, parseEventId } from '../feed/event-log.ts';
import type { DraftEvent, FeedEvent } from '../feed/event.ts';

const encoder = new TextEncoder();
/** Events every webhook is done with, past which the file is rewritten without them. */
const COMPACT_AFTER = 1_000;

/**
 * Where a connection's events wait for its webhooks: this file (one instance), or a Redis stream
 * with several (redis-outbox.ts, where one instance at a time delivers).
 */
export interface WebhookQueue {
  readonly connection: string;
  /** Numbers the events and resolves once they are durable. */
  record(drafts: readonly DraftEvent[]): Promise<void>;
  /**
   * Up to `max` events after `after` (null: after `webhook`'s cursor), in id order. None yet (or
   * not this instance's turn): with a `signal`, resolves [] after a wait (an event recorded, a
   * while, or `signal`); without, [] at once.
   */
  eventsFor(webhook: string, after: string | null, max: number, signal?: AbortSignal): Promise<readonly FeedEvent[]>;
  /** Right before each attempt: whether this instance still delivers (with Redis: still holds the connection's lease). */
  stillDelivering(): Promise<boolean>;
  advance(webhook: string, id: string): Promise<void>;
  addWebhook(webhook: string): Promise<void>;
  dropWebhook(webhook: string): Promise<void>;
  close(): Promise<void>;
}

/** How long a delivered event's cursor waits to be saved, so that one save covers the deliveries made meanwhile. */
const CURSOR_SAVE_MS = 200;

export class Outbox implements WebhookQueue {
  readonly connection: string;
  readonly #path: string;
  readonly #folder: string;
  readonly #serial = new Serial();
  readonly #commits: GroupCommit<readonly FeedEvent[]>;
  #handle: WritableHandle | null = null;
  /** Durable events not yet dropped, in id order; `#done` of them at the front every webhook is done with. */
  #events: FeedEvent[] = [];
  #lastMs = 0;
  #lastSeq = 0;
  readonly #cursors = new Map<string, string | null>();
  /** The last write of each cursor file, so the next waits for it. */
  readonly #cursorWrites = new Map<string, Promise<unknown>>();
  /** Cursor saves waiting for their turn (advance). */
  readonly #cursorSaves = new Map<string, { readonly timer: ReturnType<typeof setTimeout>; readonly saved: Promise<void> }>();
  readonly #wakers = new Set<() => void>();

  private constructor(folder: string, connection: string, onError: (error: unknown) => void) {
    this.connection = connection;
    this.#folder = folder;
    this.#path = join(folder, `${connection}.outbox`);
    this.#commits = new GroupCommit<readonly FeedEvent[]>({
      serial: this.#serial,
      commit: (batches) => this.#append(batches.flat()),
      afterBatch: () => Promise.resolve(),
      onError,
    });
  }

  /** Reads what a previous run left (a torn last line, never acknowledged, is dropped) and the webhooks' cursors. */
  static async open(stateDir: string, connection: string, webhooks: readonly string[], onError: (error: unknown) => void): Promise<Outbox> {
    const folder = join(stateDir, 'webhooks');
    await mkdir(folder, { recursive: true });
    const outbox = new Outbox(folder, connection, onError);
    // A crash mid-rewrite (the outbox compacted, a cursor saved) leaves its temp file beside it.
    await removeStaleTempFiles(outbox.#path);
    for (const webhook of webhooks) await removeStaleTempFiles(outbox.#cursorPath(webhook));
    let text = '';
    try {
      text = await readFile(outbox.#path, 'utf8');
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
    const whole = text.slice(0, text.lastIndexOf('\n') + 1);
    for (const line of whole.split('\n')) {
      if (line === '') continue;
      const event = JSON.parse(line) as FeedEvent;
      outbox.#events.push(event);
      [outbox.#lastMs, outbox.#lastSeq] = parseEventId(event.id)!;
    }
    // A torn line from a crash mid-append: the next append must start on a line of its own.
    if (whole.length !== text.length) await replaceFileDurably(outbox.#path, encoder.encode(whole), 0o600);
    for (const name of webhooks) outbox.#cursors.set(name, await readCursor(outbox.#cursorPath(name)));
    return outbox;
  }

  /** Numbers the events now (in call order) and resolves once they are on disk. */
  record(drafts: readonly DraftEvent[]): Promise<void> {
    const events: FeedEvent[] = [];
    for (const draft of drafts) {
      const now = Date.now();
      if (now > this.#lastMs) [this.#lastMs, this.#lastSeq] = [now, 0];
      else this.#lastSeq++;
      const event: FeedEvent = { id: `${this.#lastMs}-${this.#lastSeq}`, ...draft };
      events.push(event);
    }
    return this.#commits.add(events);
  }

  /** The first durable event after `id` (null: from the start), or undefined when there is none yet. */
  next(id: string | null): FeedEvent | undefined {
    return this.after(id, 1)[0];
  }

  /**
   * Up to `max` durable events after `id` (null: from the start). Found by binary search: ten
   * webhooks with a backlog of 5,000 events each scanning from the front cost the writes more
   * than the deliveries did (docs/benchmarks.md).
   */
  after(id: string | null, max: number): FeedEvent[] {
    const events = this.#events;
    let low = 0;
    if (id !== null) {
      let high = events.length;
      while (low < high) {
        const middle = (low + high) >> 1;
        if (compareEventIds(events[middle].id, id) <= 0) low = middle + 1;
        else high = middle;
      }
    }
    return events.slice(low, low + max);
  }

  async eventsFor(webhook: string, after: string | null, max: number, signal?: AbortSignal): Promise<readonly FeedEvent[]> {
    const events = this.after(after ?? this.cursor(webhook), max);
    if (events.length > 0 || signal === undefined) return events;
    await this.waitForEvents(signal);
    return [];
  }

  /** One instance: always. */
  stillDelivering(): Promise<boolean> {
    return Promise.resolve(true);
  }

  cursor(webhook: string): string | null {
    return this.#cursors.get(webhook) ?? null;
  }

  /**
   * A webhook is done with `id` (delivered or given up on). Saved without holding the delivery
   * up, and at most once per CURSOR_SAVE_MS per webhook, the newest id then: each save is a
   * durable file replace in the serial section the events' appends share, so one per delivery
   * slowed the writes. A cursor a crash leaves behind only repeats deliveries (same id, same body).
   */
  advance(webhook: string, id: string): Promise<void> {
    this.#cursors.set(webhook, id);
    const pending = this.#cursorSaves.get(webhook);
    if (pending !== undefined) return pending.saved;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const saved = new Promise<void>((resolve) => (timer = setTimeout(resolve, CURSOR_SAVE_MS))).then(() => this.#saveCursor(webhook));
    this.#cursorSaves.set(webhook, { timer: timer!, saved });
    return saved;
  }

  /**
   * Writes the newest cursor of `webhook` (a dropped webhook's is not written again): beside the
   * appends, not in their serial section, since it is another file; the outbox is compacted in
   * that section once enough events are done with.
   */
  async #saveCursor(webhook: string): Promise<void> {
    this.#cursorSaves.delete(webhook);
    const id = this.#cursors.get(webhook);
    if (typeof id !== 'string') return;
    // One save of a cursor file at a time, so an older id never lands after a newer one.
    const previous = this.#cursorWrites.get(webhook) ?? Promise.resolve();
    const write = previous.then(() => (this.#cursors.get(webhook) === undefined ? undefined : replaceFileDurably(this.#cursorPath(webhook), encoder.encode(id), 0o600)));
    this.#cursorWrites.set(webhook, write.catch(() => undefined));
    await write;
    if (this.#doneCount() >= COMPACT_AFTER) await this.#serial.run(() => this.#compact());
  }

  /**
   * A webhook added while the server runs (the admin API): it starts after the events already in
   * the outbox, unless its cursor file says where it was (a restart). The cursor is written at
   * once (`0-0` on an empty outbox), so events recorded before a restart are not skipped after it.
   */
  addWebhook(webhook: string): Promise<void> {
    return this.#serial.run(async () => {
      if (this.#cursors.has(webhook)) return;
      const saved = await readCursor(this.#cursorPath(webhook));
      const start = saved ?? this.#events.at(-1)?.id ?? `${this.#lastMs}-${this.#lastSeq}`;
      if (saved === null) await replaceFileDurably(this.#cursorPath(webhook), encoder.encode(start), 0o600);
      this.#cursors.set(webhook, start);
    });
  }

  /** A webhook removed: its cursor goes (a webhook added later under its name starts afresh) and no longer holds events back. */
  dropWebhook(webhook: string): Promise<void> {
    return this.#serial.run(async () => {
      this.#cursors.delete(webhook);
      await unlink(this.#cursorPath(webhook)).catch((error: unknown) => {
        if (!isMissing(error)) throw error;
      });
    });
  }

  /** Resolves at the next durable event (or `wake`). */
  waitForEvents(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        this.#wakers.delete(wake);
        signal.removeEventListener('abort', wake);
        resolve();
      };
      this.#wakers.add(wake);
      signal.addEventListener('abort', wake);
    });
  }

  async close(): Promise<void> {
    await this.#commits.settled();
    // Cursors waiting for their save are saved now.
    for (const [webhook, { timer }] of [...this.#cursorSaves]) {
      clearTimeout(timer);
      await this.#saveCursor(webhook);
    }
    await Promise.all(this.#cursorWrites.values());
    await this.#serial.run(async () => {
      await this.#handle?.close();
      this.#handle = null;
    });
  }

  /** In the serial section: appends and fsyncs the events, then hands them to the webhooks. */
  async #append(events: readonly FeedEvent[]): Promise<void> {
    this.#handle ??= await open(this.#path, 'a', 0o600);
    await appendAndSync(this.#handle, encoder.encode(events.map((event) => JSON.stringify(event) + '\n').join('')));
    for (const event of events) this.#events.push(event);
    // The deliveries start in a later turn: the writes these events belong to are answered first.
    if (this.#wakers.size > 0) setImmediate(() => {
      for (const wake of [...this.#wakers]) wake();
    });
  }

  /** Events every webhook is done with, at the front of `#events` (0 while a webhook has not started). */
  #doneCount(): number {
    const cursors = [...this.#cursors.values()];
    if (cursors.includes(null)) return 0;
    const oldest = cursors.reduce((a, b) => (compareEventIds(a!, b!) <= 0 ? a : b), cursors[0])!;
    let done = 0;
    while (done < this.#events.length && compareEventIds(this.#events[done].id, oldest) <= 0) done++;
    return done;
  }

  /** Drops the events every webhook is done with, once they are many: the file is rewritten with the rest. */
  async #compact(): Promise<void> {
    const done = this.#doneCount();
    if (done < COMPACT_AFTER) return;
    // Inside the serial section: no append runs meanwhile, and every event appended so far is in #events.
    const rest = this.#events.slice(done);
    await this.#handle?.close();
    this.#handle = null;
    await replaceFileDurably(this.#path, encoder.encode(rest.map((event) => JSON.stringify(event) + '\n').join('')), 0o600);
    this.#events = rest;
  }

  #cursorPath(webhook: string): string {
    return join(this.#folder, `${this.connection}.${webhook}.cursor`);
  }
}

async function readCursor(path: string): Promise<string | null> {
  try {
    const text = (await readFile(path, 'utf8')).trim();
    return parseEventId(text) === null ? null : text;
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}
