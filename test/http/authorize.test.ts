// The auth stage (server/http/authorize.ts): the caller's scope or why it has none, and, after
// the quota, which writes are refused for the key's scope or the connection's.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiError, isApiError } from '../../lib/errors.ts';
import type { Operation } from '../../lib/parse-request.ts';
import { digestKey, operationsOfScope, type Scope } from '../../server/auth.ts';
import { authorize, permissionRefusal, type AccessSettings } from '../../server/http/authorize.ts';
import { memorySource } from '../../server/sources/memory.ts';
import { connectionOf, incoming, people } from '../helpers/incoming.ts';

const keyed = connectionOf({ keys: [{ digest: digestKey('reader'), scope: 'read' }, { digest: digestKey('writer'), scope: 'write' }] });
const open = connectionOf();
const closedWithoutKeys = connectionOf({ open: false });
const ANY: AccessSettings = { cors: '*', corsWrites: 'same-origin' };
const STALE: AccessSettings = { ...ANY, keysStale: () => apiError('upstream_unavailable', 'Out of touch with the admin state.') };

test('authorize', async (t) => {
  const cases: [string, AccessSettings, ReturnType<typeof connectionOf>, string, Record<string, string>, string][] = [
    // [case, settings, connection, method, headers, scope or error code]
    ['open: any caller writes', ANY, open, 'POST', {}, 'write'],
    ['open: its key header is not read', ANY, open, 'GET', { 'x-api-key': 'wrong' }, 'write'],
    ['keyed: a read key', ANY, keyed, 'GET', { 'x-api-key': 'reader' }, 'read'],
    ['keyed: a write key', ANY, keyed, 'GET', { 'x-api-key': 'writer' }, 'write'],
    ['keyed: no key', ANY, keyed, 'GET', {}, 'not_authenticated'],
    ['keyed: a wrong key', ANY, keyed, 'GET', { 'x-api-key': 'guess' }, 'authentication_failed'],
    ['closed with no keys left: everyone refused', ANY, closedWithoutKeys, 'GET', {}, 'not_authenticated'],
    ['keyed while the keys may be stale: 503 before the key', STALE, keyed, 'GET', { 'x-api-key': 'writer' }, 'upstream_unavailable'],
    ['open while the keys may be stale: served', STALE, open, 'GET', {}, 'write'],
    ['open: another site\'s write', ANY, open, 'POST', { origin: 'https://evil.example', host: 'api.example' }, 'permission_denied'],
    ['open: another site\'s write that cors.writes allows', { ...ANY, corsWrites: 'any' }, open, 'POST', { origin: 'https://evil.example', host: 'api.example' }, 'write'],
    ['keyed: another site\'s write with a key', ANY, keyed, 'POST', { origin: 'https://evil.example', 'x-api-key': 'writer' }, 'write'],
  ];
  for (const [name, settings, connection, method, headers, expected] of cases) {
    await t.test(name, () => {
      const access = authorize(settings, connection, incoming(method, 'http://api.example/sheets/demo', headers), headers.origin ?? null);
      assert.equal(isApiError(access) ? access.code : access.operations.length === 1 ? 'read' : 'write', expected);
    });
  }
});

test('permissionRefusal', async (t) => {
  const readOnly = connectionOf({ readOnly: true });
  const unwritable = connectionOf({ source: memorySource(people(), { writable: false }) });
  const cases: [string, ReturnType<typeof connectionOf>, Operation, Scope, string | null][] = [
    ['a read with a read key', open, 'read', 'read', null],
    ['a read of a read-only connection', readOnly, 'read', 'write', null],
    ['a create with a write key', open, 'create', 'write', null],
    ['a create with a read key', open, 'create', 'read', 'permission_denied'],
    ['a delete with a read key on a read-only connection: the key first', readOnly, 'delete', 'read', 'permission_denied'],
    ['an update of a read-only connection', readOnly, 'update', 'write', 'write_error'],
    ['an update of a source that cannot write', unwritable, 'update', 'write', 'write_error'],
  ];
  for (const [name, connection, operation, scope, expected] of cases) {
    await t.test(name, () => assert.equal(permissionRefusal(connection, operation, operationsOfScope(scope))?.code ?? null, expected));
  }
});
