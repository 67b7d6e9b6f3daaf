// A day's requests of every connection, counted as they are answered: `GET /sheets/crm/search`
// answered 200 for the key "ci" -> crm's day: requests 1; its key "ci": 1; its operation
// "search": 1. 4xx and 5xx answers are counted apart (`clientErrors`, `serverErrors`). Counting
// is a lookup by connection, one by the key's number and an array slot by the operation's, three
// additions, no I/O and no text made: the stores (file-store.ts, redis-store.ts) save the counts
// later, in batches. Shared by both, with the views the admin API answers.
import type { Authenticated } from '../auth.ts';

/** Days of history kept (the state folder's files, Redis's hashes): about a quarter. */
export const KEEP_DAYS = 90;
/** Keys counted apart per connection and day; requests of further keys are counted under `other`. */
export const MAX_KEYS_PER_DAY = 50;
/** Recent requests kept per connection (in each instance's memory). */
export const RECENT_REQUESTS = 100;

/** What a request did, from its method and path, by number (`operationCodeOf`): `OPERATIONS[0]` is `read`. */
export const OPERATIONS = ['read', 'search', 'query', 'aggregate', 'events', 'openapi', 'create', 'update', 'delete', 'other'] as const;

/** `read`, `search`, `query`, `aggregate`, `events`, `openapi`, `create`, `update`, `delete`, `other`. */
export type UsageOperation = (typeof OPERATIONS)[number];

const [READ, SEARCH, QUERY, AGGREGATE, EVENTS, OPENAPI, CREATE, UPDATE, DELETE, OTHER] = OPERATIONS.map((_, code) => code);

/** `search` -> 1; a name this version does not know (a saved file's) -> `other`'s number. */
export function operationCode(name: string): number {
  const code = (OPERATIONS as readonly string[]).indexOf(name);
  return code === -1 ? OTHER : code;
}

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
  /** The key's number (`keyNumberOf(key)`), set on the labels `keyLabelOf` makes so that counting looks up no text. */
  readonly number?: number;
}

export interface KeyCounts extends KeyLabel, Counts {}

/** One connection's day, as counted: keys by their number, operations by theirs (no text looked up per request). */
export interface DayCounts extends Counts {
  readonly keys: Map<number, KeyCounts>;
  /** Indexed by `operationCode`; undefined: none that day. */
  readonly operations: (Counts | undefined)[];
}

/** A day as the admin API and the saved files show it. */
export interface DayUsage extends Counts {
  /** `2026-11-23` (UTC). */
  readonly day: string;
  /** Busiest first. */
  readonly keys: KeyCounts[];
  readonly operations: Record<string, Counts>;
}

/** `key:00aa` -> 3: a small number per key text, given once per process (keys are few; a saved day's are numbered as it is read). */
const keyNumbers = new Map<string, number>();

export function keyNumberOf(key: string): number {
  let number = keyNumbers.get(key);
  if (number === undefined) keyNumbers.set(key, (number = keyNumbers.size));
  return number;
}

const numbered = (label: Omit<KeyLabel, 'number'>): KeyLabel => Object.freeze({ ...label, number: keyNumberOf(label.key) });

export const OPEN_KEY: KeyLabel = numbered({ key: 'open', id: null, prefix: null, name: null });
export const NO_KEY: KeyLabel = numbered({ key: 'none', id: null, prefix: null, name: null });
export const OTHER_KEYS: KeyLabel = numbered({ key: 'other', id: null, prefix: null, name: null });

/** The label of the caller: one object per key, made once (the Authenticated objects are made once per key too). */
export function keyLabelOf(access: Authenticated | null): KeyLabel {
  if (access === null) return NO_KEY;
  if (access.caller === undefined) return OPEN_KEY;
  let label = labels.get(access);
  if (label === undefined) {
    label = numbered({ key: access.keyId ?? access.caller, id: access.keyId ?? null, prefix: access.keyPrefix ?? null, name: access.keyName ?? null });
    labels.set(access, label);
  }
  return label;
}

