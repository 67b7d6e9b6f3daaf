// Number formats that SheetJS's SSF shows differently from Excel, shown the way Excel shows them:
// `[h]:mm` of -1.2 reads `-28:48` (SSF gave ""), `[<=9999999]###\-####;(###) ###\-####` of
// -12345.67891 `-1-2346` (SSF dropped the sign), `##0.0E+0` of 123.45 `123.5E+0` (SSF rounded
// down), `[$-411]ggge"年"m"月"d"日"` of 44197 `令和3年1月1日` and `[$-F800]` of 123
// `Wednesday, May 2, 1900`. Every other format is left to SSF, as it was.
import { sheetJs } from './sheetjs.ts';
import { serialToIso } from '../dates.ts';

/**
 * Shows a number (a date serial in the given date system) as its format says; undefined where
 * SSF shows that number right (a positive duration), so that the text SheetJS already made
 * while reading the cell serves.
 */
export type NumberFormatter = (value: number, date1904: boolean) => string | undefined;

/** One section of a format code (`#,##0.00_)` of `#,##0.00_);(#,##0.00)`), read once. */
interface Section {
  readonly code: string;
  readonly condition: Condition | null;
  readonly elapsed: boolean;
  readonly engineering: Engineering | null;
  /** `gannen` (`[$-ja-JP-x-gannen]`) shows an era's first year as 元 instead of 1. */
  readonly japaneseEra: 'numeric' | 'gannen' | null;
}

interface Condition {
  readonly operator: string;
  readonly threshold: number;
}

const formatters = new Map<string, NumberFormatter | null>();
/** A workbook declares a few dozen formats; a file declaring thousands only costs a rebuild. */
const MAX_CACHED_FORMATS = 10_000;

/** Our formatter for a format code SSF shows wrongly, or null when SSF shows it as Excel does. */
export function excelFormatter(format: string): NumberFormatter | null {
  let formatter = formatters.get(format);
  if (formatter === undefined) {
    if (formatters.size >= MAX_CACHED_FORMATS) formatters.clear();
    formatter = formatterOf(format);
    formatters.set(format, formatter);
  }
  return formatter;
}

/** The text of a number in a format, as Excel shows it. */
export function formatNumber(format: string, value: number, date1904 = false): string {
  const formatter = excelFormatter(format);
  return formatter?.(value, date1904) ?? ssf(format, value, date1904);
}

/**
 * `[$-F800]` and `[$-F400]` (`[$-x-sysdate]`, `[$-x-systime]` in newer files) mean "the
 * system's long date" and "the system's time", whatever codes follow them: Excel shows its
 * locale's, which for en-US are `dddd, mmmm d, yyyy` and `h:mm:ss AM/PM`.
 */
export function withSystemFormats(format: string): string {
  // Runs per number cell at load: most formats have no `[$-` at all.
  if (!format.includes('[$-') || !/\[\$-(?:F[48]00|x-sys(?:date|time))\]/i.test(format)) return format;
  return splitSections(format).map(systemSection).join(';');
}

function systemSection(section: string): string {
  if (/\[\$-(?:F800|x-sysdate)\]/i.test(section)) return 'dddd, mmmm d, yyyy';
  if (/\[\$-(?:F400|x-systime)\]/i.test(section)) return 'h:mm:ss AM/PM';
  return section;
}

function formatterOf(format: string): NumberFormatter | null {
  const code = withSystemFormats(format);
  const sections = splitSections(code).map(readSection);
  const hasConditions = sections.some((section) => section.condition !== null);
  const ownSections = sections.some((section) => section.engineering !== null || section.japaneseEra !== null);
  const elapsed = sections.some((section) => section.elapsed);
  if (!hasConditions && !ownSections && !elapsed) return code === format ? null : (value, date1904) => ssf(code, value, date1904);
  const same = (value: number, date1904: boolean) => (code === format ? undefined : ssf(code, value, date1904));
  return (value, date1904) => {
    // Conditions and elapsed times go wrong only below zero: a positive duration is SSF's.
    if (value >= 0 && !ownSections) return same(value, date1904);
    const { section, signed } = chooseSection(sections, value, hasConditions);
    const own = section.engineering !== null || section.japaneseEra !== null || (value < 0 && (hasConditions || section.elapsed));
    if (!own) return same(value, date1904);
    return (signed ? '-' : '') + showSection(section, Math.abs(value), date1904);
  };
}

/**
 * The section Excel shows a number in, and whether it shows the minus sign. Without conditions,
 * a second section is for negative numbers (shown without a sign: the section says how) and a
 * third for zero. With conditions (`[<=9999999]`), the first section whose condition holds, else
 * the one after them; a negative number keeps its minus sign there, unless the section's
 * condition lets only negative numbers in (`[<0](0)` shows -5 as `(5)`), as in SSF's own
 * test of Excel's behaviour (`[Red][<-25]General;...` shows -26 as `26` and -1 as `-1`).
 */
