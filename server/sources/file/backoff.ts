// When to try folding the journal into the file again after a failure, and what to log: a
// workbook that cannot be written (a 40,000-character .xlsx cell from an older version, a tab
// name the writer refuses, a full disk) must not be re-encoded every 200 ms, nor log every try.
// The wait starts at foldAfterMs and doubles per failure in a row, up to RETRY_CAP_MS; a
// cause is reported once (again only when it changes), and once more when folding works again.

export const RETRY_CAP_MS = 5 * 60_000;

export class FoldBackoff {
  readonly #baseMs: number;
  #failures = 0;
  #cause: string | null = null;
  #retryAt = 0;

  /** `foldAfterMs`; Infinity (folds only on close) retries at the cap. */
  constructor(foldAfterMs: number) {
    this.#baseMs = Number.isFinite(foldAfterMs) ? Math.max(foldAfterMs, 1) : RETRY_CAP_MS;
  }

  /** Failures in a row since the last fold that worked. */
  get failures(): number {
    return this.#failures;
  }

  /** Why the last fold failed; null when it worked. */
  get cause(): string | null {
    return this.#cause;
  }

  /** How long an idle fold must still wait (0 when nothing failed). */
  waitMs(now: number): number {
    return Math.max(0, this.#retryAt - now);
  }

  /** Records a failure; answers whether its cause is news, to be logged. */
  failed(cause: string, now: number): boolean {
    this.#retryAt = now + Math.min(this.#baseMs * 2 ** this.#failures, RETRY_CAP_MS);
    this.#failures++;
    const news = cause !== this.#cause;
    this.#cause = cause;
    return news;
  }

  /** Records a cause that no retry can fix (the file became read-only): reported by close(). */
  stopped(cause: string): void {
    this.#cause = cause;
  }

  /** Records a fold that worked; answers whether it ends a run of failures, to be logged. */
  succeeded(): boolean {
    const recovered = this.#cause !== null;
    this.#cause = null;
    this.#failures = 0;
    this.#retryAt = 0;
    return recovered;
  }
}
