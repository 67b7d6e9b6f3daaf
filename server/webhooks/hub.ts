// Where a server's webhooks run: `openWebhooks(stateDir, connections, settings, log)` -> a
// WebhookHub, what start.ts, the feed and the admin API use. With outboxes in the state folder
// the whole engine (webhooks.ts: outboxes, cursors, every webhook's loop, retries, POSTs) runs in
// a worker thread (hub-worker.ts), and the thread answering requests only numbers a write's
// events for its journal line, counts the writes in flight and hands both over, at most every
// MESSAGE_EVERY_MS while writes come faster: on a busy core, each delivery's bookkeeping and each
// message cost the writes' thread more than the POSTs' own work did (docs/benchmarks.md). With
// Redis (`openQueue`), or where the worker cannot start or stops, the engine runs in this thread.
// The events handed over are kept here until the worker says they are in the outbox's file, so
// an engine started here after the worker stopped takes them again (a journal lets go of its
// events only after `keep`, which the worker answers once they are fsynced): none is lost.
import { Worker } from 'node:worker_threads';
import type { ConnectionConfig, WebhookConfig } from '../config/config.ts';
import type { DraftEvent, FeedEvent } from '../feed/event.ts';
import type { Outbox as FeedOutbox } from '../feed/feed.ts';
import type { Logger } from '../log.ts';
import type { CarriedEvent, EventSink } from '../sources/source.ts';
import { callOn, plainOf, type FromHub, type HubSettings, type Method, type ToHub } from './hub-protocol.ts';
import { Numbering } from './outbox.ts';
import { atMostEvery, MESSAGE_EVERY_MS } from './pace.ts';
import { resolveAll, whyRefused } from './target.ts';
import { ADOPT_FAILED, carriedWrite, checkTargets, Webhooks, type Delivery, type OpenQueue, type PingResult, type WebhookSettings } from './webhooks.ts';

const HUB_WORKER = new URL('./hub-worker.js', import.meta.url);

/** Every connection's webhooks, wherever they run. */
export interface WebhookHub extends FeedOutbox {
  /** Whether the server may send to private and loopback targets (`webhooks.allowPrivateTargets`). */
  readonly allowPrivateTargets: boolean;
  /** Why `url` may not be a webhook's target now (a sentence), or null. */
  whyRefused(url: string): Promise<string | null>;
  /** Makes `configs` the connection's webhooks (Webhooks.set). */
  set(connection: string, configs: readonly WebhookConfig[]): Promise<void>;
  /** A connection's webhooks, without their secrets. */
  list(connection: string): { name: string; url: string; events: readonly string[] | null }[];
  /** The latest deliveries to a webhook, newest last; undefined for a webhook that does not exist. */
  deliveries(connection: string, name: string): readonly Delivery[] | undefined | Promise<readonly Delivery[] | undefined>;
  /** Sends the test event now, once, and answers what the receiver said. */
  ping(connection: string, name: string): Promise<PingResult | undefined>;
  /** Where a file source hands the events its journal lines carry; undefined with Redis. */
  sinkFor(connection: string): EventSink | undefined;
  /** Whether `connection` has webhooks. */
  has(connection: string): boolean;
  carries(connection: string): boolean;
  carry(connection: string, drafts: readonly DraftEvent[]): { readonly events: readonly FeedEvent[]; settle(): void } | null;
  record(connection: string, drafts: readonly DraftEvent[]): Promise<void> | null;
  close(): Promise<void>;
}

/**
 * The server's webhooks: the engine in a worker thread of its own (started now when a
 * connection has webhooks, else once one gets some), or in this thread with Redis or
 * `engineWorker: null`. A target the server refuses is a ConfigError, as Webhooks.open says.
 */
export async function openWebhooks(stateDir: string, connections: readonly ConnectionConfig[], settings: WebhookSettings, log: Logger, openQueue?: OpenQueue): Promise<WebhookHub> {
  if (openQueue !== undefined || settings.engineWorker === null) return Webhooks.open(stateDir, connections, settings, log, resolveAll, openQueue);
  await checkTargets(connections, settings);
  const hub = new WorkerHub(stateDir, settings, log);
  for (const connection of connections) if ((connection.webhooks?.length ?? 0) > 0) hub.adoptConfigured(connection.id, connection.webhooks!);
  if (connections.some((connection) => (connection.webhooks?.length ?? 0) > 0)) await hub.started();
  return hub;
}

