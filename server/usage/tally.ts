// A day's requests of every connection, counted as they are answered: `GET /sheets/crm/search`
// answered 200 for the key "ci" -> crm's day: requests 1; its key "ci": 1; its operation
// "search": 1. 4xx and 5xx answers are counted apart (`clientErrors`, `serverErrors`). Counting
// is a few map lookups and additions, no I/O: the stores (file-store.ts, redis-store.ts) save
// the counts later, in batches. Shared by both, with the views the admin API answers.
import type { Authenticated } from '../auth.ts';

/** Days of history kept (the state folder's files, Redis's hashes): about a quarter. */
export const KEEP_DAYS = 90;
/** Keys counted apart per connection and day; requests of further keys are counted under `other`. */
export const MAX_KEYS_PER_DAY = 50;
/** Recent requests kept per connection (in each instance's memory). */
export const RECENT_REQUESTS = 100;

/** What a request did, from its method and path: `read`, `search`, `query`, `aggregate`, `events`, `openapi`, `create`, `update`, `delete`. */
export type UsageOperation = 'read' | 'search' | 'query' | 'aggregate' | 'events' | 'openapi' | 'create' | 'update' | 'delete' | 'other';

export interface Counts {
  requests: number;
  /** Answers 400 to 499. */
  clientErrors: number;
  /** Answers 500 to 599. */
  serverErrors: number;
}

/** Who asked: a key by its id (admin API) or digest's start (config file), or `open` (no key needed), `none` (refused before a key matched), `other` (past the cap). */
export interface KeyLabel {
  readonly key: string;
  readonly id: string | null;
  readonly prefix: string | null;
  readonly name: string | null;
}

export interface KeyCounts extends KeyLabel, Counts {}

/** One connection's day, as counted. */
export interface DayCounts extends Counts {
  readonly keys: Map<string, KeyCounts>;
  readonly operations: Map<string, Counts>;
}

/** A day as the admin API and the saved files show it. */
export interface DayUsage extends Counts {
  /** `2026-11-23` (UTC). */
  readonly day: string;
  /** Busiest first. */
  readonly keys: KeyCounts[];
  readonly operations: Record<string, Counts>;
}

export const OPEN_KEY: KeyLabel = Object.freeze({ key: 'open', id: null, prefix: null, name: null });
export const NO_KEY: KeyLabel = Object.freeze({ key: 'none', id: null, prefix: null, name: null });
export const OTHER_KEYS: KeyLabel = Object.freeze({ key: 'other', id: null, prefix: null, name: null });

/** The label of the caller: one object per key, made once (the Authenticated objects are made once per key too). */
export function keyLabelOf(access: Authenticated | null): KeyLabel {
  if (access === null) return NO_KEY;
  if (access.caller === undefined) return OPEN_KEY;
  let label = labels.get(access);
  if (label === undefined) {
    label = Object.freeze({ key: access.keyId ?? access.caller, id: access.keyId ?? null, prefix: access.keyPrefix ?? null, name: access.keyName ?? null });
    labels.set(access, label);
  }
  return label;
}

const labels = new WeakMap<Authenticated, KeyLabel>();

/**
 * `GET /sheets/crm/tabs/People/search?...` -> `search`. The word counts only where the contract
 * puts it (`/sheets/{id}/search`, `/sheets/{id}/tabs/{tab}/search`): `/sheets/crm/Name/search`
 * is a filter on the value "search", a read.
 */
export function operationOfRequest(method: string, url: string): UsageOperation {
  switch (method) {
    case 'GET':
    case 'HEAD':
      break;
    case 'POST':
      return 'create';
    case 'PATCH':
    case 'PUT':
      return 'update';
    case 'DELETE':
      return 'delete';
    default:
      return 'other';
  }
  const start = url.indexOf('/sheets/');
  if (start === -1) return 'read';
  let end = url.indexOf('?', start);
  if (end === -1) end = url.length;
  const hash = url.indexOf('#', start);
  if (hash !== -1 && hash < end) end = hash;
  // The segments after `/sheets/{id}/`, counted without making them (a request pays no allocation here).
  const afterId = url.indexOf('/', start + 8);
  if (afterId === -1 || afterId >= end - 1) return 'read';
  let slashes = 0;
  for (let at = afterId + 1; at < end; at++) if (url.charCodeAt(at) === 47) slashes++;
  if (!(slashes === 0 || (slashes === 2 && url.startsWith('tabs/', afterId + 1)))) return 'read';
  const word = url.lastIndexOf('/', end - 1) + 1;
  const is = (name: string): boolean => end - word === name.length && url.startsWith(name, word);
  if (is('search')) return 'search';
  if (is('query')) return 'query';
  if (is('aggregate')) return 'aggregate';
  if (is('events')) return 'events';
  if (is('openapi.json')) return 'openapi';
  return 'read';
}

