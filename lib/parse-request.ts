// GET /sheets/demo/tabs/Staff/Name/jo*?_sort=-Age&_limit=5 -> one typed request: connection
// `demo`, tab `Staff`, rows whose Name matches `jo*`, sorted by Age descending, at most 5.
// Parsing never throws: anything that fits no shape is an ApiError value naming what was expected.
import { parseAggregateCalls, parseColumnList, type AggregateCall } from './aggregate/parse.ts';
import { apiError, isApiError, type ApiError } from './errors.ts';
import { FORMATS, isFormat, type Format } from './format.ts';
import { parseBatch, type BatchItem } from './parse-batch.ts';
import { parseBody, type WriteBody } from './parse-body.ts';
import { parseConditionSet, type ConditionSet } from './parse-conditions.ts';
import type { RowIdRule, TabSettings } from './row-id.ts';

export type { Condition, ConditionSet } from './parse-conditions.ts';

export interface EngineRequest {
  readonly method: string;
  /** The full URL, or the path and query (`/sheets/demo?_limit=2`). */
  readonly url: string;
  /** Headers as `fetch` takes them, or anything with a `get` (a Headers object, a light wrapper). */
  readonly headers?: HeadersInit | HeaderReader;
  readonly body?: string | Uint8Array | null;
}

export interface HeaderReader {
  get(name: string): string | null;
}

export interface EngineOptions {
  /** Written strings starting with `=` become formulas (default false: they stay text). */
  readonly formulas?: boolean;
  /** Rows one write may carry (default 5,000); past it 413. */
  readonly maxRows?: number;
  /**
   * Heap, in bytes, that the indexes behind `*text*` filters may take across every column of
   * every tab of the workbook (default 64 MiB; 0: none, every such filter scans). A column
   * whose index would not fit is scanned.
   */
  readonly textIndexBytes?: number;
  /**
   * Tabs the spreadsheet hides (hidden or very hidden): `serve` them like any tab (the default),
   * or `hide` them: not listed by `/tabs`, and 404 `tab_not_found` as if they did not exist.
   */
  readonly hiddenTabs?: HiddenTabs;
  /**
   * The only tabs the caller sees (an API key's `tabs`): others answer 404 `tab_not_found` as if
   * absent and are left out of `/tabs`; without `/tabs/{Tab}` the first of these in workbook order
   * is read. Left out: every tab.
   */
  readonly visibleTabs?: readonly string[];
  /**
   * A write body naming keys that are not columns: `ignore` them and name them in
   * `Sheetrest-Ignored-Columns` (the default), or `reject` the write (400 unknown_column).
   */
  readonly unknownColumns?: UnknownColumns;
  /** Stable row ids for every tab that has this column (row-id.ts); `tabs` may set or turn off a tab's own. */
  readonly rowId?: RowIdRule;
  /** Per-tab settings by tab name (a tab's own `rowId`). */
  readonly tabs?: Readonly<Record<string, TabSettings>>;
}

export const HIDDEN_TABS = ['serve', 'hide'] as const;
export type HiddenTabs = (typeof HIDDEN_TABS)[number];

export const UNKNOWN_COLUMNS = ['ignore', 'reject'] as const;
export type UnknownColumns = (typeof UNKNOWN_COLUMNS)[number];

export type Target =
  | { readonly kind: 'rows' }
  | { readonly kind: 'index'; readonly index: number }
  | { readonly kind: 'slice'; readonly start: number; readonly end: number | null }
  | { readonly kind: 'match'; readonly column: string; readonly pattern: string }
  | ({ readonly kind: 'search' } & ConditionSet)
  | ({ readonly kind: 'query' } & ConditionSet)
  | AggregateTarget
  | { readonly kind: 'tabs' };

/**
 * `/aggregate?_agg=count(),sum(Amount)&_group=City&Age=__gte(18)`: the calls, the group columns,
 * and the rows they run over as a `/query` target (its conditions, and whatever else `/query`
 * reads from the parameters), matched as `/query` matches them.
 */
export interface AggregateTarget {
  readonly kind: 'aggregate';
  readonly calls: readonly AggregateCall[];
  readonly group: readonly string[];
  readonly query: Extract<Target, { kind: 'query' }>;
}

export type Action = 'read' | 'append' | 'patch' | 'put' | 'delete' | 'options';

