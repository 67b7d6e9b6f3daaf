// Dates as Sheets stores them: serial numbers counting days since 1899-12-30, the time of day as
// the fraction (DateTimeRenderOption SERIAL_NUMBER): `2024-01-15 12:00:00` -> 45306.5.

const DAY_MS = 86_400_000;
const EPOCH_MS = Date.UTC(1899, 11, 30);
const ISO_DATE_TIME = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$/;

export interface ParsedDate {
  readonly serial: number;
  readonly hasTime: boolean;
}

/** `yyyy-mm-dd` or `yyyy-mm-dd hh:mm[:ss]` -> its serial number; undefined when not a real date. */
export function parseIsoDate(text: string): ParsedDate | undefined {
  const match = ISO_DATE_TIME.exec(text.trim());
  if (match === null) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1).map((part) => (part === undefined ? 0 : Number(part)));
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return undefined;
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  // Date.UTC rolls 2024-02-31 over into March; Sheets keeps such text as text.
  if (new Date(ms).getUTCDate() !== day) return undefined;
  return { serial: (ms - EPOCH_MS) / DAY_MS, hasTime: match[4] !== undefined };
}

export const DATE_FORMAT = { type: 'DATE', pattern: 'yyyy-mm-dd' } as const;
export const DATE_TIME_FORMAT = { type: 'DATE_TIME', pattern: 'yyyy-mm-dd hh:mm:ss' } as const;

/** Number format types whose values are serial numbers (DateTimeRenderOption applies to them). */
export const DATE_TYPES: ReadonlySet<string> = new Set(['DATE', 'TIME', 'DATE_TIME']);
