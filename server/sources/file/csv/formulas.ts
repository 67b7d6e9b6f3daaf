// CSV formula injection (OWASP, "CSV Injection"): `POST {"Note": "=HYPERLINK(...)"}` to a .csv
// connection must not put a field into the file that Excel or LibreOffice runs as a formula. A
// written field that would start with `=`, `+`, `-`, `@`, a tab or a carriage return (and is not
// a plain number such as `-3.5`) goes into the file behind a single quote, `'=HYPERLINK(...)`,
// which spreadsheet programs show as text; reading takes exactly that quote off again, so the
// client reads back `=HYPERLINK(...)`. Fields already in the file are written back as they were,
// and cells written as formulas (a connection with `formulas: true`) go in as they are.
import type { SheetRow } from '../../../../lib/workbook.ts';

const FORMULA_START = /^[=+\-@\t\r]/;
/** What a spreadsheet program reads as a number, sign and all: `-3.5`, `+1`, `-1e3`. */
const PLAIN_NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const QUOTE = "'";

/** Whether a spreadsheet program opening the CSV would take this field for a formula. */
export function runsAsFormula(field: string): boolean {
  return FORMULA_START.test(field) && !PLAIN_NUMBER.test(field);
}

/** Quoted-away text: the quotes in front of it do not matter, what follows them does. */
function needsQuote(text: string): boolean {
  return runsAsFormula(text.replace(/^'+/, ''));
}

/**
 * The field a written text becomes: `=1+2` -> `'=1+2`. Text that already starts with quotes
 * before such a start (`'=1+2`) gets one more, so that reading gives back exactly what was written.
 */
export function quoteFormula(text: string): string {
  return needsQuote(text) ? QUOTE + text : text;
}

/** The text of a field as read: one quote off a quoted formula start (`'=1+2` -> `=1+2`), else the field. */
export function unquoteFormula(field: string): string {
  return field.startsWith(QUOTE) && needsQuote(field) ? field.slice(1) : field;
}

/**
 * Fields of rows read from a file that would not survive a read and a write (an unquoted `=SUM(A1)`
 * a person put there, or a formula written through a `formulas: true` connection): column -> field.
 * Only rows holding such a field are here.
 */
const verbatimFields = new WeakMap<SheetRow, ReadonlyMap<number, string>>();

/** Remembers the fields of a row just read that quoteFormula would change. */
export function rememberVerbatim(row: SheetRow, fields: readonly string[]): void {
  let kept: Map<number, string> | undefined;
  fields.forEach((field, column) => {
    if (!runsAsFormula(field)) return;
    kept ??= new Map();
    kept.set(column, field);
  });
  if (kept !== undefined) verbatimFields.set(row, kept);
}

/** A row that replaced `before` keeps its verbatim fields in the columns the write did not set. */
export function keepVerbatim(before: SheetRow, after: SheetRow, setColumns: readonly number[]): void {
  const kept = verbatimFields.get(before);
  if (kept === undefined || verbatimFields.has(after)) return;
  const next = new Map([...kept].filter(([column, field]) => !setColumns.includes(column) && after.text[column] === field));
  if (next.size > 0) verbatimFields.set(after, next);
}

/** The CSV fields of a row: what each cell displays, quoted away from formulas where it was written as text. */
export function csvFieldsOf(row: SheetRow): string[] {
  const kept = verbatimFields.get(row);
  return Array.from({ length: Math.max(row.text.length, row.value.length) }, (_, column) => {
    const text = row.text[column] ?? '';
    if (kept?.get(column) === text || row.formula?.[column] !== undefined) return text;
    return quoteFormula(text);
  });
}
