// An .ods table LibreOffice hides (`<style:table-properties table:display="false"/>` in its
// table style) or that hides itself (`<table:table table:display="false">`) is served as an
// .xlsx hidden sheet is: `"visibility": "hidden"` in /tabs, left out with `hiddenTabs: "hide"`.
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
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
