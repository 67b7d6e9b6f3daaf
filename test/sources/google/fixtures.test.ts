// Every golden fixture (fixtures/*.json) replayed through the real handler over a Google source
// on the Sheets API emulator: the fixture's workbook becomes a spreadsheet, each case a request
// to `app.fetch`, checked exactly as the engine runner checks it. A cell whose displayed text
// no number format can produce skips its file, naming the cell, rather than pass by pretence.
// A tab's merges (`A1:A2`) are seeded as the spreadsheet's merged ranges.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../../server/http/app.ts';
import { Secret } from '../../../server/config/config.ts';
import { startEmulator, type EmulatorCell } from '../../../tools/google-emulator/mod.ts';
import { createLogger } from '../../../server/log.ts';
import { openQuotaStore } from '../../../server/quota/quota.ts';
import { openGoogleSource } from '../../../server/sources/google/mod.ts';

const UNLIMITED = { readsPerMinutePerUser: 1e9, writesPerMinutePerUser: 1e9, readsPerMinutePerProject: 1e9, writesPerMinutePerProject: 1e9 };
import { isoToSerial } from '../../../server/sources/google/read-grid.ts';
import { caseMethod, caseName, checkCase, fixtureCellToModel, loadFixtures, toEngineRequest, type FixtureCell } from '../../helpers/fixture-loader.ts';

const TOKEN = 'fixture-writer';

type Format = { type: 'NUMBER' | 'CURRENCY' | 'PERCENT' | 'DATE' | 'DATE_TIME'; pattern: string };

/** Number formats that render a `{value, text}` fixture cell's text; checked after seeding. */
function formatFor(value: unknown, text: string): Format | null {
  if (typeof value !== 'number') return null;
  if (text.endsWith('%')) return { type: 'PERCENT', pattern: /\.\d/.test(text) ? '0.00%' : '0%' };
  if (text.startsWith('$')) return { type: 'CURRENCY', pattern: /\.\d/.test(text) ? '"$"#,##0.00' : '"$"#,##0' };
  if (text.includes(',')) return { type: 'NUMBER', pattern: /\.\d/.test(text) ? '#,##0.00' : '#,##0' };
  return null;
}

/** A fixture cell as the emulator seeds it. */
function emulatorCell(cell: FixtureCell): EmulatorCell {
  if (cell === null || typeof cell !== 'object') return cell;
  if ('date' in cell) {
    const serial = isoToSerial(cell.date);
    if (serial === null) return cell.text ?? cell.date;
    // The emulator seeds whole seconds only; a fraction needs a pattern that shows it.
    if (cell.text === undefined && cell.date.includes('.')) return { value: serial, format: { type: 'DATE_TIME', pattern: 'yyyy-mm-dd hh:mm:ss.0' } };
    if (cell.text === undefined) return { date: cell.date.replace('T', ' ') };
    // A date shown another way: its serial with a US pattern (the only such text the fixtures use).
    return { value: serial, format: { type: cell.date.includes('T') ? 'DATE_TIME' : 'DATE', pattern: 'M/d/yyyy' } };
  }
  if (cell.value === null) return cell.text;
  const format = formatFor(cell.value, cell.text);
  return format === null ? { value: cell.value } : { value: cell.value, format };
}

/** `B1:C4` -> Google's GridRange (0-based, end exclusive). */
function gridRange(merge: string): { startRowIndex: number; endRowIndex: number; startColumnIndex: number; endColumnIndex: number } {
  const [, firstColumn, firstRow, lastColumn, lastRow] = /^([A-Z]+)(\d+):([A-Z]+)(\d+)$/.exec(merge)!;
  const column = (letters: string) => [...letters].reduce((index, letter) => index * 26 + letter.charCodeAt(0) - 64, 0) - 1;
  return { startRowIndex: Number(firstRow) - 1, endRowIndex: Number(lastRow), startColumnIndex: column(firstColumn), endColumnIndex: column(lastColumn) + 1 };
}

const fixtures = await loadFixtures();

test('golden fixtures over the Google source (emulator)', async (t) => {
  // Google's per-minute quotas are not what the fixtures test: a file's writes come faster than 60 a minute
  // (nor, so, the source's own budget for them, UNLIMITED below).
  const emulator = await startEmulator({ quota: { readPerMinutePerUser: 1e9, writePerMinutePerUser: 1e9, readPerMinutePerProject: 1e9, writePerMinutePerProject: 1e9 } });
  const stateDir = await mkdtemp(join(tmpdir(), 'sheetrest-google-fixtures-'));
  t.after(async () => {
    await emulator.close();
    await rm(stateDir, { recursive: true, force: true });
  });

  for (const { file, fixture } of fixtures) {
    await t.test(file, async (t) => {
      const spreadsheetId = emulator.createSpreadsheet({
        sheets: fixture.workbook.tabs.map((tab) => ({ title: tab.name, rows: tab.rows.map((cells) => cells.map(emulatorCell)), merges: (tab.merges ?? []).map(gridRange) })),
        access: { [TOKEN]: 'writer' },
      });
      const source = await openGoogleSource({ spreadsheetId, rootUrl: emulator.rootUrl, auth: { kind: 'accessToken', token: new Secret(TOKEN) }, freshnessMs: 60_000, quota: UNLIMITED });
      const quota = await openQuotaStore({ stateDir: join(stateDir, file) });
      t.after(async () => {
        await source.close();
        await quota.close();
      });

      // The spreadsheet must show what the fixture says before any case runs.
      const seeded = await source.read();
      const unrenderable: string[] = [];
      fixture.workbook.tabs.forEach((tab, tabIndex) =>
        tab.rows.forEach((cells, rowIndex) =>
          cells.forEach((cell, column) => {
            const expected = fixtureCellToModel(cell);
            const actual = seeded.tabs[tabIndex]?.rows[rowIndex];
            const text = actual?.text[column] ?? '';
            const value = actual?.value[column] ?? null;
            if (text === expected.text && JSON.stringify(value) === JSON.stringify(expected.value)) return;
            const where = `${tab.name}!R${rowIndex + 1}C${column + 1}`;
            if (typeof cell === 'object' && cell !== null && 'text' in cell) unrenderable.push(`${where} ${JSON.stringify(cell)} shows ${JSON.stringify(text)}`);
            else assert.fail(`${where}: ${JSON.stringify(cell)} reads back as ${JSON.stringify({ text, value })}`);
          }),
        ),
      );
      if (unrenderable.length > 0) {
        t.skip(`no number format renders ${unrenderable.join('; ')}`);
        return;
      }

      const app = createApp({
        connections: [{ id: fixture.connection, source, keys: [], readOnly: false, engine: fixture.options ?? {} }],
        quota,
        bodyBytes: 1024 * 1024,
        cors: '*',
        log: createLogger('silent'),
      });
      for (const fixtureCase of fixture.cases) {
        await t.test(caseName(fixtureCase), async () => {
          const init = toEngineRequest(fixtureCase.request);
          // Bytes, not a string: a string body would get a text/plain Content-Type the case did not send.
          const body = init.body === null ? null : new TextEncoder().encode(init.body);
          const response = await app.fetch(new Request(init.url, { method: init.method, headers: init.headers, body }));
          const problems = checkCase(
            fixtureCase.expect,
            { status: response.status, headers: response.headers, bodyText: await response.text() },
            caseMethod(fixtureCase),
          );
          assert.deepEqual(problems, [], problems.join('\n'));
        });
      }
    });
  }
});
