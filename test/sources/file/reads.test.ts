// Workbooks as other programs write them, read exactly: rich text after a plain run, characters
// outside the BMP written as `&#128105;`, built-in date formats 14 and 22, durations, encrypted
// files and .xlsm. The packages are written as XML by hand (test/helpers/xlsx-xml.ts), so each test
// pins exactly the bytes another program would have written.
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import * as XLSX from '@e965/xlsx';
import type { SheetRow, TypedValue } from '../../../lib/workbook.ts';
import { decodeWorkbook } from '../../../server/sources/file/codec.ts';
import { formatOfPath } from '../../../server/sources/file/format.ts';
import { daysToDuration, formatIsDuration } from '../../../server/sources/file/dates.ts';
import { openFileSource } from '../../../server/sources/file/mod.ts';
import { recordingLog, tempFolder } from '../../helpers/file-source.ts';
import { appendPlan, planned } from '../../helpers/source-contract.ts';
import { partsOf, VBA_BYTES, xlsxOf, zipOf, type XmlWorkbook } from '../../helpers/xlsx-xml.ts';
import { loadSheetJs } from '../../../server/sources/file/xlsx/sheetjs.ts';

// Decoding an .xlsx or .ods here, as the server does once it has opened one, needs SheetJS loaded.
await loadSheetJs();

/** The first tab's rows of a hand-written package. */
function rowsOf(book: XmlWorkbook): readonly SheetRow[] {
  return decodeWorkbook(xlsxOf(book), 'xlsx', 'unused').workbook.tabs[0].rows;
}

/** One shared string, in cell A1, read back as [text, value]. */
function sharedString(si: string): [string, TypedValue] {
  const [row] = rowsOf({ sheets: [{ name: 'S', rows: '<row r="1"><c r="A1" t="s"><v>0</v></c></row>' }], sharedStrings: [si] });
  return [row.text[0], row.value[0]];
}

test('xlsx: a shared string reads whole, whatever mix of plain text and rich text runs it holds', async (t) => {
  const cases: [string, string][] = [
    ['<t xml:space="preserve">ARREST BOOKINGS for </t><r><rPr><b/></rPr><t>01/30/17</t></r>', 'ARREST BOOKINGS for 01/30/17'],
    ['<t>a</t><r><t>b</t></r><r><rPr><i/></rPr><t xml:space="preserve"> c</t></r>', 'ab c'],
    ['<r><t>only </t></r><r><t>runs</t></r>', 'only runs'],
    ['<t>plain</t>', 'plain'],
    // A phonetic run (furigana) is not part of the text.
    ['<t>東京</t><rPh sb="0" eb="2"><t>トウキョウ</t></rPh><phoneticPr fontId="1"/>', '東京'],
    ['<t>first &amp; </t><r><t>&lt;second&gt;</t></r>', 'first & <second>'],
  ];
  for (const [si, expected] of cases) {
    await t.test(si, () => assert.deepEqual(sharedString(si), [expected, expected]));
  }
  await t.test('inline strings too', () => {
    const [row] = rowsOf({
      sheets: [{ name: 'S', rows: '<row r="1"><c r="A1" t="inlineStr"><is><t>plain </t><r><rPr><b/></rPr><t>bold</t></r></is></c><c r="B1" t="inlineStr"><is><r><t>a</t></r><r><t>b</t></r></is></c></row>' }],
    });
    assert.deepEqual(row.value, ['plain bold', 'ab']);
  });
});

test('xlsx: characters outside the BMP written as character references read as themselves', async (t) => {
  const cases: [string, string][] = [
    ['<t>&#128105;&#8205;&#128187;</t>', '👩‍💻'],
    ['<t>&#x1F469;&#x200D;&#x1F4BB; dev</t>', '👩‍💻 dev'],
    ['<t>&#X1f600;</t>', '😀'],
    ['<t>&#233;t&#xE9; &#65535;</t>', 'été \uffff'],
    ['<r><t>&#128512;</t></r><r><t>x</t></r>', '😀x'],
    // Escaped references are text, not references.
    ['<t>&amp;#128105;</t>', '&#128105;'],
  ];
  for (const [si, expected] of cases) {
    await t.test(si, () => assert.deepEqual(sharedString(si), [expected, expected]));
  }
  await t.test('inline string and sheet name', () => {
    const decoded = decodeWorkbook(xlsxOf({ sheets: [{ name: 'Team &#128101;', rows: '<row r="1"><c r="A1" t="inlineStr"><is><t>&#128105;</t></is></c></row>' }] }), 'xlsx', 'unused');
    assert.equal(decoded.workbook.tabs[0].name, 'Team 👥');
    assert.deepEqual(decoded.workbook.tabs[0].rows[0].value, ['👩']);
  });
});

