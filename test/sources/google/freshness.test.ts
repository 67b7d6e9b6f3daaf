// Edits made outside sheetrest (in the Google Sheets UI, by another program): how soon a read
// shows them. Without the revision check, within the freshness window after the tab was read;
// with it, a stale tab is first checked against Drive's modifiedTime (one small request outside
// the Sheets quota) and read again only when the file changed. The source's clock is a fake one
// here, so the windows pass without waiting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Secret } from '../../../server/config/config.ts';
import { startEmulator, type Emulator, type LoggedRequest } from '../../../tools/google-emulator/mod.ts';
import { Budgets, openGoogleSource, type GoogleAuth, type GoogleSourceOptions } from '../../../server/sources/google/mod.ts';

const TOKEN = 'writer-token';
const EDITOR = 'someone-in-the-ui';

interface Context {
  after(fn: () => unknown): void;
}

async function setUp(t: Context, options: Partial<GoogleSourceOptions> = {}, auth: GoogleAuth = { kind: 'accessToken', token: new Secret(TOKEN) }) {
  const emulator = await startEmulator();
  const spreadsheetId = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: [['Name'], ['Ann'], ['Bob']] }, { title: 'Other', rows: [['X'], [1]] }], access: { [TOKEN]: 'writer', [EDITOR]: 'writer' } });
  const clock = { now: 0 };
  const logs: string[] = [];
  // Its own request budget: the default is the process's, shared by every source of one identity,
  // and this test's fake clock (from 0) would count its reads in one "minute" with other tests'.
  const source = await openGoogleSource({ spreadsheetId, rootUrl: emulator.rootUrl, auth, freshnessMs: 1_000, now: () => clock.now, log: (line) => logs.push(line), budgets: new Budgets(), ...options });
  t.after(async () => {
    await source.close();
    await emulator.close();
  });
  /** The first name in People, as the source answers it now, and what that cost upstream. */
  const read = async (at: number, fresh = false) => {
    clock.now = at;
    emulator.resetRequests();
    const workbook = await source.read({ tab: 'People', fresh });
    return { name: workbook.tabs.find((tab) => tab.name === 'People')?.rows[1].text[0], upstream: emulator.requests.map(describe), tab: workbook.tabs[0] };
  };
  /** An edit in Google Sheets, by someone else. */
  const editOutside = (name: string) =>
    fetch(`${emulator.rootUrl}v4/spreadsheets/${spreadsheetId}/values/People!A2?valueInputOption=RAW`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${EDITOR}`, 'content-type': 'application/json' },
      body: JSON.stringify({ values: [[name]] }),
    }).then((response) => assert.equal(response.status, 200));
  return { emulator, source, read, editOutside, logs };
}

function describe(request: LoggedRequest): string {
  if (request.path.startsWith('/drive/')) return `modifiedTime ${request.status}`;
  if (request.path === '/token') return 'token';
  return request.method === 'GET' ? `tab ${request.status}` : `${request.method} ${request.status}`;
}

test('without the check: an outside edit shows once the freshness window has passed', async (t) => {
  const { read, editOutside } = await setUp(t);
  assert.deepEqual((await read(0)).upstream, ['tab 200']);
  await editOutside('Edited');
  const cases: [number, string, string[]][] = [
    [999, 'Ann', []], // within the window: from memory, the edit not seen yet
    [1_000, 'Edited', ['tab 200']], // the window has passed: read again
    [1_500, 'Edited', []],
  ];
  for (const [at, name, upstream] of cases) {
    const seen = await read(at);
    assert.deepEqual([at, seen.name, seen.upstream], [at, name, upstream]);
  }
  await editOutside('Again');
  const fresh = await read(1_600, true);
  assert.deepEqual([fresh.name, fresh.upstream], ['Again', ['tab 200']], 'no-cache sees it at once');
});

test('with the check: a stale tab is read again only when the file changed', async (t) => {
  const { emulator, read, editOutside } = await setUp(t, { revisionCheck: { maxAgeMs: 60_000 } });
  const first = await read(0);
  assert.deepEqual(first.upstream, ['tab 200']);
  const cases: [string, number, () => Promise<void>, string, string[]][] = [
    ['no modifiedTime known yet: read', 1_000, async () => undefined, 'Ann', ['modifiedTime 200', 'tab 200']],
    ['unchanged: kept', 2_000, async () => undefined, 'Ann', ['modifiedTime 200']],
    ['within the window: nothing asked', 2_500, async () => undefined, 'Ann', []],
    ['unchanged again', 3_000, async () => undefined, 'Ann', ['modifiedTime 200']],
    ['edited outside: read', 4_000, () => editOutside('Edited'), 'Edited', ['modifiedTime 200', 'tab 200']],
    ['unchanged since', 5_000, async () => undefined, 'Edited', ['modifiedTime 200']],
    ['kept no longer than maxAgeMs after it was read', 64_000, async () => undefined, 'Edited', ['modifiedTime 200', 'tab 200']],
  ];
  for (const [name, at, before, expected, upstream] of cases) {
    await before();
    const seen = await read(at);
    assert.deepEqual([name, seen.name, seen.upstream], [name, expected, upstream]);
  }
  await read(66_000);
  const [modified] = emulator.requests;
  assert.ok(modified.bytes < 100, `the check's answer is small (${modified.bytes} bytes)`);
  assert.match(modified.query, /fields=modifiedTime/);
});