/** The quota vocabulary: what a plan may allow. */
export const OPERATIONS = ['read', 'create', 'update', 'delete'] as const;
export type Operation = (typeof OPERATIONS)[number];

export interface SortKey {
  readonly column: string;
  readonly descending: boolean;
}

export interface ReadParameters {
  readonly limit: number | null;
  readonly offset: number;
  readonly raw: boolean;
  readonly format: Format;
  readonly sort: readonly SortKey[];
  /** `_select=Name,Age`: only these columns, in this order; null: every column. */
  readonly select: readonly string[] | null;
  /**
   * The query string as sent (without `?`), kept only when `_limit` is given: the `Link`
   * header's page URLs are this string with another `_offset` (lib/link.ts).
   */
  readonly pageQuery: string | null;
}

export interface ParsedRequest {
  readonly connection: string;
  /** The tab named by `/tabs/{Tab}`, or null for the first tab. */
  readonly tab: string | null;
  readonly target: Target;
  readonly action: Action;
  readonly operation: Operation;
  /** HEAD: answered like GET, without a body. */
  readonly head: boolean;
  readonly read: ReadParameters;
  readonly body: WriteBody | null;
  /** `POST ...?_upsert=Email`: the key column of an upsert (update the row with that key, else append). */
  readonly upsert?: string;
  /** `PATCH` on the tab itself: a batch update's items, in order. */
  readonly batch?: readonly BatchItem[];
  /** `If-None-Match` (reads: 304 when it names the answer's ETag), as sent; absent when not sent. */
  readonly ifNoneMatch?: string;
  /** `If-Match` (writes: 412 unless it names the tab's or the row's current ETag), as sent. */
  readonly ifMatch?: string;
}

export const DEFAULT_MAX_ROWS = 5000;

const ALLOWED: Record<Target['kind'], readonly string[]> = {
  rows: ['GET', 'HEAD', 'POST', 'PATCH'],
  index: ['GET', 'HEAD', 'PATCH', 'PUT', 'DELETE'],
  slice: ['GET', 'HEAD'],
  match: ['GET', 'HEAD', 'PATCH', 'PUT', 'DELETE'],
  search: ['GET', 'HEAD'],
  query: ['GET', 'HEAD'],
  aggregate: ['GET', 'HEAD'],
  tabs: ['GET', 'HEAD'],
};

const ACTIONS: Record<string, Action> = {
  GET: 'read', HEAD: 'read', POST: 'append', PATCH: 'patch', PUT: 'put', DELETE: 'delete', OPTIONS: 'options',
};

const OPERATION_OF: Record<Action, Operation> = {
  read: 'read', options: 'read', append: 'create', patch: 'update', put: 'update', delete: 'delete',
};

/** The methods a path shape accepts, as the `Allow` header lists them. */
export function allowedMethods(target: Target): readonly string[] {
  return ALLOWED[target.kind];
}

