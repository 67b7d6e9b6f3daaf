// The streaming .xlsx fold (xlsx/stream-fold.ts) writes the very bytes the fold that decodes the
// whole workbook writes (codec.ts's encodeWorkbook), for a POST, a PATCH and a DELETE on small
// workbooks shaped as other programs write them: no `r` attributes or `<dimension>`, the header
// below empty rows, shared formulas whose master is deleted, formatting-only rows past the data,
// a second tab, rows longer than one unpacked piece. A sheet whose rows are out of order, or
// numbered past the last row a sheet can have, is left to the full decode (null).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { handle } from '../../../lib/mod.ts';
import { EMPTY_ROW, type Workbook } from '../../../lib/workbook.ts';
import type { WritePlan } from '../../../lib/write-plan.ts';
import { decodeWorkbook, encodeWorkbook } from '../../../server/sources/file/codec.ts';
import { rowsOnly } from '../../../server/sources/file/model.ts';
import { applyKeepingCells } from '../../../server/sources/file/rebase.ts';
import { foldXlsxStreaming, type StreamingFoldOptions } from '../../../server/sources/file/xlsx/stream-fold.ts';
import { readBook, tabsOfBook } from '../../../server/sources/file/xlsx/read-cells.ts';
import { loadSheetJs } from '../../../server/sources/file/xlsx/sheetjs.ts';
import { readZip, unpackEntry, writeZip } from '../../../server/sources/file/zip.ts';
import { plainBook } from '../../helpers/make-xlsx-corpus.ts';
import { xlsxOf } from '../../helpers/xlsx-xml.ts';

await loadSheetJs();

const NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const text = (ref: string, value: string): string => `<c r="${ref}" t="inlineStr"><is><t>${value}</t></is></c>`;
const number = (ref: string, value: number, style = ''): string => `<c r="${ref}"${style}><v>${value}</v></c>`;

/** Rows 1..count: a header (Name, Age) and people Ann0, Ann1... */
function peopleRows(count: number, first = 1): string {
  const rows = [`<row r="${first}">${text(`A${first}`, 'Name')}${text(`B${first}`, 'Age')}</row>`];
  for (let n = first + 1; n < first + count; n++) rows.push(`<row r="${n}" spans="1:2">${text(`A${n}`, `Ann${n}`)}${number(`B${n}`, n, ' s="1"')}</row>`);
  return rows.join('');
}

const sheet = (rows: string, head = ''): string => `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="${NS}">${head}<sheetData>${rows}</sheetData><pageMargins left="0.7" right="0.7" top="0.75" bottom="0.75" header="0.3" footer="0.3"/></worksheet>`;

const SHARED = sheet(
  `<row r="1">${text('A1', 'Name')}${text('B1', 'Age')}${text('C1', 'Twice')}</row>` +
    `<row r="2">${text('A2', 'Ann')}${number('B2', 30)}<c r="C2"><f t="shared" ref="C2:C4" si="0">B2*2</f><v>60</v></c></row>` +
    `<row r="3">${text('A3', 'Bob')}${number('B3', 25)}<c r="C3"><f t="shared" si="0"/><v>50</v></c></row>` +
    `<row r="4">${text('A4', 'Cy')}${number('B4', 41)}<c r="C4"><f t="shared" si="0"/><v>82</v></c></row>`,
  '<dimension ref="A1:C4"/>',
);

/** The plans the server would journal for `writes`, each planned on the rows it keeps. */
function plansOf(bytes: Uint8Array, tab: string, writes: readonly { method: string; url: string; body?: string }[]): WritePlan[] {
  let current: Workbook = rowsOnly(decodeWorkbook(bytes, 'xlsx', 'book').workbook, 'xlsx');
  return writes.map((write) => {
    const result = handle(current, { ...write, url: write.url.replace('TAB', tab), headers: { 'Content-Type': 'application/json' } });
    assert.ok(result.status < 300 && result.plan !== null, `${write.method} ${write.url}: ${result.body}`);
    current = result.workbook;
    return result.plan;
  });
}

