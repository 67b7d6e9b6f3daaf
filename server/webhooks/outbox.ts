// A connection's durable outbox: `outbox.record([draft])` before a write is answered -> the event
// numbered (`1718000000000-0`, the same shape as the feed's ids) and appended as one JSON line to
// `<stateDir>/webhooks/crm.outbox`, fsynced with every other event queued meanwhile (group
// commit), so an acknowledged write's events survive kill -9. A file source's writes skip that
// fsync: their events are numbered while the write is planned (`number`), ride in the write's own
// journal line, and are handed over once it is fsynced (`adopt`: appended without an fsync of
// their own); the outbox is fsynced before the journal forgets them (`keep`: a fold), and a
// restart adopts what the journal still holds that the outbox lacks. The webhooks' cursors (the
// last id each is done with) are one record, `crm.cursors`, saved at most every 200 ms; a
// restart starts every webhook after its cursor. The file is rewritten without the events every
// webhook is done with once they are many.
import { mkdir, open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { GroupCommit, Serial } from '../durable/group-commit.ts';
import { appendAndSync, isMissing, removeStaleTempFiles, replaceFileDurably, writeAll, type WritableHandle } from '../durable/disk.ts';
import { compareEventIds, parseEventId } from '../feed/event-log.ts';
import { eventJson, type DraftEvent, type FeedEvent } from '../feed/event.ts';

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
  /** Right before each attempt: whether this instance still delivers (with Redis: still holds the connection's lease); `true` without a wait. */
  stillDelivering(): true | Promise<boolean>;
  advance(webhook: string, id: string): Promise<void>;
  addWebhook(webhook: string): Promise<void>;
  dropWebhook(webhook: string): Promise<void>;
  close(): Promise<void>;
}

/** How long a delivered event's cursor waits to be saved, so that one save covers the deliveries made meanwhile (every webhook's). */
const CURSOR_SAVE_MS = 200;

/** What one group commit of the outbox takes: events to append, and whether the batch is fsynced. */
interface Append {
  readonly events: readonly FeedEvent[];
  /** False for events already durable elsewhere (a write's journal line): written, not fsynced. */
  readonly sync: boolean;
}

export class Outbox implements WebhookQueue {
  readonly connection: string;
  readonly #path: string;
  readonly #folder: string;
  readonly #serial = new Serial();
  readonly #commits: GroupCommit<Append>;
  readonly #onError: (error: unknown) => void;
  #handle: WritableHandle | null = null;
  /** Durable events not yet dropped, in id order; `#done` of them at the front every webhook is done with. */
  #events: FeedEvent[] = [];
  readonly #numbering = new Numbering();
  /** The newest id the file held at open: journaled events up to it are already here (adopt). */
  #openedAt: string | null = null;
  readonly #cursors = new Map<string, string | null>();
  /** The cursors as last saved, which compaction goes by (a crash restarts from these). */
  #savedCursors = new Map<string, string | null>();
  /** The cursor record's next save, waiting for its turn (advance); the last save, which the next waits for. */
  #cursorSave: { readonly timer: ReturnType<typeof setTimeout>; readonly now: () => void; readonly saved: Promise<void> } | null = null;
  #cursorWrite: Promise<unknown> = Promise.resolve();
  /** Cursor files of an older version (`crm.<name>.cursor`), removed once the record holds their webhooks. */
  #legacyCursors: string[] = [];
  readonly #wakers = new Set<() => void>();
  /** The signals of loops that waited here, each with its abort listener. */
  readonly #watched = new WeakSet<AbortSignal>();

