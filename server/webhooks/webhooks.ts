// Every connection's webhooks: `webhooks.record('crm', drafts)` before a write is answered -> the
// events in crm's outbox (outbox.ts), then POSTed to each webhook in order, signed (sign.ts),
// retried on anything but a 2xx within the timeout with exponential backoff and full jitter, for
// up to 24 h from the event. Per webhook first attempts go in id order, one at a time, or up to
// WINDOW once the receiver has answered 2xx OPEN_AFTER times in a row; a failing event holds
// the ones after it: first deliveries keep the connection's order (docs/decisions.md says when a
// window can let a few pass a failing one). Nothing here is awaited by a write except the
// outbox's fsync, and a file source's writes not even that: their events ride in the journal
// line the write is fsynced in (`carry`, `sinkFor`); deliveries start in the turn after the
// writes whose events they carry.
import { ConfigError, type ConnectionConfig, type WebhookConfig } from '../config/config.ts';
import { eventJson, type DraftEvent, type FeedEvent } from '../feed/event.ts';
import type { CarriedEvent, EventSink } from '../sources/source.ts';
import type { Logger } from '../log.ts';
import { Outbox, type WebhookQueue } from './outbox.ts';
import { openPoster, type Poster } from './poster.ts';
import { resolveAll, whyRefused, type Resolve } from './target.ts';

export interface WebhookSettings {
  readonly allowPrivateTargets: boolean;
  readonly retryBaseMs: number;
  readonly retryCapMs: number;
  readonly timeoutMs: number;
  /** How long after an event its delivery is still tried (24 h). */
  readonly giveUpAfterMs?: number;
  /** The delivery worker's module (tests give one that cannot start); null: POSTs from the main thread (poster.ts). */
  readonly deliveryWorker?: URL | null;
  /** The module of the thread the whole engine runs in with outboxes in the state folder (hub.ts; tests give one that cannot start); null: the main thread. */
  readonly engineWorker?: URL | null;
}

/** What the engine reads of a connection: its id and its webhooks. */
export type HookedConnection = Pick<ConnectionConfig, 'id' | 'webhooks'>;

export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = { allowPrivateTargets: false, retryBaseMs: 1_000, retryCapMs: 3_600_000, timeoutMs: 10_000 };
const DAY_MS = 24 * 60 * 60 * 1000;
/** Deliveries kept per webhook for the admin API. */
const RECENT = 100;
/** Deliveries in flight per webhook to a receiver that answered OPEN_AFTER 2xx in a row (else one). */
export const WINDOW = 8;
export const OPEN_AFTER = 100;
/** Turns a burst of writes can bank for the deliveries waiting behind them. */
const MAX_TURNS = 1_000;
/**
 * Attempts a write recorded gives the deliveries while writes are in flight (across all
 * webhooks). Lower trades delivery latency under saturation for the writes' rate
 * (docs/benchmarks.md, task 27G: 0.5 measured against 1).
 */
const ATTEMPTS_PER_WRITE = 1;
/** Events read from the outbox at once. */
const READ_BATCH = 64;
/** Logged, in whichever thread the engine runs, when an outbox cannot take a journal's events (they wait in the journal for a restart). */
export const ADOPT_FAILED = 'a webhook outbox could not take the events of journaled writes';
/** How long a target check's verdict is kept. */
const REFUSAL_KEPT_MS = 1_000;

/** How one event's attempts ended: delivered or given up (`done`), another instance delivers now, or stopping. */
type Outcome = 'done' | 'handed over' | 'stopped';

/** An event in a webhook's window: done when its attempts end; `through` the newest id it covers (events after it the webhook does not want). */
interface Flight {
  readonly event: FeedEvent;
  through: string;
  settled: boolean;
  done: Promise<Outcome>;
}

