// X-Api-Key checks: open connections, missing and wrong keys, read-only keys, digests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { ApiError } from '../../lib/errors.ts';
import { authenticate, digestKey, isOpen, operationRefusal } from '../../server/auth.ts';
import { OPERATIONS } from '../../lib/parse-request.ts';
import type { ApiKey, Authenticated } from '../../server/auth.ts';

const writer: ApiKey = { digest: digestKey('write-key'), scope: 'write' };
const reader: ApiKey = { digest: digestKey('read-key'), scope: 'read', name: 'dashboard' };
// As the config loader builds a `{ "sha256": "..." }` key: the plaintext is never passed in.
const fromDigest: ApiKey = {
  digest: new Uint8Array(Buffer.from(createHash('sha256').update('digest-only').digest('hex'), 'hex')),
  scope: 'write',
};

function expectError(result: Authenticated | ApiError, code: string, status: number): ApiError {
  assert.ok(result instanceof ApiError, `expected ${code}, got ${JSON.stringify(result)}`);
  assert.equal(result.code, code);
  assert.equal(result.status, status);
  return result;
}

test('a connection is open only when it says so, or (not saying) when it has no keys', async (t) => {
  const cases: [string, { keys: ApiKey[]; open?: boolean }, boolean][] = [
    ['open: true, no keys', { keys: [], open: true }, true],
    ['open: false, no keys', { keys: [], open: false }, false],
    ['open: false, a key', { keys: [writer], open: false }, false],
    ['not saying, no keys (the config file\'s rule)', { keys: [] }, true],
    ['not saying, a key', { keys: [writer] }, false],
  ];
  for (const [name, access, open] of cases) await t.test(name, () => assert.equal(isOpen(access), open));
});

test('a closed connection with no usable key refuses every request, saying why', async (t) => {
  const expired: ApiKey = { digest: digestKey('old-key'), scope: 'write', expiresAt: 1_000 };
  const cases: [string, ApiKey[], string | null, string][] = [
    ['no keys, no header', [], null, 'not_authenticated'],
    ['no keys, any header', [], 'anything', 'authentication_failed'],
    ['only an expired key, no header', [expired], null, 'not_authenticated'],
  ];
  for (const [name, keys, header, code] of cases) {
    await t.test(name, () => {
      const error = expectError(authenticate(keys, header, 2_000), code, 401);
      assert.match(error.message, /no usable API key/);
      assert.match(error.message, /admin API/);
    });
  }
});

test('a missing or empty header is 401 not_authenticated', async (t) => {
  for (const header of [null, '']) {
    await t.test(JSON.stringify(header), () => {
      const error = expectError(authenticate([writer], header), 'not_authenticated', 401);
      assert.match(error.message, /X-Api-Key/);
    });
  }
});

test('a wrong key is 401 authentication_failed and is never echoed', async (t) => {
  for (const header of ['wrong', 'write-key ', 'WRITE-KEY', 'write-ke', 'write-keyy', createHash('sha256').update('write-key').digest('hex')]) {
    await t.test(header, () => {
      const error = expectError(authenticate([writer, reader], header), 'authentication_failed', 401);
      assert.equal(JSON.stringify(error.toJSON()).includes(header), false);
      assert.equal(error.message.includes(header), false);
    });
  }
});

/** What a test compares of an access: its operations, tabs and label (`caller` is the digest's start). */
function grant(result: Authenticated | ApiError): unknown {
  if (result instanceof ApiError) return result.code;
  const { caller: _caller, ...rest } = result;
  return rest;
}

const ALL = [...OPERATIONS];

test('the right key authenticates with its operations', async (t) => {
  const cases: [string, unknown][] = [
    ['write-key', { operations: ALL }],
    ['read-key', { operations: ['read'], keyName: 'dashboard' }],
    ['digest-only', { operations: ALL }],
  ];
  for (const [header, expected] of cases) {
    await t.test(header, () => assert.deepEqual(grant(authenticate([writer, reader, fromDigest], header)), expected));
  }
});

test('a key with operations and tabs authenticates with them, and a caller naming the key but not holding it', () => {
  const form: ApiKey = { digest: digestKey('form-key'), operations: ['create'], tabs: ['Orders'] };
  const result = authenticate([writer, form], 'form-key');
  assert.deepEqual(grant(result), { operations: ['create'], tabs: ['Orders'] });
  const caller = (result as Authenticated).caller ?? '';
  assert.match(caller, /^key:[0-9a-f]{24}$/);
  assert.equal(caller.includes('form-key'), false);
  assert.notEqual((authenticate([writer, form], 'write-key') as Authenticated).caller, caller);
});

