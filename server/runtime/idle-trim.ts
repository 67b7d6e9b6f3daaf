// Gives memory back once a busy server goes quiet (issue 20, part 13). After minutes of mixed
// reads and writes a Node server sat at 535 MB where a fresh start on the same file took 163 MB,
// yet its live heap after a full collection was some 30 MB: the rest was V8's heap pages (its
// young generation grown to 128 MB under load, and the pages every collection freed), which V8
// keeps in a pool for reuse and hands back to the system only as later collections run. A server
// that goes quiet runs none, so the pages stayed resident for good (docs/benchmarks.md, "Memory
// under mixed load"). So: every few seconds, if the process used almost no CPU since the last
// look and its resident set has grown well past what it was after the last trim, one full
// collection that also empties V8's pool ("last resort", the one V8 runs before giving up on an
// allocation). It costs tens of milliseconds on a small heap (about a second on a 300 MB one),
// and runs only when nothing is being answered; its own result is the next baseline, so a server
// whose data really grew does not trim again and again.
import process from 'node:process';
import v8 from 'node:v8';
import vm from 'node:vm';

/** How often the process is looked at. */
export const TRIM_CHECK_MS = 5_000;
/** Quiet: CPU time used since the last look, as a share of the time passed. */
export const QUIET_CPU_SHARE = 0.02;
/** Growth of the resident set past the last baseline that makes a quiet spell worth a trim. */
export const TRIM_GROWTH_BYTES = 32 * 1024 * 1024;

/** What a trim looks at and does; the defaults read the process, tests pass their own. */
export interface TrimProbe {
  /** The resident set, bytes. */
  rss(): number;
  /** CPU time used by the process so far, microseconds. */
  cpuMicros(): number;
  /** Wall time, milliseconds. */
  now(): number;
  /** The full collection; false where the runtime offers none. */
  collect(): boolean;
}

export class IdleTrim {
  readonly #probe: TrimProbe;
  #baseline = 0;
  #cpu: number;
  #at: number;
  #timer: ReturnType<typeof setInterval> | undefined;
  /** Trims run so far. */
  trims = 0;

  constructor(probe: TrimProbe = processProbe()) {
    this.#probe = probe;
    this.#cpu = probe.cpuMicros();
    this.#at = probe.now();
  }

  /** Looks every TRIM_CHECK_MS until stopped; the timer keeps no process alive. */
  start(): this {
    this.#timer ??= setInterval(() => this.check(), TRIM_CHECK_MS);
    (this.#timer as { unref?: () => void }).unref?.();
    return this;
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** One look: trims when the process has been quiet since the last look and has grown since the last trim. Returns whether it trimmed. */
  check(): boolean {
    const cpu = this.#probe.cpuMicros();
    const at = this.#probe.now();
    const busy = (cpu - this.#cpu) / 1000 / Math.max(at - this.#at, 1);
    this.#cpu = cpu;
    this.#at = at;
    if (busy >= QUIET_CPU_SHARE || this.#probe.rss() < this.#baseline + TRIM_GROWTH_BYTES) return false;
    if (!this.#probe.collect()) return false;
    this.trims++;
    this.#baseline = this.#probe.rss();
    // The collection's own CPU time is not a sign of work.
    this.#cpu = this.#probe.cpuMicros();
    this.#at = this.#probe.now();
    return true;
  }
}

/** The process's own readings, and the full collection each runtime offers. */
export function processProbe(): TrimProbe {
  return {
    rss: () => process.memoryUsage().rss,
    cpuMicros: () => {
      const { user, system } = process.cpuUsage();
      return user + system;
    },
    now: () => performance.now(),
    collect: fullCollection(),
  };
}

type Collect = (options?: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/**
 * Bun's `Bun.gc(true)`; on Node and Deno, V8's `gc` function, which V8 hands to contexts made
 * after `--expose-gc` is set (the flag is set for that moment only, so the server's own global
 * object gets no `gc`). Where none can be had, a function answering false.
 */
function fullCollection(): () => boolean {
  const bun = (globalThis as { Bun?: { gc(force: boolean): void } }).Bun;
  if (bun !== undefined) {
    return () => {
      bun.gc(true);
      return true;
    };
  }
  let collect: Collect | undefined;
  try {
    v8.setFlagsFromString('--expose-gc');
    collect = vm.runInNewContext('gc') as Collect;
    v8.setFlagsFromString('--no-expose-gc');
  } catch {
    collect = undefined;
  }
  if (typeof collect !== 'function') return () => false;
  const gc = collect;
  return () => {
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    return true;
  };
}
