// What a throw becomes (server/http/failures.ts): the client's mistake as its error, ours logged and a bare 500.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiError } from '../../lib/errors.ts';
import { failureAnswer, sheetFailureAnswer } from '../../server/http/failures.ts';
import { createLogger } from '../../server/log.ts';
import { connectionOf, incoming } from '../helpers/incoming.ts';

function logged() {
  const lines: string[] = [];
  return { log: createLogger('info', (line) => lines.push(line)), lines };
}

test('a target no URL can hold is the client\'s 400, not logged', () => {
  const { log, lines } = logged();
  const answered = failureAnswer(log, incoming('GET', 'http://h:99999/'), new TypeError('Invalid URL'));
  assert.equal(answered.status, 400);
  assert.equal(JSON.parse(String(answered.body)).error, 'invalid_parameter');
  assert.equal(lines.length, 0);
});

test('anything else thrown outside a connection is logged and a bare 500', () => {
  const { log, lines } = logged();
  const answered = failureAnswer(log, incoming('GET', 'http://x/sheets/demo'), new Error('disk on fire'));
  assert.equal(answered.status, 500);
  assert.doesNotMatch(String(answered.body), /disk on fire/);
  assert.equal(lines.length, 1);
  assert.match(lines[0], /disk on fire/);
});

test('on a connection: an ApiError is the client\'s answer, unlogged; a bug is logged with the connection', () => {
  const { log, lines } = logged();
  assert.equal(sheetFailureAnswer(log, connectionOf(), apiError('upstream_unavailable', 'Google is down.')).status, 503);
  assert.equal(lines.length, 0);
  const answered = sheetFailureAnswer(log, connectionOf(), new RangeError('oops'));
  assert.equal(answered.status, 500);
  assert.equal(lines.length, 1);
  assert.equal(JSON.parse(lines[0]).connection, 'demo');
});
