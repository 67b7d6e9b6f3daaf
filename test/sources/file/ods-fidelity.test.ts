// Writes into an .ods change only the cells they write: after a POST, a PATCH and a DELETE folded
// into a LibreOffice-shaped file, every zip part but content.xml is byte-identical, mimetype is
// first and stored, untouched cells keep their XML, and odfpy reads everything else unchanged.
// Also: what the reader keeps (spaces, `\r`, fractional seconds, covered cells), and a hostile
// file with huge declared repeats refused at start and never taking a running server down.
import assert from 'node:assert/strict';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { pythonJson } from '../../helpers/python.ts';
import { isApiError } from '../../../lib/errors.ts';
import type { SheetRow, Workbook } from '../../../lib/workbook.ts';
import { openFileSource, type FileFormat } from '../../../server/sources/file/mod.ts';
import { decodeWorkbook } from '../../../server/sources/file/codec.ts';
import { isoOfDateValue, isoOfTimeValue } from '../../../server/sources/file/ods/cell-read.ts';
import { odfFormula, paragraphs } from '../../../server/sources/file/ods/cell-write.ts';
import { readZip, unpackEntry } from '../../../server/sources/file/zip.ts';
import { recordingLog, tempFolder, writeFixture } from '../../helpers/file-source.ts';
import { PEOPLE_CELLS as C, hostileOds, odsPackage, thirdPartyOds } from '../../helpers/make-ods-fixtures.ts';
import { CONTRACT_FIXTURE, appendPlan, planned, removePlan, replacePlan } from '../../helpers/source-contract.ts';
import { loadSheetJs } from '../../../server/sources/file/xlsx/sheetjs.ts';

// Decoding an .xlsx or .ods here, as the server does once it has opened one, needs SheetJS loaded.
await loadSheetJs();

function parts(bytes: Uint8Array): { names: string[]; methods: number[]; raw: Map<string, Uint8Array>; content: string } {
  const entries = readZip(bytes);
  const raw = new Map(entries.map((entry) => [entry.name, Uint8Array.from(unpackEntry(entry, 1 << 28))]));
  return { names: entries.map((entry) => entry.name), methods: entries.map((entry) => entry.method), raw, content: new TextDecoder().decode(raw.get('content.xml')) };
}

function tableXml(content: string, name: string): string {
  const start = content.indexOf(`<table:table table:name="${name}"`);
  return content.slice(start, content.indexOf('</table:table>', start));
}

const people = (workbook: Workbook) => workbook.tabs[0].rows;

/** The checks every fold must pass, whatever it wrote. */
function assertOnlyContentChanged(original: ReturnType<typeof parts>, now: ReturnType<typeof parts>): void {
  assert.equal(now.names[0], 'mimetype', 'mimetype is the first entry');
  assert.equal(now.methods[0], 0, 'mimetype is stored');
  assert.deepEqual(now.names.toSorted(), original.names.toSorted(), 'the same parts');
  for (const [name, bytes] of original.raw) {
    if (name !== 'content.xml') assert.deepEqual(now.raw.get(name), bytes, `${name} is byte-identical`);
  }
  assert.equal(tableXml(now.content, 'Untouched'), tableXml(original.content, 'Untouched'), 'the untouched table keeps its XML');
  assert.equal(now.content.slice(0, now.content.indexOf('<table:table ')), original.content.slice(0, original.content.indexOf('<table:table ')), 'styles before the tables kept');
}

/** Total rows the People table declares (LibreOffice's grid is 1,048,576). */
function declaredRows(content: string): number {
  return [...tableXml(content, 'People').matchAll(/<table:table-row\b([^>]*)>/g)].reduce((sum, match) => sum + Number(/number-rows-repeated="(\d+)"/.exec(match[1])?.[1] ?? 1), 0);
}

