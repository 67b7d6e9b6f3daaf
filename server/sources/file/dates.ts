// Spreadsheet date serials <-> ISO 8601 text without a time zone. SheetJS can turn serials
// into `Date` objects, but those carry the host's time zone rules; counting days ourselves
// keeps `45352.395833` -> `2024-03-01T09:30:00` on every machine.

const MS_PER_DAY = 86_400_000;
/** Serial of 1970-01-01 in the 1900 date system (which counts the fictional 1900-02-29). */
const UNIX_EPOCH_SERIAL = 25_569;
/** Days between the 1900 and 1904 date systems' day zero. */
const DATE1904_OFFSET = 1_462;

/** Number formats sheetrest gives the date cells it writes; escaped so ODS keeps the dashes. */
export const DATE_FORMAT = 'yyyy\\-mm\\-dd';
export const DATE_TIME_FORMAT = 'yyyy\\-mm\\-dd\\ hh:mm:ss';
export const TIME_FORMAT = 'hh:mm:ss';

/**
 * ISO text of a date serial: `YYYY-MM-DD` when it has no time part, `YYYY-MM-DDTHH:MM:SS`
 * otherwise (fractional seconds only when present). `timeOnly` (a format such as `hh:mm`
 * on a serial below 1) gives `HH:MM:SS`.
 */
export function serialToIso(serial: number, date1904: boolean, timeOnly = false): string {
  let days = date1904 ? serial + DATE1904_OFFSET : serial;
  // Excel's 1900 system counts a 1900-02-29 that never was: serials before it are one day early.
  if (!date1904 && days < 61) days += 1;
  // Round to whole milliseconds: a stored 09:30 is 0.39583333333333331 days, not exactly 34200 s.
  const ms = Math.round((days - UNIX_EPOCH_SERIAL) * MS_PER_DAY);
  const at = new Date(ms);
  const date = `${pad(at.getUTCFullYear(), 4)}-${pad(at.getUTCMonth() + 1, 2)}-${pad(at.getUTCDate(), 2)}`;
  const time = timeText(at);
  if (timeOnly) return time ?? '00:00:00';
  return time === null ? date : `${date}T${time}`;
}

function timeText(at: Date): string | null {
  const [hours, minutes, seconds, millis] = [at.getUTCHours(), at.getUTCMinutes(), at.getUTCSeconds(), at.getUTCMilliseconds()];
  if (hours === 0 && minutes === 0 && seconds === 0 && millis === 0) return null;
  const whole = `${pad(hours, 2)}:${pad(minutes, 2)}:${pad(seconds, 2)}`;
  return millis === 0 ? whole : `${whole}.${pad(millis, 3).replace(/0+$/, '')}`;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?$/;
const ISO_TIME = /^(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?$/;

/** The serial of an ISO date, date-time or time (`09:30:00`); null when the text is not one. */
export function isoToSerial(iso: string, date1904: boolean): number | null {
  const time = ISO_TIME.exec(iso);
  if (time !== null) return timeOfDayMs(time[1], time[2], time[3], time[4]) / MS_PER_DAY;
  const match = ISO_DATE.exec(iso);
  if (match === null) return null;
  const [, year, month, day, hours, minutes, seconds, fraction] = match;
  // Date.UTC reads years 0-99 as 1900-1999; setUTCFullYear takes them as written.
  const dateMs = new Date(0).setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  let serial = (dateMs + timeOfDayMs(hours, minutes, seconds, fraction)) / MS_PER_DAY + UNIX_EPOCH_SERIAL;
  if (date1904) return serial - DATE1904_OFFSET;
  if (serial < 61) serial -= 1;
  return serial;
}

function timeOfDayMs(hours = '0', minutes = '0', seconds = '0', fraction = ''): number {
  return ((Number(hours) * 60 + Number(minutes)) * 60 + Number(seconds)) * 1000 + Math.round(Number(`0${fraction}`) * 1000);
}

/** Whether an ISO value carries a time of day (and so wants a date-time format). */
export function isoHasTime(iso: string): boolean {
  return iso.includes(':');
}

/** Whether an ISO value is a bare time of day (`09:30:00`). */
export function isoIsTimeOnly(iso: string): boolean {
  return !iso.includes('-');
}

/**
 * Whether a date format shows only a time of day (`hh:mm`): such a cell's value is
 * a time, not a date on 1899-12-30. Quoted text and `[...]` sections are not format codes.
 */
export function formatIsTimeOnly(format: string): boolean {
  const codes = format.replace(/"[^"]*"/g, '').replace(/\[[^\]]*\]/g, '').replace(/\\./g, '');
  return !/[dy]/i.test(codes) && !/m{3,}/i.test(codes);
}

/**
 * Whether a number format shows elapsed time (`[h]:mm:ss`, `[mm]:ss`, `[s]`): the cell holds a
 * duration, in days, not a point in time. A format that also shows a day or year is a date.
 */
export function formatIsDuration(format: string): boolean {
  const codes = format.replace(/"[^"]*"/g, '').replace(/\\./g, '');
  if (!/\[(?:h+|m+|s+)\]/i.test(codes)) return false;
  return !/[dy]/i.test(codes.replace(/\[[^\]]*\]/g, ''));
}

/**
 * A duration in days as ISO 8601, the way `Temporal.Duration` writes it: 10.632060185 days ->
 * `PT255H10M10S`, half a second -> `PT0.5S`, zero -> `PT0S`, minus one hour -> `-PT1H`. Hours are
 * not carried into days: a spreadsheet shows `255:10:10`, and a day is not always 24 hours.
 */
export function daysToDuration(days: number): string {
  // Whole milliseconds: a stored 09:30 is 0.39583333333333331 days, not exactly 34200 s.
  const total = Math.round(Math.abs(days) * MS_PER_DAY);
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const millis = total % 60_000;
  const seconds = millis % 1000 === 0 ? String(millis / 1000) : (millis / 1000).toFixed(3).replace(/0+$/, '');
  let parts = '';
  if (hours > 0) parts += `${hours}H`;
  if (minutes > 0) parts += `${minutes}M`;
  if (millis > 0 || parts === '') parts += `${seconds}S`;
  return `${days < 0 && total > 0 ? '-' : ''}PT${parts}`;
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}
