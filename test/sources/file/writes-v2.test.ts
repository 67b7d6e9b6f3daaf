// Upserts, batch updates and row ids over the workbook file source, in each format: the one plan
// each makes is journaled as one write, read back after a restart (the journal replayed), and
// folded into a file a spreadsheet program shows the same way; an upsert's appends are not
// re-applied blindly on a file whose tab changed length behind the server's back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createApp } from '../../../server/http/app.ts';
import { createLogger } from '../../../server/log.ts';
import { journalLine, parseJournal } from '../../../server/sources/file/journal.ts';
import { openFileSource } from '../../../server/sources/file/mod.ts';
import { replan } from '../../../server/sources/file/rebase.ts';
import { appOver } from '../../helpers/app.ts';
import type { FileFormat } from '../../../server/sources/file/mod.ts';
import { recordingLog, shownText, tempFolder, writeFixture } from '../../helpers/file-source.ts';

const json = (method: string, body: unknown): RequestInit => ({ method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
const FIXTURE = { tabs: [{ name: 'People', rows: [['Email', 'Name', 'Age'], ['ann@x.org', 'Ann', 30], ['bob@x.org', 'Bob', 41], ['cy@x.org', 'Cy', 52]] }] };
const AFTER = [['Email', 'Name', 'Age'], ['ann@x.org', 'Annie', '31'], ['bob@x.org', 'Bob', '99'], ['cy@x.org', 'Cy', '99'], ['dee@x.org', 'Dee', '20']];

for (const format of ['xlsx', 'ods', 'csv'] as FileFormat[]) {
  test(`an upsert and a batch over a .${format} file: journaled, replayed after a restart, folded`, async (t) => {
    const folder = await tempFolder();
    t.after(() => folder.cleanup());
    const path = await writeFixture(folder.dir, FIXTURE as never, format);
    const tab = 'People';
    // Folding only when closed: the restart below must replay the journal.
    const source = await openFileSource({ path, foldAfterMs: Infinity, foldAfterEntries: 1000, log: recordingLog().log });
    const call = await appOver(t, source);
    const upsert = await call(`/sheets/crm/tabs/${tab}?_upsert=Email`, json('POST', [{ Email: 'ANN@x.org', Name: 'Annie', Age: 31 }, { Email: 'dee@x.org', Name: 'Dee', Age: 20 }]));
    assert.equal(upsert.status, 201, await upsert.clone().text());
    assert.equal(upsert.headers.get('sheetrest-inserted'), '1');
    const batch = await call(`/sheets/crm/tabs/${tab}`, json('PATCH', [{ where: { Age: '__gt(40)' }, set: { Age: 99 } }, { where: { Email: 'ann@x.org' }, set: { Email: 'ann@x.org' } }]));
    assert.equal(batch.status, 200, await batch.clone().text());
    await source.close();

    const again = await openFileSource({ path, foldAfterMs: Infinity, foldAfterEntries: 1000, log: recordingLog().log });
    const reread = await appOver(t, again);
    const rows = await (await reread(`/sheets/crm/tabs/${tab}`)).json();
    assert.deepEqual(rows.map((row: Record<string, string>) => [row.Email, row.Name, row.Age]), AFTER.slice(1));
    await again.close();
    const shown = await shownText(path);
    assert.deepEqual(Object.values(shown)[0], AFTER, 'folded into the file as a spreadsheet program shows it');
  });
}

test('increment ids over a file: counted from the file, after a restart too', async (t) => {
  // The connection's rowId is an engine option: the app is made here with it.
  const folder = await tempFolder();
  t.after(() => folder.cleanup());
  const path = await writeFixture(folder.dir, { tabs: [{ name: 'People', rows: [['Id', 'Name'], [4, 'Ann']] }] } as never, 'xlsx');
  const open = () => openFileSource({ path, log: recordingLog().log });
  const first = await open();
  const appOn = (source: Awaited<ReturnType<typeof open>>) =>
    createApp({ connections: [{ id: 'crm', source, keys: [], readOnly: false, engine: { rowId: { column: 'Id', generate: 'increment' } } }], quota: { take: () => ({ allowed: true, headers: {} }), peek: () => ({}) }, bodyBytes: 1 << 20, cors: '*', log: createLogger('silent') });
  const post = async (source: Awaited<ReturnType<typeof open>>, name: string) => (await (await appOn(source).fetch(new Request('http://x/sheets/crm', json('POST', { Name: name })))).json()).Id;
  assert.equal(await post(first, 'Bob'), '5');
  await first.close();
  const second = await open();
  assert.equal(await post(second, 'Cy'), '6');
  await second.close();
});

test('a journaled upsert keeps readsRows, and is not re-applied on a tab whose length changed outside', () => {
  const row = (...cells: string[]) => ({ text: cells, value: cells });
  const plan = { tab: 'People', replaced: [], removed: [], appended: { start: 2, rows: [row('new@x.org')] }, readsRows: true as const };
  const text = journalLine({ journal: 1, base: 'f' }) + journalLine({ plan, expected: { dataRows: 2, rows: [] } });
  const [entry] = parseJournal(text)!.entries;
  assert.equal(entry.plan.readsRows, true, 'read back from the journal');
  const tab = (count: number) => ({ tabs: [{ name: 'People', rows: [row('Email'), ...Array.from({ length: count }, (_, i) => row(`p${i}@x.org`))] }] });
  assert.equal(replan(tab(2), entry)?.appended?.start, 2, 'the same rows: re-applied');
  assert.equal(replan(tab(3), entry), null, 'a row added outside (perhaps the key): set aside, not appended blindly');
  const post = { ...entry, plan: { ...entry.plan, readsRows: undefined } };
  assert.equal(replan(tab(3), post)?.appended?.start, 3, 'a plain POST still goes after whatever the tab ends with');
});