/** One event's delivery to one webhook, as the admin API lists it. */
export interface Delivery {
  readonly eventId: string;
  readonly type: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  /** The receiver's last answer status; 0 for none (a timeout, a refused connection, a refused target). */
  lastStatus: number | null;
  lastError?: string;
  /** ISO 8601 of the next try while pending. */
  nextTry: string | null;
}

/** `{"id":"ping-…","type":"ping",...}`: the test event, sent once, outside the outbox. */
export interface PingResult {
  readonly eventId: string;
  readonly status: number;
  readonly error?: string;
}

class Hook {
  readonly recent: Delivery[] = [];
  /** Replaced when the admin API changes the webhook's url, events or secret; the cursor stays. */
  config: WebhookConfig;
  readonly outbox: WebhookQueue;
  /** Aborted when the webhook is removed (or every webhook stops). */
  readonly stop: AbortController = new AbortController();
  loop: Promise<void> = Promise.resolve();
  constructor(config: WebhookConfig, outbox: WebhookQueue) {
    this.config = config;
    this.outbox = outbox;
  }

  wants(event: FeedEvent): boolean {
    return this.config.events === undefined || this.config.events.includes(event.type);
  }

  note(delivery: Delivery): void {
    if (this.recent.at(-1) === delivery) return;
    this.recent.push(delivery);
    if (this.recent.length > RECENT) this.recent.shift();
  }
}

/** Opens a connection's queue with these webhooks' cursors: the state folder's outbox file by default. */
export type OpenQueue = (connection: string, webhooks: readonly string[], onError: (error: unknown) => void) => Promise<WebhookQueue>;

export class Webhooks {
  readonly #outboxes = new Map<string, WebhookQueue>();
  /** Outboxes being opened, so that two callers open one file once. */
  readonly #opening = new Map<string, Promise<WebhookQueue>>();
  /** Whether outboxes are files in the state folder (no Redis): only those take journaled events. */
  readonly #inStateDir: boolean;
  readonly #hooks = new Map<string, Map<string, Hook>>();
  readonly #settings: WebhookSettings;
  readonly #log: Logger;
  readonly #resolve: Resolve;
  readonly #stop = new AbortController();
  readonly #poster: Poster;
  readonly #refusals = new Map<string, { readonly why: Promise<string | null>; readonly until: number }>();
  /** Writes recorded and not yet answered; attempts waiting for their turn; turns the writes gave them. */
  #writing = 0;
  readonly #waitingTurns: (() => void)[] = [];
  #turns = 0;
  /** Changes through `set`, one at a time. */
  #changes: Promise<unknown> = Promise.resolve();

  readonly #stateDir: string;

  readonly #openQueue: OpenQueue;

  private constructor(stateDir: string, settings: WebhookSettings, log: Logger, resolve: Resolve, openQueue: OpenQueue | undefined) {
    this.#stateDir = stateDir;
    this.#inStateDir = openQueue === undefined;
    this.#openQueue = openQueue ?? ((connection, names, onError) => Outbox.open(this.#stateDir, connection, names, onError));
    this.#settings = settings;
    this.#log = log;
    this.#resolve = resolve;
    this.#poster = openPoster({ timeoutMs: settings.timeoutMs, connections: WINDOW, log, workerModule: settings.deliveryWorker });
  }

  /**
   * Opens the outbox of every connection with webhooks and starts delivering what a previous run
   * left. A target the server refuses (a private address without `allowPrivateTargets`) is a ConfigError.
   */
  static async open(stateDir: string, connections: readonly HookedConnection[], settings: WebhookSettings, log: Logger, resolve: Resolve = resolveAll, openQueue?: OpenQueue): Promise<Webhooks> {
    await checkTargets(connections, settings, resolve);
    const webhooks = new Webhooks(stateDir, settings, log, resolve, openQueue);
    for (const connection of connections) {
      const hooks = connection.webhooks ?? [];
      if (hooks.length === 0) continue;
      const outbox = await webhooks.#queueFor(connection.id, hooks.map((hook) => hook.name));
      const byName = new Map<string, Hook>();
      for (const config of hooks) byName.set(config.name, new Hook(config, outbox));
      webhooks.#hooks.set(connection.id, byName);
      for (const hook of byName.values()) webhooks.#start(hook);
    }
    return webhooks;
  }

