// API keys: `GET /sheets/demo` with `X-Api-Key: a-secret` -> allowed with the key's scope, or
// 401 `not_authenticated` / `authentication_failed`; a write with a read key -> 403.
// A connection is open (no key read at all) only when it says so: `isOpen`. A closed connection
// whose keys are all gone (the last one revoked, or expired) refuses every request: an empty
// key list never opens it (docs/admin-api.md, "Open and closed connections").
// Only SHA-256 digests of keys are ever held: the config loader hashes plaintext keys at
// start-up, and a key given as `sha256` in the config is never known in plaintext at all.
import { createHash, timingSafeEqual } from 'node:crypto';
import { apiError } from '../lib/errors.ts';
import type { ApiError } from '../lib/errors.ts';

/** What a key may do. `write` also reads. */
export const SCOPES = ['read', 'write'] as const;
export type Scope = (typeof SCOPES)[number];

/** A key as the server holds it: its digest, never the key. */
export interface ApiKey {
  /** SHA-256 of the key's UTF-8 bytes, 32 bytes. */
  readonly digest: Uint8Array;
  readonly scope: Scope;
  /** A label from the config for logs (`"ci"`), so a log can say which key was used. */
  readonly name?: string;
  /**
   * When the key stops working (ms since the epoch): a key rotated through the admin API keeps
   * working until its overlap ends. Absent: it never expires.
   */
  readonly expiresAt?: number;
}

export interface Authenticated {
  readonly scope: Scope;
  /** The matching key's label, when the config gave one. */
  readonly keyName?: string;
}

/** The header a protected connection reads (the contract never uses `Authorization`). */
export const API_KEY_HEADER = 'X-Api-Key';

/** SHA-256 of a key's UTF-8 bytes; the only form in which a key is kept or compared. */
export function digestKey(key: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(key, 'utf8').digest());
}

/** What an open connection grants every caller: one object for all of them. */
export const OPEN_ACCESS: Authenticated = Object.freeze({ scope: 'write' });

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
  if (!keys.some((key) => key.expiresAt === undefined || key.expiresAt > now)) {
    // Nothing secret to time here: no key can match. Said plainly, so the owner knows what to fix.
    const why = 'This connection has no usable API key, so it refuses every request; its admin can add a key (or open the connection) through the admin API.';
    return apiError(missing ? 'not_authenticated' : 'authentication_failed', why);
  }
  if (missing) {
    return apiError('not_authenticated', `This connection needs an API key: send it in the ${API_KEY_HEADER} header.`);
  }
  const presented = digestKey(headerValue);
  // Every key is compared, with no early exit, so the time taken says nothing about which key
  // (or how much of one) matched. Digests all have 32 bytes, as timingSafeEqual requires.
  let match: ApiKey | undefined;
  for (const key of keys) {
    if (timingSafeEqual(key.digest, presented) && match === undefined) match = key;
  }
  // Checked after the loop, so an expired key costs the same time as any other.
  if (match?.expiresAt !== undefined && match.expiresAt <= now) match = undefined;
  if (match === undefined) {
    return apiError('authentication_failed', `The API key in the ${API_KEY_HEADER} header is not valid for this connection.`);
  }
  return match.name === undefined ? { scope: match.scope } : { scope: match.scope, keyName: match.name };
}

export function canWrite(scope: Scope): boolean {
  return scope === 'write';
}

/** 403 `permission_denied` when a read-only key tries to create, update or delete; null when allowed. */
export function checkWrite(scope: Scope): ApiError | null {
  if (canWrite(scope)) return null;
  return apiError('permission_denied', 'This API key may only read; use a key with write access to change rows.');
}
