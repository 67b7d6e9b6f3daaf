// parseCsv reads fields as slices of the text (fast enough for a 1M-row file); it must read any
// input exactly as the character-at-a-time parser it replaced did, quirks included (text after
// a closing quote kept, a quote inside an unquoted field literal, a lone `\r` a line end).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseCsv, type ParsedCsv } from '../../../server/sources/file/csv/csv.ts';

/** The parser before issue 8, as it was (records and style). */
function referenceParse(input: string): Omit<ParsedCsv, 'sources'> {
  const byteOrderMark = input.startsWith('\uFEFF');
  const text = byteOrderMark ? input.slice(1) : input;
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let position = 0;
  let firstLineEnding: '\r\n' | '\n' | null = null;
  let endedWithNewline = false;
  const isSeparator = (at: number) => text[at] === ',' || text[at] === '\n' || text[at] === '\r';
  while (position < text.length) {
    const char = text[position];
    endedWithNewline = false;
    if (char === '"' && field === '') {
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
      while (position < text.length && !isSeparator(position)) field += text[position++];
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
      position += ending.length;
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
  return {
    records,
    style: { lineEnding: firstLineEnding ?? '\r\n', byteOrderMark, finalNewline: text.length === 0 ? true : endedWithNewline },
  };
}

function recordsAndStyle(text: string): Omit<ParsedCsv, 'sources'> {
  const { records, style } = parseCsv(text);
  return { records, style };
}

const piece = fc.constantFrom('a', 'bc', ',', '"', '""', '\r', '\n', '\r\n', ' ', 'é', '𝒜', '\uFEFF');
const input = fc.array(piece, { maxLength: 24 }).map((pieces) => pieces.join(''));

test('parseCsv reads every input as the parser it replaced', () => {
  fc.assert(
    fc.property(input, (text) => {
      assert.deepEqual(recordsAndStyle(text), referenceParse(text));
    }),
    { numRuns: 2000 },
  );
});

test('cases', async (t) => {
  for (const text of ['', '"', '"a"b,c', 'a"b",c\r\n', '"a\r\nb"\r', ',\n,', '\uFEFF"x""",']) {
    await t.test(JSON.stringify(text), () => assert.deepEqual(recordsAndStyle(text), referenceParse(text)));
  }
});