const labels = new WeakMap<Authenticated, KeyLabel>();

/** `GET /sheets/crm/search` -> `search` (see operationCodeOf). */
export function operationOfRequest(method: string, url: string): UsageOperation {
  return OPERATIONS[operationCodeOf(method, url)];
}

/**
 * `GET /sheets/crm/tabs/People/search?...` -> 1 (`search`). The word counts only where the
 * contract puts it (`/sheets/{id}/search`, `/sheets/{id}/tabs/{tab}/search`):
 * `/sheets/crm/Name/search` is a filter on the value "search", a read.
 */
export function operationCodeOf(method: string, url: string): number {
  switch (method) {
    case 'GET':
    case 'HEAD':
      break;
    case 'POST':
      return CREATE;
    case 'PATCH':
    case 'PUT':
      return UPDATE;
    case 'DELETE':
      return DELETE;
    default:
      return OTHER;
  }
  const start = url.indexOf('/sheets/');
  if (start === -1) return READ;
  let end = url.indexOf('?', start);
  if (end === -1) end = url.length;
  const hash = url.indexOf('#', start);
  if (hash !== -1 && hash < end) end = hash;
  // The segments after `/sheets/{id}/`, counted without making them (a request pays no allocation here).
  const afterId = url.indexOf('/', start + 8);
  if (afterId === -1 || afterId >= end - 1) return READ;
  let slashes = 0;
  for (let at = afterId + 1; at < end; at++) if (url.charCodeAt(at) === 47) slashes++;
  if (!(slashes === 0 || (slashes === 2 && url.startsWith('tabs/', afterId + 1)))) return READ;
  const word = url.lastIndexOf('/', end - 1) + 1;
  const is = (name: string): boolean => end - word === name.length && url.startsWith(name, word);
  if (is('search')) return SEARCH;
  if (is('query')) return QUERY;
  if (is('aggregate')) return AGGREGATE;
  if (is('events')) return EVENTS;
  if (is('openapi.json')) return OPENAPI;
  return READ;
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

  #countsOf(connectionId: string): DayCounts {
    let counts = this.connections.get(connectionId);
    if (counts === undefined) this.connections.set(connectionId, (counts = { ...zeroCounts(), keys: new Map(), operations: OPERATIONS.map(() => undefined) }));
    return counts;
  }

  /** One answer: `operation` is its `operationCodeOf` number; three counters go up, nothing is made but a day's first counters. */
  count(connectionId: string, operation: number, key: KeyLabel, status: number): void {
    const counts = this.#countsOf(connectionId);
    countInto(counts, status);
    const number = key.number ?? keyNumberOf(key.key);
    let perKey = counts.keys.get(number);
    if (perKey === undefined) {
      const label = counts.keys.size >= MAX_KEYS_PER_DAY ? OTHER_KEYS : key;
      perKey = counts.keys.get(label.number ?? keyNumberOf(label.key));
      if (perKey === undefined) counts.keys.set(label.number ?? keyNumberOf(label.key), (perKey = keyCountsOf(label)));
    }
    countInto(perKey, status);
    const perOperation = counts.operations[operation] ?? (counts.operations[operation] = zeroCounts());
    countInto(perOperation, status);
  }

  /** Adds a saved day's counts (a file's, another instance's) to this one. */
  add(connectionId: string, usage: Omit<DayUsage, 'day'>): void {
    const counts = this.#countsOf(connectionId);
    addInto(counts, usage);
    for (const key of usage.keys) {
      const known = counts.keys.has(keyNumberOf(key.key));
      const label = known || counts.keys.size < MAX_KEYS_PER_DAY ? key : OTHER_KEYS;
      const number = keyNumberOf(label.key);
      let perKey = counts.keys.get(number);
      if (perKey === undefined) counts.keys.set(number, (perKey = keyCountsOf(label)));
      addInto(perKey, key);
    }
    for (const [operation, more] of Object.entries(usage.operations)) {
      const code = operationCode(operation);
      addInto(counts.operations[code] ?? (counts.operations[code] = zeroCounts()), more);
    }
  }

  /** One connection's day as shown; zeros when nothing was counted. */
  view(connectionId: string): DayUsage {
    const counts = this.connections.get(connectionId);
    if (counts === undefined) return emptyDay(this.day);
    const operations: Record<string, Counts> = {};
    counts.operations.forEach((each, code) => {
      if (each !== undefined) operations[OPERATIONS[code]] = { ...each };
    });
    return {
      day: this.day,
      requests: counts.requests,
      clientErrors: counts.clientErrors,
      serverErrors: counts.serverErrors,
      keys: [...counts.keys.values()].map(keyView).sort((a, b) => b.requests - a.requests || a.key.localeCompare(b.key)),
      operations,
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

/** A key's new counters: zeros, with its label (no `number`: that is this process's). */
function keyCountsOf(label: KeyLabel): KeyCounts {
  return { key: label.key, id: label.id, prefix: label.prefix, name: label.name, ...zeroCounts() };
}

/** A key's counts as shown and saved. */
function keyView(counts: KeyCounts): KeyCounts {
  return { key: counts.key, id: counts.id, prefix: counts.prefix, name: counts.name, requests: counts.requests, clientErrors: counts.clientErrors, serverErrors: counts.serverErrors };
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

/**
 * One connection's last requests, in arrays made once (a column per field): a request writes
 * six slots and makes nothing, so a busy server's recent list adds no object per request for
 * the garbage collector to move. The URL is kept as it came; the path is made when listed.
 */
class Ring {
  readonly at: Float64Array;
  readonly ms: Float64Array;
  readonly status: Uint16Array;
  readonly method: string[];
  readonly url: string[];
  readonly key: KeyLabel[];
  length = 0;
  next = 0;

  constructor(size: number) {
    this.at = new Float64Array(size);
    this.ms = new Float64Array(size);
    this.status = new Uint16Array(size);
    this.method = new Array<string>(size).fill('');
    this.url = new Array<string>(size).fill('');
    this.key = new Array<KeyLabel>(size).fill(NO_KEY);
  }
}

/** The last RECENT_REQUESTS requests of each connection, newest last: a ring per connection. */
export class RecentRequests {
  readonly #rings = new Map<string, Ring>();
  readonly #size: number;

  constructor(size = RECENT_REQUESTS) {
    this.#size = size;
  }

  /** `at`: ms since the epoch; `url` as it came (`recentView` masks it when listed). */
  add(connectionId: string, at: number, method: string, url: string, status: number, ms: number, key: KeyLabel): void {
    let ring = this.#rings.get(connectionId);
    if (ring === undefined) this.#rings.set(connectionId, (ring = new Ring(this.#size)));
    const slot = ring.next;
    ring.at[slot] = at;
    ring.ms[slot] = ms;
    ring.status[slot] = status;
    ring.method[slot] = method;
    ring.url[slot] = url;
    ring.key[slot] = key;
    ring.next = slot + 1 === this.#size ? 0 : slot + 1;
    if (ring.length < this.#size) ring.length += 1;
  }

  /** Newest first. */
  list(connectionId: string): RecentRequest[] {
    const ring = this.#rings.get(connectionId);
    if (ring === undefined) return [];
    const listed: RecentRequest[] = [];
    for (let back = 1; back <= ring.length; back++) listed.push(recentView(ring, (ring.next - back + this.#size) % this.#size));
    return listed;
  }

  forget(connectionId: string): void {
    this.#rings.delete(connectionId);
  }
}

function recentView(ring: Ring, slot: number): RecentRequest {
  const key = ring.key[slot];
  const status = ring.status[slot];
  return {
    at: new Date(ring.at[slot]).toISOString(),
    method: ring.method[slot],
    path: shownPath(ring.url[slot]),
    status,
    ms: ring.ms[slot],
    key: key.key === 'open' || key.key === 'none' ? null : (key.name ?? key.prefix ?? key.id ?? `config key ${key.key.slice(4, 12)}`),
    keyId: key.id,
    error: status >= 400,
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