  private constructor(folder: string, connection: string, onError: (error: unknown) => void) {
    this.connection = connection;
    this.#folder = folder;
    this.#path = join(folder, `${connection}.outbox`);
    this.#onError = onError;
    this.#commits = new GroupCommit<Append>({
      serial: this.#serial,
      commit: (batches) => this.#append(batches.flatMap((batch) => batch.events), batches.some((batch) => batch.sync)),
      afterBatch: () => Promise.resolve(),
      onError,
    });
  }

  /** Reads what a previous run left (a torn last line, never acknowledged, is dropped) and the webhooks' cursors. */
  static async open(stateDir: string, connection: string, webhooks: readonly string[], onError: (error: unknown) => void): Promise<Outbox> {
    const folder = join(stateDir, 'webhooks');
    await mkdir(folder, { recursive: true });
    const outbox = new Outbox(folder, connection, onError);
    // A crash mid-rewrite (the outbox compacted, the cursors saved) leaves its temp file beside it.
    await removeStaleTempFiles(outbox.#path);
    await removeStaleTempFiles(outbox.#cursorsPath);
    let text = '';
    try {
      text = await readFile(outbox.#path, 'utf8');
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
    // A torn last line (a crash mid-append), or garbage a power cut left where appends were not
    // yet fsynced (a journaled write's events, which the journal still holds): dropped.
    const kept: string[] = [];
    for (const line of text.split('\n')) {
      const event = parseEvent(line);
      if (event === null) continue;
      kept.push(line);
      outbox.#events.push(event);
    }
    outbox.#events.sort((a, b) => compareEventIds(a.id, b.id));
    const newest = outbox.#events.at(-1);
    if (newest !== undefined) {
      outbox.#numbering.after(newest.id);
      outbox.#openedAt = newest.id;
    }
    const whole = kept.map((line) => line + '\n').join('');
    // The next append must start on a line of its own, after good lines only.
    if (whole !== text) await replaceFileDurably(outbox.#path, encoder.encode(whole), 0o600);
    const saved = await readCursors(outbox.#cursorsPath);
    for (const name of webhooks) {
      let cursor = saved.get(name) ?? null;
      // Before the record: one file per webhook.
      const legacy = outbox.#legacyCursorPath(name);
      if (!saved.has(name)) cursor = await readCursor(legacy);
      if (cursor !== null && !saved.has(name)) outbox.#legacyCursors.push(legacy);
      outbox.#cursors.set(name, cursor);
    }
    outbox.#savedCursors = new Map(outbox.#cursors);
    return outbox;
  }

  /** Numbers the events now (in call order) and resolves once they are on disk. */
  record(drafts: readonly DraftEvent[]): Promise<void> {
    return this.#commits.add({ events: this.number(drafts), sync: true });
  }

  /**
   * Numbers the events now, for a journal line to carry (a file source's write, planned in
   * arrival order); they reach the outbox through `adopt` once that line is fsynced. A write
   * that fails leaves its numbers unused: ids only need to increase.
   */
  number(drafts: readonly DraftEvent[]): FeedEvent[] {
    return this.#numbering.number(drafts);
  }

  /**
   * Events durable in a journal line (EventSink.journaled): delivered from now on, and appended
   * to the file without an fsync (the journal holds them until `keep`). At open, the journal the
   * last run left is handed over whole: events up to the newest the file held are skipped, and
   * numbering goes on after the newest adopted. Resolves once they are written to the file.
   */
  adopt(events: readonly FeedEvent[]): Promise<void> {
    const opened = this.#openedAt;
    const fresh = opened === null ? events : events.filter((event) => compareEventIds(event.id, opened) > 0);
    if (fresh.length === 0) return Promise.resolve();
    this.numberAfter(fresh.at(-1)!.id);
    // Resolves once they are in the file (for hub.ts); a failure is the outbox's error to log.
    return this.#commits.add({ events: fresh, sync: false }).catch(this.#onError);
  }

  /**
   * Events numbered elsewhere (the main thread, hub.ts), appended and fsynced as `record` does
   * with its own: resolves once they are durable. Numbering here goes on after them.
   */
  recordNumbered(events: readonly FeedEvent[]): Promise<void> {
    const newest = events.at(-1);
    if (newest !== undefined) this.numberAfter(newest.id);
    return this.#commits.add({ events, sync: true });
  }

  /** The newest id numbered so far (`0-0` when none was). */
  get newestNumbered(): string {
    return this.#numbering.newest;
  }

  /** Numbers from now on come after `id` (numbered elsewhere), as they do after every id adopted. */
  numberAfter(id: string): void {
    this.#numbering.after(id);
  }

  /** Resolves once every event adopted so far is fsynced here (EventSink.keep: the journal is about to forget them). */
  keep(): Promise<void> {
    return this.#commits.add({ events: [], sync: true });
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
    const from = id === null ? 0 : this.#firstAfter(id);
    return this.#events.slice(from, from + max);
  }

  /** Where the first event after `id` is in `#events` (its length when none is). */
  #firstAfter(id: string): number {
    const events = this.#events;
    let [low, high] = [0, events.length];
    while (low < high) {
      const middle = (low + high) >> 1;
      if (compareEventIds(events[middle].id, id) <= 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  async eventsFor(webhook: string, after: string | null, max: number, signal?: AbortSignal): Promise<readonly FeedEvent[]> {
    const events = this.after(after ?? this.cursor(webhook), max);
    if (events.length > 0 || signal === undefined) return events;
    await this.waitForEvents(signal);
    return [];
  }

  /** One instance: always. */
  stillDelivering(): true {
    return true;
  }

  cursor(webhook: string): string | null {
    return this.#cursors.get(webhook) ?? null;
  }

  /**
   * A webhook is done with `id` (delivered or given up on). Saved without holding the delivery
   * up, at most once per CURSOR_SAVE_MS for all the connection's webhooks, the newest ids then:
   * each save is a durable file replace, so one per delivery (and one file per webhook) slowed
   * the writes. A cursor a crash leaves behind only repeats deliveries (same id, same body).
   */
  advance(webhook: string, id: string): Promise<void> {
    if (!this.#cursors.has(webhook)) return Promise.resolve();
    this.#cursors.set(webhook, id);
    return this.#scheduleCursorSave();
  }

  #scheduleCursorSave(): Promise<void> {
    if (this.#cursorSave !== null) return this.#cursorSave.saved;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let now!: () => void;
    const saved = new Promise<void>((resolve) => {
      now = resolve;
      timer = setTimeout(resolve, CURSOR_SAVE_MS);
    }).then(() => this.#saveCursors());
    this.#cursorSave = { timer: timer!, now, saved };
    return saved;
  }

  /**
   * Writes every webhook's newest cursor as one record (`{"a":"1718000000000-3","b":null}`):
   * beside the appends, not in their serial section, since it is another file; the outbox is
   * compacted in that section once enough events are done with, by the cursors as saved.
   */
  async #saveCursors(): Promise<void> {
    this.#cursorSave = null;
    // One save at a time, so an older record never lands after a newer one.
    const write = this.#cursorWrite.then(async () => {
      const cursors = new Map(this.#cursors);
      await replaceFileDurably(this.#cursorsPath, encoder.encode(JSON.stringify(Object.fromEntries(cursors))), 0o600);
      this.#savedCursors = cursors;
      for (const legacy of this.#legacyCursors.splice(0)) await unlink(legacy).catch(() => undefined);
    });
    this.#cursorWrite = write.catch(() => undefined);
    await write;
    if (this.#doneCount() >= COMPACT_AFTER) await this.#serial.run(() => this.#compact());
  }

  /**
   * A webhook added while the server runs (the admin API): it starts after the events already in
   * the outbox, unless the record (or an older version's cursor file) says where it was (a
   * restart). The record is saved at once, so events recorded before a restart are not skipped after it.
   */
  async addWebhook(webhook: string): Promise<void> {
    if (this.#cursors.has(webhook)) return;
    const saved = (await readCursors(this.#cursorsPath)).get(webhook) ?? (await readCursor(this.#legacyCursorPath(webhook)));
    if (this.#cursors.has(webhook)) return;
    const start = saved ?? this.#events.at(-1)?.id ?? this.#numbering.newest;
    this.#cursors.set(webhook, start);
    await this.#saveCursorsNow();
  }

  /** A webhook removed: its cursor goes (a webhook added later under its name starts afresh) and no longer holds events back. */
  async dropWebhook(webhook: string): Promise<void> {
    this.#cursors.delete(webhook);
    await unlink(this.#legacyCursorPath(webhook)).catch((error: unknown) => {
      if (!isMissing(error)) throw error;
    });
    await this.#saveCursorsNow();
  }

  /** Saves the record now: a save waiting for its turn goes at once, else a new one. */
  async #saveCursorsNow(): Promise<void> {
    const pending = this.#cursorSave;
    if (pending === null) return this.#saveCursors();
    clearTimeout(pending.timer);
    pending.now();
    await pending.saved;
  }

  /**
   * Resolves at the next durable event, or once `signal` is aborted (then it wakes every waiter:
   * they look again and find it aborted). One abort listener per signal (a webhook's loop), not
   * one added and removed per wait: ten webhooks wait once per write each.
   */
  waitForEvents(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    if (!this.#watched.has(signal)) {
      this.#watched.add(signal);
      signal.addEventListener('abort', () => this.#wakeAll(), { once: true });
    }
    return new Promise((resolve) => this.#wakers.add(resolve));
  }

  #wakeAll(): void {
    const wakers = [...this.#wakers];
    this.#wakers.clear();
    for (const wake of wakers) wake();
  }

  async close(): Promise<void> {
    await this.#commits.settled();
    // Appended without an fsync (journaled events): durable before the file is let go.
    if (this.#handle !== null) await this.keep();
    // Cursors waiting for their save are saved now.
    if (this.#cursorSave !== null) await this.#saveCursorsNow();
    await this.#cursorWrite;
    await this.#serial.run(async () => {
      await this.#handle?.close();
      this.#handle = null;
    });
  }

  /** In the serial section: appends the events (and fsyncs them when `sync`), then hands them to the webhooks. */
  async #append(events: readonly FeedEvent[], sync: boolean): Promise<void> {
    this.#handle ??= await open(this.#path, 'a', 0o600);
    const bytes = encoder.encode(linesOf(events));
    if (sync) await appendAndSync(this.#handle, bytes);
    else await writeAll(this.#handle, bytes);
    for (const event of events) insertInOrder(this.#events, event);
    if (events.length === 0) return;
    // The deliveries start in a later turn: the writes these events belong to are answered first.
    if (this.#wakers.size > 0) setImmediate(() => this.#wakeAll());
  }

  /** Events every webhook is done with as the saved cursors say, at the front of `#events` (0 while a webhook has not started). */
  #doneCount(): number {
    const cursors = [...this.#cursors.keys()].map((name) => this.#savedCursors.get(name) ?? null);
    if (cursors.length === 0) return 0;
    if (cursors.includes(null)) return 0;
    const oldest = cursors.reduce((a, b) => (compareEventIds(a!, b!) <= 0 ? a : b), cursors[0])!;
    return this.#firstAfter(oldest);
  }

  /** Drops the events every webhook is done with, once they are many: the file is rewritten with the rest. */
  async #compact(): Promise<void> {
    const done = this.#doneCount();
    if (done < COMPACT_AFTER) return;
    // Inside the serial section: no append runs meanwhile, and every event appended so far is in #events.
    const rest = this.#events.slice(done);
    await this.#handle?.close();
    this.#handle = null;
    await replaceFileDurably(this.#path, encoder.encode(linesOf(rest)), 0o600);
    this.#events = rest;
  }

  get #cursorsPath(): string {
    return join(this.#folder, `${this.connection}.cursors`);
  }

  #legacyCursorPath(webhook: string): string {
    return join(this.#folder, `${this.connection}.${webhook}.cursor`);
  }
}

/** A connection's event ids, `1718000000000-3`: each after the last one given or seen (`after`). */
export class Numbering {
  #ms = 0;
  #seq = 0;

  /** The drafts with ids, in order: the clock's ms, or the last one's while the clock has not passed it. */
  number(drafts: readonly DraftEvent[]): FeedEvent[] {
    const events: FeedEvent[] = [];
    for (const draft of drafts) {
      const now = Date.now();
      if (now > this.#ms) [this.#ms, this.#seq] = [now, 0];
      else this.#seq++;
      events.push({ id: `${this.#ms}-${this.#seq}`, ...draft });
    }
    return events;
  }

  /** Ids from now on come after `id` (given elsewhere), if it is newer than the last. */
  after(id: string): void {
    const seen = parseEventId(id);
    if (seen !== null && (seen[0] > this.#ms || (seen[0] === this.#ms && seen[1] > this.#seq))) [this.#ms, this.#seq] = seen;
  }

  /** The newest id given or seen (`0-0` before any). */
  get newest(): string {
    return `${this.#ms}-${this.#seq}`;
  }
}

/** Appends `event` in id order: at the end but for an event numbered before the last one appended. */
function insertInOrder(events: FeedEvent[], event: FeedEvent): void {
  let at = events.length;
  while (at > 0 && compareEventIds(events[at - 1].id, event.id) > 0) at--;
  events.splice(at, 0, event);
}

/** The events as outbox lines, each its JSON (made once per event: eventJson) and a newline. */
function linesOf(events: readonly FeedEvent[]): string {
  let text = '';
  for (const event of events) text += eventJson(event) + '\n';
  return text;
}

/** One outbox line as an event, or null for a torn or damaged one. */
function parseEvent(line: string): FeedEvent | null {
  if (line === '') return null;
  try {
    const event = JSON.parse(line) as FeedEvent;
    return typeof event === 'object' && event !== null && typeof event.id === 'string' && parseEventId(event.id) !== null ? event : null;
  } catch {
    return null;
  }
}

/** The cursor record: each webhook's last id done with (null: not started); empty when there is none, or it is damaged. */
async function readCursors(path: string): Promise<Map<string, string | null>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (isMissing(error)) return new Map();
    throw error;
  }
  try {
    const record = JSON.parse(text) as Record<string, unknown>;
    return new Map(Object.entries(record).map(([name, id]) => [name, typeof id === 'string' && parseEventId(id) !== null ? id : null]));
  } catch {
    // Written whole by a rename, so never torn; damaged otherwise: deliveries start over (repeats, never losses).
    return new Map();
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
