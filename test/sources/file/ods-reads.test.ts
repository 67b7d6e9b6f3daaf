// An .ods table LibreOffice hides (`<style:table-properties table:display="false"/>` in its
// table style) or that hides itself (`<table:table table:display="false">`) is served as an
// .xlsx hidden sheet is: `"visibility": "hidden"` in /tabs, left out with `hiddenTabs: "hide"`.
// And a cell's white space reads as ODF 1.2 (part 1, 6.1.2) and LibreOffice read it:
// `<text:p>trailing </text:p>` is `trailing `, `two<text:s/> ` is `two` and 2 spaces, checked
// against odfpy where odfpy agrees; written text with spaces, tabs and line feeds round-trips.
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { pythonJson } from '../../helpers/python.ts';
import { handle } from '../../../lib/engine.ts';
import { buildOpenApi } from '../../../lib/openapi.ts';
import type { EngineOptions } from '../../../lib/parse-request.ts';
import type { Workbook } from '../../../lib/workbook.ts';
import { decodeWorkbook } from '../../../server/sources/file/codec.ts';
import { openFileSource } from '../../../server/sources/file/mod.ts';
import { loadSheetJs } from '../../../server/sources/file/xlsx/sheetjs.ts';
import { recordingLog, tempFolder } from '../../helpers/file-source.ts';
import { odsPackage } from '../../helpers/make-ods-fixtures.ts';

// Decoding an .xlsx or .ods here, as the server does once it has opened one, needs SheetJS loaded.
await loadSheetJs();

const NS = 'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"';

function cell(paragraphs: string): string {
  return `<table:table-cell office:value-type="string">${paragraphs}</table:table-cell>`;
}

function table(name: string, attributes: string, values: readonly string[]): string {
  const rows = ['<text:p>Key</text:p>', ...values].map((paragraphs) => `<table:table-row>${cell(paragraphs)}</table:table-row>`).join('');
  return `<table:table table:name="${name}"${attributes}><table:table-column/>${rows}</table:table>`;
}

function content(automaticStyles: string, tables: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><office:document-content ${NS} office:version="1.3"><office:automatic-styles>${automaticStyles}</office:automatic-styles><office:body><office:spreadsheet>${tables}</office:spreadsheet></office:body></office:document-content>`;
}

// ta1 shows, ta2 hides (as LibreOffice writes a hidden sheet), ta3 hides by inheriting the common
// style "Tucked" from styles.xml, ta4 shows though styles.xml has a common style of that name that hides.
const TABLE_STYLES = '<style:style style:name="ta1" style:family="table" style:master-page-name="Default"><style:table-properties table:display="true" style:writing-mode="lr-tb"/></style:style>'
  + '<style:style style:name="ta2" style:family="table" style:master-page-name="Default"><style:table-properties table:display="false" style:writing-mode="lr-tb"/></style:style>'
  + '<style:style style:name="ta3" style:family="table" style:parent-style-name="Tucked"><style:table-properties style:writing-mode="lr-tb"/></style:style>'
  + '<style:style style:name="ta4" style:family="table"><style:table-properties table:display=\'true\'/></style:style>';

const COMMON_STYLES = `<?xml version="1.0" encoding="UTF-8"?><office:document-styles ${NS} office:version="1.3"><office:styles><style:style style:name="Tucked" style:family="table"><style:table-properties table:display="false"/></style:style><style:style style:name="ta4" style:family="table"><style:table-properties table:display="false"/></style:style></office:styles></office:document-styles>`;

function hiddenTablesOds(): Uint8Array {
  const tables = table('Shown', ' table:style-name="ta1"', ['<text:p>shown</text:p>'])
    + table('ByStyle', ' table:style-name="ta2"', ['<text:p>by style</text:p>'])
    + table('ByAttribute', ' table:display="false"', ['<text:p>by attribute</text:p>'])
    + table('Inherited', ' table:style-name="ta3"', ['<text:p>inherited</text:p>'])
    + table('OwnStyle', ' table:style-name="ta4"', ['<text:p>own style</text:p>'])
    + table('NoStyle', '', ['<text:p>no style</text:p>']);
  return odsPackage(content(TABLE_STYLES, tables), { 'styles.xml': COMMON_STYLES });
}

const HIDDEN = [['Shown', 'visible'], ['ByStyle', 'hidden'], ['ByAttribute', 'hidden'], ['Inherited', 'hidden'], ['OwnStyle', 'visible'], ['NoStyle', 'visible']];

function get(workbook: Workbook, path: string, options: EngineOptions = {}): unknown {
  const answer = handle(workbook, { method: 'GET', url: `http://x/sheets/b${path}`, headers: {}, body: null }, options);
  assert.equal(answer.status, 200, answer.body);
  return JSON.parse(answer.body);
}

