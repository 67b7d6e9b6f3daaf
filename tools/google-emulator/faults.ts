// Injected trouble for client tests: latency on every answer, the next N matching requests failing
// (`failNext({ status: 503, times: 2, path: /:append$/ })` -> two 503 UNAVAILABLE in Google's
// shape), or never answering (`hangNext()`), to exercise retries and timeouts. A write can also be
// applied first and its answer lost afterwards (`failNext({ status: 500, afterApply: true })`,
// `resetNext({ afterApply: true })`: the connection is cut instead of answered), as when Google
// applied a request and the answer never reached the client.
import { GoogleError } from './errors.ts';

export interface FailOptions {
  status: number;
  times?: number;
  path?: RegExp;
  retryAfterSeconds?: number;
  /** Run the request first (a write is applied), then answer the error instead of its result. */
  afterApply?: boolean;
}

export interface ResetOptions {
  times?: number;
  path?: RegExp;
  /** Run the request first (a write is applied), then cut the connection instead of answering. */
  afterApply?: boolean;
}

export interface HangOptions {
  times?: number;
  path?: RegExp;
  /** Run the request first (a write is applied), then never answer: a client's timeout after Google applied it. */
  afterApply?: boolean;
}

interface Rule {
  remaining: number;
  readonly path: RegExp | undefined;
  readonly action: { kind: 'fail'; error: GoogleError; afterApply: boolean } | { kind: 'hang'; afterApply: boolean } | { kind: 'reset'; afterApply: boolean };
}

export class Faults {
  latencyMs: number;
  private rules: Rule[] = [];

  constructor(latencyMs = 0) {
    this.latencyMs = latencyMs;
  }

  failNext({ status, times = 1, path, retryAfterSeconds, afterApply = false }: FailOptions): void {
    if (!Number.isInteger(status) || status < 400 || status > 599) throw new RangeError(`failNext needs an error status (400-599), not ${status}`);
    const headers: Record<string, string> = retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) };
    this.rules.push({ remaining: times, path, action: { kind: 'fail', error: new GoogleError(status, undefined, { headers }), afterApply } });
  }

  hangNext({ times = 1, path, afterApply = false }: HangOptions = {}): void {
    this.rules.push({ remaining: times, path, action: { kind: 'hang', afterApply } });
  }

  resetNext({ times = 1, path, afterApply = false }: ResetOptions = {}): void {
    this.rules.push({ remaining: times, path, action: { kind: 'reset', afterApply } });
  }

  /** The injected outcome for this request, if any rule still applies to it (first rule first). */
  take(path: string): Rule['action'] | undefined {
    const rule = this.rules.find((candidate) => candidate.remaining > 0 && (candidate.path === undefined || candidate.path.test(path)));
    if (rule === undefined) return undefined;
    rule.remaining--;
    this.rules = this.rules.filter((candidate) => candidate.remaining > 0);
    return rule.action;
  }
}
