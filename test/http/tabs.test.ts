// GET /sheets/book/tabs -> [{"name": "Data", "rows": 2, "columns": 2, "visibility": "visible",
// "headerRow": 3}, ...]: tabs the spreadsheet hides are marked, and kept unserved by a connection
// with `hiddenTabs: "hide"`; a tab starting with empty rows has its header on the first row
// holding text, in the engine and in the file a write folds into.
import assert from 'node:assert/strict';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { handle } from '../../lib/engine.ts';
import type { EngineOptions } from '../../lib/parse-request.ts';
import type { Tab, Workbook } from '../../lib/workbook.ts';
import { configForFile, loadConfig } from '../../server/config/config.ts';
import { decodeWorkbook } from '../../server/sources/file/codec.ts';
import type { FileFormat } from '../../server/sources/file/format.ts';
import { openFileSource } from '../../server/sources/file/mod.ts';
import { readSpreadsheet } from '../../server/sources/google/read-grid.ts';
import { recordingLog, tempFolder } from '../helpers/file-source.ts';
import { xlsxOf } from '../helpers/xlsx-xml.ts';
import { loadSheetJs } from '../../server/sources/file/xlsx/sheetjs.ts';

// Decoding an .xlsx or .ods here, as the server does once it has opened one, needs SheetJS loaded.
await loadSheetJs();

function tab(name: string, visibility?: Tab['visibility']): Tab {
  const rows = [
    { text: ['Key'], value: ['Key'] },
    { text: [name.toLowerCase()], value: [name.toLowerCase()] },
  ];
  return visibility === undefined ? { name, rows } : { name, rows, visibility };
}

const BOOK: Workbook = { tabs: [tab('Lookup', 'hidden'), tab('Public'), tab('Secret', 'veryHidden'), tab('More')] };

function get(path: string, options: EngineOptions = {}, method = 'GET', body?: unknown): { status: number; body: unknown } {
  const result = handle(BOOK, { method, url: `http://x${path}`, headers: { 'content-type': 'application/json' }, body: body === undefined ? null : JSON.stringify(body) }, options);
  return { status: result.status, body: JSON.parse(result.body) };
}

test('hidden tabs: listed and marked by default, unserved with hiddenTabs "hide"', async (t) => {
  const listing = (name: string, visibility: string) => ({ name, rows: 1, columns: 1, visibility, headerRow: 1 });
  const cases: [string, EngineOptions, number, unknown][] = [
    ['/sheets/b/tabs', {}, 200, [listing('Lookup', 'hidden'), listing('Public', 'visible'), listing('Secret', 'veryHidden'), listing('More', 'visible')]],
    ['/sheets/b/tabs', { hiddenTabs: 'serve' }, 200, [listing('Lookup', 'hidden'), listing('Public', 'visible'), listing('Secret', 'veryHidden'), listing('More', 'visible')]],
    ['/sheets/b/tabs', { hiddenTabs: 'hide' }, 200, [listing('Public', 'visible'), listing('More', 'visible')]],
    ['/sheets/b/tabs/Secret', {}, 200, [{ Key: 'secret' }]],
    ['/sheets/b', {}, 200, [{ Key: 'lookup' }]],
    // Without a tab prefix, the first served tab.
    ['/sheets/b', { hiddenTabs: 'hide' }, 200, [{ Key: 'public' }]],
    ['/sheets/b/tabs/More/Key/more', { hiddenTabs: 'hide' }, 200, [{ Key: 'more' }]],
  ];
  for (const [path, options, status, body] of cases) {
    await t.test(`${path} ${JSON.stringify(options)}`, () => assert.deepEqual(get(path, options), { status, body }));
  }
  for (const [method, path] of [['GET', '/sheets/b/tabs/Secret'], ['GET', '/sheets/b/tabs/Lookup/0'], ['POST', '/sheets/b/tabs/Lookup'], ['DELETE', '/sheets/b/tabs/Secret/0']] as const) {
    await t.test(`${method} ${path} with hiddenTabs "hide" is 404 tab_not_found, naming only served tabs`, () => {
      const answer = get(path, { hiddenTabs: 'hide' }, method, method === 'POST' ? { Key: 'x' } : undefined);
      assert.equal(answer.status, 404);
      const { error, message } = answer.body as { error: string; message: string };
      assert.equal(error, 'tab_not_found');
      // The same answer as for a name that does not exist: the tabs listed are the served ones.
      const listed = message.slice(message.indexOf('its tabs are'));
      assert.equal(listed, 'its tabs are "Public", "More" (names are case-sensitive).');
    });
  }
  await t.test('a write to a served tab keeps the hidden tabs (and their visibility) in the next workbook', () => {
    const result = handle(BOOK, { method: 'POST', url: 'http://x/sheets/b/tabs/Public', headers: { 'content-type': 'application/json' }, body: '{"Key":"new"}' }, { hiddenTabs: 'hide' });
    assert.equal(result.status, 201);
    assert.deepEqual(result.workbook.tabs.map((each) => [each.name, each.visibility, each.rows.length]), [['Lookup', 'hidden', 2], ['Public', undefined, 3], ['Secret', 'veryHidden', 2], ['More', undefined, 2]]);
  });
});

