// Keys made by the admin API: `POST /_admin/connections/crm/keys` -> `sr_AbCd1234...` (43
// random characters after `sr_`), shown once in that answer; only its SHA-256 digest is kept
// (admin.json), as with the config's keys (server/auth.ts). A rotation makes a new key and gives
// the old one an end: it keeps working for the overlap, so clients can switch without a gap.
// A key may be made for some operations (`{"operations": ["create"]}`: a web form's), some tabs
// and until a moment (`expiresAt`); a rotation hands all three to the new key unless it is told otherwise.
import { randomBytes } from 'node:crypto';
import { digestKey, operationsOfScope, scopeOf, type ApiKey, type Scope } from '../auth.ts';
import type { Operation } from '../../lib/parse-request.ts';
import type { StoredKey } from './store.ts';

/** What a key may do, where and until when. */
export interface KeyGrant {
  readonly operations: readonly Operation[];
  readonly tabs?: readonly string[];
  /** ISO 8601, as given (normalised to UTC). */
  readonly expiresAt?: string;
}

/** A stored key's grant: `operations`, or what its `scope` (keys made before operations) says. */
export function grantOf(key: StoredKey): KeyGrant {
  return {
    operations: key.operations ?? operationsOfScope(key.scope ?? 'write'),
    ...(key.tabs === undefined ? {} : { tabs: key.tabs }),
    ...(key.expiresAt === undefined ? {} : { expiresAt: key.expiresAt }),
  };
}

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

export function makeKey(grant: KeyGrant, name: string | undefined, now: Date): NewKey {
  const secret = KEY_PREFIX + randomBytes(32).toString('base64url');
  const stored: StoredKey = {
    id: randomBytes(8).toString('hex'),
    prefix: secret.slice(0, SHOWN_CHARACTERS),
    sha256: Buffer.from(digestKey(secret)).toString('hex'),
    operations: [...grant.operations],
    ...(grant.tabs === undefined ? {} : { tabs: [...grant.tabs] }),
    ...(name === undefined ? {} : { name }),
    created: now.toISOString(),
    ...(grant.expiresAt === undefined ? {} : { expiresAt: new Date(grant.expiresAt).toISOString() }),
  };
  return { secret, stored };
}

/** When the key stops working (ms): its own end or a rotation's, whichever comes first; undefined: never. */
export function endOf(key: StoredKey): number | undefined {
  const ends = [key.expires, key.expiresAt].filter((end) => end !== undefined).map((end) => Date.parse(end));
  return ends.length === 0 ? undefined : Math.min(...ends);
}

export function isExpired(key: StoredKey, now: Date): boolean {
  const end = endOf(key);
  return end !== undefined && end <= now.getTime();
}

/** The keys as the app checks them: digests, with a rotated key's end. */
export function apiKeysOf(keys: readonly StoredKey[]): ApiKey[] {
  return keys.map((key) => {
    const end = endOf(key);
    const { operations, tabs } = grantOf(key);
    return {
      digest: new Uint8Array(Buffer.from(key.sha256, 'hex')),
      operations,
      ...(tabs === undefined ? {} : { tabs }),
      ...(key.name === undefined ? {} : { name: key.name }),
      id: key.id,
      prefix: key.prefix,
      ...(end === undefined ? {} : { expiresAt: end }),
    };
  });
}

/** What the admin API shows of a key: never the key or its digest. */
export interface KeyView {
  readonly id: string | null;
  readonly prefix: string | null;
  /** The short form of `operations` (`read`, `write`: all four), or null when there is none. */
  readonly scope: Scope | null;
  readonly operations: readonly Operation[];
  /** The only tabs it sees; null: every tab. */
  readonly tabs: readonly string[] | null;
  readonly name: string | null;
  readonly created: string | null;
  /** When it stops working, as made; null: never. */
  readonly expiresAt: string | null;
  /** When a rotated key stops working (its overlap's end); null: not rotated. */
  readonly expires: string | null;
  readonly replacedBy: string | null;
}

export function keyView(key: StoredKey): KeyView {
  const { operations, tabs } = grantOf(key);
  return {
    id: key.id, prefix: key.prefix, scope: scopeOf(operations), operations, tabs: tabs ?? null, name: key.name ?? null, created: key.created,
    expiresAt: key.expiresAt ?? null, expires: key.expires ?? null, replacedBy: key.replacedBy ?? null,
  };
}

/** A config file's key: what it may do and its label, never the key. */
export function configKeyView(key: ApiKey): KeyView {
  const operations = key.operations ?? operationsOfScope(key.scope ?? 'write');
  return {
    id: null, prefix: null, scope: scopeOf(operations), operations, tabs: key.tabs ?? null, name: key.name ?? null, created: null,
    expiresAt: key.expiresAt === undefined ? null : new Date(key.expiresAt).toISOString(), expires: null, replacedBy: null,
  };
}
