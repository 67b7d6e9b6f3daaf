// Number formats shown as Excel shows them where SheetJS's SSF differs (number-format.ts): each
// case is a cell value, its format code, the text Excel shows and where that text comes from.
// The workbooks are written as XML by hand (test/helpers/xlsx-xml.ts), one cell each.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as XLSX from '@e965/xlsx';
import type { TypedValue } from '../../../lib/workbook.ts';
import { decodeWorkbook } from '../../../server/sources/file/codec.ts';
import { formatNumber, splitSections } from '../../../server/sources/file/xlsx/number-format.ts';
import { loadSheetJs } from '../../../server/sources/file/xlsx/sheetjs.ts';
import { xlsxOf } from '../../helpers/xlsx-xml.ts';

await loadSheetJs();

function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Cell A1 of a workbook holding `value` in the custom format `format` (or a built-in format id), read back as [text, value]. */
function readBack(format: string | number, value: number): [string, TypedValue] {
  const custom = typeof format === 'string';
  const [row] = decodeWorkbook(
    xlsxOf({
      sheets: [{ name: 'S', rows: `<row r="1"><c r="A1" s="1"><v>${value}</v></c></row>` }],
      cellFormats: [0, custom ? 164 : format],
      ...(custom ? { numFmts: `<numFmt numFmtId="164" formatCode="${escapeAttribute(format)}"/>` } : {}),
    }),
    'xlsx',
    'unused',
  ).workbook.tabs[0].rows;
  return [row.text[0], row.value[0]];
}

type Case = [format: string | number, value: number, shown: string, source: string];

function run(cases: readonly Case[]) {
  return async (t: { test(name: string, fn: () => void): Promise<void> }) => {
    for (const [format, value, shown, source] of cases) {
      await t.test(`${format} of ${value} -> ${JSON.stringify(shown)} (${source})`, () => assert.equal(readBack(format, value)[0], shown));
    }
  };
}

const ISSUE = 'issue 24, Excel';
const SSF_ODDITIES = "SSF's test of Excel's behaviour";
const MS_DOCS = 'Microsoft, Number format codes';
const ERAS = 'Excel via Aspose and SpreadJS era docs';

test('part 6: a negative duration shows a minus sign before its elapsed time, not ""', run([
  ['[HH]', -1.2, '-28', ISSUE],
  ['[h]:mm', -1.2, '-28:48', ISSUE],
  ['[mm]:ss', -1.2, '-1728:00', ISSUE],
  ['[ss]', -1.2, '-103680', ISSUE],
  ['[h]:mm:ss', -0.5, '-12:00:00', ISSUE],
  // A negative section says itself how a negative shows.
  ['[h]:mm;[Red]-[h]:mm', -1.2, '-28:48', MS_DOCS],
  ['[h]:mm;([h]:mm)', -1.2, '(28:48)', MS_DOCS],
  // Positive durations as before.
  ['[HH]', 1.2, '28', ISSUE],
  ['[h]:mm:ss', 1.2, '28:48:00', ISSUE],
]));

test('part 6: a negative duration keeps its value', () => {
  assert.deepEqual(readBack('[HH]', -1.2), ['-28', '-PT28H48M']);
});

const PHONE = '[<=9999999]###\\-####;(###) ###\\-####';

test('part 7: a conditional section keeps the minus sign, unless its condition lets only negatives in', run([
  [PHONE, -12345.67891, '-1-2346', ISSUE],
  [PHONE, -1.2, '--1', ISSUE],
  [PHONE, 8675309, '867-5309', SSF_ODDITIES],
  [PHONE, 2813308004, '(281) 330-8004', SSF_ODDITIES],
  ['[Red][<-25]General;[Blue][>25]General;[Green]General;[Yellow]General', -26, '26', SSF_ODDITIES],
  ['[Red][<-25]General;[Blue][>25]General;[Green]General;[Yellow]General', -50.1, '50.1', SSF_ODDITIES],
  ['[Red][<-25]General;[Blue][>25]General;[Green]General;[Yellow]General', -1, '-1', SSF_ODDITIES],
  ['[Red][<-25]General;[Blue][>25]General;[Green]General;[Yellow]General', 26, '26', SSF_ODDITIES],
  ['[Red][<=-25]General;[Blue][>=25]General;[Green]General;[Yellow]General', -25, '25', SSF_ODDITIES],
  ['[<0](0);0', -5, '(5)', 'the rule above'],
  ['[>=100]0;[<=-100](0);0', -150, '(150)', 'the rule above'],
  ['[>=100]0;[<=-100](0);0', -50, '-50', 'the rule above'],
]));