/**
 * Each part's name, stamp, CRC and content. Not the zip's bytes: Deno's zlib deflates a part
 * written in pieces a few bytes differently from the same text deflated at once (Node's does not).
 */
function partsOf(bytes: Uint8Array): object[] {
  return readZip(bytes).map((entry) => ({ ...entry, raw: undefined, content: Buffer.from(unpackEntry(entry)).toString('latin1') }));
}

/** The streaming fold's package as bytes (zip.ts writes its entries); null where it leaves the file to the full decode. */
async function streamingFold(bytes: Uint8Array, plans: readonly WritePlan[], options?: StreamingFoldOptions): Promise<Uint8Array | null> {
  const entries = await foldXlsxStreaming(bytes, plans, options);
  return entries === null ? null : writeZip(entries);
}

function fullDecodeFold(bytes: Uint8Array, plans: readonly WritePlan[]): Uint8Array {
  const decoded = decodeWorkbook(bytes, 'xlsx', 'book');
  return encodeWorkbook(plans.reduce(applyKeepingCells, decoded.workbook), decoded, plans).bytes;
}

const POST = { method: 'POST', url: '/sheets/TAB', body: '{"Name":"Zoe","Age":52}' };
const PATCH = (name: string) => ({ method: 'PATCH', url: `/sheets/TAB/Name/${name}`, body: '{"Age":31}' });
const DELETE = (name: string) => ({ method: 'DELETE', url: `/sheets/TAB/Name/${name}` });

const CASES: [string, Uint8Array, string, { method: string; url: string; body?: string }[]][] = [
  ['a plain sheet with a <dimension>', plainBook(sheet(peopleRows(5), '<dimension ref="A1:B5"/>'), 'People'), 'People', [POST, PATCH('Ann3'), DELETE('Ann2')]],
  ['no r attributes, a prefix, no <dimension>', plainBook(`<x:worksheet xmlns:x="${NS}"><x:sheetData><x:row><x:c t="inlineStr"><x:is><x:t>Name</x:t></x:is></x:c><x:c t="inlineStr"><x:is><x:t>Age</x:t></x:is></x:c></x:row><x:row><x:c t="inlineStr"><x:is><x:t>Ann</x:t></x:is></x:c><x:c><x:v>30</x:v></x:c></x:row><x:row><x:c t="inlineStr"><x:is><x:t>Bob</x:t></x:is></x:c><x:c><x:v>25</x:v></x:c></x:row></x:sheetData></x:worksheet>`, 'People'), 'People', [POST, PATCH('Bob'), DELETE('Ann')]],
  ['the header below two empty rows', plainBook(sheet(`<row r="1"/><row r="2"><c r="A2" s="1"/></row>${peopleRows(4, 3)}`, '<dimension ref="A1:B6"/>'), 'People'), 'People', [POST, PATCH('Ann5'), DELETE('Ann4')]],
  ['a shared formula whose master is deleted', plainBook(SHARED, 'People'), 'People', [DELETE('Ann'), PATCH('Cy')]],
  ['a shared formula whose master stays', plainBook(SHARED, 'People'), 'People', [DELETE('Bob'), POST]],
  ['formatting-only rows past the data', plainBook(sheet(`${peopleRows(3)}<row r="4"><c r="A4" s="1"/></row><row r="9" ht="30" customHeight="1"><c r="B9" s="1"/></row>`, '<dimension ref="A1:B9"/>'), 'People'), 'People', [POST, POST, DELETE('Ann2')]],
  ['rows longer than one unpacked piece (64 KiB)', plainBook(sheet(peopleRows(3_000), '<dimension ref="A1:B3000"/>'), 'People'), 'People', [POST, PATCH('Ann1500'), DELETE('Ann700'), PATCH('Ann2999')]],
  ['the second of two tabs', xlsxOf({ sheets: [{ name: 'Other', rows: peopleRows(3) }, { name: 'People', rows: peopleRows(4) }] }), 'People', [POST, PATCH('Ann3')]],
];

