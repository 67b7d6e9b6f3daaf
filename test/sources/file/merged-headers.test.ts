// Issue 24, part 2: headers merged down over rows 1-2 (or 1-4) make rows 1-2 (1-4) the header
// block, and data row 0 the first row below it, for reads and writes alike: a write never lands
// in a cell a merge covers (where Excel, LibreOffice and openpyxl would not show it). Checked on
// an .xlsx and an .ods, through sheetrest and through openpyxl / odfpy.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { CellObject } from '@e965/xlsx';
import { createApp } from '../../../server/http/app.ts';
import { createLogger } from '../../../server/log.ts';
import { openQuotaStore } from '../../../server/quota/quota.ts';
import { openFileSource } from '../../../server/sources/file/mod.ts';
import { bookBytes, bookOf, recordingLog } from '../../helpers/file-source.ts';

const text = (v: string): CellObject => ({ t: 's', v });
const number = (v: number): CellObject => ({ t: 'n', v });

/** `Name` merged over rows 1-`span`, `Amount` (unmerged) beside it, then Ann and Bob. */
function mergedHeaderBook(format: 'xlsx' | 'ods', span: number): Uint8Array {
  const covered = Array.from({ length: span - 1 }, () => [] as CellObject[]);
  const book = bookOf([{ name: 'People', cells: [[text('Name'), text('Amount')], ...covered, [text('Ann'), number(10)], [text('Bob'), number(20)]] }]);
  book.Sheets.People['!merges'] = [{ s: { r: 0, c: 0 }, e: { r: span - 1, c: 0 } }];
  return bookBytes(book, format);
}

async function serve(t: { after(fn: () => Promise<void>): void }, bytes: Uint8Array, format: 'xlsx' | 'ods') {
  const dir = await mkdtemp(join(tmpdir(), 'sheetrest-merged-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, `book.${format}`);
  await writeFile(path, bytes);
  const source = await openFileSource({ path, stateDir: join(dir, 'state'), foldAfterMs: Infinity, log: recordingLog().log });
  const quota = await openQuotaStore({ stateDir: join(dir, 'quota') });
  const app = createApp({ connections: [{ id: 'book', source, keys: [], readOnly: false, engine: {} }], quota, bodyBytes: 1 << 20, cors: '*', log: createLogger('silent') });
  const call = async (method: string, url: string, body?: unknown): Promise<{ status: number; json: unknown }> => {
    const init: RequestInit = body === undefined ? { method } : { method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
    const answer = await app.fetch(new Request(`http://x/sheets/book${url}`, init));
    const textBody = await answer.text();
    return { status: answer.status, json: textBody === '' ? null : JSON.parse(textBody) };
  };
  const close = async () => {
    await source.close();
    await quota.close();
  };
  return { path, call, close };
}

/** Each row's cell texts as openpyxl (.xlsx) or odfpy (.ods) reads the file, trailing empties cut; or why it cannot look. */
function readByPython(path: string): string[][] | string {
  const script = `
import json, sys
path = sys.argv[1]
rows = []
if path.endswith('.xlsx'):
    try:
        import openpyxl
    except ImportError:
        print(json.dumps("python3-openpyxl is not installed")); sys.exit(0)
    ws = openpyxl.load_workbook(path)["People"]
    rows = [["" if v is None else str(v) for v in row] for row in ws.iter_rows(values_only=True)]
else:
    try:
        from odf.opendocument import load
        from odf.table import Table, TableRow
        from odf.namespaces import TABLENS
        import odf.teletype as teletype
    except ImportError:
        print(json.dumps("odfpy is not installed")); sys.exit(0)
    table = load(path).topnode.getElementsByType(Table)[0]
    for row in table.getElementsByType(TableRow):
        repeat = int(row.getAttrNS(TABLENS, 'number-rows-repeated') or 1)
        if repeat > 100: continue
        cells = []
        for cell in row.childNodes:
            if getattr(cell, 'qname', (None, None))[1] not in ('table-cell', 'covered-table-cell'): continue
            n = int(cell.getAttrNS(TABLENS, 'number-columns-repeated') or 1)
            if n > 100: continue
            cells += ['\\n'.join(teletype.extractText(p) for p in cell.childNodes if getattr(p, 'qname', (None, None))[1] == 'p')] * n
        rows += [cells] * repeat
out = []
for row in rows:
    while row and row[-1] == "": row = row[:-1]
    out.append(row)
while out and out[-1] == []: out.pop()
print(json.dumps(out))
`;
  try {
    return JSON.parse(execFileSync('/usr/bin/python3', ['-c', script, path], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })) as string[][] | string;
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return 'python3 is not installed';
    throw new Error(`python could not read ${path}: ${String((error as { stderr?: unknown }).stderr ?? error)}`);
  }
}

for (const format of ['xlsx', 'ods'] as const) {
  for (const span of [2, 4]) {
    const covered = Array.from({ length: span - 1 }, () => [] as string[]);
    test(`${format}: a header merged over rows 1-${span}: reads start at row ${span + 1}, and writes land there`, async (t) => {
      const served = await serve(t, mergedHeaderBook(format, span), format);
      try {
        assert.deepEqual((await served.call('GET', '/tabs/People')).json, [{ Name: 'Ann', Amount: '10' }, { Name: 'Bob', Amount: '20' }]);
        assert.deepEqual((await served.call('GET', '/tabs/People/0')).json, [{ Name: 'Ann', Amount: '10' }]);
        const tabs = (await served.call('GET', '/tabs')).json as { rows: number; headerRow: number }[];
        assert.deepEqual([tabs[0].rows, tabs[0].headerRow], [2, 1], 'two data rows, named in row 1');
        assert.equal((await served.call('POST', '/tabs/People', { Name: 'Cy', Amount: 30 })).status, 201);
        assert.equal((await served.call('PATCH', '/tabs/People/0', { Amount: 11 })).status, 200);
        assert.equal((await served.call('DELETE', '/tabs/People/1')).status, 200);
        assert.deepEqual((await served.call('GET', '/tabs/People')).json, [{ Name: 'Ann', Amount: '11' }, { Name: 'Cy', Amount: '30' }]);
      } finally {
        await served.close();
      }
      // Folded at close: the cells below the block hold the writes, the covered cells stay empty.
      const seen = readByPython(served.path);
      if (typeof seen === 'string') return t.skip(seen);
      assert.deepEqual(seen, [['Name', 'Amount'], ...covered, ['Ann', '11'], ['Cy', '30']]);
      // And sheetrest reads the folded file the same way.
      const again = await serve(t, new Uint8Array(await import('node:fs/promises').then((fs) => fs.readFile(served.path))), format);
      try {
        assert.deepEqual((await again.call('GET', '/tabs/People')).json, [{ Name: 'Ann', Amount: '11' }, { Name: 'Cy', Amount: '30' }]);
      } finally {
        await again.close();
      }
    });
  }
}