  /** Whether the server may send to private and loopback targets (`webhooks.allowPrivateTargets`). */
  get allowPrivateTargets(): boolean {
    return this.#settings.allowPrivateTargets;
  }

  /** Why `url` may not be a webhook's target now (a sentence), or null: as checked at start and before each delivery. */
  whyRefused(url: string): Promise<string | null> {
    return whyRefused(url, this.#settings.allowPrivateTargets, this.#resolve);
  }

  /**
   * Makes `configs` the connection's webhooks while the server runs (the admin API's): a new
   * name starts after the events already recorded, a name gone stops (its attempt in flight is
   * cut off) and forgets its cursor, a changed url, events or secret applies from the next
   * attempt on. The same list again changes nothing. One change at a time.
   */
  set(connection: string, configs: readonly WebhookConfig[]): Promise<void> {
    const run = this.#changes.then(() => this.#set(connection, configs));
    this.#changes = run.catch(() => undefined);
    return run;
  }

  async #set(connection: string, configs: readonly WebhookConfig[]): Promise<void> {
    if (this.#stop.signal.aborted) return;
    const byName = this.#hooks.get(connection) ?? new Map<string, Hook>();
    const wanted = new Map(configs.map((config) => [config.name, config]));
    for (const [name, hook] of [...byName]) {
      if (wanted.has(name)) continue;
      byName.delete(name);
      hook.stop.abort();
      await hook.loop;
      await hook.outbox.dropWebhook(name);
    }
    let outbox = this.#outboxes.get(connection);
    for (const config of configs) {
      const hook = byName.get(config.name);
      if (hook !== undefined) {
        hook.config = config;
        continue;
      }
      outbox ??= await this.#queueFor(connection, []);
      await outbox.addWebhook(config.name);
      const added = new Hook(config, outbox);
      byName.set(config.name, added);
      this.#start(added);
    }
    if (byName.size > 0) this.#hooks.set(connection, byName);
    else this.#hooks.delete(connection);
  }

  /** The connection's queue, opened once (with these webhooks' cursors when it opens now). */
  #queueFor(connection: string, names: readonly string[]): Promise<WebhookQueue> {
    const open = this.#outboxes.get(connection);
    if (open !== undefined) return Promise.resolve(open);
    let opening = this.#opening.get(connection);
    if (opening === undefined) {
      opening = this.#openQueue(connection, names, (error) => this.#log.error('a webhook outbox could not be written', { connection, error: String(error) })).then((outbox) => {
        this.#outboxes.set(connection, outbox);
        return outbox;
      });
      this.#opening.set(connection, opening);
      opening.catch(() => this.#opening.delete(connection));
    }
    return opening;
  }

  /**
   * Where a file source hands the events its journal lines carry (EventSink): to the
   * connection's outbox, opened on first need (a restart may find events in a journal before
   * the admin API has given the connection its webhooks back). Undefined with Redis: that outbox
   * is acknowledged by Redis, not by a journal.
   */
  sinkFor(connection: string): EventSink | undefined {
    if (!this.#inStateDir) return undefined;
    /** Adopted in the order told, whether the outbox is open yet or not. */
    let told: Promise<unknown> = Promise.resolve();
    let waiting = 0;
    const outbox = () => this.#queueFor(connection, []) as Promise<Outbox>;
    return {
      journaled: (events) => {
        const open = this.#outboxes.get(connection);
        if (open instanceof Outbox && waiting === 0) return open.adopt(events as readonly FeedEvent[]);
        waiting++;
        told = told
          .then(async () => (await outbox()).adopt(events as readonly FeedEvent[]))
          .catch((error: unknown) => this.#log.error(ADOPT_FAILED, { connection, error: String(error) }))
          .finally(() => waiting--);
      },
      keep: async (_events: readonly CarriedEvent[]) => {
        await told;
        await (await outbox()).keep();
      },
    };
  }

  /**
   * Events durable in a journal line, handed over by the main thread (hub.ts, with this engine
   * in the delivery worker): as `sinkFor(connection).journaled`, and resolves once they are in
   * the outbox's file (not yet fsynced: `keep`).
   */
  async adopt(connection: string, events: readonly FeedEvent[]): Promise<void> {
    const outbox = this.#outboxes.get(connection) ?? (await this.#queueFor(connection, []));
    if (outbox instanceof Outbox) await outbox.adopt(events);
  }

  /** Resolves once every event adopted by the connection's outbox so far is fsynced (EventSink.keep). */
  async keep(connection: string): Promise<void> {
    const outbox = this.#outboxes.get(connection) ?? (await this.#queueFor(connection, []));
    if (outbox instanceof Outbox) await outbox.keep();
  }

  /**
   * A file source's write being planned: its events numbered by the connection's outbox, to
   * ride in the write's journal line (Planned.events); null when the connection has no webhooks
   * or its outbox is in Redis. `settle` once the write is answered or failed: until then it
   * counts as a write in flight (deliveries take turns with writes).
   */
  carry(connection: string, drafts: readonly DraftEvent[]): { readonly events: readonly FeedEvent[]; settle(): void } | null {
    const outbox = this.#outboxes.get(connection);
    if (!(outbox instanceof Outbox) || drafts.length === 0 || !this.carries(connection)) return null;
    const events = outbox.number(drafts);
    this.#writeStarted();
    return carriedWrite(events, () => this.#writeEnded());
  }

  /** Whether a write to `connection` has events for an outbox in the state folder, which a journal line can carry. */
  carries(connection: string): boolean {
    return this.#inStateDir && this.#outboxes.get(connection) instanceof Outbox && this.has(connection);
  }

  /** Whether `connection` has webhooks (only those pay for an outbox). */
  has(connection: string): boolean {
    return (this.#hooks.get(connection)?.size ?? 0) > 0;
  }

  /** Puts a write's events in the connection's outbox; resolves once they are durable. Null: no webhooks there. */
  record(connection: string, drafts: readonly DraftEvent[]): Promise<void> | null {
    const outbox = this.#outboxes.get(connection);
    if (outbox === undefined || drafts.length === 0 || !this.has(connection)) return null;
    const durable = outbox.record(drafts);
    this.#writeStarted();
    const done = () => this.#writeEnded();
    durable.then(done, done);
    return durable;
  }

  /**
   * Events numbered by the main thread (hub.ts, with this engine in the delivery worker) put in
   * the connection's outbox as `record` puts its own: resolves once they are durable. Null: no
   * webhooks there.
   */
  recordNumbered(connection: string, events: readonly FeedEvent[]): Promise<void> | null {
    const outbox = this.#outboxes.get(connection);
    if (!(outbox instanceof Outbox) || events.length === 0 || !this.has(connection)) return null;
    return outbox.recordNumbered(events);
  }

  /**
   * The newest id each open outbox in the state folder has numbered (hub.ts numbers after it);
   * a connection's outbox is open once it has webhooks.
   */
  numbering(): Record<string, string> {
    const newest: Record<string, string> = {};
    for (const [connection, outbox] of this.#outboxes) if (outbox instanceof Outbox) newest[connection] = outbox.newestNumbered;
    return newest;
  }

  /** Numbers from now on come after `id` (numbered by the main thread before this engine took over there). */
  numberAfter(connection: string, id: string): void {
    const outbox = this.#outboxes.get(connection);
    if (outbox instanceof Outbox) outbox.numberAfter(id);
  }

  /** Writes in flight as counted by the main thread (hub.ts): `started` recorded, `ended` answered. */
  writesCounted(started: number, ended: number): void {
    for (let n = 0; n < started; n++) this.#writeStarted();
    for (let n = 0; n < ended; n++) this.#writeEnded();
  }

  #writeStarted(): void {
    this.#writing++;
    this.#turns = Math.min(this.#turns + ATTEMPTS_PER_WRITE, MAX_TURNS);
    this.#letDeliveriesGo();
  }

  /** Still writing until the turn after the answer went out. */
  #writeEnded(): void {
    setImmediate(() => {
      this.#writing--;
      this.#letDeliveriesGo();
    });
  }

  /**
   * Resolves when an attempt may start: at once while no write is in flight; while writes are,
   * one attempt per write recorded (across every webhook). Null: go now. Writes go first: a server saturated
   * with writes delivers one event per write until they ease, then the backlog at full pace.
   */
  #turn(signal: AbortSignal): Promise<void> | null {
    if (this.#writing === 0 && this.#waitingTurns.length === 0) return null;
    return new Promise((resolve) => {
      const go = () => {
        signal.removeEventListener('abort', go);
        resolve();
      };
      this.#waitingTurns.push(go);
      signal.addEventListener('abort', go);
      this.#letDeliveriesGo();
    });
  }

  #letDeliveriesGo(): void {
    while (this.#waitingTurns.length > 0 && (this.#writing === 0 || this.#turns >= 1)) {
      if (this.#writing > 0) this.#turns--;
      this.#waitingTurns.shift()!();
    }
  }

  /** A connection's webhooks, without their secrets. */
  list(connection: string): { name: string; url: string; events: readonly string[] | null }[] {
    return [...(this.#hooks.get(connection)?.values() ?? [])].map((hook) => ({ name: hook.config.name, url: hook.config.url, events: hook.config.events ?? null }));
  }

  /** The latest deliveries to a webhook, newest last; undefined for a webhook that does not exist. */
  deliveries(connection: string, name: string): readonly Delivery[] | undefined {
    return this.#hooks.get(connection)?.get(name)?.recent.map((delivery) => ({ ...delivery }));
  }

  /** Sends the test event now, once, and answers what the receiver said. */
  async ping(connection: string, name: string): Promise<PingResult | undefined> {
    const hook = this.#hooks.get(connection)?.get(name);
    if (hook === undefined) return undefined;
    const event = { id: `ping-${crypto.randomUUID()}`, type: 'ping', connection, webhook: name, at: new Date().toISOString() };
    const answer = await this.#post(hook, event);
    return { eventId: event.id, status: answer.status, ...(answer.error === undefined ? {} : { error: answer.error }) };
  }

  /** Stops delivering (an attempt in flight is cut off; it is tried again after a restart) and closes the outboxes. */
  async close(): Promise<void> {
    this.#stop.abort();
    await this.#changes;
    await Promise.allSettled([...this.#hooks.values()].flatMap((byName) => [...byName.values()].map((hook) => hook.loop)));
    await Promise.allSettled([...this.#outboxes.values()].map((outbox) => outbox.close()));
    await this.#poster.close().catch(() => undefined);
  }

  #start(hook: Hook): void {
    hook.loop = this.#deliver(hook);
  }

  /**
   * One webhook's loop: the events after its cursor, each tried until delivered or 24 h old,
   * first attempts in id order. One in flight at a time, until the receiver has answered
   * OPEN_AFTER 2xx in a row: then up to WINDOW, started in order; any failed attempt shuts the
   * window to one again, so nothing new is sent while an event is being retried (never
   * overtaking it). The cursor moves in order, past events done with. An event the webhook
   * does not want costs no attempt and no promise: it rides on the event in flight before it
   * (`through`), or moves the cursor at once; the cursor is told once per run of events done.
   */
  async #deliver(hook: Hook): Promise<void> {
    const { outbox } = hook;
    const name = hook.config.name;
    // Not AbortSignal.any: a combined signal's `aborted` is worked out again at each read (Node), and it is read several times per delivery.
    const signal = hook.stop.signal;
    const stopAll = () => hook.stop.abort();
    this.#stop.signal.addEventListener('abort', stopAll, { once: true });
    signal.addEventListener('abort', () => this.#stop.signal.removeEventListener('abort', stopAll), { once: true });
    if (this.#stop.signal.aborted) hook.stop.abort();
    const flight: Flight[] = [];
    let read: readonly FeedEvent[] = [];
    let readAt = 0;
    /** The last event read from the queue (null: start at the cursor). */
    let lastRead: string | null = null;
    /** The newest id done with and not yet told to the outbox. */
    let untold: string | null = null;
    /** The outbox's pending save, which every advance until it is made returns: one catch for it. */
    let save: Promise<void> | null = null;
    const tell = () => {
      if (untold === null) return;
      const saved = outbox.advance(name, untold);
      untold = null;
      if (saved === save) return;
      save = saved;
      saved.catch((error: unknown) => this.#cursorFailed(outbox, error));
    };
    const answers = { inARow: 0 };
    while (!signal.aborted) {
      while (flight.length < (answers.inARow >= OPEN_AFTER ? WINDOW : 1)) {
        if (readAt === read.length) {
          // Waits for new events only with nothing in flight (and the cursor told).
          if (flight.length === 0) tell();
          read = await outbox.eventsFor(name, lastRead, READ_BATCH, flight.length === 0 ? signal : undefined);
          readAt = 0;
          if (read.length === 0 || signal.aborted) break;
          lastRead = read.at(-1)!.id;
        }
        const event = read[readAt++];
        if (!hook.wants(event)) {
          const last = flight.at(-1);
          if (last === undefined) untold = event.id;
          else last.through = event.id;
          continue;
        }
        const entry: Flight = { event, through: event.id, settled: false, done: undefined! };
        entry.done = this.#attempts(hook, entry, signal, answers);
        flight.push(entry);
      }
      const head = flight.shift();
      if (head === undefined) continue;
      const outcome = await head.done;
      if (signal.aborted) {
        // Stopping: what was done with is told (saved at close), the head only if it was done.
        if (outcome === 'done') untold = head.through;
        tell();
        return;
      }
      if (outcome === 'handed over') {
        // With several instances: another took over the connection; it goes on from the cursor.
        await Promise.all(flight.splice(0).map((each) => each.done));
        [read, readAt, lastRead, untold] = [[], 0, null, null];
        continue;
      }
      untold = head.through;
      // Told now unless the next event in flight is done too (then it tells, for both).
      if (flight[0]?.settled !== true) tell();
    }
  }

  /** One event's attempts, until delivered, given up on (24 h) or handed over; `answers` counts 2xx in a row. */
  async #attempts(hook: Hook, entry: Flight, signal: AbortSignal, answers: { inARow: number }): Promise<Outcome> {
    const outcome = await this.#attempt(hook, entry.event, signal, answers);
    entry.settled = true;
    return outcome;
  }

  async #attempt(hook: Hook, event: FeedEvent, signal: AbortSignal, answers: { inARow: number }): Promise<Outcome> {
    const { outbox } = hook;
    const giveUpAfter = this.#settings.giveUpAfterMs ?? DAY_MS;
    const delivery: Delivery = { eventId: event.id, type: event.type, status: 'pending', attempts: 0, lastStatus: null, nextTry: null };
    hook.note(delivery);
    while (!signal.aborted) {
      // Awaited only when it is a promise (Redis's lease check), as is the turn.
      const still = outbox.stillDelivering();
      if (still !== true && !(await still)) return 'handed over';
      delivery.attempts++;
      const turn = this.#turn(signal);
      if (turn !== null) await turn;
      if (signal.aborted) break;
      const answer = await this.#post(hook, event, signal);
      if (signal.aborted) break;
      delivery.lastStatus = answer.status;
      if (answer.error === undefined) delete delivery.lastError;
      else delivery.lastError = answer.error;
      if (answer.status >= 200 && answer.status < 300) {
        answers.inARow++;
        delivery.status = 'delivered';
        delivery.nextTry = null;
        return 'done';
      }
      answers.inARow = 0;
      // Full jitter: anywhere between 0 and the doubled wait, so receivers coming back are not hit by every sender at once.
      const wait = Math.random() * Math.min(this.#settings.retryCapMs, this.#settings.retryBaseMs * 2 ** Math.min(delivery.attempts - 1, 40));
      if (Date.now() + wait - Date.parse(event.at) > giveUpAfter) {
        delivery.status = 'failed';
        delivery.nextTry = null;
        this.#log.warn('a webhook delivery was given up after 24 h of failures', { connection: outbox.connection, webhook: hook.config.name, event: event.id, attempts: delivery.attempts });
        return 'done';
      }
      delivery.nextTry = new Date(Date.now() + wait).toISOString();
      await sleep(wait, signal);
    }
    return 'stopped';
  }

  /** One POST (made by the delivery worker, poster.ts): the status (0 for none) and why it failed, never throwing. */
  async #post(hook: Hook, event: { readonly id: string }, stop: AbortSignal = this.#stop.signal): Promise<{ status: number; error?: string }> {
    const { url, secret } = hook.config;
    // Again before each delivery: a name may resolve elsewhere now (DNS rebinding).
    const check = this.#whyRefusedNow(url);
    if (check !== null) {
      try {
        const why = await check;
        if (why !== null) return { status: 0, error: `target refused: ${why}` };
      } catch (error) {
        return { status: 0, error: error instanceof Error ? error.message : String(error) };
      }
    }
    return this.#poster.post({ url, secret: secret.reveal(), eventId: event.id, body: eventJson(event) }, stop);
  }

  /**
   * The target check before a delivery, its verdict kept for REFUSAL_KEPT_MS per url: with
   * private targets refused, each check resolves the name, which a delivery per event would
   * otherwise pay (a rebinding within that second is not caught; it is not between the check and
   * the connection either, docs/decisions.md).
   */
  #whyRefusedNow(url: string): Promise<string | null> | null {
    if (this.#settings.allowPrivateTargets) return null;
    const kept = this.#refusals.get(url);
    if (kept !== undefined && kept.until > Date.now()) return kept.why;
    const why = whyRefused(url, false, this.#resolve);
    if (this.#refusals.size > 1_000) this.#refusals.clear();
    this.#refusals.set(url, { why, until: Date.now() + REFUSAL_KEPT_MS });
    return why;
  }

  #cursorFailed(outbox: WebhookQueue, error: unknown): void {
    this.#log.error('a webhook cursor could not be saved (deliveries since the last saved one repeat after a restart)', { connection: outbox.connection, error: String(error) });
  }
}

/** A write's events as `carry` gives them: `settle` calls `ended` once, however often it is called. */
export function carriedWrite(events: readonly FeedEvent[], ended: () => void): { readonly events: readonly FeedEvent[]; settle(): void } {
  let settled = false;
  return {
    events,
    settle: () => {
      if (settled) return;
      settled = true;
      ended();
    },
  };
}

/** Throws a ConfigError naming every configured webhook whose target the server refuses (a private address without `allowPrivateTargets`). */
export async function checkTargets(connections: readonly HookedConnection[], settings: WebhookSettings, resolve: Resolve = resolveAll): Promise<void> {
  const problems: string[] = [];
  for (const [index, connection] of connections.entries()) {
    for (const [n, hook] of (connection.webhooks ?? []).entries()) {
      const why = await whyRefused(hook.url, settings.allowPrivateTargets, resolve);
      if (why !== null) problems.push(`connections[${index}].webhooks[${n}].url: refused: ${why}`);
    }
  }
  if (problems.length > 0) throw new ConfigError('webhooks', problems);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}
