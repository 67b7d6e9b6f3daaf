// The shape of `sheetrest.json`, as valibot schemas. Every schema carries a message saying what
// was expected, so that `{"connections": [{"plan": {"monthlyRequests": "10k"}}]}` stops the
// server with `connections[0].plan.monthlyRequests: expected a whole number >= 0, got "10k"`.
// Objects are strict: an unknown field (`"readonly"` for `"readOnly"`) is an error, not ignored.
//
// The file, with every field (only `connections` is required; defaults shown):
//   {
//     "$schema": "...",                  ignored, for editors
//     "host": "127.0.0.1", "port": 8080, port 0 takes any free port
//     "stateDir": ".sheetrest",          quota counts and journals; relative to this file's folder
//     "limits": { "bodyBytes": 1048576, "rowsPerWrite": 5000, "textIndexBytes": 67108864,
//                 "answerCacheBytes": 33554432,      read answers kept for repeated reads; 0: none
//                 "idempotencyKeys": 100000, "idempotencyBytes": 67108864 },   these two per connection
//     "cors": { "origins": "*" },        or a list: ["https://app.example.com"]; [] allows none
//               "writes": "same-origin"  who else may write to a connection without keys from a
//                                        browser: "same-origin" (only the server's own pages and
//                                        the origins listed above), "any", or a list of origins
//     "trustProxy": false,               true: a client's address is the first of X-Forwarded-For
//                                        (set it only behind a proxy that writes that header)
//     "allowedHosts": ["sheets.example.com"],   Host names served besides localhost and IP
//                                        addresses; "*" any. Default: none on a loopback bind, "*" otherwise
//     "timeouts": { "headersMs": 10000, "bodyMs": 10000, "shutdownMs": 10000 },
//     "log": { "level": "info" },        debug | info | warn | error | silent
//     "admin": { "token": { "env": "SHEETREST_ADMIN_TOKEN" } },   turns on /_admin (docs/admin-api.md);
//                                        left out: on when $SHEETREST_ADMIN_TOKEN is set, off otherwise
//              "google"?: { "clientId", "clientSecret", "authorizationUrl"?, "tokenUrl"?, "sheetsRootUrl"?, "redirectUri"? }
//                                        the dashboard's "Connect a Google spreadsheet" (docs/dashboard.md)
//              what a connection made through /_admin may use (docs/admin-api.md, "What the admin API may open"):
//              "fileRoot": "." (files only inside it; relative to this file's folder),
//              "allowServerCredentials": false, "allowedEndpoints": [Google's own origins],
//              "openTimeoutMs": 10000
//     "store": { "type": "redis", "url": "redis://127.0.0.1:6379/0",   shared state for several
//                "leaseMs": 5000, "leaseWaitMs": 10000,   instances (docs/scaling.md); "url" left
//                "maxStaleMs": 5000 },     out: $REDIS_URL. Left out: the state folder only
//     "connections": [{
//       "id": "demo",                    letters, digits, _ and -: the `/sheets/demo` in URLs
//       "source": { "type": "file", "path": "book.xlsx" },   relative to this file's folder
//              or { "type": "google", "spreadsheetId": "...", "rootUrl"?: "https://...",
//                   and at most one of "credentialsFile" (a path), "accessToken", "apiKey",
//                   "oauth": { "clientId", "clientSecret", "refreshToken", "tokenUri"? }
//                   (none: Application Default Credentials),
//                   "freshnessMs"?, "timeoutMs"?, "retries"?, "checkModifiedTime"?, "maxAgeMs"?,
//                   "driveRootUrl"?, "quota"?: { "readsPerMinutePerUser": 60, ... } }
//       "keys": [                        left out or []: an open connection
//         { "key": "a-secret" },                      hashed at start-up
//         { "sha256": "<64 hex digits>", "scope": "read" },   never known in plaintext
//         { "env": "SHEETREST_DEMO_KEY", "name": "ci" },      read from the environment at start-up
//         { "key": "form-key", "operations": ["create"], "tabs": ["Orders"], "expiresAt": "2027-01-01T00:00:00Z" }
//       ],                               operations: any of "read", "create", "update", "delete"
//                                        (default all four), or scope: "write" (all four) or "read";
//                                        tabs: the only tabs the key sees (default all);
//                                        expiresAt: when it stops working; name: a label for logs
//       "plan": { "name": "free", "monthlyRequests": 10000, "operations": ["read", ...],
//                 "rateLimit": { "requests": 60, "perSeconds": 10 } },
//                                        left out: no limit; no monthlyRequests: no monthly limit;
//                                        operations default to all four. Or, counted per UTC day
//                                        or hour: { "name": "burst", "period": "hour", "requests": 100 }
//                                        rateLimit: per key (per client address when open), per window
//       "readOnly": false, "formulas": false,
//       "hiddenTabs": "serve",           or "hide": tabs hidden in the spreadsheet are not served
//       "unknownColumns": "ignore",      or "reject": a write naming a key that is no column is a 400
//       "rowId": { "column": "Id", "generate": "uuid7" },   or "increment": stable row ids in every
//                                        tab that has the column (docs/configuration.md)
//       "tabs": { "Orders": { "rowId": { "column": "OrderNo", "generate": "increment" } } },
//                                        a tab's own settings; "rowId": null turns ids off there
//       "cacheControl": { "maxAge": 60, "staleWhileRevalidate": 30 }   seconds; left out:
//                                        "no-cache" (clients revalidate every read, docs/http-caching.md)
//     }]
//   }
// Google secrets ("accessToken", "apiKey", "clientSecret", "refreshToken") may also be written
// as { "env": "NAME" }. A missing or empty variable stops the server, naming the variable.
import * as v from 'valibot';
import { SCOPES } from '../auth.ts';
import { SOURCE_TYPES } from '../sources/registry.ts';
import { absoluteUrl, addKnownFields, atMostOne, describeValue, envName, exactlyOne, expected, flag, secret, strict, text, wholeNumber } from './fields.ts';