for (const [name, bytes, tab, writes] of CASES) {
  test(`streaming fold = full-decode fold: ${name}`, async () => {
    const plans = plansOf(bytes, tab, writes);
    const streamed = await streamingFold(bytes, plans);
    assert.ok(streamed !== null, 'the streaming fold took it');
    assert.deepEqual(partsOf(streamed), partsOf(fullDecodeFold(bytes, plans)), 'the same parts');
    // And what it wrote reads back as the rows the writes gave.
    let served: Workbook = rowsOnly(decodeWorkbook(bytes, 'xlsx', 'book').workbook, 'xlsx');
    for (const plan of plans) served = applyKeepingCells(served, plan);
    const reread = decodeWorkbook(streamed, 'xlsx', 'book').workbook.tabs.find((candidate) => candidate.name === tab)!;
    // (A row the engine holds may end in empty cells, which a file does not keep.)
    const texts = (rows: readonly { readonly text: readonly string[] }[]) => rows.map((row) => row.text.join('\t').replace(/\t+$/, ''));
    assert.deepEqual(texts(reread.rows), texts(served.tabs.find((candidate) => candidate.name === tab)!.rows));
  });
}

const LEFT_TO_THE_FULL_DECODE: [string, string][] = [
  ['rows out of order', `<row r="1">${text('A1', 'Name')}</row><row r="3">${text('A3', 'Cy')}</row><row r="2">${text('A2', 'Bob')}</row>`],
  ['a row past row 1,048,576', `<row r="1">${text('A1', 'Name')}</row><row r="2">${text('A2', 'Bob')}</row><row r="999999999"><c r="B999999999" s="1"/></row>`],
];

for (const [name, rows] of LEFT_TO_THE_FULL_DECODE) {
  test(`left to the full decode: ${name}`, async () => {
    // The plan a POST of one row gives (decoding a sheet a billion rows long to plan it would not end).
    const post: WritePlan = { tab: 'People', replaced: [], removed: [], appended: { start: 2, rows: [{ text: ['Zoe'], value: ['Zoe'] }] } };
    assert.equal(await streamingFold(plainBook(sheet(rows), 'People'), [post]), null);
  });
}

test('collecting garbage between pieces and steps (the fold worker on Bun) writes the same bytes', async () => {
  // 10,000 rows: about 1 MB of XML, 16 unpacked pieces a read.
  const bytes = plainBook(sheet(peopleRows(10_000), '<dimension ref="A1:B10000"/>'), 'People');
  const plans = plansOf(bytes, 'People', [POST, PATCH('Ann5000'), DELETE('Ann20')]);
  let collected = 0;
  const withCollect = await streamingFold(bytes, plans, { collect: () => collected++ });
  const without = await streamingFold(bytes, plans);
  assert.ok(withCollect !== null && without !== null);
  assert.deepEqual(Buffer.from(withCollect), Buffer.from(without));
  // Three steps (after the rows are decoded, before the sheet is written, before the package),
  // and every 8 pieces of each of the two reads.
  assert.ok(collected >= 3 + 2 * 2, `collected ${collected} times`);
});

test('the rows a <dimension> reaches below the last row are the one shared empty row', () => {
  // The streaming fold decodes a few rows of a 100k-row sheet whose <dimension> still spans them all.
  const book = readBook(plainBook(sheet(peopleRows(3), '<dimension ref="A1:B50000"/>'), 'People'));
  const rows = tabsOfBook(book)[0].rows;
  assert.equal(rows.length, 50_000);
  assert.deepEqual(rows.slice(0, 3).map((row) => row.text), [['Name', 'Age'], ['Ann2', '2'], ['Ann3', '3']]);
  assert.ok(rows.slice(3).every((row) => row === EMPTY_ROW));
});
