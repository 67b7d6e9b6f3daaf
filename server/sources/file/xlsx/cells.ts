// One written cell as .xlsx XML: 42 in column B of row 5 with style 3 ->
// `<c r="B5" s="3"><v>42</v></c>`; text goes inline (`t="inlineStr"`), so the shared strings
// part is never touched; dates go as serials in the style the caller picked.
import type { TypedValue } from '../../../../lib/workbook.ts';
import { isoToSerial } from '../dates.ts';

/** 0 -> `A`, 27 -> `AB`. */
export function columnName(column: number): string {
  let name = '';
  for (let n = column + 1; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}

/** `AB` -> 27. */
export function columnIndex(name: string): number {
  let index = 0;
  for (const letter of name.toUpperCase()) index = index * 26 + (letter.charCodeAt(0) - 64);
  return index - 1;
}

/** What a value needs from its cell's number format: dates and times must show as such, numbers must not. */
export type ValueKind = 'date' | 'time' | 'number' | 'any';

export interface CellContent {
  /** The cell without its `r` and `s` attributes: `<c` + these attributes + `>...</c>`. */
  readonly attributes: string;
  readonly body: string;
  readonly kind: ValueKind;
  /** For dates and times: the serial to store. */
  readonly iso?: string;
}

/**
 * The content of a cell written with `text`/`value`/`formula`, or null for an empty cell. A date
 * before the workbook's first day has no serial a spreadsheet shows as a date: it goes as its
 * ISO text, as the SheetJS writer did.
 */
export function cellContent(text: string, value: TypedValue, formula: string | undefined, date1904: boolean): CellContent | null {
  if (formula !== undefined && formula !== '') return { attributes: '', body: `<f>${escapeText(formula.replace(/^=/, ''))}</f>`, kind: 'any' };
  if (value === null) return text === '' ? null : inline(text);
  if (typeof value === 'number') return { attributes: '', body: `<v>${numberText(value)}</v>`, kind: 'number' };
  if (typeof value === 'boolean') return { attributes: ' t="b"', body: `<v>${value ? 1 : 0}</v>`, kind: 'any' };
  if (typeof value === 'string') return inline(value);
  const serial = isoToSerial(value.iso, date1904);
  const timeOnly = !value.iso.includes('-');
  if (serial === null || (!timeOnly && serial < (date1904 ? 0 : 1))) return inline(value.iso);
  return { attributes: '', body: `<v>${numberText(serial)}</v>`, kind: timeOnly ? 'time' : 'date', iso: value.iso };
}

function inline(text: string): CellContent {
  const space = /^\s|\s$/.test(text) ? ' xml:space="preserve"' : '';
  return { attributes: ' t="inlineStr"', body: `<is><t${space}>${escapeText(text)}</t></is>`, kind: 'any' };
}

function numberText(value: number): string {
  // 1e+21 is valid xsd:double; Excel writes 1E+21, both read the same.
  return Object.is(value, -0) ? '0' : String(value);
}

/**
 * Text as an .xlsx text node: XML escapes, control characters (and the carriage return, which
 * XML would fold into a line feed) as the format's `_xHHHH_`, and text that looks like such an
 * escape with its underscore escaped (`_x005F_x0042_`), as Excel does.
 */
export function escapeText(text: string): string {
  return text
    .replace(/_(?=x[0-9a-fA-F]{4}_)/g, '_x005F_')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/[\u0000-\u0008\u000b-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, (char) => `_x${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}_`);
}
