// API keys: `GET /sheets/demo` with `X-Api-Key: a-secret` -> allowed with the key's operations
// (and tabs), or 401 `not_authenticated` / `authentication_failed`; a write with a read key -> 403.
// A key carries what it may do (`operations`, any of read, create, update, delete; the config's
// `"scope": "read"` is the short form of `["read"]`), which tabs it sees (`tabs`; left out: all)
// and when it stops working (`expiresAt`). After it, the key answers 401 `authentication_failed`
// saying it expired: whoever sends it holds it, so saying so tells nothing to a guesser.
// A connection is open (no key read at all) only when it says so: `isOpen`. A closed connection
// whose keys are all gone (the last one revoked, or expired) refuses every request: an empty
// key list never opens it (docs/admin-api.md, "Open and closed connections").
// Only SHA-256 digests of keys are ever held: the config loader hashes plaintext keys at
// start-up, and a key given as `sha256` in the config is never known in plaintext at all.
import { createHash, timingSafeEqual } from 'node:crypto';
import { apiError } from '../lib/errors.ts';
import type { ApiError } from '../lib/errors.ts';
import { OPERATIONS, type Operation } from '../lib/parse-request.ts';

/** The short forms of a key's operations: `read` is `["read"]`, `write` all four. */
export const SCOPES = ['read', 'write'] as const;
export type Scope = (typeof SCOPES)[number];

const READ_ONLY: readonly Operation[] = Object.freeze(['read'] as const);

/** The operations a scope stands for. */
export function operationsOfScope(scope: Scope): readonly Operation[] {
  return scope === 'read' ? READ_ONLY : OPERATIONS;
}

/** The short form of `operations` when there is one (`read`, `write`), else null. */
export function scopeOf(operations: readonly Operation[]): Scope | null {
  if (operations.length === 1 && operations[0] === 'read') return 'read';
  return OPERATIONS.every((operation) => operations.includes(operation)) ? 'write' : null;
}

/** A key as the server holds it: its digest, never the key. */
export interface ApiKey {
  /** SHA-256 of the key's UTF-8 bytes, 32 bytes. */
  readonly digest: Uint8Array;
  /** What it may do; left out: what `scope` says. */
  readonly operations?: readonly Operation[];
  /** The short form, for keys built in process (`{ digest, scope: 'read' }`); left out with no `operations` either: all four. */
  readonly scope?: Scope;
  /** The only tabs it sees (others answer 404 as if absent); left out: every tab. */
  readonly tabs?: readonly string[];
  /** A label from the config for logs (`"ci"`), so a log can say which key was used. */
  readonly name?: string;
  /** A key made by the admin API: its id and shown prefix (`sr_AbCd1234`), for the usage history (server/usage/). */
  readonly id?: string;
  readonly prefix?: string;
  /**
   * When the key stops working (ms since the epoch): its `expiresAt`, or the end of a rotated
   * key's overlap (the admin API), whichever comes first. Absent: it never expires.
   */
  readonly expiresAt?: number;
}

export interface Authenticated {
  readonly operations: readonly Operation[];
  /** The only tabs the caller sees; left out: every tab. */
  readonly tabs?: readonly string[];
  /** The matching key's label, when the config gave one. */
  readonly keyName?: string;
  /** The matching key's id and prefix, when the admin API made it (the usage history names it by them). */
  readonly keyId?: string;
  readonly keyPrefix?: string;
  /**
   * Who a rate limit counts (server/rate-limit/): `key:` and the start of the key's digest in
   * hex (never the key); left out on an open connection, where it is the client's address.
   */
  readonly caller?: string;
}

/** The header a protected connection reads (the contract never uses `Authorization`). */
export const API_KEY_HEADER = 'X-Api-Key';

/** SHA-256 of a key's UTF-8 bytes; the only form in which a key is kept or compared. */
export function digestKey(key: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(key, 'utf8').digest());
}

/** What an open connection grants every caller: one object for all of them. */
export const OPEN_ACCESS: Authenticated = Object.freeze({ operations: OPERATIONS });

