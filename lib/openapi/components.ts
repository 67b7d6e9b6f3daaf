// The parts of a connection's OpenAPI document that no tab changes: the error catalogue of
// lib/errors.ts as one `Error` schema and a response per status (`#/components/responses/Error404`
// says `not_found`, `tab_not_found` or `row_not_found`), the response headers of the contract and
// of issue 9, the read and write parameters, and the X-Api-Key scheme.
import { ERRORS, type ErrorCode } from '../errors.ts';
import { FORMATS } from '../format.ts';

export type JsonObject = { [key: string]: unknown };

export const ref = (kind: string, name: string): JsonObject => ({ $ref: `#/components/${kind}/${name}` });

/** The statuses of the catalogue, ascending, each with its codes in catalogue order. */
export function errorStatuses(): Map<number, ErrorCode[]> {
  const statuses = new Map<number, ErrorCode[]>();
  for (const code of Object.keys(ERRORS) as ErrorCode[]) {
    const codes = statuses.get(ERRORS[code]) ?? [];
    codes.push(code);
    statuses.set(ERRORS[code], codes);
  }
  return new Map([...statuses].sort(([a], [b]) => a - b));
}

/** `#/components/responses/Error429`: the response a status answers with. */
export const errorResponse = (status: number): JsonObject => ref('responses', `Error${status}`);

const header = (description: string, schema: JsonObject = { type: 'string' }): JsonObject => ({ description, schema });

/** The span a plan's allowance counts (server/quota/period.ts): `{ name: 'day', adjective: 'daily' }`. */
export interface QuotaPeriod {
  readonly name: string;
  readonly adjective: string;
}

const MONTHLY: QuotaPeriod = { name: 'month', adjective: 'monthly' };

/** The quota headers' descriptions for a period. */
function quotaHeaders({ name, adjective }: QuotaPeriod): Record<string, JsonObject> {
  const leftOut = `left out when the plan has no ${adjective} limit.`;
  return {
    'X-RateLimit-Limit': header(`Requests per billing ${name}; ${leftOut}`, { type: 'integer', minimum: 0 }),
    'X-RateLimit-Remaining': header(`Requests left this ${name}; ${leftOut}`, { type: 'integer', minimum: 0 }),
    'X-RateLimit-Reset': header(`Unix seconds (UTC) when the ${name} turns; ${leftOut}`, { type: 'integer' }),
  };
}

const MONTHLY_QUOTA = quotaHeaders(MONTHLY);

export const HEADERS: Record<string, JsonObject> = {
  'X-Sheet-Rows': header('Data rows in the addressed tab (after the write, for a write).', { type: 'integer', minimum: 0 }),
  'X-Sheet-Columns': header('Visible columns of the addressed tab.', { type: 'integer', minimum: 0 }),
  'X-Total-Count': header('Rows matching the request before `_offset` and `_limit`.', { type: 'integer', minimum: 0 }),
  'X-RateLimit-Limit': MONTHLY_QUOTA['X-RateLimit-Limit'],
  'X-RateLimit-Remaining': MONTHLY_QUOTA['X-RateLimit-Remaining'],
  'X-RateLimit-Plan': header('The plan\'s name, or `unlimited`.'),
  'X-RateLimit-Reset': MONTHLY_QUOTA['X-RateLimit-Reset'],
  'Retry-After': header('Seconds to wait before trying again.', { type: 'integer', minimum: 0 }),
  Allow: header('The methods this path accepts, comma-separated.'),
  ETag: header('A strong validator of this answer (issue 9): send it back in `If-None-Match` on a read, `If-Match` on a write.'),
  'Last-Modified': header('When the tab last changed, where the source knows it.'),
  'Cache-Control': header('How long the answer may be reused without revalidating; `private` on a connection with keys.'),
  Vary: header('Request headers the answer depends on (`Origin`, `X-Api-Key`).'),
  'Idempotent-Replayed': header('`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`; nothing was written again.', { type: 'string', enum: ['true'] }),
  'Sheetrest-Ignored-Columns': header('Keys of the body that are not columns, written around: each once, in body order, comma-separated (`Cty, Emial`; a name with a comma, `%` or non-ASCII text percent-encoded).'),
  'Sheetrest-Inserted': header('An upsert\'s count of appended rows.', { type: 'integer', minimum: 0 }),
  'Sheetrest-Updated': header('An upsert\'s count of updated rows.', { type: 'integer', minimum: 0 }),
  Link: header('On a read with `_limit`: RFC 8288 links to its `rel="first"`, `"prev"`, `"next"` and `"last"` pages, each URL keeping every other parameter (`prev` left out on the first page, `next` on the last).'),
};