test('ods: reading keeps what the file holds', async (t) => {
  const folder = await tempFolder();
  try {
    const path = join(folder.dir, 'book.ods');
    await writeFile(path, thirdPartyOds());
    const source = await openFileSource({ path, log: recordingLog().log });
    const rows = people(await source.read());
    await source.close();
    const cases: [string, SheetRow | undefined, number, string, unknown][] = [
      ['a number keeps its shown text', rows[1], 1, '1.5', 1.5],
      ['a boolean stays a boolean', rows[1], 2, 'FALSE', false],
      ['a date keeps its fractional seconds', rows[1], 3, '2024-03-01 09:30:00.123', { iso: '2024-03-01T09:30:00.123' }],
      ['a percentage', rows[1], 4, '12.50%', 0.125],
      ['currency', rows[1], 5, '$1,234.50', 1234.5],
      ['a trailing space (text:s)', rows[1], 6, 'two words ', 'two words '],
      ['a merged cell', rows[1], 7, 'merged', 'merged'],
      ['a covered cell holding text', rows[1], 8, 'hidden by the merge', 'hidden by the merge'],
      ['paragraphs, a tab, a carriage return and a line break', rows[2], 6, 'line one\ntab\tand\rreturn\nend', 'line one\ntab\tand\rreturn\nend'],
      ['a repeated row', rows[4], 0, 'Same', 'Same'],
      ['a date-time before 1900', rows[5], 3, '1899-12-30 00:00:00.500', { iso: '1899-12-30T00:00:00.5' }],
    ];
    for (const [name, row, column, text, value] of cases) {
      await t.test(name, () => {
        assert.equal(row?.text[column], text);
        assert.deepEqual(row?.value[column], value);
      });
    }
    await t.test('trailing empty rows are not rows', () => assert.equal(rows.length, 6));
  } finally {
    await folder.cleanup();
  }
});

