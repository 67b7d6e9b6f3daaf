// Outside edits reach the change feed as `tab.changed`, over real HTTP on this runtime: a workbook
// saved by another program (the .xlsx and the .csv rewritten on disk), and a Google spreadsheet
// edited upstream (through the emulator's API, as a browser would), each within the source's
// freshness window while a stream listens, and never for the server's own writes.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { loadConfig } from '../../server/config/config.ts';
import { startEmulator } from '../../tools/google-emulator/mod.ts';
import { defer, RUNTIME, startServer, tempDir, writeXlsx, type TestContext } from '../helpers/http.ts';
import { openEvents } from '../helpers/event-stream.ts';

const TOKEN = 'writer-token';

async function serveConfig(t: TestContext, connections: unknown[]): Promise<string> {
  const dir = await tempDir(t);
  await writeFile(dir.path('sheetrest.json'), JSON.stringify({ stateDir: dir.path('state'), log: { level: 'silent' }, connections }));
  return (await startServer(t, await loadConfig(dir.path('sheetrest.json')))).url;
}

function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
}

test(`outside edits emit tab.changed (${RUNTIME})`, async (t) => {
  await t.test('an .xlsx saved by another program', async (t) => {
    const dir = await tempDir(t);
    const path = dir.path('crm.xlsx');
    await writeXlsx(path, 'People', [['Name'], ['Ann']]);
    const url = await serveConfig(t, [{ id: 'crm', source: { type: 'file', path } }]);
    const stream = await openEvents(`${url}/sheets/crm/events`);
    defer(t, () => stream.close());
    // The server's own write: rows.created, no tab.changed.
    assert.equal((await post(`${url}/sheets/crm`, [{ Name: 'Bo' }])).status, 201);
    const [own] = await stream.next(1);
    assert.equal(own.event, 'rows.created');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.deepEqual(stream.pending, [], 'the server noticed its own write as an outside edit');
    await writeXlsx(path, 'People', [['Name'], ['Ann'], ['Cy'], ['Di']]);
    const [changed] = await stream.next(1, 8000);
    assert.equal(changed.event, 'tab.changed');
    assert.deepEqual({ ...changed.data, id: undefined, at: undefined }, { id: undefined, type: 'tab.changed', connection: 'crm', tab: 'People', at: undefined, rowCount: 3 });
  });

  await t.test('a .csv rewritten on disk', async (t) => {
    const dir = await tempDir(t);
    const path = dir.path('list.csv');
    await writeFile(path, 'Name\nAnn\n');
    const url = await serveConfig(t, [{ id: 'list', source: { type: 'file', path } }]);
    const stream = await openEvents(`${url}/sheets/list/events`);
    defer(t, () => stream.close());
    await writeFile(path, 'Name\nAnn\nBo\n');
    const [changed] = await stream.next(1, 8000);
    assert.deepEqual([changed.event, changed.data.rowCount], ['tab.changed', 2]);
  });

  await t.test('a Google spreadsheet edited upstream', async (t) => {
    const emulator = await startEmulator();
    defer(t, () => emulator.close());
    const id = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: [['Name'], ['Ann']] }, { title: 'Orders', rows: [['Item'], ['pen']] }], access: { [TOKEN]: 'writer' } });
    const url = await serveConfig(t, [{ id: 'g', source: { type: 'google', spreadsheetId: id, rootUrl: emulator.rootUrl, accessToken: TOKEN, retries: 0, freshnessMs: 300 } }]);
    const stream = await openEvents(`${url}/sheets/g/events`);
    defer(t, () => stream.close());
    const edited = await fetch(`${emulator.rootUrl}v4/spreadsheets/${id}/values/People!A3?valueInputOption=RAW`, { method: 'PUT', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: '{"values": [["Bo"]]}' });
    assert.equal(edited.status, 200);
    await edited.arrayBuffer();
    const [changed] = await stream.next(1, 8000);
    assert.deepEqual([changed.event, changed.data.tab, changed.data.rowCount], ['tab.changed', 'People', 2]);
    // Orders did not change: no event for it.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.deepEqual(stream.pending, []);
  });
});