test('xlsx: astral characters survive a write that rewrites the tab', async () => {
  const folder = await tempFolder();
  try {
    const path = join(folder.dir, 'emoji.xlsx');
    const sheet = '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row><row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2" t="s"><v>3</v></c></row>';
    await writeFile(path, xlsxOf({ sheets: [{ name: 'People', rows: sheet }], sharedStrings: ['<t>Name</t>', '<t>Role</t>', '<t>&#128105;&#8205;&#128187;</t>', '<t>dev &#x1F680;</t>'] }));
    const sharedBefore = partsOf(await readFile(path)).get('xl/sharedStrings.xml');
    const source = await openFileSource({ path, log: recordingLog().log });
    await source.write((workbook) => planned(workbook, appendPlan(workbook, [{ text: ['Bob 🧑‍🚀', 'ops'], value: ['Bob 🧑‍🚀', 'ops'] }]), null));
    await source.close();
    const again = await openFileSource({ path, log: recordingLog().log });
    const rows = (await again.read()).tabs[0].rows;
    await again.close();
    assert.deepEqual(rows.map((row) => row.value), [['Name', 'Role'], ['👩‍💻', 'dev 🚀'], ['Bob 🧑‍🚀', 'ops']]);
    // The fold edits the sheet in place: the shared strings, references and all, stay as they were.
    assert.deepEqual(partsOf(await readFile(path)).get('xl/sharedStrings.xml'), sharedBefore);
  } finally {
    await folder.cleanup();
  }
});

test('xlsx: built-in date formats 14 and 22 show four-digit years, as Excel (en-US) and LibreOffice do', async (t) => {
  const cells = '<row r="1"><c r="A1" s="1"><v>42663</v></c><c r="B1" s="2"><v>42663.5</v></c><c r="C1" s="3"><v>42663</v></c></row>';
  const cases: [string, XmlWorkbook, string[], TypedValue[]][] = [
    [
      'ids 14 and 22, and a custom m/d/yy that asks for two digits',
      { sheets: [{ name: 'S', rows: cells }], cellFormats: [0, 14, 22, 164], numFmts: '<numFmt numFmtId="164" formatCode="m/d/yy"/>' },
      ['10/20/2016', '10/20/2016 12:00', '10/20/16'],
      [{ iso: '2016-10-20' }, { iso: '2016-10-20T12:00:00' }, { iso: '2016-10-20' }],
    ],
    [
      'a file that declares format 14 itself keeps its own',
      { sheets: [{ name: 'S', rows: cells }], cellFormats: [0, 14, 22, 14], numFmts: '<numFmt numFmtId="14" formatCode="dd/mm/yyyy"/>' },
      ['20/10/2016', '10/20/2016 12:00', '20/10/2016'],
      [{ iso: '2016-10-20' }, { iso: '2016-10-20T12:00:00' }, { iso: '2016-10-20' }],
    ],
  ];
  for (const [name, book, text, value] of cases) {
    await t.test(name, () => {
      const [row] = rowsOf(book);
      assert.deepEqual(row.text, text);
      assert.deepEqual(row.value, value);
    });
  }
});

test('xlsx: elapsed-time formats read as ISO 8601 durations, shown as the format shows them', async (t) => {
  const cases: [string, number, string, string][] = [
    ['[h]:mm:ss', 10.632060185185185, '255:10:10', 'PT255H10M10S'],
    ['[h]:mm', 0.3958333333333333, '9:30', 'PT9H30M'],
    ['[mm]:ss', 0.0625, '90:00', 'PT1H30M'],
    ['[ss]', 0.000011574074074074073, '01', 'PT1S'],
    ['[h]:mm:ss.0', 0.5000057870370371, '12:00:00.5', 'PT12H0.5S'],
    ['[h]:mm:ss', 0, '0:00:00', 'PT0S'],
    ['[Red][h]:mm', 1.5, '36:00', 'PT36H'],
  ];
  for (const [format, days, shown, duration] of cases) {
    await t.test(`${format} ${days}`, () => {
      const [row] = rowsOf({
        sheets: [{ name: 'S', rows: `<row r="1"><c r="A1" s="1"><v>${days}</v></c></row>` }],
        cellFormats: [0, 164],
        numFmts: `<numFmt numFmtId="164" formatCode="${format}"/>`,
      });
      assert.deepEqual([row.text[0], row.value[0]], [shown, duration]);
    });
  }
  await t.test('built-in format 46 ([h]:mm:ss)', () => {
    const [row] = rowsOf({ sheets: [{ name: 'S', rows: '<row r="1"><c r="A1" s="1"><v>1.25</v></c></row>' }], cellFormats: [0, 46] });
    assert.deepEqual([row.text[0], row.value[0]], ['30:00:00', 'PT30H']);
  });
});