interface Call {
  readonly method: Method;
  readonly args: readonly unknown[];
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** Events handed over in one batch, kept until the worker says they are in the outbox's file. */
interface Unacked {
  readonly seq: number;
  readonly adopted: readonly (readonly [string, readonly FeedEvent[]])[];
}

class WorkerHub implements WebhookHub {
  readonly #stateDir: string;
  readonly #settings: WebhookSettings;
  readonly #log: Logger;
  /** Each connection's webhooks as last set here (list, has, and an engine started in this thread after the worker). */
  readonly #hooks = new Map<string, readonly WebhookConfig[]>();
  /** Ids per connection, numbered here; `#open`: connections whose outbox the engine has open (their writes' events ride in journal lines). */
  readonly #numbering = new Map<string, Numbering>();
  readonly #open = new Set<string>();
  #worker: Worker | null = null;
  /** The engine in this thread, once the worker could not start or stopped. */
  #engine: Webhooks | null = null;
  /** Resolves once the worker, or the engine here, takes messages (null: not started). */
  #ready: Promise<void> | null = null;
  /** Whether the worker takes batches (it said `ready` and has not stopped). */
  #taking = false;
  /** What the next batch hands over: events per connection, writes begun and answered. */
  #adopted = new Map<string, FeedEvent[]>();
  #started = 0;
  #ended = 0;
  /** Writes begun and not yet answered as the worker was told (an engine started here after it starts from these). */
  #inFlightTold = 0;
  #flushing = false;
  #flushedAt = 0;
  /** The last batch with events, and those the worker has not yet said are in the outbox's file. */
  #seq = 0;
  #unacked: Unacked[] = [];
  #nextCall = 0;
  readonly #calls = new Map<number, Call>();
  #closed = false;
  /** Why no engine runs, when neither the worker nor this thread could open one. */
  #failed: Error | null = null;

  constructor(stateDir: string, settings: WebhookSettings, log: Logger) {
    this.#stateDir = stateDir;
    this.#settings = settings;
    this.#log = log;
  }

  /** A connection's webhooks from the config file, before the start. */
  adoptConfigured(connection: string, hooks: readonly WebhookConfig[]): void {
    this.#hooks.set(connection, hooks);
  }

