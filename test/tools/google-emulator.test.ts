// The Google Sheets API emulator over real HTTP with plain fetch, checked against Google's
// documented behaviour: `GET {rootUrl}v4/spreadsheets/{id}/values/Sheet1` -> trailing empties
// left out; USER_ENTERED parsing; append finding the table's end; deleteDimension; permissions;
// quotas; injected failures. Runs under Node, Deno and Bun.
import assert from 'node:assert/strict';
import { createSign } from 'node:crypto';
import { test } from 'node:test';
import { ALLOWED_SKEW_SECONDS, GOOGLE_TOKEN_URL, startEmulator, type Emulator, type EmulatorCell, type EmulatorOptions } from '../../tools/google-emulator/mod.ts';

interface Context {
  after(fn: () => unknown): void;
}

async function emulatorFor(t: Context, options: EmulatorOptions = {}): Promise<Emulator> {
  const emulator = await startEmulator(options);
  t.after(() => emulator.close());
  return emulator;
}

interface Answer {
  status: number;
  headers: Headers;
  // deno-lint-ignore no-explicit-any
  body: any;
}

async function call(emulator: Emulator, method: string, path: string, options: { token?: string | null; body?: unknown; signal?: AbortSignal } = {}): Promise<Answer> {
  const token = options.token === undefined ? 'editor' : options.token;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const response = await fetch(emulator.rootUrl + path, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body), signal: options.signal });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