const QUOTA_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Plan', 'X-RateLimit-Reset'];

/** The catalogue of headers, the quota's worded for the connection's period (a month unless its plan says otherwise), in the same order. */
export function headersFor(period: QuotaPeriod | undefined): Record<string, JsonObject> {
  if (period === undefined || period.name === MONTHLY.name) return HEADERS;
  const quota = quotaHeaders(period);
  return Object.fromEntries(Object.entries(HEADERS).map(([name, value]) => [name, quota[name] ?? value]));
}

/** A response's `headers` object: each named header by reference. */
export function headers(...names: string[]): JsonObject {
  return Object.fromEntries([...names, ...QUOTA_HEADERS].map((name) => [name, ref('headers', name)]));
}

const query = (name: string, description: string, schema: JsonObject): JsonObject => ({ name, in: 'query', required: false, description, schema });

/** What a typo in a condition answers, on every path that takes conditions. */
const UNKNOWN = 'An unknown column is 400 `unknown_column`, an unknown operator 400 `invalid_operator`.';

/** `GET .../aggregate?_agg=count(),sum(Amount)`: each function of `_agg`, with what it computes. */
export const AGGREGATE_FUNCTIONS: readonly (readonly [string, string])[] = [
  ['count()', 'counts the rows'],
  ['count(Col)', 'its non-empty cells'],
  ['count_distinct(Col)', 'its distinct non-empty values'],
  ['sum(Col)', 'the sum of its numeric cells (others skipped)'],
  ['avg(Col)', 'their mean'],
  ['min(Col)', 'the least value, compared as `__lt` compares'],
  ['max(Col)', 'the greatest'],
];
const requestHeader = (name: string, description: string): JsonObject => ({ name, in: 'header', required: false, description, schema: { type: 'string' } });

export const PARAMETERS: Record<string, JsonObject> = {
  limit: query('_limit', 'At most this many rows.', { type: 'integer', minimum: 0 }),
  offset: query('_offset', 'Skip this many rows (after matching and sorting).', { type: 'integer', minimum: 0, default: 0 }),
  raw: query('_raw', '`1` or `true`: native types (numbers, booleans, ISO 8601 dates, null for empty cells) instead of the displayed text.', { type: 'string', enum: ['1', 'true', '0', 'false'] }),
  format: query('_format', 'The answer\'s shape (pandas orient names); index labels are the rows\' zero-based indexes in the tab.', { type: 'string', enum: [...FORMATS], default: 'records' }),
  sort: query('_sort', 'Comma-separated columns, `-Column` for descending: numbers and dates by value, text case-insensitively, empty cells last; unknown columns are 400 `unknown_column`.', { type: 'string' }),
  ifNoneMatch: requestHeader('If-None-Match', 'ETags of answers already held (or `*`): an unchanged answer is 304 with no body.'),
  ifMatch: requestHeader('If-Match', 'The ETag the write expects the tab (or the row, by index) to still have; otherwise 412 `precondition_failed` and nothing is written.'),
  idempotencyKey: requestHeader('Idempotency-Key', 'A client-chosen key, scoped to the API key sending it: a retry with the same key and body within 24 h gets the stored answer (`Idempotent-Replayed: true`) and writes nothing; the same key with another request is 422 `idempotency_key_reused`; while its first try still runs on another instance, 409 `conflict` with `Retry-After`.'),
  methodOverride: { ...requestHeader('X-HTTP-Method-Override', '`PATCH` (any case) processes this PUT as a PATCH; ignored otherwise.'), schema: { type: 'string', enum: ['PATCH'] } },
  upsert: query('_upsert', 'A key column: each body row updates the one row whose column equals its value (as `__eq` without wildcards; only the given columns change), or is appended. 200 when nothing was appended; two rows holding a key: 409 `conflict`, nothing written; a body row without the key, or a key twice: 400 `invalid_body`.', { type: 'string' }),
  noCache: requestHeader('Cache-Control', '`no-cache` makes the source look at the spreadsheet itself before answering.'),
  or: query('_or', `A group of conditions of which at least one must hold, separated by \`;\` (\`\\;\` is a literal semicolon), each written as a condition parameter is: \`_or=City=Oslo;Age=__gt(65)\`. Several \`_or\` are groups that must all hold, as must the other conditions. ${UNKNOWN}`, { type: 'array', items: { type: 'string', minLength: 1 } }),
  case: query('_case', '`sensitive`: every text comparison of this request (conditions, `_or` groups, `_group`) is case-sensitive; without it, none is.', { type: 'string', enum: ['sensitive'] }),
  aggregate: { ...query('_agg', `The aggregates, comma-separated, each an answer column named as written: ${AGGREGATE_FUNCTIONS.map(([name, what]) => `\`${name}\` ${what}`).join('; ')}. An unknown function or bad syntax is 400 \`invalid_parameter\`, an unknown column 400 \`unknown_column\`.`, { type: 'string', minLength: 1 }), required: true, example: 'count()' },
  aggregateSort: query('_sort', 'Comma-separated answer columns (a group column, or an aggregate as written: `-sum(Amount)`), `-` for descending.', { type: 'string' }),
  aggregateSelect: {
    ...query('_select', 'Only these answer columns (group columns and aggregates as written), in this order, comma-separated; another name is 400 `unknown_column`.', { type: 'array', items: { type: 'string' } }),
    style: 'form',
    explode: false,
  },
};

