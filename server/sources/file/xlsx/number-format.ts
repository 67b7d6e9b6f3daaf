// Number formats that SheetJS's SSF shows differently from Excel, shown the way Excel shows them:
// `[h]:mm` of -1.2 reads `-28:48` (SSF gave ""), `[<=9999999]###\-####;(###) ###\-####` of
// -12345.67891 `-1-2346` (SSF dropped the sign), `##0.0E+0` of 123.45 `123.5E+0` (SSF rounded
// down), `[$-411]ggge"年"m"月"d"日"` of 44197 `令和3年1月1日` and `[$-F800]` of 123
// `Wednesday, May 2, 1900`. Every other format is left to SSF, as it was.
import { sheetJs } from './sheetjs.ts';
import { engineeringOf, showEngineering, type Engineering } from './engineering-notation.ts';
import { japaneseLocale, withJapaneseEra, type EraYears } from './japanese-eras.ts';

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
  readonly japaneseEra: EraYears | null;
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

function ssf(format: string, value: number, date1904: boolean): string {
  return String(sheetJs().SSF.format(format, value, { date1904 }));
}