/** POSTs a form to the token endpoint, as OAuth clients do. */
async function tokenRequest(emulator: Emulator, fields: Record<string, string>): Promise<Answer> {
  const response = await fetch(emulator.tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

/** A JWT signed RS256 with `privateKey` (PEM); null leaves the signature out. */
function signJwt(privateKey: string | null, claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const signed = `${part({ alg: 'RS256', typ: 'JWT' })}.${part(claims)}`;
  if (privateKey === null) return `${signed}.`;
  return `${signed}.${createSign('RSA-SHA256').update(signed).sign(privateKey, 'base64url')}`;
}

const PEOPLE: EmulatorCell[][] = [
  ['Name', 'Age', 'Joined', 'Note'],
  ['Ann', 30, { date: '2024-01-15' }, null],
  ['Bob', 41.5, { date: '2023-06-01 12:00:00' }, 'x'],
  ['Cid', { value: 0.25, format: { type: 'PERCENT', pattern: '0%' } }, null, null],
  ['Dee', { formula: '=B2+1', value: 31 }],
];

function seed(emulator: Emulator, rows: EmulatorCell[][] = PEOPLE): string {
  return emulator.createSpreadsheet({
    title: 'People',
    sheets: [
      { title: 'Sheet1', rows },
      { title: 'Sales 2024', rows: [['Q', 'Total'], ['Q1', 10]] },
      { title: "It's", rows: [['a', null, null], [null]] },
    ],
    access: { editor: 'writer', viewer: 'reader' },
  });
}

test('values.get and batchGet render as documented', async (t) => {
  const emulator = await emulatorFor(t);
  const id = seed(emulator);
  const base = `v4/spreadsheets/${id}/values`;
  const cases: [string, number, unknown][] = [
    // Trailing empty cells and rows are left out; a gap inside a row reads as "".
    [`${base}/Sheet1`, 200, { range: 'Sheet1!A1:Z1000', majorDimension: 'ROWS', values: [['Name', 'Age', 'Joined', 'Note'], ['Ann', '30', '2024-01-15'], ['Bob', '41.5', '2023-06-01 12:00:00', 'x'], ['Cid', '25%'], ['Dee', '31']] }],
    [`${base}/Sheet1!A2:C3?valueRenderOption=UNFORMATTED_VALUE`, 200, { range: 'Sheet1!A2:C3', majorDimension: 'ROWS', values: [['Ann', 30, 45306], ['Bob', 41.5, 45078.5]] }],
    [`${base}/Sheet1!C2:C3?valueRenderOption=UNFORMATTED_VALUE&dateTimeRenderOption=FORMATTED_STRING`, 200, { range: 'Sheet1!C2:C3', majorDimension: 'ROWS', values: [['2024-01-15'], ['2023-06-01 12:00:00']] }],
    [`${base}/Sheet1!B4:B5?valueRenderOption=FORMULA`, 200, { range: 'Sheet1!B4:B5', majorDimension: 'ROWS', values: [[0.25], ['=B2+1']] }],
    [`${base}/Sheet1!A1:B2?majorDimension=COLUMNS`, 200, { range: 'Sheet1!A1:B2', majorDimension: 'COLUMNS', values: [['Name', 'Ann'], ['Age', '30']] }],
    [`${base}/${encodeURIComponent("'Sales 2024'!A1:F")}`, 200, { range: "'Sales 2024'!A1:F1000", majorDimension: 'ROWS', values: [['Q', 'Total'], ['Q1', '10']] }],
    [`${base}/${encodeURIComponent("'It''s'!A:Z")}`, 200, { range: "'It''s'!A1:Z1000", majorDimension: 'ROWS', values: [['a']] }],
    [`${base}/A1:A2`, 200, { range: 'Sheet1!A1:A2', majorDimension: 'ROWS', values: [['Name'], ['Ann']] }],
    // A range with no data has no `values` at all.
    [`${base}/Sheet1!F1:G9`, 200, { range: 'Sheet1!F1:G9', majorDimension: 'ROWS' }],
    [`${base}/Nope!A1`, 400, { error: { code: 400, message: 'Unable to parse range: Nope!A1', status: 'INVALID_ARGUMENT' } }],
    [`${base}/Sheet1!A1001`, 400, { error: { code: 400, message: 'Range (Sheet1!A1001) exceeds grid limits. Max rows: 1000, max columns: 26', status: 'INVALID_ARGUMENT' } }],
    [`${base}/Sheet1?valueRenderOption=PRETTY`, 400, undefined],
    [`v4/spreadsheets/missing/values/Sheet1`, 404, { error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND' } }],
    [`${base}:batchGet?ranges=Sheet1!A1&ranges=${encodeURIComponent("'Sales 2024'!B2")}`, 200, { spreadsheetId: id, valueRanges: [{ range: 'Sheet1!A1', majorDimension: 'ROWS', values: [['Name']] }, { range: "'Sales 2024'!B2", majorDimension: 'ROWS', values: [['10']] }] }],
  ];
  for (const [path, status, body] of cases) {
    await t.test(`GET ${decodeURIComponent(path.replace(base, ''))}`, async () => {
      const answer = await call(emulator, 'GET', path);
      assert.equal(answer.status, status);
      assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
      if (body !== undefined) assert.deepEqual(answer.body, body);
      else assert.equal(answer.body.error.status, 'INVALID_ARGUMENT');
    });
  }
});

test('USER_ENTERED parses like typing into the UI; RAW stores as sent', async (t) => {
  const emulator = await emulatorFor(t);
  const id = seed(emulator, [['A2 is here'], [21]]);
  // input, valueInputOption -> stored userEnteredValue, formattedValue, number format type
  const cases: [string | number | boolean, 'RAW' | 'USER_ENTERED', unknown, string, string | undefined][] = [
    ['007', 'USER_ENTERED', { numberValue: 7 }, '7', undefined],
    ['007', 'RAW', { stringValue: '007' }, '007', undefined],
    ["'007", 'USER_ENTERED', { stringValue: '007' }, '007', undefined],
    ["'=1+2", 'USER_ENTERED', { stringValue: '=1+2' }, '=1+2', undefined],
    ['=1+2', 'RAW', { stringValue: '=1+2' }, '=1+2', undefined],
    ['=A2*2', 'USER_ENTERED', { formulaValue: '=A2*2' }, '42', undefined],
    ['=SUM(A2, 8)', 'USER_ENTERED', { formulaValue: '=SUM(A2, 8)' }, '29', undefined],
    ['=1/0', 'USER_ENTERED', { formulaValue: '=1/0' }, '#DIV/0!', undefined],
    ['=VLOOKUP(1,A:B,2)', 'USER_ENTERED', { formulaValue: '=VLOOKUP(1,A:B,2)' }, '#ERROR!', undefined],
    ['12%', 'USER_ENTERED', { numberValue: 0.12 }, '12%', 'PERCENT'],
    ['1,234', 'USER_ENTERED', { numberValue: 1234 }, '1,234', 'NUMBER'],
    ['$5.50', 'USER_ENTERED', { numberValue: 5.5 }, '$5.50', 'CURRENCY'],
    ['true', 'USER_ENTERED', { boolValue: true }, 'TRUE', undefined],
    ['TRUE', 'RAW', { stringValue: 'TRUE' }, 'TRUE', undefined],
    ['2024-01-15', 'USER_ENTERED', { numberValue: 45306 }, '2024-01-15', 'DATE'],
    ['2024-01-15 18:00:00', 'USER_ENTERED', { numberValue: 45306.75 }, '2024-01-15 18:00:00', 'DATE_TIME'],
    ['2024-02-31', 'USER_ENTERED', { stringValue: '2024-02-31' }, '2024-02-31', undefined],
    ['12 monkeys', 'USER_ENTERED', { stringValue: '12 monkeys' }, '12 monkeys', undefined],
    [3.5, 'USER_ENTERED', { numberValue: 3.5 }, '3.5', undefined],
    [false, 'RAW', { boolValue: false }, 'FALSE', undefined],
  ];
  for (const [i, [input, option, entered, formatted, formatType]] of cases.entries()) {
    await t.test(`${option} ${JSON.stringify(input)}`, async () => {
      // One row per case: the values API leaves a cell's number format alone, so reusing a cell would carry it over.
      const answer = await call(emulator, 'PUT', `v4/spreadsheets/${id}/values/Sheet1!C${i + 1}?valueInputOption=${option}`, { body: { values: [[input]] } });
      assert.equal(answer.status, 200);
      assert.deepEqual(answer.body, { spreadsheetId: id, updatedRange: `Sheet1!C${i + 1}`, updatedRows: 1, updatedColumns: 1, updatedCells: 1 });
      const cell = emulator.sheet(id, 'Sheet1').rows[i][2];
      assert.deepEqual(cell.userEnteredValue, entered);
      assert.equal(cell.formattedValue, formatted);
      assert.equal(cell.numberFormat?.type, formatType);
    });
  }
  await t.test('valueInputOption is required', async () => {
    const answer = await call(emulator, 'PUT', `v4/spreadsheets/${id}/values/Sheet1!C1`, { body: { values: [['x']] } });
    assert.equal(answer.status, 400);
  });
  await t.test('a bounded range refuses values that spill out of it', async () => {
    const answer = await call(emulator, 'PUT', `v4/spreadsheets/${id}/values/Sheet1!C1:C1?valueInputOption=RAW`, { body: { values: [['x', 'y']] } });
    assert.equal(answer.status, 400);
    assert.match(answer.body.error.message, /tried writing to column \[D\]/);
  });
});

test('values.batchUpdate: null skips a cell, "" clears it, and a bad range writes nothing', async (t) => {
  const emulator = await emulatorFor(t);
  const id = seed(emulator, [['a', 'b', 'c']]);
  const path = `v4/spreadsheets/${id}/values:batchUpdate`;
  const ok = await call(emulator, 'POST', path, { body: { valueInputOption: 'RAW', data: [{ range: 'Sheet1!A1', values: [[null, '', 'C'], ['x']] }], includeValuesInResponse: true } });
  assert.equal(ok.status, 200);
  assert.equal(ok.body.totalUpdatedCells, 3);
  assert.equal(ok.body.totalUpdatedSheets, 1);
  assert.deepEqual(ok.body.responses[0].updatedData, { range: 'Sheet1!A1:C2', majorDimension: 'ROWS', values: [['a', '', 'C'], ['x']] });
  const bad = await call(emulator, 'POST', path, { body: { valueInputOption: 'RAW', data: [{ range: 'Sheet1!A1', values: [['changed']] }, { range: 'Nope!A1', values: [['x']] }] } });
  assert.equal(bad.status, 400);
  assert.equal(emulator.sheet(id, 'Sheet1').rows[0][0].formattedValue, 'a');
});

test('values.append writes after the table found in the range', async (t) => {
  const emulator = await emulatorFor(t);
  // Row 3 is blank in column A but has data in C, so it belongs to the table; row 5 is fully
  // empty, so the data in rows 6-7 is another table below a gap.
  const rows: EmulatorCell[][] = [['Id', 'Name', 'Note'], ['1', 'Ann', null], [null, null, 'cont.'], ['3', 'Cid', null], [], ['below', 'gap'], ['more', 'below']];
  const cases: [string, string, unknown[][], { tableRange?: string; updatedRange: string }, (string | undefined)[]][] = [
    ['Sheet1', 'OVERWRITE', [['4', 'Dee']], { tableRange: 'Sheet1!A1:C4', updatedRange: 'Sheet1!A5:B5' }, ['Id', '1', undefined, '3', '4', 'below', 'more']],
    ['Sheet1!A:C', 'OVERWRITE', [['4', 'Dee'], ['5', 'Eve']], { tableRange: 'Sheet1!A1:C4', updatedRange: 'Sheet1!A5:B6' }, ['Id', '1', undefined, '3', '4', '5', 'more']],
    ['Sheet1!A1', 'INSERT_ROWS', [['4', 'Dee'], ['5', 'Eve']], { tableRange: 'Sheet1!A1:C4', updatedRange: 'Sheet1!A5:B6' }, ['Id', '1', undefined, '3', '4', '5', undefined, 'below', 'more']],
    ['Sheet1!A6:B', 'OVERWRITE', [['x']], { tableRange: 'Sheet1!A6:B7', updatedRange: 'Sheet1!A8' }, ['Id', '1', undefined, '3', undefined, 'below', 'more', 'x']],
    ['Sheet1!E10:F', 'OVERWRITE', [['x']], { updatedRange: 'Sheet1!E10' }, ['Id', '1', undefined, '3', undefined, 'below', 'more', undefined, undefined, undefined]],
  ];
  for (const [range, insert, values, expected, columnA] of cases) {
    await t.test(`${range} ${insert} ${values.length} row(s)`, async () => {
      const id = emulator.createSpreadsheet({ sheets: [{ title: 'Sheet1', rows }], access: { editor: 'writer' } });
      const answer = await call(emulator, 'POST', `v4/spreadsheets/${id}/values/${encodeURIComponent(range)}:append?valueInputOption=RAW&insertDataOption=${insert}`, { body: { values } });
      assert.equal(answer.status, 200);
      assert.equal(answer.body.tableRange, expected.tableRange);
      assert.equal(answer.body.updates.updatedRange, expected.updatedRange);
      assert.deepEqual(emulator.sheet(id, 'Sheet1').rows.map((row) => row[0]?.formattedValue), columnA);
    });
  }
  await t.test('includeValuesInResponse returns the appended values', async () => {
    const id = emulator.createSpreadsheet({ sheets: [{ title: 'Sheet1', rows: [] }], access: { editor: 'writer' } });
    const answer = await call(emulator, 'POST', `v4/spreadsheets/${id}/values/Sheet1!A1:append?valueInputOption=USER_ENTERED&includeValuesInResponse=true&responseValueRenderOption=UNFORMATTED_VALUE`, { body: { values: [['Ann', '30']] } });
    assert.equal(answer.body.tableRange, undefined);
    assert.deepEqual(answer.body.updates.updatedData, { range: 'Sheet1!A1:B1', majorDimension: 'ROWS', values: [['Ann', 30]] });
  });
});

test('spreadsheets.get: properties, grid data and field masks', async (t) => {
  const emulator = await emulatorFor(t);
  const id = seed(emulator);
  await t.test('without grid data', async () => {
    const answer = await call(emulator, 'GET', `v4/spreadsheets/${id}`);
    assert.equal(answer.status, 200);
    assert.equal(answer.body.properties.title, 'People');
    // Like Google's JSON, the first sheet's sheetId 0 and index 0 are left out.
    assert.deepEqual(answer.body.sheets[0], { properties: { title: 'Sheet1', sheetType: 'GRID', gridProperties: { rowCount: 1000, columnCount: 26 } } });
    assert.deepEqual(answer.body.sheets.map((sheet: { properties: { title: string } }) => sheet.properties.title), ['Sheet1', 'Sales 2024', "It's"]);
  });
  await t.test('nested field mask with ranges', async () => {
    const fields = 'sheets(properties(sheetId,title,index,gridProperties),data(rowData(values(formattedValue,effectiveValue,userEnteredValue,effectiveFormat/numberFormat))))';
    const answer = await call(emulator, 'GET', `v4/spreadsheets/${id}?ranges=${encodeURIComponent('Sheet1!A2:D3')}&fields=${encodeURIComponent(fields)}`);
    assert.equal(answer.status, 200);
    assert.equal(answer.body.sheets.length, 1);
    const [ann, bob] = answer.body.sheets[0].data[0].rowData;
    // Trailing empty cells are left out: Ann's row stops at C.
    assert.equal(ann.values.length, 3);
    assert.deepEqual(ann.values[2], { userEnteredValue: { numberValue: 45306 }, effectiveValue: { numberValue: 45306 }, formattedValue: '2024-01-15', effectiveFormat: { numberFormat: { type: 'DATE', pattern: 'yyyy-mm-dd' } } });
    assert.deepEqual(bob.values[3], { userEnteredValue: { stringValue: 'x' }, effectiveValue: { stringValue: 'x' }, formattedValue: 'x' });
  });
  await t.test('formula cells keep their cached result', async () => {
    const answer = await call(emulator, 'GET', `v4/spreadsheets/${id}?ranges=Sheet1!B5&includeGridData=true`);
    assert.deepEqual(answer.body.sheets[0].data[0].startRow, 4);
    const cell = answer.body.sheets[0].data[0].rowData[0].values[0];
    assert.deepEqual([cell.userEnteredValue, cell.effectiveValue, cell.formattedValue], [{ formulaValue: '=B2+1' }, { numberValue: 31 }, '31']);
  });
  await t.test('dotted masks', async () => {
    const answer = await call(emulator, 'GET', `v4/spreadsheets/${id}?fields=properties.title,spreadsheetId`);
    assert.deepEqual(answer.body, { spreadsheetId: id, properties: { title: 'People' } });
  });
});

test('spreadsheets.batchUpdate: deleteDimension shifts rows up, all requests or none', async (t) => {
  const emulator = await emulatorFor(t);
  const id = seed(emulator, [['h'], ['r1'], ['r2'], ['r3'], ['r4']]);
  const path = `v4/spreadsheets/${id}:batchUpdate`;
  const columnA = () => emulator.sheet(id, 'Sheet1').rows.map((row) => row[0]?.formattedValue);
  const deleteRows = (sheetId: number, startIndex: number, endIndex: number) => ({ deleteDimension: { range: { sheetId, dimension: 'ROWS', startIndex, endIndex } } });
  const ok = await call(emulator, 'POST', path, { body: { requests: [deleteRows(0, 1, 3)] } });
  assert.equal(ok.status, 200);
  assert.deepEqual(ok.body, { spreadsheetId: id, replies: [{}] });
  assert.deepEqual(columnA(), ['h', 'r3', 'r4']);
  const grid = await call(emulator, 'GET', `v4/spreadsheets/${id}?fields=sheets.properties.gridProperties.rowCount`);
  assert.equal(grid.body.sheets[0].properties.gridProperties.rowCount, 998);
  const failed = await call(emulator, 'POST', path, { body: { requests: [deleteRows(0, 1, 2), deleteRows(99, 0, 1)] } });
  assert.equal(failed.status, 400);
  assert.match(failed.body.error.message, /No grid with id: 99/);
  assert.deepEqual(columnA(), ['h', 'r3', 'r4']);
  const added = await call(emulator, 'POST', path, { body: { requests: [{ addSheet: { properties: { title: 'New' } } }] } });
  assert.equal(added.body.replies[0].addSheet.properties.title, 'New');
  assert.equal(typeof added.body.replies[0].addSheet.properties.sheetId, 'number');
  const unknown = await call(emulator, 'POST', path, { body: { requests: [{ mergeCells: {} }] } });
  assert.equal(unknown.status, 400);
});

test('permissions: editors write, viewers read, others are refused', async (t) => {
  const emulator = await emulatorFor(t);
  const id = seed(emulator);
  const publicId = emulator.createSpreadsheet({ sheets: [{ title: 'Sheet1', rows: [['open']] }], publicAccess: 'reader', access: { 'api-key-1': 'reader' } });
  const read = `v4/spreadsheets/${id}/values/Sheet1!A1`;
  const write = `v4/spreadsheets/${id}/values/Sheet1!A1?valueInputOption=RAW`;
  const cases: [string, string, string, string | null, number, string | undefined][] = [
    ['viewer reads', 'GET', read, 'viewer', 200, undefined],
    ['viewer writes', 'PUT', write, 'viewer', 403, 'PERMISSION_DENIED'],
    ['editor writes', 'PUT', write, 'editor', 200, undefined],
    ['unknown token', 'GET', read, 'made-up', 401, 'UNAUTHENTICATED'],
    ['no credentials', 'GET', read, null, 403, 'PERMISSION_DENIED'],
    ['API key on a private sheet', 'GET', `${read}?key=api-key-1`, null, 403, 'PERMISSION_DENIED'],
    ['API key on a public sheet', 'GET', `v4/spreadsheets/${publicId}/values/Sheet1?key=api-key-1`, null, 200, undefined],
    ['API key writing', 'PUT', `v4/spreadsheets/${publicId}/values/Sheet1!A1?valueInputOption=RAW&key=api-key-1`, null, 401, 'UNAUTHENTICATED'],
    ['invalid API key', 'GET', `v4/spreadsheets/${publicId}/values/Sheet1?key=nope`, null, 400, 'INVALID_ARGUMENT'],
  ];
  for (const [name, method, path, token, status, errorStatus] of cases) {
    await t.test(name, async () => {
      const answer = await call(emulator, method, path, { token, body: method === 'PUT' ? { values: [['v']] } : undefined });
      assert.equal(answer.status, status);
      assert.equal(answer.body.error?.status, errorStatus);
    });
  }
  await t.test('grant and revoke', async () => {
    emulator.grant(id, 'newcomer', 'reader');
    assert.equal((await call(emulator, 'GET', read, { token: 'newcomer' })).status, 200);
    emulator.grant(id, 'newcomer', null);
    assert.equal((await call(emulator, 'GET', read, { token: 'newcomer' })).status, 403);
  });
  await t.test('token endpoint: a refresh token issued to a client, for that client only', async () => {
    const { clientId, clientSecret } = emulator.createOAuthClient();
    const refreshToken = emulator.issueRefreshToken(clientId, 'ann@example.com');
    emulator.grant(id, 'ann@example.com', 'writer');
    const refreshed = await tokenRequest(emulator, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId, client_secret: clientSecret });
    assert.equal(refreshed.status, 200);
    assert.equal((await call(emulator, 'PUT', write, { token: refreshed.body.access_token, body: { values: [['v']] } })).status, 200);
    const cases: [string, Record<string, string>, number, string][] = [
      ['wrong secret', { client_secret: 'nope' }, 401, 'invalid_client'],
      ['unknown client', { client_id: 'other.apps.googleusercontent.com' }, 401, 'invalid_client'],
      ['unknown refresh token', { refresh_token: '1//made-up' }, 400, 'invalid_grant'],
      ['unknown grant type', { grant_type: 'password' }, 400, 'unsupported_grant_type'],
    ];
    for (const [name, change, status, error] of cases) {
      const answer = await tokenRequest(emulator, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId, client_secret: clientSecret, ...change });
      assert.deepEqual([name, answer.status, answer.body.error], [name, status, error]);
    }
    emulator.revokeRefreshToken(refreshToken);
    const revoked = await tokenRequest(emulator, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId, client_secret: clientSecret });
    assert.deepEqual([revoked.status, revoked.body.error], [400, 'invalid_grant']);
  });
  await t.test('token endpoint: a service account assertion must be signed by its key, with sound claims', async () => {
    const email = 'robot@demo.iam.gserviceaccount.com';
    const key = emulator.createServiceAccountKey(email);
    assert.equal(key.token_uri, emulator.tokenUrl);
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: email, aud: GOOGLE_TOKEN_URL, scope: 'https://www.googleapis.com/auth/spreadsheets', iat: now, exp: now + 3600 };
    const other = emulator.createServiceAccountKey('other@demo.iam.gserviceaccount.com');
    const cases: [string, string, number, string | undefined][] = [
      ['signed by its key', signJwt(key.private_key, claims), 200, undefined],
      ['audience: the emulator\'s own token URL', signJwt(key.private_key, { ...claims, aud: emulator.tokenUrl }), 200, undefined],
      ['signed by another account\'s key', signJwt(other.private_key, claims), 400, 'invalid_grant'],
      ['not signed', signJwt(null, claims), 400, 'invalid_grant'],
      ['unknown account', signJwt(key.private_key, { ...claims, iss: 'ghost@demo.iam.gserviceaccount.com' }), 400, 'invalid_grant'],
      ['wrong audience', signJwt(key.private_key, { ...claims, aud: 'https://example.com/token' }), 400, 'invalid_grant'],
      ['expired', signJwt(key.private_key, { ...claims, iat: now - 7200, exp: now - 3600 }), 400, 'invalid_grant'],
      ['lives longer than an hour', signJwt(key.private_key, { ...claims, exp: now + 7200 }), 400, 'invalid_grant'],
      ['issued in the future', signJwt(key.private_key, { ...claims, iat: now + 3000, exp: now + 3600 }), 400, 'invalid_grant'],
      ['no scope', signJwt(key.private_key, { ...claims, scope: '' }), 400, 'invalid_scope'],
      ['not a JWT', 'abc', 400, 'invalid_grant'],
    ];
    for (const [name, assertion, status, error] of cases) {
      const answer = await tokenRequest(emulator, { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion });
      assert.deepEqual([name, answer.status, answer.body.error], [name, status, error]);
    }
    const minted = await tokenRequest(emulator, { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: signJwt(key.private_key, claims) });
    assert.equal(minted.body.expires_in, 3599);
    const token = minted.body.access_token;
    assert.equal((await call(emulator, 'GET', read, { token })).status, 403);
    emulator.grant(id, email, 'writer');
    assert.equal((await call(emulator, 'GET', read, { token })).status, 200);
    // A read-only scope reads but does not write.
    const readOnly = await tokenRequest(emulator, { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: signJwt(key.private_key, { ...claims, scope: 'https://www.googleapis.com/auth/spreadsheets.readonly' }) });
    assert.equal((await call(emulator, 'GET', read, { token: readOnly.body.access_token })).status, 200);
    assert.equal((await call(emulator, 'PUT', write, { token: readOnly.body.access_token, body: { values: [['v']] } })).status, 403);
    // Tokens expire; a deleted key signs nothing more.
    emulator.expireAccessTokens();
    assert.equal((await call(emulator, 'GET', read, { token })).status, 401);
    emulator.deleteServiceAccountKey(email);
    const refused = await tokenRequest(emulator, { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: signJwt(key.private_key, claims) });
    assert.deepEqual([refused.status, refused.body.error_description], [400, 'Invalid JWT Signature.']);
  });
  await t.test('token endpoint: the emulator\'s clock may run apart from this machine\'s', async () => {
    const email = 'clock@demo.iam.gserviceaccount.com';
    const key = emulator.createServiceAccountKey(email);
    const now = Math.floor(Date.now() / 1000);
    const assertion = signJwt(key.private_key, { iss: email, aud: GOOGLE_TOKEN_URL, scope: 'https://www.googleapis.com/auth/spreadsheets', iat: now, exp: now + 3600 });
    const cases: [number, number][] = [
      [0, 200],
      [(ALLOWED_SKEW_SECONDS - 60) * -1000, 200],
      [(ALLOWED_SKEW_SECONDS + 60) * -1000, 400],
      [30 * 60_000, 200],
      [2 * 3_600_000, 400],
    ];
    for (const [skew, status] of cases) {
      emulator.setClockSkew(skew);
      const answer = await tokenRequest(emulator, { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion });
      assert.deepEqual([skew, answer.status], [skew, status]);
    }
    emulator.setClockSkew(0);
  });
});