function chooseSection(sections: readonly Section[], value: number, hasConditions: boolean): { section: Section; signed: boolean } {
  // A last section holding `@` is for text (unless it is the fourth), as SSF reads it.
  const count = sections.length < 4 && sections.length > 1 && sections[sections.length - 1].code.includes('@') ? sections.length - 1 : Math.min(sections.length, 3);
  const [first, second = first, third = count === 3 ? sections[2] : first] = sections.slice(0, count);
  if (!hasConditions) {
    if (count === 1 || value > 0 || (value === 0 && count === 2)) return { section: first, signed: value < 0 };
    return value < 0 ? { section: second, signed: false } : { section: third, signed: false };
  }
  const chosen = holds(first.condition, value) ? first : holds(second.condition, value) ? second : first.condition !== null && second.condition !== null ? third : second;
  return { section: chosen, signed: value < 0 && !onlyNegatives(chosen.condition) };
}

function holds(condition: Condition | null, value: number): boolean {
  if (condition === null) return false;
  const { operator, threshold } = condition;
  switch (operator) {
    case '=': return value === threshold;
    case '<>': return value !== threshold;
    case '<': return value < threshold;
    case '<=': return value <= threshold;
    case '>': return value > threshold;
    case '>=': return value >= threshold;
    default: return false;
  }
}

function onlyNegatives(condition: Condition | null): boolean {
  if (condition === null) return false;
  const { operator, threshold } = condition;
  return (operator === '<' && threshold <= 0) || ((operator === '<=' || operator === '=') && threshold < 0);
}

function showSection(section: Section, value: number, date1904: boolean): string {
  if (section.engineering !== null) return showEngineering(section.engineering, value);
  if (section.japaneseEra !== null) return ssf(withJapaneseEra(section.code, section.japaneseEra, value, date1904), value, date1904);
  return ssf(section.code, value, date1904);
}

const CONDITION = /\[(=|<>|<=|>=|<|>)(-?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)\]/;