import { HIDDEN_TABS, OPERATIONS, UNKNOWN_COLUMNS, type Operation } from '../../lib/parse-request.ts';
import { ROW_ID_GENERATORS } from '../../lib/row-id.ts';
import { EVENT_TYPES } from '../feed/event.ts';
import { DEFAULT_PERIOD, PERIOD_NAMES } from '../quota/period.ts';

export { OPERATIONS, type Operation };
export { expected, strict } from './fields.ts';
export type { ParsedSecret } from './fields.ts';
export type { FileSourceConfig, ParsedGoogleSource, ParsedSource } from '../sources/registry.ts';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The contract's defaults. */
export const DEFAULTS = {
  host: '127.0.0.1',
  port: 8080,
  bodyBytes: 1024 * 1024,
  rowsPerWrite: 5000,
  /** The engine's `*text*` indexes, across every tab of one connection (lib/column-text.ts). */
  textIndexBytes: 64 * 1024 * 1024,
  /** Read answers kept for repeated identical reads, across connections (server/http/answer-cache.ts). */
  answerCacheBytes: 32 * 1024 * 1024,
  corsOrigins: '*',
  corsWrites: 'same-origin',
  logLevel: 'info',
  headersMs: 10_000,
  bodyMs: 10_000,
  shutdownMs: 10_000,
  leaseMs: 5_000,
  leaseWaitMs: 10_000,
  maxStaleMs: 5_000,
  /** How long the admin API waits for a connection's source to open before it gives up (504). */
  adminOpenMs: 10_000,
  /** The largest workbook `PUT /_admin/files/{name}` stores (server/admin/files.ts). */
  uploadBytes: 25 * 1024 * 1024,
} as const;

/**
 * Where a Google source sends requests and credentials: the Sheets API, Drive (and the
 * googleapis.com root the client library defaults to), and the OAuth token endpoint. A
 * connection made through the admin API may name only these, unless `admin.allowedEndpoints`
 * names others (an emulator in tests, a private proxy).
 */
export const GOOGLE_ENDPOINTS: readonly string[] = ['https://sheets.googleapis.com', 'https://www.googleapis.com', 'https://oauth2.googleapis.com'];

/** Google's OAuth token address, where refresh tokens are renewed unless a setting names another. */
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

