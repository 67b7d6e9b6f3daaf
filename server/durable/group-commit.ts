// Group commit: `POST` after `POST` on one workbook queue up while the journal's fsync is in
// flight, and the next append carries all of them with a single fsync, so throughput grows with
// concurrency instead of being capped at one fsync per write.

/** Runs async sections one at a time, in call order (a lock without a holder to forget). */
export class Serial {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(section: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(section);
    this.#tail = result.catch(() => undefined);
    return result;
  }
}

interface Queued<T> {
  readonly item: T;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

export interface GroupCommitOptions<T> {
  /** The section every commit runs in, shared with whatever else touches the same files. */
  readonly serial: Serial;
  /** Makes a batch durable; throwing fails the batch and everything queued behind it. */
  readonly commit: (items: readonly T[]) => Promise<void>;
  /** Runs after each batch, outside the section (e.g. to fold a long journal into the file). */
  readonly afterBatch: () => Promise<void>;
  readonly onError: (error: unknown) => void;
}

export class GroupCommit<T> {
  readonly #options: GroupCommitOptions<T>;
  #queue: Queued<T>[] = [];
  #draining: Promise<void> | null = null;

  constructor(options: GroupCommitOptions<T>) {
    this.#options = options;
  }

  get queued(): number {
    return this.#queue.length;
  }

  /** Queues an item; resolves once the batch holding it is committed. */
  add(item: T): Promise<void> {
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const committed = new Promise<void>((ok, fail) => {
      resolve = ok;
      reject = fail;
    });
    // The caller may attach its handler a few ticks later; do not report the rejection as unhandled.
    committed.catch(() => undefined);
    this.#queue.push({ item, resolve, reject });
    this.#drain();
    return committed;
  }

  /** Commits everything queued right now. Call only from inside the serial section. */
  async commitQueued(): Promise<void> {
    const batch = this.#queue.splice(0);
    if (batch.length === 0) return;
    try {
      await this.#options.commit(batch.map((queued) => queued.item));
    } catch (error) {
      // Items queued behind a failed batch were built on top of it: they fail with it.
      for (const queued of [...batch, ...this.#queue.splice(0)]) queued.reject(error);
      return;
    }
    for (const queued of batch) queued.resolve();
  }

  /** Resolves once nothing is queued or being committed. */
  async settled(): Promise<void> {
    while (this.#draining !== null) await this.#draining;
  }

  #drain(): void {
    if (this.#draining !== null) return;
    this.#draining = (async () => {
      while (this.#queue.length > 0) {
        await this.#options.serial.run(() => this.commitQueued());
        await this.#options.afterBatch();
      }
    })()
      .catch(this.#options.onError)
      .finally(() => {
        this.#draining = null;
        // Something queued between the loop's last check and now still needs a drain.
        if (this.#queue.length > 0) this.#drain();
      });
  }
}