export function parseRequest(request: EngineRequest, options: EngineOptions = {}): ParsedRequest | ApiError {
  let url: URL;
  let headers: HeaderReader;
  try {
    url = new URL(request.url, 'http://sheetrest.invalid');
    headers = isHeaderReader(request.headers) ? request.headers : new Headers(request.headers);
  } catch {
    return apiError('not_found', 'The request URL or headers could not be read.');
  }
  const path = parsePath(url.pathname);
  if (isApiError(path)) return path;

  const method = effectiveMethod(String(request.method).toUpperCase(), headers.get('x-http-method-override'));
  const allowed = ALLOWED[path.target.kind];
  const action = ACTIONS[method];
  if (action === undefined || (action !== 'options' && !allowed.includes(method))) {
    return apiError('method_not_allowed', `${method} is not accepted here; this path takes ${allowed.join(', ')}.`, { Allow: allowed.join(', ') });
  }

  // The list of tabs takes no parameter: `/tabs?_limit=1` is refused rather than answering every tab.
  const tabsParameter = action === 'read' && path.target.kind === 'tabs' ? tabListParameter(url.searchParams) : null;
  if (tabsParameter !== null) return tabsParameter;
  const read = action === 'read' ? parseReadParameters(url.searchParams, path.target, url.search) : DEFAULT_READ;
  if (isApiError(read)) return read;
  const target = action === 'options' ? path.target : action === 'read' && path.target.kind === 'aggregate' ? aggregateTarget(url.searchParams) : withConditions(path.target, url.searchParams);
  if (isApiError(target)) return target;

  const upsert = action === 'read' || action === 'options' ? null : upsertColumn(url.searchParams, action);
  if (isApiError(upsert)) return upsert;
  const stray = action === 'read' ? misspeltParameter(url.searchParams) : action === 'options' ? null : writeParameter(url.searchParams, method);
  if (stray !== null) return stray;
  let body: WriteBody | null = null;
  let batch: readonly BatchItem[] | null = null;
  const maxRows = options.maxRows ?? DEFAULT_MAX_ROWS;
  if (action === 'patch' && path.target.kind === 'rows') {
    const items = parseBatch(headers.get('content-type'), request.body, maxRows, allowed.join(', '));
    if (isApiError(items)) return items;
    batch = items;
  } else if (action === 'append' || action === 'patch' || action === 'put') {
    const parsed = parseBody(headers.get('content-type'), request.body, action === 'append' ? 'rows' : 'object', { maxRows });
    if (isApiError(parsed)) return parsed;
    body = parsed;
  }
  let parsed: ParsedRequest = { connection: path.connection, tab: path.tab, target, action, operation: OPERATION_OF[action], head: method === 'HEAD', read, body };
  if (upsert !== null) parsed = { ...parsed, upsert };
  if (batch !== null) parsed = { ...parsed, batch };
  // Preconditions are read only when sent: most requests carry neither.
  const precondition = action === 'read' ? headers.get('if-none-match') : action === 'options' ? null : headers.get('if-match');
  if (precondition === null) return parsed;
  return action === 'read' ? { ...parsed, ifNoneMatch: precondition } : { ...parsed, ifMatch: precondition };
}

function isHeaderReader(headers: EngineRequest['headers']): headers is HeaderReader {
  return typeof headers === 'object' && headers !== null && typeof (headers as { get?: unknown }).get === 'function';
}

/**
 * `_upsert=Email` on a POST: the key column (checked against the tab when planned). Given on
 * another write, or empty, or twice: 400, never a write that quietly ignores it.
 */
function upsertColumn(parameters: URLSearchParams, action: Action): string | null | ApiError {
  const given = parameters.getAll('_upsert');
  if (given.length === 0) return null;
  if (action !== 'append') return apiError('invalid_parameter', '_upsert is a POST parameter (update or append rows by a key column); leave it out of other writes.');
  if (given.length > 1) return apiError('invalid_parameter', '_upsert is given more than once; give one key column.');
  if (given[0] === '') return apiError('invalid_parameter', '_upsert needs a column name: POST ...?_upsert=Email updates the row with the body\'s Email, or appends one.');
  return given[0];
}

/**
 * The operations a write is: one, except an upsert, which may both create and update rows, so a
 * plan or key needs both (`operation` stays `create`, what its method counts as).
 */
export function operationsOf(request: ParsedRequest): readonly Operation[] {
  return request.upsert === undefined ? [request.operation] : ['create', 'update'];
}

/** PUT with `X-HTTP-Method-Override: PATCH` (any case) is a PATCH; the header means nothing anywhere else. */
function effectiveMethod(method: string, override: string | null): string {
  return method === 'PUT' && override !== null && override.trim().toUpperCase() === 'PATCH' ? 'PATCH' : method;
}

interface ParsedPath {
  readonly connection: string;
  readonly tab: string | null;
  readonly target: Target;
}

function parsePath(pathname: string): ParsedPath | ApiError {
  const raw = pathname.endsWith('/') && pathname.length > 1 ? pathname.slice(0, -1) : pathname;
  const segments: string[] = [];
  for (const segment of raw.split('/').slice(1)) {
    // Most segments hold no escape; decoding them would only copy them.
    if (!segment.includes('%')) {
      segments.push(segment);
      continue;
    }
    try {
      segments.push(decodeURIComponent(segment));
    } catch {
      return notFound(pathname, 'it is not valid percent-encoding');
    }
  }
  if (segments[0] !== 'sheets' || segments.length < 2 || segments[1] === '') {
    return notFound(pathname, 'paths start with /sheets/{id}');
  }
  const connection = segments[1];
  let rest = segments.slice(2);
  let tab: string | null = null;
  if (rest[0] === 'tabs') {
    if (rest.length === 1) return { connection, tab: null, target: { kind: 'tabs' } };
    tab = rest[1];
    rest = rest.slice(2);
  }
  const target = parseTarget(rest);
  return target === null ? notFound(pathname, 'it fits none of the shapes /{n}, /{a}:{b}, /search, /query, /aggregate, /{Column}/{Value}') : { connection, tab, target };
}