test('ods: a POST, a PATCH and a DELETE change only content.xml, and there only what they write', async (t) => {
  const folder = await tempFolder();
  try {
    const path = join(folder.dir, 'book.ods');
    const originalBytes = thirdPartyOds();
    await writeFile(path, originalBytes);
    const original = parts(originalBytes);
    const before = odfpyRead(path);
    const step = async (write: (workbook: Workbook) => ReturnType<typeof planned>) => {
      const source = await openFileSource({ path, log: recordingLog().log });
      await source.write(write);
      await source.close();
      return parts(await readFile(path));
    };

    const dee: SheetRow = { text: ['Dee', '2.25', 'TRUE', '2024-05-06 07:08:09.5', '', '', 'new  text '], value: ['Dee', 2.25, true, { iso: '2024-05-06T07:08:09.5' }, null, null, 'new  text '] };
    const gus: SheetRow = { text: ['Gus', '', '', '7'], value: ['Gus', null, null, 7] };
    const posted = await step((workbook) => planned(workbook, appendPlan(workbook, [dee, gus]), null));
    await t.test('POST', () => {
      assertOnlyContentChanged(original, posted);
      for (const run of Object.values(C)) assert.ok(posted.content.includes(run), `kept ${run.slice(0, 60)}`);
      const row = /<table:table-row[^>]*><table:table-cell office:value-type="string"><text:p>Dee<\/text:p>.*?<\/table:table-row>/.exec(posted.content)?.[0] ?? '';
      assert.match(row, /^<table:table-row table:style-name="ro1">/, 'the row above lends its height, not its visibility');
      assert.match(row, /<table:table-cell table:style-name="ce2" office:value-type="float" office:value="2.25">/, 'the number takes the style of the cell above');
      assert.match(row, /table:style-name="ce3" office:value-type="date" office:date-value="2024-05-06T07:08:09.5"/, 'a date is a date value');
      assert.match(row, /<text:p>new <text:s\/>text<text:s\/><\/text:p>/, 'spaces ODF would fold are kept');
      assert.equal(declaredRows(posted.content), 1_048_576, 'the padding rows shrink so the grid does not grow');
      assert.match(posted.content, /<text:p>Gus<\/text:p><\/table:table-cell>(<table:table-cell[^>]*\/>){2}<table:table-cell office:value-type="float" office:value="7">/, 'a date style is not lent to a number');
    });
    await t.test('POST: read back typed', async () => {
      const source = await openFileSource({ path, log: recordingLog().log });
      const rows = people(await source.read());
      await source.close();
      assert.deepEqual(rows[6].value.slice(0, 4), dee.value.slice(0, 4));
      assert.deepEqual(rows[6].text[6], 'new  text ');
      assert.deepEqual(rows[7].value, gus.value);
    });

    const patched = await step((workbook) => {
      const ann = people(workbook)[1];
      const next = { text: ['Ann', '3', ...ann.text.slice(2)], value: ['Ann', 3, ...ann.value.slice(2)] };
      return planned(workbook, replacePlan(workbook, 0, next, [1]), null);
    });
    await t.test('PATCH', () => {
      assertOnlyContentChanged(original, patched);
      const ann = /<table:table-row[^>]*><table:table-cell[^>]*><text:p>Ann<\/text:p>.*?<\/table:table-row>/.exec(patched.content)?.[0] ?? '';
      assert.match(ann, /<table:table-cell table:style-name="ce2" office:value-type="float" office:value="3"><text:p>3<\/text:p><\/table:table-cell>/, 'the written cell keeps its style');
      for (const cell of [C.paid, C.when, C.share, C.price, C.note, C.merged]) assert.ok(ann.includes(cell), `unwritten cell kept: ${cell.slice(0, 60)}`);
      assert.ok(ann.endsWith('<table:table-cell table:number-columns-repeated="1015"/></table:table-row>'), 'the padding cells kept');
    });

    const deleted = await step((workbook) => planned(workbook, removePlan(workbook, [1]), null));
    await t.test('DELETE', () => {
      assertOnlyContentChanged(original, deleted);
      assert.ok(!deleted.content.includes('line one'), 'Bob is gone');
      assert.ok(deleted.content.includes('table:visibility="collapse"') === false, 'the hidden row was Bob');
      assert.match(deleted.content, /table:number-rows-repeated="2"><table:table-cell office:value-type="string" calcext:value-type="string"><text:p>Same/, 'the repeated rows stay one element');
    });

    await t.test('odfpy reads everything else unchanged', (t) => {
      if (before === null) return t.skip(ODFPY_MISSING);
      const after = odfpyRead(path)!;
      assert.deepEqual(after.Untouched, before.Untouched);
      const [header, ann, , same1, same2, cy] = before.People;
      assert.deepEqual(after.People.slice(0, 5), [header, ann.map((cell, n) => (n === 1 ? ['float', '3', '3'] : cell)), same1, same2, cy]);
      assert.deepEqual(after.People[5].slice(0, 4), [['string', 'Dee', 'Dee'], ['float', '2.25', '2.25'], ['boolean', 'true', 'TRUE'], ['date', '2024-05-06T07:08:09.5', '2024-05-06 07:08:09.5']]);
    });
  } finally {
    await folder.cleanup();
  }
});