test('durations: which formats are elapsed time, and the ISO 8601 form', async (t) => {
  const formats: [string, boolean][] = [
    ['[h]:mm:ss', true],
    ['[HH]:MM', true],
    ['[m]:ss', true],
    ['[s].00', true],
    ['hh:mm:ss', false],
    ['yyyy-mm-dd', false],
    ['d "days" [h]:mm', false],
    ['"[h]"0', false],
    ['[Red]0.00', false],
    ['[$-409]h:mm AM/PM', false],
  ];
  for (const [format, duration] of formats) await t.test(format, () => assert.equal(formatIsDuration(format), duration));
  const values: [number, string][] = [
    [10.632060185185185, 'PT255H10M10S'],
    [-1 / 24, '-PT1H'],
    [1 / 86_400_000, 'PT0.001S'],
    [1 / 86_400_000 / 10, 'PT0S'],
    [2, 'PT48H'],
  ];
  for (const [days, iso] of values) await t.test(`${days} days`, () => assert.equal(daysToDuration(days), iso));
});

/** An OLE compound file holding the given streams, as Excel writes an encrypted workbook or a legacy .xls. */
function oleFile(streams: readonly string[]): Uint8Array {
  const container = XLSX.CFB.utils.cfb_new();
  for (const name of streams) XLSX.CFB.utils.cfb_add(container, name, new Uint8Array(64).fill(7));
  return new Uint8Array(XLSX.CFB.write(container, { fileType: 'cfb', type: 'array' }) as ArrayBuffer);
}

test('a password-protected (encrypted) workbook stops the start with a message saying so', async (t) => {
  const encryptedOds = zipOf({
    mimetype: 'application/vnd.oasis.opendocument.spreadsheet',
    'META-INF/manifest.xml':
      '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"><manifest:encryption-data manifest:checksum-type="SHA1/1K"/></manifest:file-entry></manifest:manifest>',
    'content.xml': new Uint8Array([1, 2, 3, 4, 5]),
  });
  const cases: [string, Uint8Array, RegExp][] = [
    ['book.xlsx', oleFile(['EncryptionInfo', 'EncryptedPackage']), /encrypted with a password; sheetrest cannot read encrypted workbooks/],
    ['book.xlsm', oleFile(['EncryptionInfo', 'EncryptedPackage']), /encrypted/],
    ['book.ods', encryptedOds, /encrypted/],
    ['legacy.xlsx', oleFile(['Workbook']), /OLE compound file \(such as a legacy \.xls workbook\)/],
    ['text.xlsx', new TextEncoder().encode('Name,Age\nAnn,30\n'), /not a zip-packaged \.xlsx workbook/],
  ];
  const folder = await tempFolder();
  try {
    for (const [name, bytes, message] of cases) {
      await t.test(name, async () => {
        const path = join(folder.dir, name);
        await writeFile(path, bytes);
        await assert.rejects(openFileSource({ path, log: recordingLog().log }), (error: Error) => {
          assert.match(error.message, message);
          assert.ok(error.message.startsWith(path), error.message);
          return true;
        });
      });
    }
  } finally {
    await folder.cleanup();
  }
});

test('.xlsm is served as .xlsx; a write keeps its macros and its macro-enabled type', async () => {
  assert.equal(formatOfPath('Report.XLSM'), 'xlsx');
  assert.equal(formatOfPath('report.xls'), null);
  const folder = await tempFolder();
  try {
    const path = join(folder.dir, 'macros.xlsm');
    const sheet = '<row r="1"><c r="A1" t="s"><v>0</v></c></row><row r="2"><c r="A2" t="s"><v>1</v></c></row>';
    await writeFile(path, xlsxOf({ sheets: [{ name: 'Data', rows: sheet }], sharedStrings: ['<t>Name</t>', '<t>Ann</t>'], macros: true }));
    const source = await openFileSource({ path, log: recordingLog().log });
    assert.deepEqual((await source.read()).tabs[0].rows.map((row) => row.value), [['Name'], ['Ann']]);
    await source.write((workbook) => planned(workbook, appendPlan(workbook, [{ text: ['Bob'], value: ['Bob'] }]), null));
    await source.close();
    const parts = partsOf(await readFile(path));
    assert.deepEqual(parts.get('xl/vbaProject.bin'), VBA_BYTES, 'the VBA project is kept byte for byte');
    assert.match(new TextDecoder().decode(parts.get('[Content_Types].xml')), /application\/vnd\.ms-excel\.sheet\.macroEnabled\.main\+xml/);
    const again = await openFileSource({ path, log: recordingLog().log });
    assert.deepEqual((await again.read()).tabs[0].rows.map((row) => row.value), [['Name'], ['Ann'], ['Bob']]);
    await again.close();
  } finally {
    await folder.cleanup();
  }
});