function parseTarget(rest: readonly string[]): Target | null {
  if (rest.includes('')) return null;
  if (rest.length === 0) return { kind: 'rows' };
  if (rest.length === 2) return { kind: 'match', column: rest[0], pattern: rest[1] };
  if (rest.length !== 1) return null;
  const [segment] = rest;
  if (segment === 'search') return { kind: 'search', ...NO_CONDITIONS };
  if (segment === 'query') return { kind: 'query', ...NO_CONDITIONS };
  if (segment === 'aggregate') return { kind: 'aggregate', calls: [], group: [], query: { kind: 'query', ...NO_CONDITIONS } };
  if (/^\d+$/.test(segment)) return { kind: 'index', index: Number(segment) };
  const slice = /^(\d+):(\d*)$/.exec(segment);
  if (slice !== null) return { kind: 'slice', start: Number(slice[1]), end: slice[2] === '' ? null : Number(slice[2]) };
  return null;
}

function notFound(pathname: string, why: string): ApiError {
  return apiError('not_found', `No resource at ${pathname}: ${why}.`);
}

/**
 * The read parameters a write lets pass and ignores (its answer is always records of strings);
 * the others would choose rows or columns (`DELETE ...?_limit=1` would delete every matching row), so a write refuses them.
 */
const ANSWER_PARAMETERS = ['_raw', '_format'];

/** Every `_` parameter a read takes somewhere (each path checks its own). */
const READ_PARAMETERS = ['_limit', '_offset', '_raw', '_format', '_sort', '_select', '_or', '_case', '_agg', '_group'];

/**
 * A cache-buster, which every path takes and ignores: the name `_` (jQuery's `_=1700000000`) or
 * `_` and digits (`_1700000000`). Any other name starting with `_` is read as a parameter, so
 * an unknown one is a mistake (docs/api.md, "Reading"; docs/decisions.md).
 */
export function isCacheBuster(name: string): boolean {
  return /^_\d*$/.test(name);
}

/**
 * `GET /sheets/demo?_lmit=5` -> 400 naming `_limit` and every parameter a read takes: a `_`
 * parameter a read does not know is a typo or a parameter of another path, never ignored (it
 * would answer every row). Parameters not starting with `_` are ignored on a plain read, as the
 * contract has it, and so is a cache-buster (`_=1700000000`).
 */
function misspeltParameter(parameters: URLSearchParams): ApiError | null {
  if (parameters.size === 0) return null;
  let unknown: string | null = null;
  parameters.forEach((_value, name) => {
    if (unknown === null && name.startsWith('_') && !READ_PARAMETERS.includes(name) && !isCacheBuster(name)) unknown = name;
  });
  return unknown === null ? null : unknownParameter(unknown, READ_PARAMETERS, 'A read takes');
}

/**
 * `GET /sheets/demo/tabs?_limit=1` -> 400: the list of tabs takes no parameter, so a read
 * parameter there would be ignored (every tab answered); `_or` and `_case` keep their own message.
 */
function tabListParameter(parameters: URLSearchParams): ApiError | null {
  for (const name of parameters.keys()) {
    if (!name.startsWith('_') || isCacheBuster(name) || name === '_or' || name === '_case') continue;
    const rows = READ_PARAMETERS.includes(name) ? ` ${name} applies to a tab's rows: /sheets/{id}/tabs/{Tab}?${name}=...` : '';
    return apiError('invalid_parameter', `${name} is not a parameter of the list of tabs: it takes no parameter (and a cache-buster named _, as _=1700000000).${rows}`);
  }
  return null;
}

/** 400 for the `_` parameter `name`, naming the one meant when it is one or two letters off, and every one `known`. */
function unknownParameter(name: string, known: readonly string[], takes: string): ApiError {
  const meant = known.find((each) => nearName(name, each));
  const guess = meant === undefined ? `${name} is not a parameter.` : `${name} is not a parameter; did you mean ${meant}?`;
  const list = known.length === 0 ? 'no parameter' : known.join(', ');
  return apiError('invalid_parameter', `${guess} ${takes} ${list} (and a cache-buster named _, as _=1700000000).`);
}

