// The spans a plan's allowance counts, in UTC: `"period": "day"` on a plan of 1,000 requests ->
// the 1,001st request of 23 November 2026 gets 402 until 24 November 00:00 UTC, and its count
// is kept as `2026-11-23`. A month (the default) is kept as `2026-11`, as it always was, so
// `quota.json` and the Redis keys of a month plan are the same as before periods existed.
//
// Everything that depends on the period (the counters, the headers' reset, the 402 text, the
// admin API's usage view) asks this module, so a new period is one entry in PERIODS.

export interface Period {
  /** How the 402 text and the docs say it: "the monthly allowance". */
  readonly adjective: string;
  /** The first instant (ms) of the span holding `at`, UTC. */
  start(at: Date): number;
  /** The first instant (ms) of the next span, UTC. */
  next(at: Date): number;
  /** The span holding `at`, as counts are stored: `2026-11`, `2026-11-23`, `2026-11-23T14`. */
  key(at: Date): string;
}

const pad = (value: number, width = 2): string => String(value).padStart(width, '0');
const monthKey = (at: Date): string => `${pad(at.getUTCFullYear(), 4)}-${pad(at.getUTCMonth() + 1)}`;
const dayKey = (at: Date): string => `${monthKey(at)}-${pad(at.getUTCDate())}`;

export const PERIODS = {
  month: {
    adjective: 'monthly',
    start: (at) => Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1),
    next: (at) => Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1),
    key: monthKey,
  },
  day: {
    adjective: 'daily',
    start: (at) => Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()),
    next: (at) => Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1),
    key: dayKey,
  },
  hour: {
    adjective: 'hourly',
    start: (at) => Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate(), at.getUTCHours()),
    next: (at) => Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate(), at.getUTCHours() + 1),
    key: (at) => `${dayKey(at)}T${pad(at.getUTCHours())}`,
  },
} as const satisfies Record<string, Period>;

export type PeriodName = keyof typeof PERIODS;

/** `["month", "day", "hour"]`, for the config schema. */
export const PERIOD_NAMES = Object.keys(PERIODS) as PeriodName[];

/** A plan without `period` counts by the month. */
export const DEFAULT_PERIOD: PeriodName = 'month';

/** The period of a plan, or of no plan (counted by the month, so a limit added later applies to the month's real use). */
export function periodOf(plan: { readonly period?: PeriodName } | undefined): PeriodName {
  return plan?.period ?? DEFAULT_PERIOD;
}

/** One span of a period: its key and bounds, so that a request within it compares two numbers instead of formatting its key. */
export interface Span {
  readonly key: string;
  /** ms, inclusive. */
  readonly from: number;
  /** ms, exclusive: when the count starts again. */
  readonly to: number;
}

/** The span of `period` holding the instant `ms`: `spanAt('day', Date.UTC(2026, 10, 23, 14))` -> `2026-11-23`, until 24 November 00:00. */
export function spanAt(period: PeriodName, ms: number): Span {
  const at = new Date(ms);
  const shape: Period = PERIODS[period];
  return { key: shape.key(at), from: shape.start(at), to: shape.next(at) };
}

/**
 * The current span of a period, remembered: most requests fall in the span of the one before,
 * so they compare two numbers and make no Date (the hot path's figures depend on it).
 */
export function spanClock(period: PeriodName): (ms: number) => Span {
  let span: Span = { key: '', from: Number.NaN, to: Number.NaN };
  return (ms) => (ms >= span.from && ms < span.to ? span : (span = spanAt(period, ms)));
}

/** `2026-12-01T00:00:00Z`: when a span ends, as the 402 text and the admin API's `resetAt` say it. */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}