function readSection(code: string): Section {
  const match = CONDITION.exec(code);
  const condition = match === null ? null : { operator: match[1], threshold: Number(match[2]) };
  // The condition is ours to apply: SSF given the section alone shows it unconditionally.
  const bare = match === null ? code : code.replace(CONDITION, '');
  const codes = formatCodes(bare);
  return {
    code: bare,
    condition,
    elapsed: /\[(?:h+|m+|s+)\]/i.test(bare.replace(/"[^"]*"/g, '').replace(/\\./g, '')),
    engineering: engineeringOf(codes),
    japaneseEra: /[ge]/i.test(codes) ? japaneseLocale(bare) : null,
  };
}

/** A section's codes without quoted text, escaped characters and `[...]` parts. */
function formatCodes(section: string): string {
  return section.replace(/"[^"]*"/g, '').replace(/\\./g, '').replace(/\[[^\]]*\]/g, '');
}

/** The sections of a format code: `;` splits them, except quoted (`";"`), escaped or in `[...]`. */
export function splitSections(format: string): string[] {
  const sections: string[] = [];
  let start = 0;
  for (let i = 0; i < format.length; i++) {
    const char = format[i];
    if (char === '\\') i++;
    else if (char === '"') i = closing(format, i, '"');
    else if (char === '[') i = closing(format, i, ']');
    else if (char === ';') {
      sections.push(format.slice(start, i));
      start = i + 1;
    }
  }
  sections.push(format.slice(start));
  return sections;
}

function closing(format: string, from: number, char: string): number {
  const at = format.indexOf(char, from + 1);
  return at === -1 ? format.length : at;
}

// Engineering notation: `##0.0E+0` puts exponents in multiples of three (the digits before the
// point), with one to three digits before it: 123.45 -> `123.5E+0`, 1234.5 -> `1.2E+3`.

interface Engineering {
  /** The digits before the point, and so the step between exponents. */
  readonly period: number;
  readonly decimals: number;
  readonly point: boolean;
  readonly e: string;
  readonly plus: boolean;
  readonly exponentDigits: number;
}

const ENGINEERING = /^\s*([#0]+)(\.(0*))?([eE])([+-])(0+)\s*$/;

function engineeringOf(codes: string): Engineering | null {
  const match = ENGINEERING.exec(codes);
  // `0.00E+00` has no `#`: plain scientific notation, which SSF shows right.
  if (match === null || !match[1].includes('#') || match[1].length < 2) return null;
  return { period: match[1].length, decimals: (match[3] ?? '').length, point: match[2] !== undefined, e: match[4], plus: match[5] === '+', exponentDigits: match[6].length };
}

/**
 * Rounds half away from zero on the decimal value, as Excel does: the 15 significant digits
 * Excel keeps of 123.45 (a double just above 123.45) are `123450000000000`, so `123.5E+0`.
 */
function showEngineering(format: Engineering, value: number): string {
  const zeros = '0'.repeat(format.decimals);
  if (value === 0 || !Number.isFinite(value)) return `0${format.point ? `.${zeros}` : ''}${format.e}${format.plus ? '+' : ''}${'0'.repeat(format.exponentDigits)}`;
  const [mantissa, exponentText] = value.toExponential(14).split('e');
  let digits = mantissa.replace('.', '').replace(/0+$/, '');
  let exponent = Number(exponentText);
  for (;;) {
    const shift = Math.floor(exponent / format.period) * format.period;
    const whole = exponent - shift + 1;
    const kept = roundDigits(digits, whole + format.decimals);
    // 999.96 rounds to 1000.0: one digit more, so the exponent steps up and the point moves.
    if (kept.length > whole + format.decimals) {
      digits = kept;
      exponent += 1;
      continue;
    }
    const padded = kept.padEnd(whole + format.decimals, '0');
    const sign = shift < 0 ? '-' : format.plus ? '+' : '';
    const fraction = format.point ? `.${padded.slice(whole)}` : '';
    return `${padded.slice(0, whole)}${fraction}${format.e}${sign}${String(Math.abs(shift)).padStart(format.exponentDigits, '0')}`;
  }
}

/** The first `count` digits of a digit string, rounded half up on the next one (one longer on a carry out). */
function roundDigits(digits: string, count: number): string {
  if (digits.length <= count) return digits;
  const kept = digits.slice(0, count);
  if (digits.charCodeAt(count) < 53 /* '5' */) return kept;
  const carried = (BigInt(kept || '0') + 1n).toString();
  return kept === '' ? carried : carried.padStart(kept.length, '0');
}

// Japanese eras (`[$-411]ggge"年"`): `g` the era's initial in Latin letters, `gg` its first
// character, `ggg` (or more) its name; `e` the year of the era, `ee` (or more) two digits, as
// Excel documents them and SpreadJS lists them (developer.mescius.com/spreadjs/docs/features/
// culture/eraformat). Eras from the day each began; serial 1 is 1900, in Meiji 33.

const ERAS: readonly { start: string; name: string; initial: string; latin: string }[] = [
  { start: '2019-05-01', name: '令和', initial: '令', latin: 'R' },
  { start: '1989-01-08', name: '平成', initial: '平', latin: 'H' },
  { start: '1926-12-25', name: '昭和', initial: '昭', latin: 'S' },
  { start: '1912-07-30', name: '大正', initial: '大', latin: 'T' },
  { start: '1868-09-08', name: '明治', initial: '明', latin: 'M' },
];

/** Whether a section names the Japanese locale: `[$-411]` (an LCID whose language is 0x0411), `[$-ja-JP]`, `[$-ja-JP-x-gannen]`. */
function japaneseLocale(section: string): 'numeric' | 'gannen' | null {
  for (const [, tag] of section.matchAll(/\[\$[^\]-]*-([^\]]+)\]/g)) {
    if (/^ja-jp-x-gannen$/i.test(tag)) return 'gannen';
    if (/^ja(?:-jp)?$/i.test(tag)) return 'numeric';
    if (/^[0-9a-f]+$/i.test(tag) && (Number.parseInt(tag, 16) & 0xffff) === 0x0411) return 'numeric';
  }
  return null;
}

/** The section with its era codes replaced by the era of the date, as quoted text. */
function withJapaneseEra(section: string, years: 'numeric' | 'gannen', serial: number, date1904: boolean): string {
  const iso = serialToIso(serial, date1904).slice(0, 10);
  const era = ERAS.find((candidate) => iso >= candidate.start) ?? ERAS[ERAS.length - 1];
  const number = Number(iso.slice(0, 4)) - Number(era.start.slice(0, 4)) + 1;
  const year = number === 1 && years === 'gannen' ? '元' : String(number);
  let out = '';
  for (let i = 0; i < section.length; i++) {
    const char = section[i];
    if (char === '\\') {
      out += section.slice(i, i + 2);
      i++;
    } else if (char === '"' || char === '[') {
      const end = closing(section, i, char === '"' ? '"' : ']');
      // A bare locale tag (`[$-411]`) has done its work; SSF shows one as `$` in a section left without date codes.
      if (!/^\[\$-[^\]]*\]$/.test(section.slice(i, end + 1))) out += section.slice(i, end + 1);
      i = end;
    } else if (char === 'g' || char === 'G' || char === 'e' || char === 'E') {
      let end = i;
      while (end < section.length && section[end].toLowerCase() === char.toLowerCase()) end++;
      const run = end - i;
      const text = char.toLowerCase() === 'g' ? (run === 1 ? era.latin : run === 2 ? era.initial : era.name) : run === 1 ? year : year.padStart(2, '0');
      out += `"${text}"`;
      i = end - 1;
    } else if (char === '.' && section[i + 1] !== '0') {
      // `[$-411]ge.m.d` (H31.4.30): SSF takes a bare point for a decimal point, `.0` being fractional seconds.
      out += '\\.';
    } else out += char;
  }
  return out;
}

function ssf(format: string, value: number, date1904: boolean): string {
  return String(sheetJs().SSF.format(format, value, { date1904 }));
}