/**
 * `PATCH /sheets/demo/Name/Ann?City=Lisbon` -> 400: a condition in a write's query would mean
 * nothing (the path names the rows), so it is refused rather than writing more rows than meant;
 * so is an unknown `_` parameter (`_upsrt=Email` would append duplicates). The read parameters
 * (`_raw`, `_format`...) stay ignored on writes, whose answers are always records of strings.
 */
function writeParameter(parameters: URLSearchParams, method: string): ApiError | null {
  for (const name of parameters.keys()) {
    if (name === '_upsert' || ANSWER_PARAMETERS.includes(name) || isCacheBuster(name)) continue;
    if (READ_PARAMETERS.includes(name)) {
      return apiError('invalid_parameter', `${name} means nothing on a ${method}: a write changes every row its path names (and answers them all), so ${name} would be ignored; leave it out, or name fewer rows in the path.`);
    }
    if (!name.startsWith('_')) {
      return apiError('invalid_parameter', `The query parameter "${name}" means nothing on a ${method}: a write's rows are named by its path, and a ${method} takes only ${writeParameters(method).join(', ')} (and a cache-buster named _); leave it out.`);
    }
    return unknownParameter(name, writeParameters(method), `A ${method} takes`);
  }
  return null;
}

/** What a write's query may hold: `_upsert` on a POST, and the read parameters it ignores (`_raw`, `_format`). */
function writeParameters(method: string): string[] {
  return method === 'POST' ? ['_upsert', ...ANSWER_PARAMETERS] : ANSWER_PARAMETERS;
}

/** Whether `given` is one or two edits (insert, delete, replace, swap) from `known`: `_limt`, `_sotr`. */
function nearName(given: string, known: string): boolean {
  const limit = known.length <= 4 ? 1 : 2;
  if (Math.abs(given.length - known.length) > limit) return false;
  // Optimal string alignment distance, small strings only.
  const a = given.toLowerCase();
  const b = known;
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2][j - 2] + 1);
      rows[i][j] = best;
    }
  }
  return rows[a.length][b.length] <= limit;
}

const NO_CONDITIONS: ConditionSet = { conditions: [], orGroups: [], caseSensitive: false };

/** The parameters only a target with conditions takes; elsewhere they are refused, never ignored. */
const CONDITION_PARAMETERS = ['_or', '_case'] as const;

function withConditions(target: Target, parameters: URLSearchParams): Target | ApiError {
  if (target.kind !== 'search' && target.kind !== 'query') {
    for (const name of CONDITION_PARAMETERS) {
      if (parameters.has(name)) return apiError('invalid_parameter', `${name} applies to /search, /query and /aggregate; leave it out here.`);
    }
    return target;
  }
  const set = parseConditionSet(parameters);
  return isApiError(set) ? set : { kind: target.kind, ...set };
}

/** `_agg` and `_group`, with the `/query` conditions of the same parameters. */
function aggregateTarget(parameters: URLSearchParams): AggregateTarget | ApiError {
  const calls = parseAggregateCalls(parameters.get('_agg'));
  if (isApiError(calls)) return calls;
  const groupValue = parameters.get('_group');
  const group = groupValue === null ? [] : parseColumnList('_group', groupValue);
  if (isApiError(group)) return group;
  // The answer's columns are the group columns, then the calls: each name once.
  const names = [...group, ...calls.map((call) => call.name)];
  const twice = names.find((name, index) => names.indexOf(name) !== index);
  if (twice !== undefined) return apiError('invalid_parameter', `The answer would have two columns named "${twice}" (_group, then each _agg call, name its columns); name each once.`);
  // The rows are named exactly as `/query` names them, with whatever it reads from the parameters.
  const query: unknown = withConditions({ kind: 'query', ...NO_CONDITIONS }, parameters);
  if (isApiError(query)) return query;
  return { kind: 'aggregate', calls, group, query: query as AggregateTarget['query'] };
}

const DEFAULT_READ: ReadParameters = { limit: null, offset: 0, raw: false, format: 'records', sort: [], select: null, pageQuery: null };

/** The read parameters of a plain GET (no query string) of a target: what a write's ETag is for. */
export function plainReadOf(target: Target): ReadParameters {
  const read = readOfPath(target, null, null, DEFAULT_READ);
  return isApiError(read) ? DEFAULT_READ : read;
}
const RESERVED = ['_limit', '_offset', '_raw', '_format', '_sort', '_case', '_select', '_agg', '_group'] as const;