test('ods: hidden tables are served as an .xlsx hidden sheet is', async (t) => {
  const { workbook } = decodeWorkbook(hiddenTablesOds(), 'ods', 'unused');
  await t.test('the tabs carry their visibility', () => {
    assert.deepEqual(workbook.tabs.map((tab) => [tab.name, tab.visibility ?? 'visible']), HIDDEN);
  });
  await t.test('GET /tabs marks them', () => {
    const listed = get(workbook, '/tabs') as { name: string; visibility: string }[];
    assert.deepEqual(listed.map((tab) => [tab.name, tab.visibility]), HIDDEN);
  });
  await t.test('hiddenTabs "hide" leaves them out of /tabs, of reads and of the OpenAPI document', () => {
    const listed = get(workbook, '/tabs', { hiddenTabs: 'hide' }) as { name: string }[];
    assert.deepEqual(listed.map((tab) => tab.name), ['Shown', 'OwnStyle', 'NoStyle']);
    const answer = handle(workbook, { method: 'GET', url: 'http://x/sheets/b/tabs/ByStyle', headers: {}, body: null }, { hiddenTabs: 'hide' });
    assert.equal(answer.status, 404);
    const document = JSON.stringify(buildOpenApi(workbook, { id: 'b', keyed: false, writable: true, hiddenTabs: 'hide' }));
    assert.ok(document.includes('/tabs/Shown'), 'a visible tab is described');
    for (const name of ['ByStyle', 'ByAttribute', 'Inherited']) assert.ok(!document.includes(name), `${name} is not described`);
  });
});

test('ods: a write to a hidden table keeps it hidden in the file', async () => {
  const folder = await tempFolder();
  try {
    const path = join(folder.dir, 'hidden.ods');
    await writeFile(path, hiddenTablesOds());
    const source = await openFileSource({ path, log: recordingLog().log });
    await source.write((workbook) => {
      const result = handle(workbook, { method: 'POST', url: 'http://x/sheets/b/tabs/ByAttribute', headers: { 'content-type': 'application/json' }, body: '{"Key":"more"}' });
      assert.equal(result.status, 201, result.body);
      return { plan: result.plan, workbook: result.workbook, result: null };
    });
    await source.close();
    const again = decodeWorkbook(await readFile(path), 'ods', 'unused').workbook;
    assert.deepEqual(again.tabs.map((tab) => [tab.name, tab.visibility ?? 'visible']), HIDDEN);
    assert.deepEqual(again.tabs[2].rows.map((row) => row.text), [['Key'], ['by attribute'], ['more']]);
  } finally {
    await folder.cleanup();
  }
});

/**
 * `<text:p>` content -> the text sheetrest reads, and whether odfpy (which keeps every literal
 * character) reads the same: it does not fold literal runs or drop a literal leading space, as
 * ODF says a reader must (LibreOffice never writes either: it writes `<text:s/>` for them).
 */
const WHITE_SPACE: [string, string, 'odfpy agrees' | 'odfpy keeps literal white space'][] = [
  ['<text:p>trailing </text:p>', 'trailing ', 'odfpy agrees'],
  ['<text:p>two<text:s/> </text:p>', 'two  ', 'odfpy agrees'],
  ['<text:p>x<text:s/></text:p>', 'x ', 'odfpy agrees'],
  ['<text:p><text:s/>lead</text:p>', ' lead', 'odfpy agrees'],
  ['<text:p><text:s/> lead</text:p>', '  lead', 'odfpy agrees'],
  ['<text:p>a <text:s text:c="3"/>b</text:p>', 'a    b', 'odfpy agrees'],
  ['<text:p><text:s text:c="3"/></text:p>', '   ', 'odfpy agrees'],
  ['<text:p>end <text:s text:c="2"/></text:p>', 'end   ', 'odfpy agrees'],
  ['<text:p>tab<text:tab/>end</text:p>', 'tab\tend', 'odfpy agrees'],
  ['<text:p>tab <text:tab/> end</text:p>', 'tab \t end', 'odfpy agrees'],
  ['<text:p>line<text:line-break/>break </text:p>', 'line\nbreak ', 'odfpy agrees'],
  ['<text:p>in <text:span>a span </text:span>too</text:p>', 'in a span too', 'odfpy agrees'],
  ['<text:p>one </text:p><text:p>two </text:p>', 'one \ntwo ', 'odfpy agrees'],
  ['<text:p>lit&#32;&#32;eral</text:p>', 'lit  eral', 'odfpy agrees'],
  ['<text:p>trailing   </text:p>', 'trailing ', 'odfpy keeps literal white space'],
  ['<text:p> lead</text:p>', 'lead', 'odfpy keeps literal white space'],
  ['<text:p>a  b</text:p>', 'a b', 'odfpy keeps literal white space'],
  ['<text:p>a\tb\nc</text:p>', 'a b c', 'odfpy keeps literal white space'],
  ['<text:p>in <text:span> a span</text:span></text:p>', 'in a span', 'odfpy keeps literal white space'],
];

