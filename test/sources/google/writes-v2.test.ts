// Upserts and batch updates over the Google source (emulator): each is ONE upstream write however
// many rows it updates and appends (a spreadsheets.batchUpdate for an upsert that does both, a
// values.batchUpdate for a batch), and an upsert that only appends still reads the tab first, so
// a key added behind the server's back (another client, the browser) is updated, not appended twice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Secret } from '../../../server/config/config.ts';
import { startEmulator, type Emulator } from '../../../tools/google-emulator/mod.ts';
import { openGoogleSource } from '../../../server/sources/google/mod.ts';
import { appOver } from '../../helpers/app.ts';

const WRITER = 'writer-token';
const NO_QUOTA = { readPerMinutePerUser: 1e6, writePerMinutePerUser: 1e6, readPerMinutePerProject: 1e6, writePerMinutePerProject: 1e6 };

const writes = (emulator: Emulator) => emulator.requests.filter((request) => request.method !== 'GET' && request.path.startsWith('/v4/')).map((request) => request.path.split(':').at(-1));
const keysOf = (emulator: Emulator, id: string) => emulator.sheet(id, 'People').rows.slice(1).map((cells) => `${cells[0]?.formattedValue ?? ''}=${cells[1]?.formattedValue ?? ''}`);
const post = (body: unknown): RequestInit => ({ method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
const patch = (body: unknown): RequestInit => ({ method: 'PATCH', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

test('upserts and batch updates over the Google source', async (t) => {
  const emulator = await startEmulator({ quota: NO_QUOTA });
  t.after(() => emulator.close());
  const id = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: [['Key', 'Value'], ...Array.from({ length: 20 }, (_, i) => [`k${i}`, i])] }], access: { [WRITER]: 'writer' } });
  const open = () => openGoogleSource({ spreadsheetId: id, rootUrl: emulator.rootUrl, auth: { kind: 'accessToken', token: new Secret(WRITER) }, freshnessMs: 60_000, retry: { retries: 0 } });
  const source = await open();
  t.after(() => source.close());
  const call = await appOver(t, source);
  await (await call('/sheets/crm')).arrayBuffer();

  await t.test('an upsert updating 10 rows and appending 10 is one spreadsheets.batchUpdate', async () => {
    emulator.resetRequests();
    const body = Array.from({ length: 20 }, (_, i) => ({ Key: `k${i * 2}`, Value: `v${i}` }));
    const answer = await call('/sheets/crm?_upsert=Key', post(body));
    assert.equal(answer.status, 201);
    assert.equal(answer.headers.get('Sheetrest-Inserted'), '10');
    assert.equal(answer.headers.get('Sheetrest-Updated'), '10');
    assert.equal((await answer.json()).length, 20);
    assert.deepEqual(writes(emulator), ['batchUpdate']);
    assert.equal(keysOf(emulator, id).length, 30);
    assert.equal(keysOf(emulator, id)[2], 'k2=v1');
    assert.equal(keysOf(emulator, id)[29], 'k38=v19');
  });

  await t.test('a batch of 3 items over 12 rows is one values.batchUpdate', async () => {
    emulator.resetRequests();
    const answer = await call('/sheets/crm', patch([
      { where: { Key: 'k1*' }, set: { Value: 'ten-ish' } },
      { where: { Value: 'ten-ish' }, set: { Value: 'seen' } },
      { where: { _index: 0 }, set: { Value: 'first' } },
    ]));
    assert.equal(answer.status, 200);
    const items = await answer.json();
    assert.deepEqual(items.map((rows: unknown[]) => rows.length), [11, 11, 1]);
    assert.deepEqual(writes(emulator), ['batchUpdate']);
    assert.equal(emulator.requests.filter((request) => request.path.includes('/values:batchUpdate')).length, 1);
    assert.equal(keysOf(emulator, id)[0], 'k0=first');
    assert.equal(keysOf(emulator, id)[1], 'k1=seen');
  });

  await t.test('an append-only upsert reads the tab first: a key added elsewhere is updated, not appended twice', async () => {
    const other = await open();
    const elsewhere = await appOver(t, other);
    assert.equal((await elsewhere('/sheets/crm?_upsert=Key', post({ Key: 'late', Value: 'there' }))).status, 201);
    await other.close();
    emulator.resetRequests();
    const answer = await call('/sheets/crm?_upsert=Key', post({ Key: 'LATE', Value: 'here' }));
    assert.equal(answer.status, 200, 'updated: the key was found on a fresh read');
    assert.deepEqual(keysOf(emulator, id).filter((pair) => pair.toLowerCase().startsWith('late')), ['LATE=here']);
  });
});
