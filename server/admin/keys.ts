// Keys made by the admin API: `POST /_admin/connections/crm/keys` -> `sr_AbCd1234...` (43
// random characters after `sr_`), shown once in that answer; only its SHA-256 digest is kept
// (admin.json), as with the config's keys (server/auth.ts). A rotation makes a new key and gives
// the old one an end: it keeps working for the overlap, so clients can switch without a gap.
import { randomBytes } from 'node:crypto';
import { digestKey, type ApiKey, type Scope } from '../auth.ts';
import type { StoredKey } from './store.ts';

/** How long a rotated key keeps working by default: a day, time for a deploy to pick up the new one. */
export const DEFAULT_OVERLAP_SECONDS = 24 * 60 * 60;
/** The longest overlap: 30 days. A rotation is meant to end the old key, not to keep two for ever. */
export const MAX_OVERLAP_SECONDS = 30 * 24 * 60 * 60;

const KEY_PREFIX = 'sr_';
/** `sr_` and 8 characters: enough to tell a connection's keys apart (48 bits), far from enough to guess the rest. */
const SHOWN_CHARACTERS = KEY_PREFIX.length + 8;

export interface NewKey {
  /** The key itself: answered once, never stored. */
  readonly secret: string;
  readonly stored: StoredKey;
}

export function makeKey(scope: Scope, name: string | undefined, now: Date): NewKey {
  const secret = KEY_PREFIX + randomBytes(32).toString('base64url');
  const stored: StoredKey = {
    id: randomBytes(8).toString('hex'),
    prefix: secret.slice(0, SHOWN_CHARACTERS),
    sha256: Buffer.from(digestKey(secret)).toString('hex'),
    scope,
    ...(name === undefined ? {} : { name }),
    created: now.toISOString(),
  };
  return { secret, stored };
}

export function isExpired(key: StoredKey, now: Date): boolean {
  return key.expires !== undefined && Date.parse(key.expires) <= now.getTime();
}

/** The keys as the app checks them: digests, with a rotated key's end. */
export function apiKeysOf(keys: readonly StoredKey[]): ApiKey[] {
  return keys.map((key) => ({
    digest: new Uint8Array(Buffer.from(key.sha256, 'hex')),
    scope: key.scope,
    ...(key.name === undefined ? {} : { name: key.name }),
    ...(key.expires === undefined ? {} : { expiresAt: Date.parse(key.expires) }),
  }));
}

/** What the admin API shows of a key: never the key or its digest. */
export interface KeyView {
  readonly id: string | null;
  readonly prefix: string | null;
  readonly scope: Scope;
  readonly name: string | null;
  readonly created: string | null;
  readonly expires: string | null;
  readonly replacedBy: string | null;
}

export function keyView(key: StoredKey): KeyView {
  return { id: key.id, prefix: key.prefix, scope: key.scope, name: key.name ?? null, created: key.created, expires: key.expires ?? null, replacedBy: key.replacedBy ?? null };
}

/** A config file's key: only its scope and label are known to the admin API. */
export function configKeyView(key: ApiKey): KeyView {
  return { id: null, prefix: null, scope: key.scope, name: key.name ?? null, created: null, expires: null, replacedBy: null };
}