export function zeroCounts(): Counts {
  return { requests: 0, clientErrors: 0, serverErrors: 0 };
}

function countInto(counts: Counts, status: number): void {
  counts.requests += 1;
  if (status >= 500) counts.serverErrors += 1;
  else if (status >= 400) counts.clientErrors += 1;
}

function addInto(counts: Counts, more: Counts): void {
  counts.requests += more.requests;
  counts.clientErrors += more.clientErrors;
  counts.serverErrors += more.serverErrors;
}

/** The counts of one day (one UTC day key) for every connection. */
export class DayTally {
  readonly day: string;
  readonly connections = new Map<string, DayCounts>();

  constructor(day: string) {
    this.day = day;
  }

  count(connectionId: string, operation: UsageOperation, key: KeyLabel, status: number): void {
    let counts = this.connections.get(connectionId);
    if (counts === undefined) this.connections.set(connectionId, (counts = { ...zeroCounts(), keys: new Map(), operations: new Map() }));
    countInto(counts, status);
    let perKey = counts.keys.get(key.key);
    if (perKey === undefined) {
      const label = counts.keys.size >= MAX_KEYS_PER_DAY ? OTHER_KEYS : key;
      perKey = counts.keys.get(label.key);
      if (perKey === undefined) counts.keys.set(label.key, (perKey = { ...label, ...zeroCounts() }));
    }
    countInto(perKey, status);
    let perOperation = counts.operations.get(operation);
    if (perOperation === undefined) counts.operations.set(operation, (perOperation = zeroCounts()));
    countInto(perOperation, status);
  }

  /** Adds a saved day's counts (a file's, another instance's) to this one. */
  add(connectionId: string, usage: Omit<DayUsage, 'day'>): void {
    let counts = this.connections.get(connectionId);
    if (counts === undefined) this.connections.set(connectionId, (counts = { ...zeroCounts(), keys: new Map(), operations: new Map() }));
    addInto(counts, usage);
    for (const key of usage.keys) {
      const label = counts.keys.has(key.key) || counts.keys.size < MAX_KEYS_PER_DAY ? key : OTHER_KEYS;
      let perKey = counts.keys.get(label.key);
      if (perKey === undefined) counts.keys.set(label.key, (perKey = { key: label.key, id: label.id, prefix: label.prefix, name: label.name, ...zeroCounts() }));
      addInto(perKey, key);
    }
    for (const [operation, more] of Object.entries(usage.operations)) {
      let perOperation = counts.operations.get(operation);
      if (perOperation === undefined) counts.operations.set(operation, (perOperation = zeroCounts()));
      addInto(perOperation, more);
    }
  }

  /** One connection's day as shown; zeros when nothing was counted. */
  view(connectionId: string): DayUsage {
    const counts = this.connections.get(connectionId);
    if (counts === undefined) return emptyDay(this.day);
    return {
      day: this.day,
      requests: counts.requests,
      clientErrors: counts.clientErrors,
      serverErrors: counts.serverErrors,
      keys: [...counts.keys.values()].map((each) => ({ ...each })).sort((a, b) => b.requests - a.requests || a.key.localeCompare(b.key)),
      operations: Object.fromEntries([...counts.operations].map(([operation, each]) => [operation, { ...each }])),
    };
  }

  /** Every connection's day, as saved: `{ crm: { requests, ..., keys, operations } }`. */
  toJSON(): Record<string, Omit<DayUsage, 'day'>> {
    return Object.fromEntries([...this.connections.keys()].map((id) => {
      const { day: _day, ...rest } = this.view(id);
      return [id, rest];
    }));
  }
}

export function emptyDay(day: string): DayUsage {
  return { day, ...zeroCounts(), keys: [], operations: {} };
}

