// The connection stage (server/http/find-connection.ts): the id in the path, decoded, names a connection or is a 404.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isApiError } from '../../lib/errors.ts';
import { ConnectionRegistry } from '../../server/connections.ts';
import { findConnection, safeDecode } from '../../server/http/find-connection.ts';
import { connectionOf } from '../helpers/incoming.ts';

test('findConnection', async (t) => {
  const registry = new ConnectionRegistry([connectionOf(), connectionOf({ id: 'demo book' }), connectionOf({ id: '100%' })]);
  const cases: [string, string][] = [
    // [the id as it stands in the path, the connection found or the 404's message]
    ['demo', 'demo'],
    ['demo%20book', 'demo book'],
    ['100%', '100%'],
    ['100%25', '100%'],
    ['nope', 'There is no connection "nope".'],
    ['no%20such', 'There is no connection "no such".'],
  ];
  for (const [rawId, expected] of cases) {
    await t.test(rawId, () => {
      const found = findConnection(registry, rawId);
      if (isApiError(found)) {
        assert.equal(found.code, 'not_found');
        assert.equal(found.message, expected);
      } else {
        assert.equal(found.id, expected);
      }
    });
  }
  await t.test('a connection the registry gains is found on the next request', () => {
    registry.set(connectionOf({ id: 'late' }));
    assert.equal((findConnection(registry, 'late') as { id: string }).id, 'late');
  });
});

test('safeDecode', async (t) => {
  const cases: [string, string][] = [['plain', 'plain'], ['a%2Fb', 'a/b'], ['%E2%82%AC', '€'], ['%E2%82', '%E2%82'], ['%', '%']];
  for (const [segment, expected] of cases) await t.test(segment, () => assert.equal(safeDecode(segment), expected));
});