test('per-minute quotas answer 429 RESOURCE_EXHAUSTED, reads and writes apart', async (t) => {
  const emulator = await emulatorFor(t, { quota: { readPerMinutePerUser: 2, readPerMinutePerProject: 3, writePerMinutePerUser: 1 } });
  const id = seed(emulator);
  const read = (token: string) => call(emulator, 'GET', `v4/spreadsheets/${id}/values/Sheet1!A1`, { token });
  assert.deepEqual([(await read('editor')).status, (await read('editor')).status], [200, 200]);
  const refused = await read('editor');
  assert.equal(refused.status, 429);
  assert.equal(refused.body.error.status, 'RESOURCE_EXHAUSTED');
  assert.match(refused.body.error.message, /Read requests per minute per user/);
  // Another user still has room per user, until the project's 3 reads a minute run out.
  assert.equal((await read('viewer')).status, 200);
  const project = await read('viewer');
  assert.equal(project.status, 429);
  assert.match(project.body.error.message, /Read requests per minute'/);
  const write = () => call(emulator, 'PUT', `v4/spreadsheets/${id}/values/Sheet1!A1?valueInputOption=RAW`, { body: { values: [['w']] } });
  assert.deepEqual([(await write()).status, (await write()).status], [200, 429]);
  emulator.resetQuota();
  assert.equal((await read('editor')).status, 200);
});

test('injected latency, failures and hangs; the request log', async (t) => {
  const emulator = await emulatorFor(t);
  const id = seed(emulator);
  const path = `v4/spreadsheets/${id}/values/Sheet1!A1`;
  await t.test('failNext', async () => {
    emulator.failNext({ status: 503, times: 2, path: /:append$/ });
    emulator.failNext({ status: 429, retryAfterSeconds: 7 });
    const limited = await call(emulator, 'GET', path);
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '7');
    assert.equal(limited.body.error.status, 'RESOURCE_EXHAUSTED');
    assert.equal((await call(emulator, 'GET', path)).status, 200);
    const append = () => call(emulator, 'POST', `v4/spreadsheets/${id}/values/Sheet1!A1:append?valueInputOption=RAW`, { body: { values: [['x']] } });
    const first = await append();
    assert.deepEqual(first.body, { error: { code: 503, message: 'The service is currently unavailable.', status: 'UNAVAILABLE' } });
    assert.deepEqual([(await append()).status, (await append()).status], [503, 200]);
  });
  await t.test('hangNext never answers', async () => {
    emulator.hangNext({ path: /values/ });
    await assert.rejects(call(emulator, 'GET', path, { signal: AbortSignal.timeout(150) }));
    assert.equal((await call(emulator, 'GET', path)).status, 200);
  });
  await t.test('latency', async () => {
    emulator.setLatency(120);
    const started = Date.now();
    assert.equal((await call(emulator, 'GET', path)).status, 200);
    assert.ok(Date.now() - started >= 110, `answered after ${Date.now() - started} ms`);
    emulator.setLatency(0);
  });
  await t.test('requests log', async () => {
    emulator.resetRequests();
    await call(emulator, 'GET', `${path}?valueRenderOption=FORMULA`);
    await call(emulator, 'GET', 'v4/spreadsheets/missing');
    assert.deepEqual(
      emulator.requests.map(({ method, path, query, status }) => ({ method, path, query, status })),
      [
        { method: 'GET', path: `/v4/spreadsheets/${id}/values/Sheet1!A1`, query: 'valueRenderOption=FORMULA', status: 200 },
        { method: 'GET', path: '/v4/spreadsheets/missing', query: '', status: 404 },
      ],
    );
    assert.ok(emulator.requests.every(({ at }) => Math.abs(Date.now() - at) < 10_000));
  });
});
