// A workbook without `xl/styles.xml` (issue 24, part 11): openpyxl and LibreOffice open it with
// default styles, but it stopped the server at start ("Cannot find file xl/styles.xml in zip",
// when [Content_Types].xml still listed the part). It is served with General everywhere; a write
// that needs a style (a date) adds a styles part (and its relationship and content type), unless
// cells already name styles the package lacks: then the date is written as its ISO text.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { openFileSource } from '../../../server/sources/file/mod.ts';
import { entryText, readZip, replacedEntry, writeZip } from '../../../server/sources/file/zip.ts';
import { appOver } from '../../helpers/app.ts';
import { recordingLog, tempFolder } from '../../helpers/file-source.ts';
import { xlsxOf } from '../../helpers/xlsx-xml.ts';

const inline = (ref: string, text: string, style = '') => `<c r="${ref}" t="inlineStr"${style}><is><t>${text}</t></is></c>`;
const HEADER = `<row r="1">${inline('A1', 'Name')}${inline('B1', 'Joined')}${inline('C1', 'Score')}</row>`;
const ANN = `<row r="2">${inline('A2', 'Ann')}${inline('B2', 'soon')}<c r="C2"><v>3</v></c></row>`;

/** An .xlsx without its styles part: still listed in [Content_Types].xml and the workbook's relationships, or not at all. */
function withoutStyles(rows: string, listed: boolean): Uint8Array {
  const entries = readZip(xlsxOf({ sheets: [{ name: 'People', rows }] })).filter((entry) => entry.name !== 'xl/styles.xml');
  if (listed) return writeZip(entries);
  return writeZip(
    entries.map((entry) => {
      if (entry.name === 'xl/_rels/workbook.xml.rels') return replacedEntry(entry, entryText(entry).replace(/<Relationship Id="rIdStyles"[^>]*\/>/, ''));
      if (entry.name === '[Content_Types].xml') return replacedEntry(entry, entryText(entry).replace(/<Override PartName="\/xl\/styles\.xml"[^>]*\/>/, ''));
      return entry;
    }),
  );
}

/** Each cell openpyxl sees: value (dates as ISO), type and number format. */
function openpyxlCells(path: string): Record<string, [string, string, string]> {
  const script = `
import json, sys, datetime, openpyxl
wb = openpyxl.load_workbook(sys.argv[1])
ws = wb["People"]
out = {}
for row in ws.iter_rows():
    for c in row:
        if c.value is None: continue
        value = c.value.isoformat() if isinstance(c.value, (datetime.date, datetime.datetime)) else str(c.value)
        out[c.coordinate] = [value, type(c.value).__name__, c.number_format]
print(json.dumps(out))
`;
  return JSON.parse(execFileSync('/usr/bin/python3', ['-c', script, path], { encoding: 'utf8' })) as Record<string, [string, string, string]>;
}

async function served(t: { after(fn: () => Promise<void>): void }, bytes: Uint8Array) {
  const folder = await tempFolder();
  const path = join(folder.dir, 'book.xlsx');
  await writeFile(path, bytes);
  const source = await openFileSource({ path, foldAfterMs: Infinity, log: recordingLog().log });
  t.after(() => folder.cleanup());
  const call = await appOver(t, source);
  return { path, source, call };
}

const json = { 'Content-Type': 'application/json' };

test('an empty sheet without a styles part is served', async (t) => {
  for (const listed of [true, false]) {
    await t.test(listed ? 'the part listed but missing' : 'the part not listed', async (t) => {
      const { source, call } = await served(t, withoutStyles('', listed));
      const tabs = (await (await call('/sheets/crm/tabs')).json()) as { name: string; rows: number }[];
      assert.deepEqual(tabs.map((tab) => [tab.name, tab.rows]), [['People', 0]]);
      await source.close();
    });
  }
});

test('read, write, fold, read back with openpyxl: a date write adds a styles part', async (t) => {
  for (const listed of [true, false]) {
    await t.test(listed ? 'the part listed but missing' : 'the part not listed', async (t) => {
      const { path, source, call } = await served(t, withoutStyles(HEADER + ANN, listed));
      assert.deepEqual(await (await call('/sheets/crm')).json(), [{ Name: 'Ann', Joined: 'soon', Score: '3' }]);
      assert.equal((await call('/sheets/crm', { method: 'POST', headers: json, body: '{"Name":"Eve","Joined":"2024-03-01","Score":7}' })).status, 201);
      assert.equal((await call('/sheets/crm/0', { method: 'PATCH', headers: json, body: '{"Score":4}' })).status, 200);
      await source.close();
      const cells = openpyxlCells(path);
      assert.deepEqual(cells.A3, ['Eve', 'str', 'General']);
      assert.equal(cells.B3[1], 'datetime', `the date is a date: ${JSON.stringify(cells.B3)}`);
      assert.equal(cells.B3[0].slice(0, 10), '2024-03-01');
      assert.notEqual(cells.B3[2], 'General', 'shown as a date');
      assert.deepEqual(cells.C2, ['4', 'int', 'General']);
      assert.deepEqual(cells.C3, ['7', 'int', 'General']);
      const parts = readZip(new Uint8Array(await readFile(path)));
      const text = (name: string) => entryText(parts.find((entry) => entry.name === name)!);
      assert.ok(parts.some((entry) => entry.name === 'xl/styles.xml'), 'the styles part is added');
      assert.equal(text('[Content_Types].xml').match(/\/xl\/styles\.xml/g)?.length, 1, 'listed once in the content types');
      assert.equal(text('xl/_rels/workbook.xml.rels').match(/\/styles"/g)?.length, 1, 'one relationship to it');
      const again = await openFileSource({ path, log: recordingLog().log });
      const rows = (await again.read()).tabs[0].rows;
      assert.deepEqual(rows[2].value, ['Eve', { iso: '2024-03-01' }, 7], 'sheetrest reads it back');
      await again.close();
    });
  }
});

test('cells naming styles the package lacks: a date is written as its ISO text, no styles part is added', async (t) => {
  const styledAnn = `<row r="2">${inline('A2', 'Ann', ' s="1"')}${inline('B2', 'soon')}<c r="C2"><v>3</v></c></row>`;
  const { path, source, call } = await served(t, withoutStyles(HEADER + styledAnn, false));
  assert.equal((await call('/sheets/crm', { method: 'POST', headers: json, body: '{"Name":"Eve","Joined":"2024-03-01","Score":7}' })).status, 201);
  await source.close();
  // openpyxl cannot open this file at all (a style index past its default list), before or after.
  const parts = readZip(new Uint8Array(await readFile(path)));
  assert.ok(!parts.some((entry) => entry.name === 'xl/styles.xml'));
  assert.match(entryText(parts.find((entry) => entry.name === 'xl/worksheets/sheet1.xml')!), /<c r="B3"[^>]*><is><t>2024-03-01<\/t><\/is><\/c>/);
});
