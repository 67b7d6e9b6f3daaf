// RFC 4180 CSV without interpretation: `007,"a, b","say ""hi"""` parses to the fields exactly as
// written, and writing quotes only the fields that need it. The layout details a person might
// notice in a diff (line ending, byte order mark, final newline) are kept as the file had them,
// and so are records that formatting would write differently (`a,b,`, `"a"`: `sources`).

export interface CsvStyle {
  readonly lineEnding: '\r\n' | '\n';
  readonly byteOrderMark: boolean;
  readonly finalNewline: boolean;
}

/** RFC 4180's own choice, used for a file that has no line ending to copy. */
export const DEFAULT_CSV_STYLE: CsvStyle = { lineEnding: '\r\n', byteOrderMark: false, finalNewline: true };

export interface ParsedCsv {
  readonly records: string[][];
  /**
   * The records formatting would not give back byte for byte (`a,b,`, `,,,`, `"a"`, a `\n` line
   * in a `\r\n` file), by record index: records.ts writes them as they were while untouched.
   */
  readonly sources: ReadonlyMap<number, RecordSource>;
  readonly style: CsvStyle;
}

/**
 * A record as the file had it, told without its text where its fields give it back: the text
 * (`"a"b,c`); or, for a record quoting each of its fields and nothing else (`"a","b",""`, as many
 * writers do), how many fields it has; or, for a record without quotes that ends in empty
 * fields (`a,b,,` or `,,,`), how many commas follow the fields up to its last non-empty one.
 */
export type RecordText = string | number | { readonly commas: number };

/** A record as the file had it, and its line ending where it differs from the file's. */
export interface RecordSource {
  readonly text: RecordText;
  /** Undefined: the file's own (style.lineEnding), or none after a last line without one. */
  readonly lineEnding?: '\r\n' | '\n' | '\r';
}

const QUOTE = 0x22;
const COMMA = 0x2c;
const LF = 0x0a;
const CR = 0x0d;

export function parseCsv(input: string): ParsedCsv {
  const byteOrderMark = input.startsWith('\uFEFF');
  const text = byteOrderMark ? input.slice(1) : input;
  const length = text.length;
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let position = 0;
  let firstLineEnding: CsvStyle['lineEnding'] | null = null;
  let endedWithNewline = false;
  const sources = new Map<number, RecordSource>();
  // Where the record being read starts; whether it holds a quote (formatting may quote it
  // otherwise); whether each of its fields so far is one quoted field and nothing else, and
  // whether the field being read is.
  let recordStart = 0;
  let hasQuote = false;
  let quotedEach = true;
  let fieldQuoted = false;
  /** Keeps the record just read aside when formatting its fields would not give back its bytes. */
  const keepSource = (end: number, lineEnding: RecordSource['lineEnding']): void => {
    const trailingEmpty = record.length > 1 && record[record.length - 1] === '';
    const ownEnding = lineEnding !== undefined && lineEnding !== firstLineEnding;
    if (hasQuote || trailingEmpty || ownEnding) {
      const source = quotedEach ? record.length : hasQuote ? cut(text, recordStart, end) : trailingCommas(record);
      sources.set(records.length - 1, ownEnding ? { text: source, lineEnding } : { text: source });
    }
    hasQuote = false;
    quotedEach = true;
  };
  /** A field ended: the record is still quoted field by field only if this one was. */
  const endField = (): void => {
    if (!fieldQuoted) quotedEach = false;
    fieldQuoted = false;
  };
  while (position < length) {
    const char = text.charCodeAt(position);
    endedWithNewline = false;
    if (char === QUOTE) hasQuote = true;
    if (char === QUOTE && field === '') {
      // A quoted field runs to the next lone quote; a doubled quote is one quote character.
      let end = position + 1;
      let quoted = '';
      for (;;) {
        const next = text.indexOf('"', end);
        if (next === -1) {
          quoted += cut(text, end, length);
          end = length;
          quotedEach = false;
          break;
        }
        quoted += cut(text, end, next);
        if (text.charCodeAt(next + 1) === QUOTE) {
          quoted += '"';
          end = next + 2;
        } else {
          end = next + 1;
          break;
        }
      }
      // Lenient about text between the closing quote and the separator: keep it rather than lose it.
      const tail = separatorAt(text, end);
      field += quoted + cut(text, end, tail);
      fieldQuoted = tail === end;
      position = tail;
      continue;
    }
    if (char === COMMA) {
      endField();
      record.push(field);
      field = '';
      position++;
      continue;
    }
    if (char === LF || char === CR) {
      const crlf = char === CR && text.charCodeAt(position + 1) === LF;
      firstLineEnding ??= crlf ? '\r\n' : '\n';
      endField();
      record.push(field);
      records.push(record);
      keepSource(position, crlf ? '\r\n' : char === CR ? '\r' : '\n');
      record = [];
      field = '';
      position += crlf ? 2 : 1;
      recordStart = position;
      endedWithNewline = true;
      continue;
    }
    // An unquoted field: everything up to the next separator, a quote inside it included. One
    // cut, not a string grown a character at a time (which took 10 s for 1M rows).
    const end = separatorAt(text, position);
    const unquoted = cut(text, position, end);
    if (unquoted.includes('"')) hasQuote = true;
    quotedEach = false;
    field += unquoted;
    position = end;
  }
  if (length > 0 && !endedWithNewline) {
    endField();
    record.push(field);
    records.push(record);
    keepSource(length, undefined);
  }
  const style: CsvStyle = {
    lineEnding: firstLineEnding ?? DEFAULT_CSV_STYLE.lineEnding,
    byteOrderMark,
    finalNewline: length === 0 ? DEFAULT_CSV_STYLE.finalNewline : endedWithNewline,
  };
  return { records, sources, style };
}

/** Shared, one per count: a file of `a,b,` records keeps no object per record. */
const COMMAS: { readonly commas: number }[] = [];

/** `a,b,,` -> 2 commas after `a,b`; `,,,` -> 3 (the fields before them are all empty). */
function trailingCommas(record: readonly string[]): { readonly commas: number } {
  let last = record.length - 1;
  while (last >= 0 && record[last] === '') last--;
  const commas = last < 0 ? record.length - 1 : record.length - 1 - last;
  return (COMMAS[commas] ??= { commas });
}

/**
 * `text.slice(start, end)`, without keeping `text` alive. V8 makes a slice of 13 characters or
 * more a view into the whole text, so one kept field would keep a 47 MB file's text in memory;
 * a one-character head joined to the rest is a new string, which V8 copies into one piece (and
 * lets the text go) the first time it is read as a whole (decoding reads every field).
 */
function cut(text: string, start: number, end: number): string {
  return end - start < 13 ? text.slice(start, end) : text[start] + text.slice(start + 1, end);
}

/** The position of the first separator (comma, line feed, carriage return) from `from`, or the end. */
function separatorAt(text: string, from: number): number {
  let position = from;
  while (position < text.length) {
    const char = text.charCodeAt(position);
    if (char === COMMA || char === LF || char === CR) return position;
    position++;
  }
  return position;
}

export function formatCsv(records: readonly (readonly string[])[], style: CsvStyle): string {
  const lines = records.map((record) => record.map(quoteField).join(','));
  const body = lines.join(style.lineEnding) + (style.finalNewline && lines.length > 0 ? style.lineEnding : '');
  return (style.byteOrderMark ? '\uFEFF' : '') + body;
}

/** Quotes a field only when it holds a separator, a quote or a line break (RFC 4180, section 2). */
export function quoteField(field: string): string {
  return /[",\r\n]/.test(field) ? `"${field.replaceAll('"', '""')}"` : field;
}
