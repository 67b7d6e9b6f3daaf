// Failed admin sign-ins, counted per client address: after 10 wrong admin tokens from one address
// within a minute, every admin request from it gets 429 `rate_limited` with Retry-After until that
// minute is over, `GET /_admin/connections` with the right token too, so that guessing on during
// the lockout learns nothing (docs/admin-api.md, "Failed sign-ins").
// The log gets warn lines without the token: an address's first wrong token, the start of its
// lockout, then one summary of its window (how many wrong tokens and refused requests), so an
// attack cannot flood the log; past LOG_LINES_PER_WINDOW lines a minute from all addresses
// together, the rest are only counted and told in one line.
// The counts live in this instance's memory, for at most `maxAddresses` addresses (the oldest
// window is forgotten first): with several instances each counts its own. An IPv6 client counts
// by its /64, which one machine usually has whole.
import { apiError, type ApiError } from '../../lib/errors.ts';
import type { Logger } from '../log.ts';

export const MAX_FAILURES = 10;
export const WINDOW_MS = 60_000;
export const MAX_ADDRESSES = 10_000;
/** Lines about failed sign-ins per window, from all addresses together. */
const LOG_LINES_PER_WINDOW = 100;

export interface SignInThrottleOptions {
  readonly log: Logger;
  readonly maxFailures?: number;
  readonly windowMs?: number;
  readonly maxAddresses?: number;
  /** ms since the epoch; tests pass their own clock. */
  readonly now?: () => number;
}

/** One address's current window: it starts at its first wrong token. */
interface Window {
  readonly start: number;
  failures: number;
  /** Requests refused during the lockout. */
  refused: number;
}

export class SignInThrottle {
  readonly #log: Logger;
  readonly #maxFailures: number;
  readonly #windowMs: number;
  readonly #maxAddresses: number;
  readonly #now: () => number;
  /** In the order their windows started: the first is the one to forget when full. */
  readonly #windows = new Map<string, Window>();
  #logWindow = { start: 0, lines: 0, left: 0 };

  constructor(options: SignInThrottleOptions) {
    this.#log = options.log;
    this.#maxFailures = options.maxFailures ?? MAX_FAILURES;
    this.#windowMs = options.windowMs ?? WINDOW_MS;
    this.#maxAddresses = options.maxAddresses ?? MAX_ADDRESSES;
    this.#now = options.now ?? Date.now;
  }

  /** Before the token is looked at: 429 while `address` is locked out, else null. */
  check(address: string): ApiError | null {
    const client = clientKey(address);
    const window = this.#current(client);
    if (window === undefined || window.failures < this.#maxFailures) return null;
    window.refused += 1;
    const seconds = Math.max(1, Math.ceil((window.start + this.#windowMs - this.#now()) / 1000));
    return apiError('rate_limited', `Too many wrong admin tokens from your address; try again in ${seconds} s.`, { 'Retry-After': String(seconds) });
  }

  /** A wrong admin token from `address`. */
  failed(address: string): void {
    const client = clientKey(address);
    let window = this.#current(client);
    if (window === undefined) {
      if (this.#windows.size >= this.#maxAddresses) {
        const oldest = this.#windows.keys().next().value;
        if (oldest !== undefined) this.#end(oldest);
      }
      window = { start: this.#now(), failures: 0, refused: 0 };
      this.#windows.set(client, window);
      this.#warn('a wrong admin token was sent', { client });
    }
    window.failures += 1;
    if (window.failures === this.#maxFailures) {
      const seconds = Math.ceil((window.start + this.#windowMs - this.#now()) / 1000);
      this.#warn('admin requests from a client are refused for now: too many wrong admin tokens', { client, failures: window.failures, refusedForSeconds: seconds });
    }
  }

  /** The right token: the address's earlier mistakes are forgotten. */
  succeeded(address: string): void {
    const client = clientKey(address);
    if (this.#windows.has(client)) this.#end(client);
  }

  /** How many addresses are counted now (for tests of the memory bound). */
  get size(): number {
    return this.#windows.size;
  }

  /** The address's window, ended (and summed up in the log) once its time is over. */
  #current(client: string): Window | undefined {
    const window = this.#windows.get(client);
    if (window === undefined || this.#now() - window.start < this.#windowMs) return window;
    this.#end(client);
    return undefined;
  }

  #end(client: string): void {
    const window = this.#windows.get(client);
    this.#windows.delete(client);
    // One wrong token was logged when it came: only more than that is worth a summary.
    if (window === undefined || (window.failures <= 1 && window.refused === 0)) return;
    this.#warn('failed admin sign-ins from a client, in one window', { client, since: new Date(window.start).toISOString(), wrongTokens: window.failures, refused: window.refused });
  }

  #warn(message: string, fields: Record<string, unknown>): void {
    const now = this.#now();
    const logWindow = this.#logWindow;
    if (now - logWindow.start >= this.#windowMs) {
      if (logWindow.left > 0) this.#log.warn('lines about failed admin sign-ins were left out: too many in one window', { left: logWindow.left });
      this.#logWindow = { start: now, lines: 0, left: 0 };
    }
    if (this.#logWindow.lines >= LOG_LINES_PER_WINDOW) {
      this.#logWindow.left += 1;
      return;
    }
    this.#logWindow.lines += 1;
    this.#log.warn(message, fields);
  }
}

/**
 * What failures are counted by: an IPv4 address as it is (also when written IPv4-mapped,
 * `::ffff:10.0.0.1`); an IPv6 address by its /64 (`2001:db8:1:2::/64`).
 */
export function clientKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped !== null) return mapped[1];
  if (!address.includes(':')) return address;
  const [head, tail] = address.split('%')[0].split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  // An IPv4 tail (`::1.2.3.4`) fills two groups.
  const tailWidth = tailGroups.length + (tailGroups.at(-1)?.includes('.') === true ? 1 : 0);
  const groups = tail === undefined ? headGroups : [...headGroups, ...Array<string>(Math.max(0, 8 - headGroups.length - tailWidth)).fill('0'), ...tailGroups];
  const prefix = groups.slice(0, 4).map((group) => (/^[0-9a-f]{1,4}$/i.test(group) ? parseInt(group, 16).toString(16) : group));
  return `${prefix.join(':')}::/64`;
}