test('ods: white space in a cell reads as ODF 1.2 and LibreOffice read it', async (t) => {
  const folder = await tempFolder();
  try {
    const path = join(folder.dir, 'spaces.ods');
    await writeFile(path, odsPackage(content('', table('Spaces', '', WHITE_SPACE.map(([xml]) => xml)))));
    const rows = decodeWorkbook(await readFile(path), 'ods', 'unused').workbook.tabs[0].rows.slice(1);
    const odfpy = odfpyTexts(path);
    for (const [n, [xml, text, odfpyReading]] of WHITE_SPACE.entries()) {
      await t.test(JSON.stringify(xml), (t) => {
        assert.equal(rows[n].text[0], text);
        assert.equal(rows[n].value[0], text);
        if (odfpy === null) return t.skip(ODFPY_MISSING);
        if (odfpyReading === 'odfpy agrees') assert.equal(odfpy.Spaces[n + 1], text, 'odfpy reads the same');
        else assert.notEqual(odfpy.Spaces[n + 1], text, 'odfpy keeps literal white space (if it stops, move the case up)');
      });
    }
  } finally {
    await folder.cleanup();
  }
});

const WRITTEN = ['trailing ', '  two leading', 'runs   of  spaces', ' ', '   ', 'tab\tand  tab\t', 'line one \n  line two ', '\n', 'end \n', '\t lead tab'];

test('ods: text written with leading, trailing and repeated white space reads back exactly, in sheetrest and odfpy', async () => {
  const folder = await tempFolder();
  try {
    const path = join(folder.dir, 'written.ods');
    await writeFile(path, odsPackage(content('', table('Notes', '', []))));
    const source = await openFileSource({ path, log: recordingLog().log });
    for (const text of WRITTEN) {
      await source.write((workbook) => {
        const result = handle(workbook, { method: 'POST', url: 'http://x/sheets/b', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ Key: text }) });
        assert.equal(result.status, 201, result.body);
        return { plan: result.plan, workbook: result.workbook, result: null };
      });
    }
    const served = (await source.read()).tabs[0].rows.slice(1).map((row) => row.text[0]);
    await source.close();
    assert.deepEqual(served, WRITTEN, 'served as written');
    const reread = decodeWorkbook(await readFile(path), 'ods', 'unused').workbook.tabs[0].rows.slice(1).map((row) => row.text[0]);
    assert.deepEqual(reread, WRITTEN, 'read back from the file as written');
    const odfpy = odfpyTexts(path);
    if (odfpy !== null) assert.deepEqual(odfpy.Notes.slice(1), WRITTEN, 'odfpy reads them as written');
  } finally {
    await folder.cleanup();
  }
});

const ODFPY_MISSING = 'odfpy is not installed (apt-get install python3-odf)';

/** Each table's first column as odfpy's teletype reads it: paragraphs joined by line feeds. */
function odfpyTexts(path: string): Record<string, string[]> | null {
  const script = `
import json, sys
from odf.opendocument import load
from odf.table import Table, TableRow, TableCell
from odf.namespaces import TABLENS
import odf.teletype as teletype
out = {}
for table in load(sys.argv[1]).spreadsheet.getElementsByType(Table):
    texts = []
    for row in table.getElementsByType(TableRow):
        cells = row.getElementsByType(TableCell)
        texts.append('\\n'.join(teletype.extractText(p) for p in cells[0].childNodes if p.qname[1] == 'p') if cells else '')
    out[table.getAttrNS(TABLENS, 'name')] = texts
print(json.dumps(out))
`;
  return pythonJson(script, [path]) as Record<string, string[]> | null;
}