  /**
   * Resolves once the worker (or the engine in this thread) has opened every outbox; rejects
   * when neither could (then every call rejects, and it was logged).
   */
  started(): Promise<void> {
    return (this.#ready ??= this.#start().catch((failure: unknown) => this.#fail(failure)));
  }

  get allowPrivateTargets(): boolean {
    return this.#settings.allowPrivateTargets;
  }

  whyRefused(url: string): Promise<string | null> {
    return whyRefused(url, this.#settings.allowPrivateTargets);
  }

  list(connection: string): { name: string; url: string; events: readonly string[] | null }[] {
    return (this.#hooks.get(connection) ?? []).map((hook) => ({ name: hook.name, url: hook.url, events: hook.events ?? null }));
  }

  has(connection: string): boolean {
    return (this.#hooks.get(connection)?.length ?? 0) > 0;
  }

  carries(connection: string): boolean {
    if (this.#engine !== null) return this.#engine.carries(connection);
    return this.#taking && this.#open.has(connection) && this.has(connection);
  }

  carry(connection: string, drafts: readonly DraftEvent[]): { readonly events: readonly FeedEvent[]; settle(): void } | null {
    if (this.#engine !== null) return this.#engine.carry(connection, drafts);
    if (drafts.length === 0 || !this.carries(connection)) return null;
    const events = this.#numberingOf(connection).number(drafts);
    this.#started++;
    this.#scheduleFlush();
    return carriedWrite(events, () => {
      this.#ended++;
      this.#scheduleFlush();
    });
  }

  record(connection: string, drafts: readonly DraftEvent[]): Promise<void> | null {
    if (this.#engine !== null) return this.#engine.record(connection, drafts);
    if (drafts.length === 0 || !this.has(connection)) return null;
    this.#started++;
    this.#scheduleFlush();
    const recorded = this.started().then(() => {
      if (this.#engine !== null) return this.#engine.record(connection, drafts) ?? undefined;
      return this.#call('record', [connection, this.#numberingOf(connection).number(drafts)]);
    });
    const ended = () => {
      this.#ended++;
      this.#scheduleFlush();
    };
    recorded.then(ended, ended);
    return recorded.then(() => undefined);
  }

  sinkFor(connection: string): EventSink {
    return {
      journaled: (events: readonly CarriedEvent[]) => {
        if (events.length === 0) return;
        const adopted = events as readonly FeedEvent[];
        if (this.#engine !== null) {
          this.#adoptHere(this.#engine, connection, adopted);
          return;
        }
        this.#numberingOf(connection).after(adopted.at(-1)!.id);
        const waiting = this.#adopted.get(connection);
        if (waiting === undefined) this.#adopted.set(connection, [...adopted]);
        else for (const event of adopted) waiting.push(event);
        // A start that fails is logged (#fail); the events stay in the journal for a restart.
        this.started().catch(() => undefined);
        this.#scheduleFlush();
      },
      keep: async () => {
        if (this.#ready === null) return;
        await this.started();
        if (this.#engine !== null) await this.#engine.keep(connection);
        else await this.#call('keep', [connection]);
      },
    };
  }

  async set(connection: string, configs: readonly WebhookConfig[]): Promise<void> {
    if (this.#closed) return;
    if (configs.length === 0 && this.#ready === null) {
      this.#hooks.delete(connection);
      return;
    }
    await this.started();
    if (this.#engine !== null) await this.#engine.set(connection, configs);
    else {
      const newest = (await this.#call('set', [connection, configs.map(plainOf)])) as string | null;
      if (newest !== null) {
        this.#numberingOf(connection).after(newest);
        this.#open.add(connection);
      }
    }
    if (configs.length > 0) this.#hooks.set(connection, configs);
    else this.#hooks.delete(connection);
  }

  async deliveries(connection: string, name: string): Promise<readonly Delivery[] | undefined> {
    if (this.#ready === null) return this.#hooks.get(connection)?.some((hook) => hook.name === name) === true ? [] : undefined;
    await this.started();
    if (this.#engine !== null) return this.#engine.deliveries(connection, name);
    return (await this.#call('deliveries', [connection, name])) as readonly Delivery[] | undefined;
  }

  async ping(connection: string, name: string): Promise<PingResult | undefined> {
    if (!this.#hooks.get(connection)?.some((hook) => hook.name === name)) return undefined;
    await this.started();
    if (this.#engine !== null) return this.#engine.ping(connection, name);
    return (await this.#call('ping', [connection, name])) as PingResult | undefined;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ready === null) return;
    await this.#ready.catch(() => undefined);
    this.#flush();
    const worker = this.#worker;
    if (worker !== null) {
      await this.#call('close', []).catch(() => undefined);
      this.#worker = null;
      await worker.terminate();
    }
    await this.#engine?.close();
  }

  /** Journaled events to the engine in this thread; an outbox that cannot take them is logged (the journal keeps them for a restart). */
  #adoptHere(engine: Webhooks, connection: string, events: readonly FeedEvent[]): void {
    engine.adopt(connection, events).catch((error: unknown) => this.#log.error(ADOPT_FAILED, { connection, error: String(error) }));
  }

  #numberingOf(connection: string): Numbering {
    let numbering = this.#numbering.get(connection);
    if (numbering === undefined) this.#numbering.set(connection, (numbering = new Numbering()));
    return numbering;
  }

  /** The connections' webhooks as they cross to the worker, or to an engine opened here. */
  #connections(): { id: string; webhooks: readonly WebhookConfig[] }[] {
    return [...this.#hooks].map(([id, webhooks]) => ({ id, webhooks }));
  }

  async #start(): Promise<void> {
    const workerData: HubSettings = {
      stateDir: this.#stateDir,
      connections: this.#connections().map((connection) => ({ id: connection.id, webhooks: connection.webhooks.map(plainOf) })),
      settings: settingsOf(this.#settings),
      levels: (['debug', 'info', 'warn', 'error'] as const).filter((level) => this.#log.enabled(level)),
    };
    let worker: Worker;
    try {
      worker = new Worker(this.#settings.engineWorker ?? HUB_WORKER, { workerData });
    } catch (error) {
      return this.#startHere(error, false);
    }
    this.#worker = worker;
    // The server's own handles keep the process alive; close() ends the worker.
    worker.unref();
    /** Whether it said `ready`: after that, its end is a stop (the engine goes on here), before, a failed start. */
    let running = false;
    const ready = new Promise<Record<string, string>>((resolve, reject) => {
      const ended = (error: Error) => (running ? void this.#stopped(error) : reject(error));
      worker.on('message', (message: FromHub) => {
        if (message.kind === 'ready') {
          running = true;
          resolve(message.numbering);
        } else if (message.kind === 'failed') reject(new Error(message.error));
        else this.#received(message);
      });
      worker.on('error', ended);
      worker.on('exit', (code: number) => ended(new Error(`exit code ${code}`)));
    });
    let numbering: Record<string, string>;
    try {
      numbering = await ready;
    } catch (error) {
      this.#worker = null;
      void worker.terminate().catch(() => undefined);
      return this.#startHere(error, false);
    }
    for (const [connection, newest] of Object.entries(numbering)) {
      this.#numberingOf(connection).after(newest);
      this.#open.add(connection);
    }
    // It may have stopped already (#stopped): then the engine here takes over.
    if (this.#worker !== worker) return;
    this.#taking = true;
    this.#flush();
  }

  #received(message: FromHub): void {
    if (message.kind === 'reply') {
      const call = this.#calls.get(message.id);
      if (call === undefined) return;
      this.#calls.delete(message.id);
      if (message.error === undefined) call.resolve(message.value ?? null);
      else call.reject(new Error(message.error));
    } else if (message.kind === 'appended') {
      while (this.#unacked.length > 0 && this.#unacked[0].seq <= message.seq) this.#unacked.shift();
    } else if (message.kind === 'log') {
      this.#log[message.level](message.message, message.fields);
    }
  }

  /** The worker stopped while running: the engine starts in this thread and takes over what it had not yet said was done. */
  async #stopped(error: unknown): Promise<void> {
    const worker = this.#worker;
    if (this.#closed || worker === null) return;
    this.#worker = null;
    this.#taking = false;
    const starting = this.#ready ?? Promise.resolve();
    // Once the thread is gone (an error may leave it running) and the start that saw it ready
    // has finished: two engines never write one outbox, and that start does not take it again.
    this.#ready = Promise.all([starting.catch(() => undefined), worker.terminate().catch(() => undefined)])
      .then(() => this.#startHere(error, true))
      .catch((failure: unknown) => this.#fail(failure));
    await this.#ready.catch(() => undefined);
  }

  /** Neither the worker nor this thread runs the engine: logged once; every call waiting, and every later one, fails with why. */
  #fail(failure: unknown): never {
    const error = failure instanceof Error ? failure : new Error(String(failure));
    this.#failed = error;
    this.#log.error('the webhooks could not be started in the main thread either: none is delivered until a restart', { error: error.message });
    for (const [id, call] of [...this.#calls]) {
      this.#calls.delete(id);
      call.reject(error);
    }
    throw error;
  }

  /**
   * The engine in this thread, with the webhooks as set here: after a worker that did not start
   * (`wasRunning` false) or stopped. Numbering goes on after every id given here, the events not
   * yet in the outbox's file are handed over again, and the calls still unanswered are made again.
   */
  async #startHere(error: unknown, wasRunning: boolean): Promise<void> {
    this.#log[wasRunning ? 'error' : 'warn'](
      wasRunning ? 'the webhooks worker stopped: webhooks are delivered from the main thread from now on' : 'the webhooks worker did not start: webhooks are delivered from the main thread',
      { error: error instanceof Error ? error.message : String(error) },
    );
    const engine = await Webhooks.open(this.#stateDir, this.#connections(), { ...this.#settings, engineWorker: null }, this.#log);
    for (const [connection, numbering] of this.#numbering) engine.numberAfter(connection, numbering.newest);
    for (const batch of this.#unacked.splice(0)) for (const [connection, events] of batch.adopted) await engine.adopt(connection, events);
    engine.writesCounted(this.#inFlightTold, 0);
    this.#engine = engine;
    this.#flush();
    for (const [id, call] of [...this.#calls]) {
      this.#calls.delete(id);
      callOn(engine, call.method, call.args).then(call.resolve, call.reject);
    }
  }

  /** Posts a call to the worker after everything handed over before it. */
  #call(method: Method, args: readonly unknown[]): Promise<unknown> {
    if (this.#failed !== null) return Promise.reject(this.#failed);
    if (this.#engine !== null) return callOn(this.#engine, method, args);
    return new Promise((resolve, reject) => {
      const id = ++this.#nextCall;
      this.#calls.set(id, { method, args, resolve, reject });
      this.#flush();
      this.#worker?.postMessage({ kind: 'call', id, method, args } satisfies ToHub);
    });
  }

  #scheduleFlush(): void {
    if (this.#flushing) return;
    this.#flushing = true;
    atMostEvery(MESSAGE_EVERY_MS, this.#flushedAt, () => {
      this.#flushing = false;
      this.#flush();
    });
  }

  /** Hands over the events and write counts gathered since the last batch: to the worker once it takes them, or to the engine here. */
  #flush(): void {
    const engine = this.#engine;
    if (engine === null && (!this.#taking || this.#worker === null)) return;
    if (this.#started === 0 && this.#ended === 0 && this.#adopted.size === 0) return;
    const adopted = [...this.#adopted];
    const [started, ended] = [this.#started, this.#ended];
    this.#adopted = new Map();
    this.#started = 0;
    this.#ended = 0;
    if (engine !== null) {
      engine.writesCounted(started, ended);
      for (const [connection, events] of adopted) this.#adoptHere(engine, connection, events);
      return;
    }
    this.#flushedAt = performance.now();
    const seq = adopted.length > 0 ? ++this.#seq : this.#seq;
    this.#worker!.postMessage({ kind: 'batch', seq, adopted, started, ended } satisfies ToHub);
    if (adopted.length > 0) this.#unacked.push({ seq, adopted });
    this.#inFlightTold += started - ended;
  }
}

/** The settings that cross to the worker: no module URLs (the worker sends its POSTs itself). */
function settingsOf(settings: WebhookSettings): HubSettings['settings'] {
  const { deliveryWorker: _delivery, engineWorker: _engine, ...rest } = settings;
  return rest;
}