test('ods: folds in one run keep changing only what each write touched', async () => {
  const folder = await tempFolder();
  try {
    const path = join(folder.dir, 'book.ods');
    await writeFile(path, thirdPartyOds());
    const original = parts(thirdPartyOds());
    const source = await openFileSource({ path, log: recordingLog().log, foldAfterEntries: 1 });
    for (const name of ['Eve', 'Fay']) {
      const bytes = await readFile(path);
      await source.write((workbook) => planned(workbook, appendPlan(workbook, [{ text: [name], value: [name] }]), null));
      for (let tries = 0; tries < 500 && Buffer.compare(bytes, await readFile(path)) === 0; tries++) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await source.close();
    const now = parts(await readFile(path));
    assertOnlyContentChanged(original, now);
    for (const run of Object.values(C)) assert.ok(now.content.includes(run), `kept ${run.slice(0, 60)}`);
    assert.match(now.content, /<text:p>Eve<\/text:p><\/table:table-cell><\/table:table-row><table:table-row table:style-name="ro1"><table:table-cell office:value-type="string"><text:p>Fay</);
  } finally {
    await folder.cleanup();
  }
});

test('ods: a small file declaring billions of cells is refused at start with the reason', async () => {
  const folder = await tempFolder();
  try {
    const path = join(folder.dir, 'boom.ods');
    await writeFile(path, hostileOds());
    await assert.rejects(openFileSource({ path, log: recordingLog().log }), /boom\.ods: not a readable \.ods file \(the workbook declares more than 16,777,216 cells/);
  } finally {
    await folder.cleanup();
  }
});

test('ods: a hostile file copied over a served one leaves the last good version served', async () => {
  const folder = await tempFolder();
  try {
    const path = join(folder.dir, 'book.ods');
    await writeFile(path, thirdPartyOds());
    const { log, messages } = recordingLog();
    const source = await openFileSource({ path, log });
    await writeFile(`${path}.new`, hostileOds());
    await rename(`${path}.new`, path);
    assert.equal(people(await source.read({ fresh: true }))[1].text[0], 'Ann', 'the last good version is served');
    assert.ok(messages.some((message) => /changed but cannot be read \(the workbook declares more than/.test(message)), 'the log says why');
    await assert.rejects(source.write((workbook) => planned(workbook, appendPlan(workbook, [{ text: ['X'], value: ['X'] }]), null)), (error) => isApiError(error) && error.status === 503);
    await writeFile(`${path}.new`, thirdPartyOds().slice());
    await rename(`${path}.new`, path);
    await source.write((workbook) => planned(workbook, appendPlan(workbook, [{ text: ['Back'], value: ['Back'] }]), null));
    await source.close();
    assert.ok(parts(await readFile(path)).content.includes('<text:p>Back</text:p>'), 'writes work again once the file reads');
  } finally {
    await folder.cleanup();
  }
});

const ODFPY_MISSING = 'odfpy is not installed (apt-get install python3-odf)';

/** Each table's rows as odfpy sees them: [value-type, value, text] per cell, repeats expanded (the padding left out). */
function odfpyRead(path: string): Record<string, string[][][]> | null {
  const script = `
import json, sys
from odf.opendocument import load
from odf.table import Table, TableRow
from odf.namespaces import OFFICENS, TABLENS
import odf.teletype as teletype
out = {}
for table in load(sys.argv[1]).spreadsheet.getElementsByType(Table):
    rows = []
    for row in table.getElementsByType(TableRow):
        repeat = int(row.getAttrNS(TABLENS, 'number-rows-repeated') or 1)
        if repeat > 100: continue
        cells = []
        for cell in row.childNodes:
            if cell.qname[1] not in ('table-cell', 'covered-table-cell'): continue
            n = int(cell.getAttrNS(TABLENS, 'number-columns-repeated') or 1)
            if n > 100: continue
            kind = cell.getAttrNS(OFFICENS, 'value-type') or ''
            value = cell.getAttrNS(OFFICENS, {'date': 'date-value', 'boolean': 'boolean-value', 'time': 'time-value'}.get(kind, 'value')) or ''
            text = '\\n'.join(teletype.extractText(p) for p in cell.childNodes if p.qname[1] == 'p')
            cells += [[kind, value if kind != 'string' else text, text]] * n
        rows += [cells] * repeat
    out[table.getAttrNS(TABLENS, 'name')] = rows
print(json.dumps(out))
`;
  return pythonJson(script, [path]) as Record<string, string[][][]> | null;
}

test('ods: the committed fixtures are what test/helpers/make-ods-fixtures.ts makes', async (t) => {
  for (const [file, bytes] of [['third-party.ods', thirdPartyOds()], ['hostile-repeats.ods', hostileOds()]] as const) {
    await t.test(file, async () => {
      const committed = parts(await readFile(join(import.meta.dirname ?? 'test', '../../..', 'fixtures', 'ods', file)));
      assert.deepEqual(committed.raw, parts(bytes).raw);
    });
  }
});

test('ods: formulas written go in as OpenFormula', async (t) => {
  const cases: [string, string][] = [
    ['=A2*2', '[.A2]*2'],
    ['=SUM(A1:B2,$C$3)', 'SUM([.A1:.B2];[.$C$3])'],
    ["=Other!A1+'My tab'!B2", "[Other.A1]+['My tab'.B2]"],
    ['=LOG10(A1)', 'LOG10([.A1])'],
    ['=CONCAT("A1, B2",A1)', 'CONCAT("A1, B2";[.A1])'],
  ];
  for (const [formula, odf] of cases) await t.test(formula, () => assert.equal(odfFormula(formula), odf));
});

test('ods: text as paragraphs, with the white space ODF would fold written out', async (t) => {
  const cases: [string, string][] = [
    ['plain', '<text:p>plain</text:p>'],
    ['', '<text:p/>'],
    [' lead', '<text:p><text:s/>lead</text:p>'],
    ['trail  ', '<text:p>trail<text:s text:c="2"/></text:p>'],
    ['a   b', '<text:p>a <text:s text:c="2"/>b</text:p>'],
    ['a\tb', '<text:p>a<text:tab/>b</text:p>'],
    ['a\nb', '<text:p>a</text:p><text:p>b</text:p>'],
    ['a\rb & <c>', '<text:p>a&#13;b &amp; &lt;c&gt;</text:p>'],
    ['bell\u0007', '<text:p>bell_x0007_</text:p>'],
  ];
  for (const [text, xml] of cases) await t.test(JSON.stringify(text), () => assert.equal(paragraphs(text), xml));
});

test('ods: after each fold of a run of writes, the file reads back as the server serves it', async (t) => {
  const folder = await tempFolder();
  try {
    const path = join(folder.dir, 'book.ods');
    await writeFile(path, thirdPartyOds());
    const source = await openFileSource({ path, log: recordingLog().log, foldAfterEntries: 1 });
    const setAmount = (index: number, amount: number) => (workbook: Workbook) => {
      const old = people(workbook)[index + 1];
      const next = { text: [old.text[0], String(amount), ...old.text.slice(2)], value: [old.value[0], amount, ...old.value.slice(2)] };
      return planned(workbook, replacePlan(workbook, index, next, [1]), null);
    };
    const steps: [string, (workbook: Workbook) => ReturnType<typeof planned>][] = [
      ['PATCH the first of two repeated rows', setAmount(2, 7)],
      ['POST a row', (workbook) => planned(workbook, appendPlan(workbook, [{ text: ['Eve', '1'], value: ['Eve', 1] }]), null)],
      ['PATCH the second repeated row', setAmount(3, 8)],
      ['PATCH the posted row', setAmount(5, 9)],
      ['DELETE the hidden row and the row after the repeated ones', (workbook) => planned(workbook, removePlan(workbook, [1, 4]), null)],
      ['PATCH the row that was first', setAmount(0, 10)],
    ];
    for (const [name, write] of steps) {
      await t.test(name, async () => {
        const bytes = await readFile(path);
        await source.write(write);
        for (let tries = 0; tries < 500 && Buffer.compare(bytes, await readFile(path)) === 0; tries++) await new Promise((resolve) => setTimeout(resolve, 10));
        const served = people(await source.read()).map((row) => row.value.slice(0, 9));
        // Its own state folder: the file alone, no journal replayed.
        const again = await openFileSource({ path, readOnly: true, stateDir: join(folder.dir, 'fresh'), log: recordingLog().log });
        const read = people(await again.read()).map((row) => row.value.slice(0, 9));
        await again.close();
        assert.deepEqual(read, served);
      });
    }
    await source.close();
    const content = parts(await readFile(path)).content;
    for (const cell of [C.paid, C.when, C.share, C.price, C.note, C.merged]) assert.ok(content.includes(cell), `Ann's unwritten cell kept: ${cell.slice(0, 60)}`);
    const last = await openFileSource({ path, readOnly: true, stateDir: join(folder.dir, 'last'), log: recordingLog().log });
    assert.deepEqual(people(await last.read()).map((row) => [row.value[0], row.value[1]]), [['Name', 'Amount'], ['Ann', 10], ['Same', 7], ['Same', 8], ['Eve', 9]]);
    await last.close();
  } finally {
    await folder.cleanup();
  }
});

test('ods: a password-protected file is refused as encrypted', async () => {
  const folder = await tempFolder();
  try {
    const path = join(folder.dir, 'secret.ods');
    const manifest = '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml" manifest:size="1234"><manifest:encryption-data manifest:checksum-type="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0#sha256-1k" manifest:checksum="x"><manifest:algorithm manifest:algorithm-name="http://www.w3.org/2001/04/xmlenc#aes256-cbc" manifest:initialisation-vector="x"/></manifest:encryption-data></manifest:file-entry></manifest:manifest>';
    await writeFile(path, odsPackage('\u0000\u00ffnot xml', { 'META-INF/manifest.xml': manifest }));
    await assert.rejects(openFileSource({ path, log: recordingLog().log }), /secret\.ods: not a readable \.ods file \(the file is encrypted \(password-protected\)/);
  } finally {
    await folder.cleanup();
  }
});

test('any format: a changed file that cannot be read leaves the last good version served', async (t) => {
  const cases: [FileFormat, Uint8Array][] = [
    ['xlsx', new TextEncoder().encode('PK\u0003\u0004 cut short')],
    ['csv', Uint8Array.of(0x4e, 0x61, 0xff, 0xfe, 0x0a)],
    ['ods', thirdPartyOds().slice(0, 200)],
  ];
  for (const [format, broken] of cases) {
    await t.test(format, async () => {
      const folder = await tempFolder();
      try {
        const path = await writeFixture(folder.dir, CONTRACT_FIXTURE, format);
        const { log, messages } = recordingLog();
        const source = await openFileSource({ path, log });
        await writeFile(`${path}.new`, broken);
        await rename(`${path}.new`, path);
        assert.equal(people(await source.read({ fresh: true }))[1].text[0], 'Ann');
        assert.equal(messages.filter((message) => message.includes('cannot be read')).length, 1, 'said once');
        assert.equal(people(await source.read({ fresh: true }))[1].text[0], 'Ann');
        assert.equal(messages.filter((message) => message.includes('cannot be read')).length, 1, 'and not again for the same version');
        await source.close();
      } finally {
        await folder.cleanup();
      }
    });
  }
});

test('ods: date and time values as ISO text', async (t) => {
  const cases: [string, string | null][] = [
    ['2024-03-01', '2024-03-01'],
    ['2024-03-01T00:00:00', '2024-03-01'],
    ['2024-03-01T09:30:00', '2024-03-01T09:30:00'],
    ['2024-03-01T09:30:00.120000000', '2024-03-01T09:30:00.12'],
    ['0001-01-01', '0001-01-01'],
    ['soon', null],
  ];
  for (const [value, iso] of cases) await t.test(`date ${value}`, () => assert.equal(isoOfDateValue(value), iso));
  const times: [string, string | null][] = [
    ['PT09H30M00S', '09:30:00'],
    ['PT00H00M01.500S', '00:00:01.5'],
    ['PT255H10M10S', null],
  ];
  for (const [value, iso] of times) await t.test(`time ${value}`, () => assert.equal(isoOfTimeValue(value), iso));
});

test('ods: a table whose style hides it is flagged hidden for /tabs', () => {
  const content = `<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:automatic-styles><style:style style:name="ta2" style:family="table"><style:table-properties table:display="false"/></style:style></office:automatic-styles><office:body><office:spreadsheet><table:table table:name="Shown"><table:table-row><table:table-cell office:value-type="string"><text:p>a</text:p></table:table-cell></table:table-row></table:table><table:table table:name="Secret" table:style-name="ta2"><table:table-row><table:table-cell office:value-type="string"><text:p>b</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet></office:body></office:document-content>`;
  const decoded = decodeWorkbook(odsPackage(content), 'ods', 'x');
  assert.deepEqual(decoded.book?.Workbook?.Sheets?.map((sheet) => [sheet.name, sheet.Hidden]), [['Shown', 0], ['Secret', 1]]);
});
