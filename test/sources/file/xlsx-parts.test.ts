// The pieces of the in-place .xlsx writer, case by case (the zip copy is in zip.test.ts): a
// DELETE's row shift moves ranges (`A5:B6` -> `A4:B5` with row 3 gone), and
// written text is escaped as the format wants (`_x0042_` -> `_x005F_x0042_`).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cellContent, columnIndex, columnName, escapeText } from '../../../server/sources/file/xlsx/cells.ts';
import { RowShift } from '../../../server/sources/file/xlsx/ranges.ts';
import { Styles } from '../../../server/sources/file/xlsx/styles.ts';
import { loadSheetJs } from '../../../server/sources/file/xlsx/sheetjs.ts';

// Decoding an .xlsx or .ods here, as the server does once it has opened one, needs SheetJS loaded.
await loadSheetJs();

test('a DELETE of rows 3 and 7 (of 10) moves ranges below them', async (t) => {
  // Rows 1..10 were read; rows 3 and 7 are gone, so 8 new slots stand in the rest.
  const shift = RowShift.of([1, 2, 4, 5, 6, 8, 9, 10].map((origin) => ({ origin })), 10);
  const cases: [string, string | null][] = [
    ['A1', 'A1'],
    ['A3', null],
    ['A5:B6', 'A4:B5'],
    ['A2:A4', 'A2:A3'],
    ['A3:A3', null],
    ['C7:D8', 'C6:D6'],
    ['$A$9', '$A$7'],
    ['A:A', 'A:A'],
    ['B2:B100', 'B2:B100'],
  ];
  for (const [ref, expected] of cases) await t.test(ref, () => assert.equal(shift.shiftRef(ref), expected));
  await t.test('merges and validations', () => {
    const xml = '<mergeCells count="2"><mergeCell ref="A3:B3"/><mergeCell ref="A8:B9"/></mergeCells><dataValidations count="1"><dataValidation type="whole" sqref="C3 C5"><formula1>0</formula1></dataValidation></dataValidations>';
    assert.equal(shift.shiftRanges(xml), '<mergeCells count="1"><mergeCell ref="A6:B7"/></mergeCells><dataValidations count="1"><dataValidation type="whole" sqref="C4"><formula1>0</formula1></dataValidation></dataValidations>');
  });
});

test('written text as .xlsx holds it', async (t) => {
  const cases: [string, string][] = [
    ['a&b<c>', 'a&amp;b&lt;c&gt;'],
    ['_x0042_', '_x005F_x0042_'],
    ['line\r\nbreak', 'line_x000D_\nbreak'],
    ['tab\tkept', 'tab\tkept'],
    ['bell\u0007', 'bell_x0007_'],
    ['👩‍💻', '👩‍💻'],
  ];
  for (const [text, expected] of cases) await t.test(JSON.stringify(text), () => assert.equal(escapeText(text), expected));
});

test('cell contents by value', async (t) => {
  const cases: [string, Parameters<typeof cellContent>, string | null][] = [
    ['number', ['42', 42, undefined, false], '<v>42</v>'],
    ['boolean', ['TRUE', true, undefined, false], ' t="b"|<v>1</v>'],
    ['text with spaces', [' a ', ' a ', undefined, false], ' t="inlineStr"|<is><t xml:space="preserve"> a </t></is>'],
    ['date', ['2024-03-01', { iso: '2024-03-01' }, undefined, false], '<v>45352</v>'],
    ['date before 1900', ['1899-12-31', { iso: '1899-12-31' }, undefined, false], ' t="inlineStr"|<is><t>1899-12-31</t></is>'],
    ['formula', ['', null, '=A2*2', false], '<f>A2*2</f>'],
    ['empty', ['', null, undefined, false], null],
  ];
  for (const [name, args, expected] of cases) {
    await t.test(name, () => {
      const content = cellContent(...args);
      assert.equal(content === null ? null : content.attributes === '' ? content.body : `${content.attributes}|${content.body}`, expected);
    });
  }
});

test('column names', () => {
  for (const [index, name] of [[0, 'A'], [25, 'Z'], [26, 'AA'], [701, 'ZZ'], [16383, 'XFD']] as const) {
    assert.equal(columnName(index), name);
    assert.equal(columnIndex(name), index);
  }
});

test('styles: a style like another for a new number format is appended once, old indexes kept', () => {
  const xml = '<styleSheet xmlns="x"><numFmts count="1"><numFmt numFmtId="164" formatCode="0.0"/></numFmts><cellXfs count="2"><xf numFmtId="0" fontId="0"/><xf numFmtId="164" fontId="1" applyNumberFormat="1"/></cellXfs></styleSheet>';
  const styles = new Styles(xml);
  assert.equal(styles.kindOf(1), 'number');
  assert.equal(styles.withKind(1, 'number', 'General'), 1, 'a number style fits a number');
  const dated = styles.withKind(1, 'date', 'yyyy\\-mm\\-dd');
  assert.equal(dated, 2);
  assert.equal(styles.withKind(1, 'date', 'yyyy\\-mm\\-dd'), 2, 'found again, not added twice');
  assert.equal(styles.kindOf(2), 'date');
  assert.equal(
    styles.changedXml,
    '<styleSheet xmlns="x"><numFmts count="2"><numFmt numFmtId="164" formatCode="0.0"/><numFmt numFmtId="165" formatCode="yyyy\\-mm\\-dd"/></numFmts><cellXfs count="3"><xf numFmtId="0" fontId="0"/><xf numFmtId="164" fontId="1" applyNumberFormat="1"/><xf numFmtId="165" fontId="1" applyNumberFormat="1"/></cellXfs></styleSheet>',
  );
});
