// RFC 4180 CSV without interpretation: `007,"a, b","say ""hi"""` parses to the fields exactly as
// written, and writing quotes only the fields that need it. The layout details a person might
// notice in a diff (line ending, byte order mark, final newline) are kept as the file had them.

export interface CsvStyle {
  readonly lineEnding: '\r\n' | '\n';
  readonly byteOrderMark: boolean;
  readonly finalNewline: boolean;
}

/** RFC 4180's own choice, used for a file that has no line ending to copy. */
export const DEFAULT_CSV_STYLE: CsvStyle = { lineEnding: '\r\n', byteOrderMark: false, finalNewline: true };

export interface ParsedCsv {
  readonly records: string[][];
  readonly style: CsvStyle;
}

export function parseCsv(input: string): ParsedCsv {
  const byteOrderMark = input.startsWith('\uFEFF');
  const text = byteOrderMark ? input.slice(1) : input;
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let position = 0;
  let firstLineEnding: CsvStyle['lineEnding'] | null = null;
  let endedWithNewline = false;
  while (position < text.length) {
    const char = text[position];
    endedWithNewline = false;
    if (char === '"' && field === '') {
      // A quoted field runs to the next lone quote; a doubled quote is one quote character.
      let end = position + 1;
      let quoted = '';
      for (;;) {
        const next = text.indexOf('"', end);
        if (next === -1) {
          quoted += text.slice(end);
          end = text.length;
          break;
        }
        quoted += text.slice(end, next);
        if (text[next + 1] === '"') {
          quoted += '"';
          end = next + 2;
        } else {
          end = next + 1;
          break;
        }
      }
      field += quoted;
      position = end;
      // Lenient about text between the closing quote and the separator: keep it rather than lose it.
      while (position < text.length && !isSeparator(text, position)) field += text[position++];
      continue;
    }
    if (char === ',') {
      record.push(field);
      field = '';
      position++;
      continue;
    }
    if (char === '\n' || char === '\r') {
      const ending = char === '\r' && text[position + 1] === '\n' ? '\r\n' : '\n';
      firstLineEnding ??= ending;
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      position += char === '\r' && text[position + 1] === '\n' ? 2 : 1;
      endedWithNewline = true;
      continue;
    }
    field += char;
    position++;
  }
  if (text.length > 0 && !endedWithNewline) {
    record.push(field);
    records.push(record);
  }
  const style: CsvStyle = {
    lineEnding: firstLineEnding ?? DEFAULT_CSV_STYLE.lineEnding,
    byteOrderMark,
    finalNewline: text.length === 0 ? DEFAULT_CSV_STYLE.finalNewline : endedWithNewline,
  };
  return { records, style };
}

function isSeparator(text: string, position: number): boolean {
  const char = text[position];
  return char === ',' || char === '\n' || char === '\r';
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