test('hidden tabs: an .xlsx file marks them, and a fold keeps them hidden', async () => {
  const sheet = (value: string) => `<row r="1"><c r="A1" t="inlineStr"><is><t>Key</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>${value}</t></is></c></row>`;
  const folder = await tempFolder();
  try {
    const path = join(folder.dir, 'hidden.xlsx');
    await writeFile(path, xlsxOf({ sheets: [{ name: 'Data', rows: sheet('d') }, { name: 'Lists', rows: sheet('l'), state: 'hidden' }, { name: 'Code', rows: sheet('c'), state: 'veryHidden' }] }));
    const source = await openFileSource({ path, log: recordingLog().log });
    const visibility = (workbook: Workbook) => workbook.tabs.map((each) => [each.name, each.visibility ?? 'visible']);
    assert.deepEqual(visibility(await source.read()), [['Data', 'visible'], ['Lists', 'hidden'], ['Code', 'veryHidden']]);
    await source.write((workbook) => {
      const result = handle(workbook, { method: 'POST', url: 'http://x/sheets/h/tabs/Lists', headers: { 'content-type': 'application/json' }, body: '{"Key":"more"}' });
      return { plan: result.plan, workbook: result.workbook, result: null };
    });
    await source.close();
    const again = decodeWorkbook(await readFile(path), 'xlsx', 'unused').workbook;
    assert.deepEqual(visibility(again), [['Data', 'visible'], ['Lists', 'hidden'], ['Code', 'veryHidden']]);
    assert.deepEqual(again.tabs[1].rows.map((row) => row.text), [['Key'], ['l'], ['more']]);
  } finally {
    await folder.cleanup();
  }
});

test('hidden tabs: a sheet hidden in Google Sheets is marked hidden', () => {
  const { workbook } = readSpreadsheet({
    sheets: [
      { properties: { sheetId: 2, title: 'Shown', index: 0 } },
      { properties: { sheetId: 3, title: 'Tucked', index: 1, hidden: true } },
      { properties: { sheetId: 4, title: 'Plain', index: 2, hidden: false } },
    ],
  });
  assert.deepEqual(workbook.tabs.map((each) => [each.name, each.visibility]), [['Shown', undefined], ['Tucked', 'hidden'], ['Plain', undefined]]);
});

test('hiddenTabs in the configuration: "serve" by default, "hide", and nothing else', async (t) => {
  const folder = await tempFolder();
  try {
    const book = join(folder.dir, 'book.xlsx');
    await t.test('default and --hide-hidden-tabs', () => {
      assert.equal(configForFile(book).connections[0].hiddenTabs, 'serve');
      assert.equal(configForFile(book, { hiddenTabs: 'hide' }).connections[0].hiddenTabs, 'hide');
    });
    const cases: [string, string | null][] = [
      ['"hide"', null],
      ['"serve"', null],
      ['"yes"', 'connections[0].hiddenTabs: expected "serve" or "hide", got "yes"'],
      ['true', 'connections[0].hiddenTabs: expected "serve" or "hide", got true'],
    ];
    for (const [value, problem] of cases) {
      await t.test(value, async () => {
        const path = join(folder.dir, 'sheetrest.json');
        await writeFile(path, `{"connections": [{"id": "b", "source": {"type": "file", "path": "book.xlsx"}, "hiddenTabs": ${value}}]}`);
        if (problem === null) assert.equal((await loadConfig(path)).connections[0].hiddenTabs, JSON.parse(value));
        else await assert.rejects(loadConfig(path), (error: Error) => error.message.includes(problem));
      });
    }
  } finally {
    await folder.cleanup();
  }
});