/** `2026-11-23` -> the `count` days that end with it, oldest first: `lastDays('2026-11-23', 2)` -> 22nd, 23rd. */
export function lastDays(today: string, count: number): string[] {
  const end = Date.parse(`${today}T00:00:00Z`);
  return Array.from({ length: count }, (_, index) => new Date(end - (count - 1 - index) * DAY_MS).toISOString().slice(0, 10));
}

export const DAY_MS = 24 * 60 * 60 * 1000;

/** One request as the recent list keeps it (the URL as it came; `recentView` masks it when shown). */
export interface RecentEntry {
  readonly at: number;
  readonly method: string;
  readonly url: string;
  readonly status: number;
  readonly ms: number;
  readonly key: KeyLabel;
}

/** What the admin API shows of a recent request. */
export interface RecentRequest {
  /** ISO 8601, UTC. */
  readonly at: string;
  readonly method: string;
  /** The path, and of the query string its parameters' names (values only of `_limit`, `_offset`, `_sort`...: see `shownPath`). */
  readonly path: string;
  readonly status: number;
  readonly ms: number;
  /** The key's name, else its prefix, else its id; null: none (`open` or refused before a key matched). */
  readonly key: string | null;
  readonly keyId: string | null;
  /** 400 and above. */
  readonly error: boolean;
}

/** The last RECENT_REQUESTS requests of each connection, newest last: a ring per connection. */
export class RecentRequests {
  readonly #rings = new Map<string, { entries: RecentEntry[]; next: number }>();
  readonly #size: number;

  constructor(size = RECENT_REQUESTS) {
    this.#size = size;
  }

  add(connectionId: string, entry: RecentEntry): void {
    let ring = this.#rings.get(connectionId);
    if (ring === undefined) this.#rings.set(connectionId, (ring = { entries: [], next: 0 }));
    if (ring.entries.length < this.#size) ring.entries.push(entry);
    else ring.entries[ring.next] = entry;
    ring.next = (ring.next + 1) % this.#size;
  }

  /** Newest first. */
  list(connectionId: string): RecentRequest[] {
    const ring = this.#rings.get(connectionId);
    if (ring === undefined) return [];
    const ordered = ring.entries.length < this.#size ? ring.entries : [...ring.entries.slice(ring.next), ...ring.entries.slice(0, ring.next)];
    return ordered.map(recentView).reverse();
  }

  forget(connectionId: string): void {
    this.#rings.delete(connectionId);
  }
}

function recentView(entry: RecentEntry): RecentRequest {
  const { key } = entry;
  return {
    at: new Date(entry.at).toISOString(),
    method: entry.method,
    path: shownPath(entry.url),
    status: entry.status,
    ms: entry.ms,
    key: key.key === 'open' || key.key === 'none' ? null : (key.name ?? key.prefix ?? key.id ?? `config key ${key.key.slice(4, 12)}`),
    keyId: key.id,
    error: entry.status >= 400,
  };
}

/** Query parameters whose values say how, not what: shown as sent. Any other's value (a condition, a search) shows as `…`. */
const SHOWN_PARAMETERS = new Set(['_limit', '_offset', '_sort', '_format', '_raw', '_select', '_case', '_group', '_agg', '_upsert']);

/**
 * `http://x/sheets/crm/query?Age__gt=30&_limit=5` -> `/sheets/crm/query?Age__gt=…&_limit=5`: the
 * path as requested (the admin sees the connection's data anyway), the query string's values
 * only where they are settings, never a condition's or a search's value.
 */
export function shownPath(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  const target = start === -1 ? '/' : url.slice(start);
  const hash = target.indexOf('#');
  const withoutHash = hash === -1 ? target : target.slice(0, hash);
  const query = withoutHash.indexOf('?');
  if (query === -1) return withoutHash;
  const parameters = withoutHash.slice(query + 1).split('&').filter((each) => each !== '').map((each) => {
    const equals = each.indexOf('=');
    const name = equals === -1 ? each : each.slice(0, equals);
    return equals === -1 || SHOWN_PARAMETERS.has(name) ? each : `${name}=…`;
  });
  return parameters.length === 0 ? withoutHash.slice(0, query) : `${withoutHash.slice(0, query)}?${parameters.join('&')}`;
}