test('an expired key: 401 authentication_failed saying when it expired; other keys still work', async (t) => {
  const ends = Date.UTC(2027, 0, 1);
  const dated: ApiKey = { digest: digestKey('dated'), operations: ['read'], expiresAt: ends };
  const cases: [string, ApiKey[], number, string][] = [
    ['before its end', [writer, dated], ends - 1, 'ok'],
    ['at its end, with another key', [writer, dated], ends, 'expired'],
    ['after its end, the only key', [dated], ends + 1, 'expired'],
  ];
  for (const [name, keys, now, expected] of cases) {
    await t.test(name, () => {
      const result = authenticate(keys, 'dated', now);
      if (expected === 'ok') return assert.deepEqual(grant(result), { operations: ['read'] });
      const error = expectError(result, 'authentication_failed', 401);
      assert.match(error.message, /expired at 2027-01-01T00:00:00\.000Z/);
      assert.equal(error.message.includes('dated'), false);
    });
  }
  assert.deepEqual(grant(authenticate([writer, dated], 'write-key', ends + 1)), { operations: ALL });
});

test('any of many keys authenticates, whatever its position', () => {
  const keys: ApiKey[] = Array.from({ length: 50 }, (_, index) => ({ digest: digestKey(`key-${index}`), scope: index % 2 === 0 ? 'write' : 'read' }));
  assert.deepEqual(grant(authenticate(keys, 'key-0')), { operations: ALL });
  assert.deepEqual(grant(authenticate(keys, 'key-25')), { operations: ['read'] });
  assert.deepEqual(grant(authenticate(keys, 'key-49')), { operations: ['read'] });
  expectError(authenticate(keys, 'key-50'), 'authentication_failed', 401);
});

test('keys are compared as UTF-8 digests', () => {
  const keys: ApiKey[] = [{ digest: digestKey('clé-ключ-🔑'), scope: 'write' }];
  assert.deepEqual(grant(authenticate(keys, 'clé-ключ-🔑')), { operations: ALL });
  expectError(authenticate(keys, 'cle-ключ-🔑'), 'authentication_failed', 401);
  assert.equal(digestKey('x').length, 32);
});

test('an operation the key lacks: 403 permission_denied naming what it may do', async (t) => {
  const cases: [string, string[], string, string | null][] = [
    ['a read key reads', ['read'], 'read', null],
    ['a read key creates', ['read'], 'create', 'This API key may not create rows (POST); it may read rows (GET). Use a key allowed to create.'],
    ['a form key reads', ['create'], 'read', 'This API key may not read rows (GET); it may create rows (POST). Use a key allowed to read.'],
    ['a key without delete deletes', ['read', 'create', 'update'], 'delete', 'This API key may not delete rows (DELETE); it may read rows (GET), create rows (POST) and update rows (PATCH, PUT). Use a key allowed to delete.'],
  ];
  for (const [name, operations, operation, message] of cases) {
    await t.test(name, () => {
      const refused = operationRefusal(operations as never, operation as never);
      if (message === null) return assert.equal(refused, null);
      assert.ok(refused instanceof ApiError);
      assert.equal(refused.code, 'permission_denied');
      assert.equal(refused.status, 403);
      assert.equal(refused.message, message);
    });
  }
});

test('a rotated key works until its end, then is 401 like a wrong key', async (t) => {
  const ends = Date.UTC(2026, 0, 1);
  const rotated: ApiKey = { digest: digestKey('old-key'), scope: 'write', expiresAt: ends };
  const cases: [string, number, boolean][] = [
    ['a minute before its end', ends - 60_000, true],
    ['a millisecond before', ends - 1, true],
    ['at its end', ends, false],
    ['a day after', ends + 86_400_000, false],
  ];
  for (const [name, now, works] of cases) {
    await t.test(name, () => {
      const result = authenticate([writer, rotated], 'old-key', now);
      if (works) assert.deepEqual(grant(result), { operations: ALL });
      else expectError(result, 'authentication_failed', 401);
      // The other key is not affected.
      assert.deepEqual(grant(authenticate([writer, rotated], 'write-key', now)), { operations: ALL });
    });
  }
});