/** The table at C3 of a tab starting with two empty rows, as a file holds it. */
const LOWER_TABLE: Record<Exclude<FileFormat, 'ods'>, (folder: string) => Promise<string>> = {
  xlsx: async (folder) => {
    const path = join(folder, 'lower.xlsx');
    const cell = (ref: string, text: string) => `<c r="${ref}" t="inlineStr"><is><t>${text}</t></is></c>`;
    const rows = `<row r="3">${cell('C3', 'Name')}${cell('D3', 'Team')}</row><row r="4">${cell('C4', 'Ann')}${cell('D4', 'red')}</row><row r="5">${cell('C5', 'Bob')}${cell('D5', 'blue')}</row>`;
    await writeFile(path, xlsxOf({ sheets: [{ name: 'lower', rows }] }));
    return path;
  },
  csv: async (folder) => {
    const path = join(folder, 'lower.csv');
    await writeFile(path, ',,,\r\n,,,\r\n,,Name,Team\r\n,,Ann,red\r\n,,Bob,blue\r\n');
    return path;
  },
};

for (const format of ['xlsx', 'csv'] as const) {
  test(`${format}: writes to a tab whose header row is row 3 land below it, and the file keeps the rows above`, async () => {
    const folder = await tempFolder();
    try {
      const path = await LOWER_TABLE[format](folder.dir);
      const source = await openFileSource({ path, log: recordingLog().log });
      const send = (method: string, url: string, body?: unknown) =>
        source.write((workbook) => {
          const result = handle(workbook, { method, url: `http://x/sheets/lower${url}`, headers: { 'content-type': 'application/json' }, body: body === undefined ? null : JSON.stringify(body) });
          assert.ok(result.status < 300, result.body);
          return { plan: result.plan, workbook: result.workbook, result: null };
        });
      await send('POST', '', { Name: 'Cy', Team: 'green' });
      await send('PATCH', '/Name/ann', { Team: 'pink' });
      await send('DELETE', '/1');
      await source.close();
      const rows = decodeWorkbook(await readFile(path), format, 'lower').workbook.tabs[0].rows.map((row) => row.text);
      assert.deepEqual(rows, [[], [], ['', '', 'Name', 'Team'], ['', '', 'Ann', 'pink'], ['', '', 'Cy', 'green']]);
    } finally {
      await folder.cleanup();
    }
  });
}

test('csv: a journaled write re-applied after an outside save that moved the header row lands on its row', async () => {
  const folder = await tempFolder();
  try {
    const path = await LOWER_TABLE.csv(folder.dir);
    const log = recordingLog();
    const source = await openFileSource({ path, log: log.log, foldAfterMs: Number.POSITIVE_INFINITY });
    await source.write((workbook) => {
      const result = handle(workbook, { method: 'PATCH', url: 'http://x/sheets/lower/1', headers: { 'content-type': 'application/json' }, body: '{"Team":"green"}' });
      return { plan: result.plan, workbook: result.workbook, result: null };
    });
    // Someone inserts a row above the table and saves: the header row is now row 4.
    await writeFile(`${path}.other`, ',,,\r\n,,,\r\n,,,\r\n,,Name,Team\r\n,,Ann,red\r\n,,Bob,blue\r\n');
    await rename(`${path}.other`, path);
    const read = await source.read({ fresh: true });
    assert.deepEqual(read.tabs[0].rows.map((row) => row.text.slice(2)), [[], [], [], ['Name', 'Team'], ['Ann', 'red'], ['Bob', 'green']]);
    await source.close();
    // Untouched records keep their bytes, empty fields and all (issue 24: they became empty lines).
    assert.equal(await readFile(path, 'utf8'), ',,,\r\n,,,\r\n,,,\r\n,,Name,Team\r\n,,Ann,red\r\n,,Bob,green\r\n');
    assert.ok(!log.messages.some((message) => message.includes('conflict')), log.messages.join('\n'));
  } finally {
    await folder.cleanup();
  }
});