/** What decides whether a connection needs a key. */
export interface Access {
  readonly keys: readonly ApiKey[];
  /**
   * true: any caller, no key read; false: a key is needed, even when there is none left (then
   * every request is refused). Left out: open exactly when it has no keys, the config file's rule
   * (a connection without `keys` is open), also for connections built in-process. The admin API
   * always sets it.
   */
  readonly open?: boolean;
}

export function isOpen(connection: Access): boolean {
  return connection.open ?? connection.keys.length === 0;
}

/**
 * Checks the `X-Api-Key` header value (`headers.get('x-api-key')`) against a closed connection's
 * keys (an open one is `OPEN_ACCESS`, see `isOpen`). No keys, or none still valid: every request
 * is refused, with a message saying why.
 */
export function authenticate(keys: readonly ApiKey[], headerValue: string | null, now: number = Date.now()): Authenticated | ApiError {
  // An empty header is no key at all: the client forgot to fill it in, it did not guess wrong.
  const missing = headerValue === null || headerValue === '';
  const presented = missing ? null : digestKey(headerValue);
  // Every key is compared, with no early exit, so the time taken says nothing about which key
  // (or how much of one) matched. Digests all have 32 bytes, as timingSafeEqual requires.
  let match: ApiKey | undefined;
  if (presented !== null) {
    for (const key of keys) {
      if (timingSafeEqual(key.digest, presented) && match === undefined) match = key;
    }
  }
  // Checked after the loop, so an expired key costs the same time as any other.
  if (match?.expiresAt !== undefined && match.expiresAt <= now) {
    return apiError('authentication_failed', `The API key in the ${API_KEY_HEADER} header expired at ${new Date(match.expiresAt).toISOString()}; ask the connection's admin for a new one.`);
  }
  if (!keys.some((key) => key.expiresAt === undefined || key.expiresAt > now)) {
    // Nothing secret to time here: no key can match. Said plainly, so the owner knows what to fix.
    const why = 'This connection has no usable API key, so it refuses every request; its admin can add a key (or open the connection) through the admin API.';
    return apiError(missing ? 'not_authenticated' : 'authentication_failed', why);
  }
  if (missing) {
    return apiError('not_authenticated', `This connection needs an API key: send it in the ${API_KEY_HEADER} header.`);
  }
  if (match === undefined) {
    return apiError('authentication_failed', `The API key in the ${API_KEY_HEADER} header is not valid for this connection.`);
  }
  return accessOf(match);
}

/** One object per key, made once: most requests allocate nothing here. */
const accesses = new WeakMap<ApiKey, Authenticated>();

function accessOf(key: ApiKey): Authenticated {
  let access = accesses.get(key);
  if (access === undefined) {
    access = Object.freeze({
      operations: key.operations ?? operationsOfScope(key.scope ?? 'write'),
      ...(key.tabs === undefined ? {} : { tabs: key.tabs }),
      ...(key.name === undefined ? {} : { keyName: key.name }),
      ...(key.id === undefined ? {} : { keyId: key.id }),
      ...(key.prefix === undefined ? {} : { keyPrefix: key.prefix }),
      // 12 bytes of a digest: enough to tell keys apart, and no help to anyone guessing one.
      caller: `key:${Buffer.from(key.digest.subarray(0, 12)).toString('hex')}`,
    });
    accesses.set(key, access);
  }
  return access;
}

const DOES: Record<Operation, string> = { read: 'read rows (GET)', create: 'create rows (POST)', update: 'update rows (PATCH, PUT)', delete: 'delete rows (DELETE)' };

/**
 * 403 `permission_denied` when the key may not do `operation`, naming what it may do; null when
 * it may: `This API key may not read rows (GET); it may create rows (POST).`
 */
export function operationRefusal(operations: readonly Operation[], operation: Operation): ApiError | null {
  if (operations.includes(operation)) return null;
  const may = operations.map((each) => DOES[each]);
  const list = may.length === 1 ? may[0] : `${may.slice(0, -1).join(', ')} and ${may.at(-1)}`;
  return apiError('permission_denied', `This API key may not ${DOES[operation]}; it may ${list}. Use a key allowed to ${operation}.`);
}
