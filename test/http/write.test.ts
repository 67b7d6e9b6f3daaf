// The body and engine stages for everything but GET and HEAD (server/http/write.ts): the body
// read under its cap, parsed, and the engine's write plan made durable by the source; with an
// Idempotency-Key, once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../../server/log.ts';
import { Writes } from '../../server/http/write.ts';
import type { Source } from '../../server/sources/source.ts';
import { connectionOf, incoming } from '../helpers/incoming.ts';

function writesWith(maxBytes = 1024) {
  const lines: string[] = [];
  return { writes: new Writes({ maxBytes, timeoutMs: 1000, inFlight: new Set() }, createLogger('warn', (line) => lines.push(line))), lines };
}

const rowsOf = (source: Source) => (source as Source & { workbook: { tabs: { rows: { text: string[] }[] }[] } }).workbook.tabs[0].rows.map((row) => row.text.join(','));

test('a POST appends its rows', async () => {
  const { writes } = writesWith();
  const connection = connectionOf();
  const answered = await writes.answer(connection, incoming('POST', 'http://x/sheets/demo', { 'content-type': 'application/json' }, '[{"Name":"Cy","Age":25}]'));
  assert.equal(answered.status, 201);
  assert.deepEqual(rowsOf(connection.source), ['Name,Age', 'Ann,30', 'Bob,41', 'Cy,25']);
});

test('a body past the cap is 413, and nothing is written', async () => {
  const { writes } = writesWith(16);
  const connection = connectionOf();
  const answered = await writes.answer(connection, incoming('POST', 'http://x/sheets/demo', { 'content-type': 'application/json' }, '[{"Name":"Cy","Age":25}]'));
  assert.equal(answered.status, 413);
  assert.equal(rowsOf(connection.source).length, 3);
});

test('a body the engine refuses is 400', async () => {
  const { writes } = writesWith();
  const answered = await writes.answer(connectionOf(), incoming('POST', 'http://x/sheets/demo', { 'content-type': 'application/json' }, '{not json'));
  assert.equal(answered.status, 400);
});

test('a DELETE reads no body', async () => {
  const { writes } = writesWith();
  const connection = connectionOf();
  const answered = await writes.answer(connection, incoming('DELETE', 'http://x/sheets/demo/1'));
  assert.equal(answered.status, 200);
  assert.deepEqual(rowsOf(connection.source), ['Name,Age', 'Ann,30']);
});

test('an OPTIONS without a preflight\'s headers is the engine\'s answer, nothing written', async () => {
  const { writes } = writesWith();
  const answered = await writes.answer(connectionOf(), incoming('OPTIONS', 'http://x/sheets/demo'));
  assert.equal(answered.status, 204);
  assert.match(answered.headers.Allow ?? '', /POST/);
});

test('a write with an Idempotency-Key runs once; its retry gets the kept answer', async () => {
  const { writes } = writesWith();
  const connection = connectionOf();
  const post = () => writes.answer(connection, incoming('POST', 'http://x/sheets/demo', { 'content-type': 'application/json', 'idempotency-key': 'order-17' }, '[{"Name":"Cy","Age":25}]'));
  const first = await post();
  const retry = await post();
  assert.equal(first.status, 201);
  assert.equal(retry.status, 201);
  assert.equal(retry.headers['Idempotent-Replayed'], 'true');
  assert.deepEqual(rowsOf(connection.source), ['Name,Age', 'Ann,30', 'Bob,41', 'Cy,25']);
  // Another connection object keeps its own keys.
  const other = connectionOf();
  await writes.answer(other, incoming('POST', 'http://x/sheets/demo', { 'content-type': 'application/json', 'idempotency-key': 'order-17' }, '[{"Name":"Cy","Age":25}]'));
  assert.equal(rowsOf(other.source).length, 4);
});