export const READ_PARAMETERS = ['limit', 'offset', 'raw', 'format', 'sort', 'ifNoneMatch', 'noCache'];

const CELL_VALUE: JsonObject = {
  description: 'A cell: its displayed text, or with `_raw=1` its typed value (number, boolean, ISO 8601 date or date-time, null when empty).',
  type: ['string', 'number', 'boolean', 'null'],
};

export function sharedSchemas(): Record<string, JsonObject> {
  return {
    Error: {
      type: 'object',
      description: 'Every error answer: a code of the catalogue and one sentence a person can act on.',
      required: ['error', 'message'],
      additionalProperties: false,
      properties: { error: { type: 'string', enum: Object.keys(ERRORS) }, message: { type: 'string' } },
      'x-status': ERRORS,
    },
    CellValue: CELL_VALUE,
    TabListing: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'rows', 'columns', 'visibility', 'headerRow'],
        properties: {
          name: { type: 'string' },
          rows: { type: 'integer', minimum: 0 },
          columns: { type: 'integer', minimum: 0 },
          visibility: { type: 'string', enum: ['visible', 'hidden', 'veryHidden'] },
          headerRow: { type: ['integer', 'null'], minimum: 1, description: 'The sheet row (1-based) that names the columns; null when no row does.' },
        },
      },
    },
    Health: { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['ok'] } } },
    ...aggregateSchemas(),
  };
}

/**
 * `GET .../aggregate?_group=City&_agg=count(),sum(Amount)` answers one row per group, its columns
 * the group columns then each aggregate as written: `{"City": "Oslo", "count()": "2", "sum(Amount)": "503.6"}`.
 * Any tab's answer fits these (the names come from the request, not the tab), in every `_format`.
 */
function aggregateSchemas(): Record<string, JsonObject> {
  const cell = ref('schemas', 'CellValue');
  const row = ref('schemas', 'AggregateRow');
  return {
    AggregateRow: {
      type: 'object',
      description: 'One group: its group columns\' values (the first value met in the group), then each aggregate of `_agg` named as written. Strings by default (numbers in their shortest form, `""` for an aggregate over no cells); with `_raw=1` numbers, and null for an aggregate over no cells. Counts are never empty.',
      additionalProperties: cell,
    },
    AggregateRows: {
      description: 'An aggregate\'s answer rows in the shape `_format` asks for (records by default); index labels are the answer rows\' positions.',
      anyOf: rowsInEveryFormat(row, cell, null),
    },
  };
}

/**
 * Rows in the shape `_format` asks for: records (and index) of `row`, dict and list of `cell`
 * keyed by `column` (any name when null), and split. Index labels are row positions as strings.
 */
