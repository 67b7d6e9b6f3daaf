// Where webhooks' POSTs are made: `poster.post({url, secret, eventId, body}, stop)` -> `{status:
// 204}` or `{status: 0, error: 'no answer within 10000 ms'}`. In a worker thread (delivery-
// worker.ts), started on the first POST, so that the HTTP requests, their signatures and their
// connections take none of the time of the thread that answers requests: the POSTs asked for in
// one turn go over in one message, and their answers come back in batches the same way. Where no
// worker starts (a runtime or package that cannot load it), or one stops, the POSTs are made in
// this thread instead (send.ts), and that is logged once.
import { Worker } from 'node:worker_threads';
import type { Logger } from '../log.ts';
import type { FromWorker, Send, ToWorker, WorkerSettings } from './delivery-worker.ts';
import { atMostEvery, MESSAGE_EVERY_MS } from './pace.ts';
import { deliver, openSender, type Answer, type Delivery, type Sender } from './send.ts';

const WORKER_MODULE = new URL('./delivery-worker.js', import.meta.url);

export interface Poster {
  /** The receiver's answer; never rejects. An aborted `stop` answers at once (status 0). */
  post(delivery: Delivery, stop: AbortSignal): Promise<Answer>;
  /** Where the POSTs go now: `worker` once one has started, `main thread` after a fallback, `starting` before. */
  readonly where: 'starting' | 'worker' | 'main thread';
  /** Messages handed to the worker so far (each carries every POST asked for in one turn). */
  readonly batches: number;
  close(): Promise<void>;
}

export interface PosterOptions {
  readonly timeoutMs: number;
  /** Connections per target (Node's pool). */
  readonly connections: number;
  readonly log: Logger;
  /** The worker's module (tests give one that cannot start); null: always this thread. */
  readonly workerModule?: URL | null;
}

interface Waiting {
  readonly delivery: Delivery;
  readonly stop: AbortSignal;
  readonly resolve: (answer: Answer) => void;
}

const STOPPED: Answer = { status: 0, error: 'stopped' };


export function openPoster(options: PosterOptions): Poster {
  return new WorkerPoster(options);
}

class WorkerPoster implements Poster {
  readonly #options: PosterOptions;
  #worker: Worker | null = null;
  #where: 'starting' | 'worker' | 'main thread' = 'starting';
  #inThread: Sender | null = null;
  #nextId = 0;
  readonly #waiting = new Map<number, Waiting>();
  /** Asked for in this turn, to go over in one message (or held until the worker has started). */
  #sends: Send[] = [];
  #aborts: number[] = [];
  #flushing = false;
  #flushedAt = 0;
  #batches = 0;
  #closed = false;
  /** The stop signals POSTs came with, each with one abort listener (not one per POST). */
  readonly #watched = new WeakSet<AbortSignal>();

  constructor(options: PosterOptions) {
    this.#options = options;
    if (options.workerModule === null) this.#where = 'main thread';
  }

  get where(): 'starting' | 'worker' | 'main thread' {
    return this.#where;
  }

  get batches(): number {
    return this.#batches;
  }