test('part 8: `_)` leaves a space as wide as `)`, in built-in formats 37 to 40 too', run([
  ['#,##0.00_);(#,##0.00)', 1234567.89, '1,234,567.89 ', ISSUE],
  ['#,##0.00_);(#,##0.00)', -1234567.89, '(1,234,567.89)', ISSUE],
  // openpyxl's BUILTIN_FORMATS, as Excel (en-US) shows ids 37-40.
  [37, 1234567.89, '1,234,568 ', ISSUE],
  [38, -1234567.89, '(1,234,568)', ISSUE],
  [39, 1234567.89, '1,234,567.89 ', ISSUE],
  [39, -1234567.89, '(1,234,567.89)', ISSUE],
  [40, 0, '0.00 ', ISSUE],
  [43, 1234567.89, ' 1,234,567.89 ', MS_DOCS],
]));

test('part 9: engineering notation rounds half away from zero on the decimal value', run([
  ['##0.0E+0', 123.45, '123.5E+0', ISSUE],
  ['##0.0E+0', -123.45, '-123.5E+0', ISSUE],
  ['##0.0E+0', 1234.5, '1.2E+3', MS_DOCS],
  ['##0.0E+0', 0.012345, '12.3E-3', MS_DOCS],
  ['##0.0E+0', 999.96, '1.0E+3', 'a carry moves the exponent'],
  ['##0.0E+0', 0, '0.0E+0', MS_DOCS],
  ['##0.00E+00', 123456, '123.46E+03', MS_DOCS],
  // Plain scientific notation, as SSF showed it.
  ['0.0E+0', 123.45, '1.2E+2', MS_DOCS],
  ['0.00E+00', 12345, '1.23E+04', MS_DOCS],
]));

test('part 10: Japanese eras and the system date and time formats', run([
  ['[$-411]ggge"年"m"月"d"日"', 44197, '令和3年1月1日', 'issue 24, LibreOffice'],
  ['[$-411]ggge"年"m"月"d"日"', 43585, '平成31年4月30日', ERAS],
  ['[$-411]ge.m.d', 43585, 'H31.4.30', ERAS],
  ['[$-411]ge.m.d', 43586, 'R1.5.1', ERAS],
  ['[$-411]gge"年"', 32516, '平1年', ERAS],
  ['[$-411]ggge"年"', 32515, '昭和64年', ERAS],
  ['[$-411]ggg ee"年"', 4750, '大正 02年', ERAS],
  ['[$-411]ggge"年"', 1, '明治33年', ERAS],
  ['[$-ja-JP-x-gannen]ggge"年"m"月"d"日"', 43800, '令和元年12月1日', ERAS],
  ['[$-F800]dddd\\,\\ mmmm\\ dd\\,\\ yyyy', 123, 'Wednesday, May 2, 1900', ISSUE],
  ['[$-F800]mmm\\ dd', 123, 'Wednesday, May 2, 1900', ISSUE],
  ['[$-x-sysdate]dddd, mmmm dd, yyyy', 44197, 'Friday, January 1, 2021', ISSUE],
  ['[$-F400]h:mm:ss\\ AM/PM', 0.5625, '1:30:00 PM', ISSUE],
  ['[$-x-systime]h:mm:ss AM/PM', 0.25, '6:00:00 AM', ISSUE],
]));

test('part 10: a system date or time reads as a date or a time', () => {
  assert.deepEqual(readBack('[$-F800]mmm\\ dd', 123), ['Wednesday, May 2, 1900', { iso: '1900-05-02' }]);
  assert.deepEqual(readBack('[$-F400]h:mm:ss\\ AM/PM', 0.5625), ['1:30:00 PM', { iso: '13:30:00' }]);
});

test('a format split into sections at `;`, except quoted, escaped or in brackets', () => {
  assert.deepEqual(splitSections('0;"a;b"\\;0;[<=1;]0'), ['0', '"a;b"\\;0', '[<=1;]0']);
});

test('every format SSF already showed as Excel does shows the same', () => {
  const formats = [
    'General', '0', '0.00', '#,##0', '#,##0.00', '#,##0.00_);(#,##0.00)', '$#,##0.00_);[Red]($#,##0.00)', '0%', '0.00%', '0.00E+00', '# ?/?', '# ??/??',
    'yyyy-mm-dd', 'm/d/yyyy h:mm', 'hh:mm:ss', 'h:mm AM/PM', 'dddd, mmmm d, yyyy', '[$-409]mmmm d, yyyy', '[$¥-411]#,##0', '[Red]0.00', '0.00;[Red]-0.00;"zero"', '@',
    '[h]:mm:ss', '[mm]:ss', '_(* #,##0.00_);_(* \\(#,##0.00\\);_(* "-"??_);_(@_)', '"$"#,##0.00', '0.0,,"M"',
  ];
  const values = [0, 1, -1, 0.5, 1.2, 123.45, -1234567.89, 44197.5625, 0.015, 1e-7, 98765432.1];
  for (const format of formats) {
    for (const value of values) {
      // Elapsed times below zero are part 6's: SSF showed them as "".
      if (value < 0 && format.startsWith('[') && /\[(?:h|m|s)+\]/.test(format)) continue;
      assert.equal(formatNumber(format, value), XLSX.SSF.format(format, value), `${format} of ${value}`);
    }
  }
});