export function rowsInEveryFormat(row: JsonObject, cell: JsonObject, column: JsonObject | null): JsonObject[] {
  const byColumn = (values: JsonObject) => ({ type: 'object', ...(column === null ? {} : { propertyNames: column }), additionalProperties: values });
  return [
    { title: 'records', type: 'array', items: row },
    { title: 'dict', ...byColumn({ type: 'object', additionalProperties: cell }) },
    { title: 'list, series', ...byColumn({ type: 'array', items: cell }) },
    {
      title: 'split',
      type: 'object',
      required: ['index', 'columns', 'data'],
      additionalProperties: false,
      properties: {
        index: { type: 'array', items: { type: 'string', pattern: '^\\d+$' } },
        columns: { type: 'array', items: column ?? { type: 'string' } },
        data: { type: 'array', items: { type: 'array', items: cell } },
      },
    },
    { title: 'index', type: 'object', propertyNames: { pattern: '^\\d+$' }, additionalProperties: row },
  ];
}

export const READ_HEADERS = ['X-Sheet-Rows', 'X-Sheet-Columns', 'X-Total-Count', 'Link', 'ETag', 'Last-Modified', 'Cache-Control', 'Vary'];
export const WRITE_HEADERS = ['X-Sheet-Rows', 'X-Sheet-Columns', 'ETag', 'Idempotent-Replayed', 'Sheetrest-Ignored-Columns'];
/** An upsert's answer adds its counts. */
export const UPSERT_HEADERS = [...WRITE_HEADERS, 'Sheetrest-Inserted', 'Sheetrest-Updated'];

/**
 * The responses no tab changes: one per status of the catalogue (its codes named in the
 * description and the schema), `Error` for any of them, and the bodiless ones.
 */
export function sharedResponses(): Record<string, JsonObject> {
  const responses: Record<string, JsonObject> = {
    Head: { description: 'The headers a GET would answer (`X-Total-Count` counts the rows), without a body.', headers: headers(...READ_HEADERS) },
    AggregateRows: { description: 'One row per group (one row without `_group`).', headers: headers(...READ_HEADERS), content: { 'application/json': { schema: ref('schemas', 'AggregateRows') } } },
    NotModified: { description: 'Not modified: an `If-None-Match` ETag is still current. No body.', headers: headers('ETag', 'X-Sheet-Rows', 'X-Sheet-Columns', 'Cache-Control') },
    Options: { description: 'No body; `Allow` lists the methods.', headers: headers('Allow') },
    Error: {
      // Operations name the statuses a client should plan for; this covers the rest (405, 408, 5xx...).
      description: `An error of the catalogue (statuses ${[...errorStatuses().keys()].join(', ')}) that the operation does not name. 405 carries \`Allow\`, 429 and 503 \`Retry-After\`.`,
      headers: headers('Allow', 'Retry-After'),
      content: { 'application/json': { schema: ref('schemas', 'Error') } },
    },
  };
  for (const [status, codes] of errorStatuses()) {
    const extra = status === 405 ? ['Allow'] : status === 429 || status === 503 ? ['Retry-After'] : [];
    responses[`Error${status}`] = {
      description: `${codes.map((code) => `\`${code}\``).join(', ')}.`,
      headers: headers(...extra),
      content: {
        'application/json': {
          schema: { allOf: [ref('schemas', 'Error'), { type: 'object', properties: { error: { enum: codes } } }] },
        },
      },
    };
  }
  return responses;
}

/** A response for some codes of the catalogue only: `/healthz`'s 403 can only be `host_not_allowed`. */
export function errorOf(codes: readonly ErrorCode[], why: string): JsonObject {
  return {
    description: `${codes.map((code) => `\`${code}\``).join(', ')}: ${why}`,
    content: { 'application/json': { schema: { allOf: [ref('schemas', 'Error'), { type: 'object', properties: { error: { enum: [...codes] } } }] } } },
  };
}

export const API_KEY_SCHEME: JsonObject = {
  type: 'apiKey',
  in: 'header',
  name: 'X-Api-Key',
  description: 'The connection\'s API key. A key may be limited to some operations (anything else is 403 `permission_denied`) and to some tabs (the others answer 404 `tab_not_found` and are left out of this document).',
};