  post(delivery: Delivery, stop: AbortSignal): Promise<Answer> {
    if (stop.aborted || this.#closed) return Promise.resolve(STOPPED);
    if (this.#where === 'main thread') return this.#postHere(delivery, stop);
    this.#watch(stop);
    return new Promise((resolve) => {
      const id = ++this.#nextId;
      this.#waiting.set(id, { delivery, stop, resolve });
      this.#sends.push({ id, ...delivery });
      this.#start();
      this.#scheduleFlush();
    });
  }

  /** On `stop`'s abort, its POSTs answer at once, and the worker is told to cut them off. */
  #watch(stop: AbortSignal): void {
    if (this.#watched.has(stop)) return;
    this.#watched.add(stop);
    stop.addEventListener('abort', () => {
      for (const [id, waiting] of [...this.#waiting]) {
        if (waiting.stop !== stop) continue;
        this.#waiting.delete(id);
        this.#aborts.push(id);
        waiting.resolve(STOPPED);
      }
      this.#ref();
      this.#scheduleFlush();
    }, { once: true });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const [id, waiting] of this.#waiting) this.#answer(id, STOPPED, waiting);
    const worker = this.#worker;
    this.#worker = null;
    await worker?.terminate();
    await this.#inThread?.close().catch(() => undefined);
  }

  #postHere(delivery: Delivery, stop: AbortSignal): Promise<Answer> {
    this.#inThread ??= openSender(this.#options.timeoutMs, this.#options.connections);
    return deliver(this.#inThread, this.#options.timeoutMs, delivery, stop);
  }

  #start(): void {
    if (this.#worker !== null || this.#where !== 'starting') return;
    let worker: Worker;
    try {
      const settings: WorkerSettings = { timeoutMs: this.#options.timeoutMs, connections: this.#options.connections };
      worker = new Worker(this.#options.workerModule ?? WORKER_MODULE, { workerData: settings });
    } catch (error) {
      this.#fallBack(error);
      return;
    }
    this.#worker = worker;
    // Idle, the worker does not keep the process alive (held while POSTs wait: #ref).
    worker.unref();
    worker.on('message', (message: FromWorker) => {
      if (message.kind === 'started') {
        this.#where = 'worker';
        this.#scheduleFlush();
        return;
      }
      for (const answer of message.answers) {
        const waiting = this.#waiting.get(answer.id);
        if (waiting !== undefined) this.#answer(answer.id, answer.error === undefined ? { status: answer.status } : { status: answer.status, error: answer.error }, waiting);
      }
    });
    worker.on('error', (error: Error) => this.#fallBack(error));
    worker.on('exit', (code: number) => this.#fallBack(new Error(`exit code ${code}`)));
  }

  /**
   * No worker (it did not start, or it stopped): every POST from now on is made here. Those not
   * yet handed over are made here now; those in the worker's hands answer 0 (tried again, as
   * after any failed attempt).
   */
  #fallBack(error: unknown): void {
    if (this.#where === 'main thread' || this.#closed) return;
    const started = this.#where === 'worker';
    this.#where = 'main thread';
    const worker = this.#worker;
    this.#worker = null;
    void worker?.terminate().catch(() => undefined);
    this.#options.log.warn(started ? 'the webhook delivery worker stopped: webhooks are sent from the main thread from now on' : 'the webhook delivery worker did not start: webhooks are sent from the main thread', {
      error: error instanceof Error ? error.message : String(error),
    });
    const unsent = new Set(this.#sends.map((send) => send.id));
    this.#sends = [];
    this.#aborts = [];
    for (const [id, waiting] of [...this.#waiting]) {
      if (unsent.has(id)) {
        this.#waiting.delete(id);
        void this.#postHere(waiting.delivery, waiting.stop).then(waiting.resolve);
      } else this.#answer(id, { status: 0, error: 'the delivery worker stopped' }, waiting);
    }
    this.#ref();
  }

  #answer(id: number, answer: Answer, waiting: Waiting): void {
    this.#waiting.delete(id);
    waiting.resolve(answer);
    this.#ref();
  }

  /** The worker keeps the process alive only while POSTs wait for it. */
  #ref(): void {
    if (this.#waiting.size > 0) this.#worker?.ref();
    else this.#worker?.unref();
  }

  #scheduleFlush(): void {
    if (this.#flushing) return;
    this.#flushing = true;
    // After this turn's deliveries have all asked (and MESSAGE_EVERY_MS after the last message): one message for them.
    atMostEvery(MESSAGE_EVERY_MS, this.#flushedAt, () => {
      this.#flushing = false;
      this.#flushedAt = performance.now();
      const worker = this.#worker;
      if (worker === null || this.#where !== 'worker') return;
      if (this.#aborts.length > 0) worker.postMessage({ kind: 'abort', ids: this.#aborts.splice(0) } satisfies ToWorker);
      if (this.#sends.length === 0) return;
      // A POST aborted before it went over is not sent.
      const sends = this.#sends.filter((send) => this.#waiting.has(send.id));
      this.#sends = [];
      if (sends.length === 0) return;
      this.#batches++;
      worker.postMessage({ kind: 'send', sends } satisfies ToWorker);
      this.#ref();
    });
  }
}