function parseReadParameters(parameters: URLSearchParams, target: Target, search: string): ReadParameters | ApiError {
  if (parameters.size === 0) return readOfPath(target, null, null, DEFAULT_READ);
  const given = reservedGiven(parameters);
  if (isApiError(given)) return given;
  const limit = wholeNumber(given, '_limit');
  if (isApiError(limit)) return limit;
  const offset = wholeNumber(given, '_offset');
  if (isApiError(offset)) return offset;
  const raw = flag(given.get('_raw') ?? null);
  if (isApiError(raw)) return raw;
  const format = given.get('_format') ?? 'records';
  if (!isFormat(format)) return apiError('invalid_parameter', `_format must be one of ${FORMATS.join(', ')}; got "${format}".`);
  const sort = sortKeys(given.get('_sort') ?? null);
  if (isApiError(sort)) return sort;
  const selectValue = given.get('_select');
  const select = selectValue === undefined ? null : parseColumnList('_select', selectValue);
  if (isApiError(select)) return select;
  const pageQuery = limit === null ? null : search.slice(1);
  // Outside /aggregate they would be ignored, and the answer would be rows, not a count: a typo to tell.
  const misplaced = target.kind === 'aggregate' ? undefined : ['_agg', '_group'].find((name) => given.has(name));
  if (misplaced !== undefined) return apiError('invalid_parameter', `${misplaced} is read only by /aggregate: GET /sheets/{id}[/tabs/{Tab}]/aggregate?_agg=count()&_group=Column.`);

  return readOfPath(target, limit, offset, { limit, offset: offset ?? 0, raw, format, sort, select, pageQuery });
}

/** The read's rows once the path has its say: a row index or slice sets the offset and limit. */
function readOfPath(target: Target, limit: number | null, offset: number | null, read: ReadParameters): ReadParameters | ApiError {
  if (target.kind !== 'index' && target.kind !== 'slice') return read;
  // `/{n}` and `/{a}:{b}` are shorthands for _offset and _limit; both at once is ambiguous.
  if (limit !== null || offset !== null) {
    return apiError('invalid_parameter', 'A row index or slice in the path already sets _offset and _limit; leave those parameters out.');
  }
  if (target.kind === 'index') return { ...read, limit: 1, offset: target.index };
  if (target.end !== null && target.start > target.end) {
    return apiError('invalid_parameter', `The slice ${target.start}:${target.end} ends before it starts; write it as {start}:{end} with start <= end.`);
  }
  return { ...read, limit: target.end === null ? null : target.end - target.start, offset: target.start };
}

/**
 * The RESERVED parameters given, by name, read in one pass over the query (a read of every name
 * in turn scanned it nine times); one given more than once is refused, the first in RESERVED's order.
 */
function reservedGiven(parameters: URLSearchParams): Map<string, string> | ApiError {
  const given = new Map<string, string>();
  const twice = new Set<string>();
  // forEach, not for...of: no iterator and no [name, value] array per parameter.
  parameters.forEach((value, name) => {
    if (!(RESERVED as readonly string[]).includes(name)) return;
    if (given.has(name)) twice.add(name);
    else given.set(name, value);
  });
  if (twice.size > 0) {
    const name = RESERVED.find((each) => twice.has(each))!;
    return apiError('invalid_parameter', `${name} is given more than once; give it once.`);
  }
  return given;
}

function wholeNumber(given: ReadonlyMap<string, string>, name: string): number | null | ApiError {
  const value = given.get(name);
  if (value === undefined) return null;
  if (!/^\d+$/.test(value)) return apiError('invalid_parameter', `${name} must be a whole number >= 0; got "${value}".`);
  return Number(value);
}

function flag(value: string | null): boolean | ApiError {
  if (value === null || value === '0' || value === 'false') return false;
  if (value === '' || value === '1' || value === 'true') return true;
  return apiError('invalid_parameter', `_raw must be 1, true, 0 or false; got "${value}".`);
}

function sortKeys(value: string | null): SortKey[] | ApiError {
  if (value === null) return [];
  const keys: SortKey[] = [];
  for (const entry of value.split(',')) {
    const descending = entry.startsWith('-');
    const column = descending ? entry.slice(1) : entry;
    if (column === '') return apiError('invalid_parameter', `_sort takes comma-separated column names, -Column for descending; got "${value}".`);
    keys.push({ column, descending });
  }
  return keys;
}