/** Every field name the server's own schemas know, to suggest `readOnly` for `readonly`; each source type lists its own. */
export const KNOWN_FIELDS: readonly string[] = [
  '$schema', 'host', 'port', 'stateDir', 'limits', 'bodyBytes', 'rowsPerWrite', 'textIndexBytes', 'idempotencyKeys', 'idempotencyBytes', 'cors', 'origins', 'writes', 'log', 'level',
  'answerCacheBytes', 'cacheControl', 'maxAge', 'staleWhileRevalidate', 'connections', 'id', 'source', 'type',
  'clientId', 'clientSecret', 'keys', 'key', 'sha256', 'env', 'scope', 'name', 'plan',
  'monthlyRequests', 'period', 'requests', 'operations', 'readOnly', 'formulas', 'hiddenTabs',
  'tabs', 'expiresAt', 'rateLimit', 'perSeconds', 'trustProxy', 'unknownColumns', 'rowId', 'column', 'generate',
  'allowedHosts', 'timeouts', 'headersMs', 'bodyMs', 'shutdownMs', 'admin', 'token',
  'google', 'authorizationUrl', 'tokenUrl', 'sheetsRootUrl', 'redirectUri', 'fileRoot', 'allowServerCredentials', 'allowedEndpoints', 'openTimeoutMs', 'uploadBytes',
  'webhooks', 'events', 'secret', 'allowPrivateTargets', 'retryBaseMs', 'retryCapMs', 'timeoutMs',
  'store', 'url', 'leaseMs', 'leaseWaitMs', 'maxStaleMs',
];
addKnownFields([...KNOWN_FIELDS, ...SOURCE_TYPES.flatMap((type) => type.fieldNames)]);



/** An allowed endpoint: an http(s) origin, or an origin and a path prefix; no user, query or fragment to misread. */
const endpointUrl = v.pipe(
  v.string(expected('a URL')),
  v.check((url) => {
    if (!URL.canParse(url)) return false;
    const parsed = new URL(url);
    return (parsed.protocol === 'https:' || parsed.protocol === 'http:') && parsed.username === '' && parsed.password === '' && parsed.search === '' && parsed.hash === '';
  }, expected('an http(s) URL such as "https://sheets.googleapis.com" (no user name, query or fragment)')),
);

/**
 * The dashboard's "Connect a Google spreadsheet" (docs/dashboard.md): an OAuth client of the
 * Google Cloud project, and where its sign-in and token endpoints are (Google's unless a test
 * points them at the emulator).
 */
export const GoogleConnectSchema = strict('an object with "clientId" and "clientSecret"', {
  clientId: text(),
  clientSecret: secret,
  authorizationUrl: v.optional(absoluteUrl, 'https://accounts.google.com/o/oauth2/v2/auth'),
  tokenUrl: v.optional(absoluteUrl, GOOGLE_TOKEN_URL),
  /** The Sheets API of the connections it makes (their `rootUrl`); left out: Google's. */
  sheetsRootUrl: v.optional(absoluteUrl),
  /** Where Google sends the browser back; left out: this server's own `/_admin/google/callback`, as the browser reached it. */
  redirectUri: v.optional(absoluteUrl),
});

// ---- sources -------------------------------------------------------------------------------

const SOURCE_TYPE_NAMES = SOURCE_TYPES.map((type) => `"${type.type}"`);

/** A connection's source: one of the types of server/sources/registry.ts, chosen by its `type`. */
export const SourceSchema = v.variant('type', SOURCE_TYPES.map((type) => type.schema), (issue) =>
  issue.path?.at(-1)?.key === 'type'
    ? `expected ${SOURCE_TYPE_NAMES.slice(0, -1).join(', ')} or ${SOURCE_TYPE_NAMES.at(-1)}, got ${describeValue(issue)}`
    : `expected an object with "type", got ${describeValue(issue)}`,
);

// ---- keys and plans ------------------------------------------------------------------------

/** A non-empty list of operations, each once: a plan's, or a key's. */
export const OperationList = v.pipe(
  v.array(v.picklist(OPERATIONS, expected('"read", "create", "update" or "delete"')), expected('a list of operations')),
  v.minLength(1, expected('at least one of "read", "create", "update", "delete"')),
  v.check((list) => new Set(list).size === list.length, expected('each operation once')),
);