test('with the check: a kept tab keeps its object; a write here makes the next check read again', async (t) => {
  const { read, source } = await setUp(t, { revisionCheck: true });
  await read(0);
  await read(1_000);
  const kept = await read(2_000);
  const again = await read(3_000);
  assert.equal(again.tab, kept.tab);
  await source.write((workbook) => ({ plan: { tab: 'People', replaced: [], removed: [], appended: { start: 2, rows: [{ text: ['Cy'], value: ['Cy'] }] } }, workbook, result: null }), { tab: 'People' });
  assert.deepEqual((await read(3_100)).upstream, [], 'the write is in memory');
  assert.deepEqual((await read(4_000)).upstream, ['modifiedTime 200', 'tab 200'], 'the file changed (by this write): read again');
});

test('with the check and a window of 0: every read checks, and reads the tab only when it changed', async (t) => {
  const { read, editOutside } = await setUp(t, { revisionCheck: true, freshnessMs: 0 });
  await read(0);
  await read(1);
  const cases: [number, boolean, string[]][] = [
    [2, false, ['modifiedTime 200']],
    [2, false, ['modifiedTime 200']],
    [3, true, ['modifiedTime 200', 'tab 200']],
    [4, false, ['modifiedTime 200']],
  ];
  for (const [at, edit, upstream] of cases) {
    if (edit) await editOutside(`Edit ${at}`);
    assert.deepEqual([at, (await read(at)).upstream], [at, upstream]);
  }
});

test('a check that fails falls back to reading the tab, and says so in the log', async (t) => {
  const { emulator, read, logs } = await setUp(t, { revisionCheck: true, retry: { retries: 0 } });
  await read(0);
  emulator.failNext({ status: 403, path: /^\/drive\// });
  assert.deepEqual((await read(1_000)).upstream, ['modifiedTime 403', 'tab 200']);
  assert.match(logs.join('\n'), /revision check .* failed \(upstream_error\); reading the rows instead/);
});

test('a service account signs in for Drive metadata too when the check is on', async (t) => {
  const emulator = await startEmulator();
  const dir = await mkdtemp(join(tmpdir(), 'sheetrest-freshness-'));
  t.after(async () => {
    await emulator.close();
    await rm(dir, { recursive: true, force: true });
  });
  const robot = 'robot@freshness.iam.gserviceaccount.com';
  const keyPath = join(dir, 'key.json');
  await writeFile(keyPath, JSON.stringify(emulator.createServiceAccountKey(robot)));
  const spreadsheetId = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: [['Name'], ['Ann']] }], access: { [robot]: 'reader' } });
  const clock = { now: 0 };
  const source = await openGoogleSource({ spreadsheetId, rootUrl: emulator.rootUrl, auth: { kind: 'credentialsFile', path: keyPath }, freshnessMs: 1_000, now: () => clock.now, revisionCheck: true, retry: { retries: 0 }, budgets: new Budgets() });
  await source.read({ tab: 'People' });
  clock.now = 1_000;
  emulator.resetRequests();
  await source.read({ tab: 'People' });
  await source.close();
  assert.deepEqual(emulator.requests.map(describe), ['modifiedTime 200', 'tab 200'], 'the token may read Drive metadata');
});

/** The emulator answers Drive's files.get: modifiedTime moves with every write. */
test("the emulator's modifiedTime moves with every write", async (t) => {
  const emulator: Emulator = await startEmulator();
  t.after(() => emulator.close());
  const id = emulator.createSpreadsheet({ sheets: [{ title: 'S', rows: [['a']] }], access: { [TOKEN]: 'writer', reader: 'reader' } });
  const modified = async (token = TOKEN) => {
    const response = await fetch(`${emulator.rootUrl}drive/v3/files/${id}?fields=modifiedTime`, { headers: { authorization: `Bearer ${token}` } });
    return { status: response.status, body: (await response.json()) as { modifiedTime?: string } };
  };
  const before = await modified();
  assert.equal(before.status, 200);
  assert.deepEqual(Object.keys(before.body), ['modifiedTime']);
  assert.equal((await modified('reader')).status, 200, 'a reader may see it');
  assert.equal((await modified('nobody')).status, 401);
  // A token with the Sheets scope only may not ask Drive.
  const { clientId, clientSecret } = emulator.createOAuthClient();
  const refreshToken = emulator.issueRefreshToken(clientId, 'reader', ['https://www.googleapis.com/auth/spreadsheets']);
  const minted = await fetch(emulator.tokenUrl, { method: 'POST', body: new URLSearchParams({ grant_type: 'refresh_token', client_id: clientId, client_secret: clientSecret, refresh_token: refreshToken }) });
  const { access_token } = (await minted.json()) as { access_token: string };
  assert.equal((await modified(access_token)).status, 403);
  for (let n = 0; n < 2; n++) {
    const write = await fetch(`${emulator.rootUrl}v4/spreadsheets/${id}/values/S!A1?valueInputOption=RAW`, { method: 'PUT', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: '{"values": [["b"]]}' });
    assert.equal(write.status, 200);
  }
  const after = await modified();
  assert.ok(Date.parse(after.body.modifiedTime ?? '') > Date.parse(before.body.modifiedTime ?? ''), 'later after writes');
});