/** The only tabs a key sees: `["Orders", "Customers"]`, each once, case-sensitive as in URLs. */
export const KeyTabs = v.pipe(
  v.array(text('a tab name'), expected('a list of tab names')),
  v.minLength(1, expected('at least one tab name (leave "tabs" out for every tab)')),
  v.check((list) => new Set(list).size === list.length, expected('each tab once')),
);

// `2027-01-01` (midnight UTC) or a date and time with its zone: without one, the moment is a guess.
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))?$/i;

/**
 * Whether the text's date is one the calendar has: `2027-02-30` is a typo, though Date.parse
 * rolls it over to 2 March.
 */
function isCalendarDate(text: string): boolean {
  const [year, month, day] = [Number(text.slice(0, 4)), Number(text.slice(5, 7)), Number(text.slice(8, 10))];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** When a key stops working, as ISO 8601. */
export const KeyExpiry = v.pipe(
  v.string(expected('an ISO 8601 date or time such as "2027-01-01T00:00:00Z"')),
  v.check((text) => ISO_INSTANT.test(text) && isCalendarDate(text) && !Number.isNaN(Date.parse(text)), expected('an ISO 8601 date or time with its zone, such as "2027-01-01" or "2027-01-01T09:00:00+01:00"')),
);

export const KeySchema = v.pipe(
  strict('an object', {
    key: v.optional(text('a non-empty key', true)),
    // A digest is no secret, but a key pasted here by mistake would be.
    sha256: v.optional(v.pipe(v.string(expected('64 hex digits', true)), v.regex(/^[0-9a-fA-F]{64}$/, expected('64 hex digits (a SHA-256 digest)', true)))),
    env: v.optional(envName),
    /** The short form of `operations`: "read" is ["read"], "write" all four (the default). */
    scope: v.optional(v.picklist(SCOPES, expected('"read" or "write"'))),
    operations: v.optional(OperationList),
    tabs: v.optional(KeyTabs),
    expiresAt: v.optional(KeyExpiry),
    name: v.optional(text()),
  }),
  exactlyOne(['key', 'sha256', 'env']),
  // Both would leave one of them meaning nothing.
  atMostOne(['scope', 'operations']),
);

/** `"rateLimit": {"requests": 60, "perSeconds": 10}`: per key (per client address on an open connection), per fixed window. */
export const RateLimitSchema = strict('an object with "requests" and "perSeconds"', {
  requests: wholeNumber(1),
  // A day: longer windows are what `period` is for.
  perSeconds: wholeNumber(1, 86_400),
});

const periodNames = PERIOD_NAMES.map((name) => `"${name}"`);

/**
 * A billing plan: `{ "name": "free", "monthlyRequests": 10000 }`, or `{ "name": "burst",
 * "period": "hour", "requests": 100 }`. `monthlyRequests` is the month's spelling of `requests`,
 * kept from before periods existed; a plan gives at most one of the two.
 */
export const PlanSchema = v.pipe(
  strict('an object', {
    name: text(),
    /** Left out: a month. Counts start again when it turns (UTC); server/quota/period.ts. */
    period: v.optional(v.picklist(PERIOD_NAMES, expected(`${periodNames.slice(0, -1).join(', ')} or ${periodNames.at(-1)}`))),
    /** The allowance per period. Left out (with `monthlyRequests`): no limit (the plan may still leave out operations). */
    requests: v.optional(wholeNumber(0)),
    /** The allowance of a month plan, as `requests`. */
    monthlyRequests: v.optional(wholeNumber(0)),
    operations: v.optional(OperationList, () => [...OPERATIONS]),
    /** A short-window limit besides the period's allowance (server/rate-limit/). */
    rateLimit: v.optional(RateLimitSchema),
  }),
  atMostOne(['requests', 'monthlyRequests']),
  // `"period": "day", "monthlyRequests": 100` would read as a month's allowance and count a day's.
  v.forward(
    v.check(
      (plan) => plan.monthlyRequests === undefined || (plan.period ?? DEFAULT_PERIOD) === 'month',
      (issue) => `expected "requests" for a plan whose period is "${(issue.input as { period?: string }).period}" ("monthlyRequests" is a month's allowance)`,
    ),
    ['monthlyRequests'],
  ),
);

// ---- connections and the server ------------------------------------------------------------

/** `{"column": "Id", "generate": "uuid7"}`: stable row ids (lib/row-id.ts). */
export const RowIdSchema = strict('an object with "column" and "generate"', {
  column: text('a column name'),
  generate: v.picklist(ROW_ID_GENERATORS, expected('"uuid7" or "increment"')),
});

/** A tab's own settings, by tab name: `{"Orders": {"rowId": {...}}}`; `"rowId": null` turns the connection's off there. */
export const TabSettingsSchema = v.record(
  v.pipe(v.string(expected('a tab name')), v.nonEmpty(expected('a tab name'))),
  strict('an object', { rowId: v.optional(v.nullable(RowIdSchema)) }),
  expected('an object of tab names'),
);

/** A connection's fields: the config file's, and (without `keys`) the admin API's (server/admin/). */
export const ConnectionEntries = {
  id: v.pipe(
    text('a connection id'),
    v.maxLength(100, expected('an id of at most 100 characters')),
    v.regex(/^[A-Za-z0-9_-]+$/, expected('an id made of letters, digits, "_" and "-" (it appears in URLs)')),
  ),
  source: SourceSchema,
  keys: v.optional(v.array(KeySchema, expected('a list of keys')), () => []),
  plan: v.optional(PlanSchema),
  readOnly: v.optional(flag(), false),
  formulas: v.optional(flag(), false),
  hiddenTabs: v.optional(v.picklist(HIDDEN_TABS, expected('"serve" or "hide"')), 'serve'),
  /** Left out: "ignore" (connections.ts). */
  unknownColumns: v.optional(v.picklist(UNKNOWN_COLUMNS, expected('"ignore" or "reject"'))),
  rowId: v.optional(RowIdSchema),
  tabs: v.optional(TabSettingsSchema),
  cacheControl: v.optional(
    v.pipe(
      strict('an object', {
        // A year, as RFC 9111 suggests for "never expires"; longer is a typo.
        maxAge: v.optional(wholeNumber(0, 31_536_000)),
        staleWhileRevalidate: v.optional(wholeNumber(0, 31_536_000)),
      }),
      // Without max-age every read is revalidated, so there is no staleness to serve meanwhile.
      v.check((cache) => cache.staleWhileRevalidate === undefined || cache.maxAge !== undefined, 'expected "maxAge" with "staleWhileRevalidate" (stale-while-revalidate extends max-age)'),
    ),
  ),
};

/**
 * `{"url": "https://hooks.example.com/sheets", "events": ["rows.created"], "secret": {"env": "HOOK_SECRET"}}`:
 * where a connection's events are POSTed, signed (server/webhooks/). `events` left out: every type.
 */
export const WebhookEntries = {
  url: v.pipe(
    v.string(expected('an http:// or https:// URL')),
    v.check((url) => URL.canParse(url) && /^https?:$/.test(new URL(url).protocol), expected('an http:// or https:// URL such as "https://hooks.example.com/sheets"')),
  ),
  events: v.optional(v.pipe(v.array(v.picklist(EVENT_TYPES, expected(EVENT_TYPES.map((type) => `"${type}"`).join(', '))), expected('a list of event types')), v.minLength(1, expected('at least one event type')))),
  secret,
  /** Names the webhook in the admin API and the state folder; left out: `hook-<n>` by its place in the list. */
  name: v.optional(v.pipe(text('a name'), v.regex(/^[A-Za-z0-9_-]{1,64}$/, expected('a name made of letters, digits, "_" and "-"')))),
};
export const WebhookSchema = strict('an object with "url" and "secret"', WebhookEntries);

/** A config file's connection: the admin API's fields, keys, and webhooks. */
export const ConnectionSchema = strict('an object', {
  ...ConnectionEntries,
  webhooks: v.optional(v.array(WebhookSchema, expected('a list of webhooks')), () => []),
});

const corsOrigin = v.pipe(
  v.string(expected('an origin')),
  v.check((origin) => URL.canParse(origin) && new URL(origin).origin === origin, expected('an origin such as "https://example.com" (no path or trailing slash)')),
);

// A name as a browser puts it in Host: `sheets.example.com`, `localhost`, `10.0.0.7`, `[::1]`.
const allowedHost = v.pipe(
  v.string(expected('a host name')),
  v.regex(
    /^(?:(?:[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?\.)*[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?\.?|\[[0-9A-Fa-f:.]+\])$/,
    expected('a host name such as "sheets.example.com" (no scheme, port or path)'),
  ),
);

export const ServerSettingsEntries = {
  /** Ignored: lets an editor find a JSON schema for the file. */
  $schema: v.optional(v.string(expected('a string'))),
  host: v.optional(text('a host name or address'), DEFAULTS.host),
  port: v.optional(wholeNumber(0, 65535), DEFAULTS.port),
  /** Relative to the config file's folder; default `.sheetrest` there. */
  stateDir: v.optional(text('a folder path')),
  limits: v.optional(
    strict('an object', {
      bodyBytes: v.optional(wholeNumber(1), DEFAULTS.bodyBytes),
      rowsPerWrite: v.optional(wholeNumber(1), DEFAULTS.rowsPerWrite),
      textIndexBytes: v.optional(wholeNumber(0), DEFAULTS.textIndexBytes),
      answerCacheBytes: v.optional(wholeNumber(0), DEFAULTS.answerCacheBytes),
      /** Idempotency-Keys one connection keeps (default 100,000; connections.ts applies it). */
      idempotencyKeys: v.optional(wholeNumber(1)),
      /** Bytes of stored answers one connection keeps for its Idempotency-Keys (default 64 MiB). */
      idempotencyBytes: v.optional(wholeNumber(1)),
    }),
    {},
  ),
  cors: v.optional(
    v.pipe(
      strict('an object', {
        origins: v.optional(
          v.union([v.literal('*'), v.array(corsOrigin, expected('"*" or a list of origins'))], expected('"*" or a list of origins')),
          DEFAULTS.corsOrigins,
        ),
        /** Which other sites' pages may write to a connection without keys (server/http/cors.ts). */
        writes: v.optional(
          v.union(
            [v.literal('same-origin'), v.literal('any'), v.array(corsOrigin, expected('"same-origin", "any" or a list of origins'))],
            expected('"same-origin", "any" or a list of origins'),
          ),
          DEFAULTS.corsWrites,
        ),
      }),
      // Under a list of origins, only listed origins write at all: a second list would be ignored.
      v.check(
        (cors) => cors.origins === '*' || !Array.isArray(cors.writes),
        'expected "writes" to be "same-origin" or "any" when "origins" is a list (the origins listed there may already write; list more there)',
      ),
    ),
    {},
  ),
  /** Whether X-Forwarded-For names the client (its first address), for rate limits on open connections; only behind a proxy that sets it. */
  trustProxy: v.optional(flag(), false),
  /** Left out: only localhost and IP addresses on a loopback bind, any Host otherwise (start.ts). */
  allowedHosts: v.optional(
    v.union([v.literal('*'), v.array(allowedHost, expected('"*" or a list of host names'))], expected('"*" or a list of host names')),
  ),
  timeouts: v.optional(
    strict('an object', {
      headersMs: v.optional(wholeNumber(1, 3_600_000), DEFAULTS.headersMs),
      bodyMs: v.optional(wholeNumber(1, 3_600_000), DEFAULTS.bodyMs),
      shutdownMs: v.optional(wholeNumber(0, 3_600_000), DEFAULTS.shutdownMs),
    }),
    {},
  ),
  log: v.optional(
    strict('an object', {
      level: v.optional(v.picklist(LOG_LEVELS, expected('"debug", "info", "warn", "error" or "silent"')), DEFAULTS.logLevel),
    }),
    {},
  ),
  /** The admin API (`/_admin/...`, docs/admin-api.md): its bearer token, at least 16 characters. */
  admin: v.optional(
    strict('an object with "token"', {
      token: secret,
      google: v.optional(GoogleConnectSchema),
      /** The folder whose files the admin API may serve (after following symlinks); relative to the config file's folder. */
      fileRoot: v.optional(text('a folder path')),
      /** Whether a Google source made through the admin API may use the server's own credentials (ADC, a credentials file). */
      allowServerCredentials: v.optional(flag(), false),
      /** The URLs (origins, or origins with a path prefix) a Google source made through the admin API may send requests to. */
      allowedEndpoints: v.optional(v.array(endpointUrl, expected('a list of URLs')), () => [...GOOGLE_ENDPOINTS]),
      /** How long opening a connection's source may take in an admin change before it is given up (504). */
      openTimeoutMs: v.optional(wholeNumber(1, 600_000), DEFAULTS.adminOpenMs),
      /** The largest workbook an upload (`PUT /_admin/files/{name}`) may store, in bytes. */
      uploadBytes: v.optional(wholeNumber(1), DEFAULTS.uploadBytes),
    }),
  ),
  /** Webhook delivery (server/webhooks/): test settings mostly. */
  webhooks: v.optional(
    strict('an object', {
      /** Whether a webhook may target loopback, private, link-local or unique-local addresses (a receiver on this machine, in tests). */
      allowPrivateTargets: v.optional(flag(), false),
      /** The first retry's longest wait; each failure doubles it (full jitter), up to `retryCapMs`. */
      retryBaseMs: v.optional(wholeNumber(1, 3_600_000), 1_000),
      retryCapMs: v.optional(wholeNumber(1, 86_400_000), 3_600_000),
      /** How long an answer may take before the delivery counts as failed. */
      timeoutMs: v.optional(wholeNumber(1, 600_000), 10_000),
    }),
    {},
  ),
  /** Shared state through Redis, for several instances behind a load balancer (docs/scaling.md). */
  store: v.optional(
    strict('an object with "type": "redis"', {
      type: v.literal('redis', expected('"redis"')),
      /** Left out: $REDIS_URL. May be `{ "env": "NAME" }`: a URL can hold a password. */
      url: v.optional(
        v.union(
          [
            v.pipe(
              v.string(expected('a redis:// URL', true)),
              v.check((url) => /^rediss?:\/\//.test(url) && URL.canParse(url), expected('a URL such as "redis://127.0.0.1:6379/0"', true)),
            ),
            strict('an object with "env"', { env: text('an environment variable name') }),
          ],
          expected('a redis:// URL or { "env": "NAME" }'),
        ),
      ),
      /** How long a spreadsheet's write lease lasts unless renewed: a dead holder's lease ends after this. */
      leaseMs: v.optional(wholeNumber(100, 600_000), DEFAULTS.leaseMs),
      /** How long a write waits for the lease before 503. */
      leaseWaitMs: v.optional(wholeNumber(0, 600_000), DEFAULTS.leaseWaitMs),
      /**
       * How long an instance may go without reaching Redis before it refuses requests with keys
       * (a key revoked meanwhile would still work on it). At least 2 s: it looks every second.
       */
      maxStaleMs: v.optional(wholeNumber(2_000, 3_600_000), DEFAULTS.maxStaleMs),
    }),
  ),
};

export const ConfigSchema = strict('an object', {
  ...ServerSettingsEntries,
  connections: v.pipe(v.array(ConnectionSchema, expected('a list of connections')), v.minLength(1, expected('at least one connection'))),
});

export type ConfigInput = v.InferInput<typeof ConfigSchema>;
export type ParsedConfig = v.InferOutput<typeof ConfigSchema>;
export type ParsedConnection = v.InferOutput<typeof ConnectionSchema>;
export type ParsedKey = v.InferOutput<typeof KeySchema>;
export type ParsedGoogleConnect = v.InferOutput<typeof GoogleConnectSchema>;
/** A connection's billing plan (`plan` in the config file and the admin API), not the engine's write plan (`WritePlan`). */
export type BillingPlan = v.InferOutput<typeof PlanSchema>;
export type LimitsConfig = ParsedConfig['limits'];
export type CorsConfig = ParsedConfig['cors'];
export type TimeoutsConfig = ParsedConfig['timeouts'];
export type LogConfig = ParsedConfig['log'];
export type ConnectionInputFields = v.InferInput<typeof ConnectionSchema>;
