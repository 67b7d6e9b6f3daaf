// Loading sheetrest.json: paths resolved, mistakes named by field, env keys read at start-up,
// keys hashed, and the config of single-file mode (`sheetrest book.xlsx`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { ConfigError, configForFile, connectionIdFor, loadConfig } from '../../server/config/config.ts';
import type { GoogleSourceConfig } from '../../server/config/config.ts';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

async function withConfig<T>(text: string, use: (path: string, dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'sheetrest-config-'));
  try {
    const path = join(dir, 'sheetrest.json');
    await writeFile(path, text);
    return await use(path, dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function loadError(text: string, env: Record<string, string> = {}): Promise<ConfigError> {
  return withConfig(text, async (path) => {
    try {
      await loadConfig(path, { env });
    } catch (error) {
      assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
      return error;
    }
    assert.fail('the config loaded');
  });
}

const connection = (extra: string): string => `{"connections": [{"id": "demo", "source": {"type": "file", "path": "book.xlsx"}${extra}}]}`;

test('a valid config loads with defaults and resolved paths', async () => {
  const text = JSON.stringify({
    connections: [
      {
        id: 'demo',
        source: { type: 'file', path: 'data/book.xlsx' },
        keys: [{ key: 'a-secret' }, { sha256: sha256('reader'), scope: 'read', name: 'dashboard' }],
        plan: { name: 'free', monthlyRequests: 10000, operations: ['read', 'create', 'update', 'delete'] },
        readOnly: false,
        formulas: false,
      },
      { id: 'open_2', source: { type: 'file', path: '/srv/other.csv' } },
    ],
  });
  await withConfig(text, async (path, dir) => {
    const config = await loadConfig(path);
    assert.equal(config.configPath, path);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.port, 8080);
    assert.equal(config.stateDir, join(dir, '.sheetrest'));
    assert.deepEqual(config.limits, { bodyBytes: 1048576, rowsPerWrite: 5000, textIndexBytes: 67108864, answerCacheBytes: 33554432 });
    assert.deepEqual(config.cors, { origins: '*', writes: 'same-origin' });
    assert.equal(config.allowedHosts, undefined, 'decided from the bind address at start-up');
    assert.deepEqual(config.timeouts, { headersMs: 10000, bodyMs: 10000, shutdownMs: 10000 });
    assert.deepEqual(config.log, { level: 'info' });
    const [demo, open] = config.connections;
    assert.deepEqual(demo.source, { type: 'file', path: join(dir, 'data', 'book.xlsx') });
    assert.deepEqual(demo.plan, { name: 'free', monthlyRequests: 10000, operations: ['read', 'create', 'update', 'delete'] });
    assert.deepEqual(
      demo.keys.map((key) => [hex(key.digest), key.operations?.length === 1 ? key.operations[0] : key.operations?.length === 4 ? 'write' : key.operations, key.name]),
      [
        [sha256('a-secret'), 'write', undefined],
        [sha256('reader'), 'read', 'dashboard'],
      ],
    );
    assert.equal(open.source.type === 'file' && open.source.path, '/srv/other.csv');
    assert.deepEqual(open.keys, []);
    assert.equal(open.plan, undefined);
    assert.equal(open.readOnly, false);
    assert.equal(open.formulas, false);
  });
});

test('server settings and a google source are read', async () => {
  const text = JSON.stringify({
    $schema: './sheetrest.schema.json',
    host: '0.0.0.0',
    port: 0,
    stateDir: 'var/state',
    limits: { bodyBytes: 2048, rowsPerWrite: 10, textIndexBytes: 0, answerCacheBytes: 0 },
    cors: { origins: ['https://app.example.com', 'http://localhost:5173'], writes: 'any' },
    allowedHosts: ['sheets.example.com', 'intranet', '10.0.0.7', '[::1]'],
    timeouts: { headersMs: 5000, shutdownMs: 0 },
    log: { level: 'silent' },
    connections: [
      { id: 'g', source: { type: 'google', spreadsheetId: '1AbC-d_E', credentialsFile: 'sa.json', rootUrl: 'http://127.0.0.1:9999', quota: { readsPerMinutePerUser: 30, maxWaitMs: 0 } } },
      { id: 'o', source: { type: 'google', spreadsheetId: 'x', oauth: { clientId: 'id', clientSecret: { env: 'CS' }, refreshToken: 'rt-123', tokenUri: 'http://127.0.0.1:9999/token' } } },
    ],
  });
  await withConfig(text, async (path, dir) => {
    const config = await loadConfig(path, { env: { CS: 'client-secret-value' } });
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.port, 0);
    assert.equal(config.stateDir, join(dir, 'var', 'state'));
    assert.deepEqual(config.limits, { bodyBytes: 2048, rowsPerWrite: 10, textIndexBytes: 0, answerCacheBytes: 0 });
    assert.deepEqual(config.cors, { origins: ['https://app.example.com', 'http://localhost:5173'], writes: 'any' });
    assert.deepEqual(config.allowedHosts, ['sheets.example.com', 'intranet', '10.0.0.7', '[::1]']);
    assert.deepEqual(config.timeouts, { headersMs: 5000, bodyMs: 10000, shutdownMs: 0 });
    assert.equal(config.log.level, 'silent');
    assert.equal('$schema' in config, false);
    const google = config.connections[0].source as GoogleSourceConfig;
    assert.equal(google.credentialsFile, join(dir, 'sa.json'));
    assert.equal(google.rootUrl, 'http://127.0.0.1:9999');
    assert.deepEqual(google.quota, { readsPerMinutePerUser: 30, maxWaitMs: 0 });
    const oauth = (config.connections[1].source as GoogleSourceConfig).oauth;
    assert.equal(oauth?.tokenUri, 'http://127.0.0.1:9999/token');
    assert.equal(oauth?.clientSecret.reveal(), 'client-secret-value');
    assert.equal(oauth?.refreshToken.reveal(), 'rt-123');
    // Logging or serialising the config shows no Google secret.
    for (const shown of [JSON.stringify(config), inspect(config, { depth: 10 }), String(oauth?.refreshToken)]) {
      assert.equal(shown.includes('client-secret-value'), false, shown);
      assert.equal(shown.includes('rt-123'), false, shown);
    }
  });
});

// Each mistake, as written in the file, and what the message must say.
const mistakes: [string, string][] = [
  [connection(', "plan": {"name": "free", "monthlyRequests": "10k"}'), 'connections[0].plan.monthlyRequests: expected a whole number >= 0, got "10k"'],
  [connection(', "plan": {"name": "free", "monthlyRequests": -1}'), 'connections[0].plan.monthlyRequests: expected a whole number >= 0, got -1'],
  [connection(', "plan": {"name": "free", "monthlyRequests": 2.5}'), 'connections[0].plan.monthlyRequests: expected a whole number >= 0, got 2.5'],
  [connection(', "plan": {"monthlyRequests": 5}'), 'connections[0].plan.name: is required'],
  [connection(', "plan": {"name": "p", "operations": ["read", "write"]}'), 'connections[0].plan.operations[1]: expected "read", "create", "update" or "delete", got "write"'],
  [connection(', "plan": {"name": "p", "operations": []}'), 'connections[0].plan.operations: expected at least one of'],
  [connection(', "plan": {"name": "p", "operations": ["read", "read"]}'), 'connections[0].plan.operations: expected each operation once'],
  [connection(', "plan": {"name": "p", "period": "week", "requests": 5}'), 'connections[0].plan.period: expected "month", "day" or "hour", got "week"'],
  [connection(', "plan": {"name": "p", "period": "Day", "requests": 5}'), 'connections[0].plan.period: expected "month", "day" or "hour", got "Day"'],
  [connection(', "plan": {"name": "p", "period": "day", "requests": "1k"}'), 'connections[0].plan.requests: expected a whole number >= 0, got "1k"'],
  [connection(', "plan": {"name": "p", "period": "day", "monthlyRequests": 5}'), 'connections[0].plan.monthlyRequests: expected "requests" for a plan whose period is "day" ("monthlyRequests" is a month\'s allowance)'],
  [connection(', "plan": {"name": "p", "requests": 5, "monthlyRequests": 5}'), 'connections[0].plan: expected at most one of "requests", "monthlyRequests", got "requests" and "monthlyRequests"'],
  [connection(', "plan": {"name": "p", "Period": "day"}'), 'connections[0].plan.Period: unknown field (did you mean "period"?)'],
  [connection(', "readonly": true'), 'connections[0].readonly: unknown field (did you mean "readOnly"?)'],
  [connection(', "readOnly": "yes"'), 'connections[0].readOnly: expected true or false, got "yes"'],
  [connection(', "formulas": 1'), 'connections[0].formulas: expected true or false, got 1'],
  [connection(', "unknownColumns": "drop"'), 'connections[0].unknownColumns: expected "ignore" or "reject", got "drop"'],
  [connection(', "rowId": {"column": "Id", "generate": "uuid4"}'), 'connections[0].rowId.generate: expected "uuid7" or "increment", got "uuid4"'],
  [connection(', "rowId": {"column": "", "generate": "uuid7"}'), 'connections[0].rowId.column: expected a column name, got ""'],
  [connection(', "rowId": {"generate": "uuid7"}'), 'connections[0].rowId.column: is required'],
  [connection(', "tabs": {"Orders": {"rowid": null}}'), 'connections[0].tabs.Orders.rowid: unknown field (did you mean "rowId"?)'],
  [connection(', "keys": [{"key": "k", "scope": "admin"}]'), 'connections[0].keys[0].scope: expected "read" or "write", got "admin"'],
  [connection(', "keys": [{"scope": "read"}]'), 'connections[0].keys[0]: expected one of "key", "sha256" or "env"'],
  [connection(', "keys": [{"key": "k", "scope": "read", "operations": ["read"]}]'), 'connections[0].keys[0]: expected at most one of "scope", "operations", got "scope" and "operations"'],
  [connection(', "keys": [{"key": "k", "operations": ["read", "write"]}]'), 'connections[0].keys[0].operations[1]: expected "read", "create", "update" or "delete", got "write"'],
  [connection(', "keys": [{"key": "k", "operations": []}]'), 'connections[0].keys[0].operations: expected at least one of "read", "create", "update", "delete"'],
  [connection(', "keys": [{"key": "k", "operations": ["create", "create"]}]'), 'connections[0].keys[0].operations: expected each operation once'],
  [connection(', "keys": [{"key": "k", "tabs": []}]'), 'connections[0].keys[0].tabs: expected at least one tab name (leave "tabs" out for every tab)'],
  [connection(', "keys": [{"key": "k", "tabs": "Orders"}]'), 'connections[0].keys[0].tabs: expected a list of tab names, got "Orders"'],
  [connection(', "keys": [{"key": "k", "tabs": ["A", "A"]}]'), 'connections[0].keys[0].tabs: expected each tab once'],
  [connection(', "keys": [{"key": "k", "expiresAt": "tomorrow"}]'), 'connections[0].keys[0].expiresAt: expected an ISO 8601 date or time with its zone, such as "2027-01-01" or "2027-01-01T09:00:00+01:00", got "tomorrow"'],
  [connection(', "keys": [{"key": "k", "expiresAt": "2027-01-01T09:00:00"}]'), 'connections[0].keys[0].expiresAt: expected an ISO 8601 date or time with its zone'],
  // A day the calendar does not have is a typo, not the 2nd of March (Date.parse rolls it over).
  [connection(', "keys": [{"key": "k", "expiresAt": "2027-02-30"}]'), 'connections[0].keys[0].expiresAt: expected an ISO 8601 date or time with its zone, such as "2027-01-01" or "2027-01-01T09:00:00+01:00", got "2027-02-30"'],
  [connection(', "keys": [{"key": "k", "expiresAt": "2027-04-31T10:00:00Z"}]'), 'connections[0].keys[0].expiresAt: expected an ISO 8601 date or time with its zone'],
  [connection(', "keys": [{"key": "k", "expiresAt": 1798761600}]'), 'connections[0].keys[0].expiresAt: expected an ISO 8601 date or time such as "2027-01-01T00:00:00Z", got 1798761600'],
  [connection(', "keys": [{"key": "k", "expiresat": "2027-01-01"}]'), 'connections[0].keys[0].expiresat: unknown field (did you mean "expiresAt"?)'],
  [connection(', "plan": {"name": "p", "rateLimit": {"requests": 60}}'), 'connections[0].plan.rateLimit.perSeconds: is required'],
  [connection(', "plan": {"name": "p", "rateLimit": {"requests": 0, "perSeconds": 10}}'), 'connections[0].plan.rateLimit.requests: expected a whole number >= 1, got 0'],
  [connection(', "plan": {"name": "p", "rateLimit": {"requests": 60, "perSeconds": 100000}}'), 'connections[0].plan.rateLimit.perSeconds: expected a whole number from 1 to 86400, got 100000'],
  [connection(', "plan": {"name": "p", "ratelimit": {"requests": 6, "perSeconds": 1}}'), 'connections[0].plan.ratelimit: unknown field (did you mean "rateLimit"?)'],
  [connection(', "keys": [{"key": "k", "env": "K"}]'), 'connections[0].keys[0]: expected only one of "key", "sha256" or "env", got "key" and "env"'],
  [connection(', "keys": [{"sha256": "abc"}]'), 'connections[0].keys[0].sha256: expected 64 hex digits (a SHA-256 digest), got a string of 3 characters'],
  [connection(', "keys": [{"key": ""}]'), 'connections[0].keys[0].key: expected a non-empty key, got an empty string'],
  [connection(', "keys": [{"key": "same"}, {"key": "same", "scope": "read"}]'), 'connections[0].keys[1]: the same key as connections[0].keys[0]'],
  [connection(', "keys": [{"env": "NOT SET"}]'), 'connections[0].keys[0].env: expected an environment variable name (letters, digits, _), got "NOT SET"'],
  [connection(', "keys": {"key": "k"}'), 'connections[0].keys: expected a list of keys, got an object'],
  ['{"connections": [{"id": "de mo", "source": {"type": "file", "path": "b.xlsx"}}]}', 'connections[0].id: expected an id made of letters, digits, "_" and "-"'],
  ['{"connections": [{"source": {"type": "file", "path": "b.xlsx"}}]}', 'connections[0].id: is required'],
  ['{"connections": [{"id": "a", "source": {"type": "ftp"}}]}', 'connections[0].source.type: expected "file" or "google", got "ftp"'],
  ['{"connections": [{"id": "a", "source": {"type": "file"}}]}', 'connections[0].source.path: is required'],
  ['{"connections": [{"id": "a", "source": "book.xlsx"}]}', 'connections[0].source: expected an object with "type", got "book.xlsx"'],
  ['{"connections": [{"id": "a", "source": {"type": "google", "spreadsheetId": "x", "apiKey": "k", "accessToken": "t"}}]}', 'connections[0].source: expected at most one of "credentialsFile", "accessToken", "apiKey", "oauth", got "accessToken" and "apiKey"'],
  ['{"connections": [{"id": "a", "source": {"type": "google", "spreadsheetId": "x", "timeoutMs": 0}}]}', 'connections[0].source.timeoutMs: expected a whole number >= 1, got 0'],
  ['{"connections": [{"id": "a", "source": {"type": "google", "spreadsheetId": "x", "retries": 11}}]}', 'connections[0].source.retries: expected a whole number from 0 to 10, got 11'],
  ['{"connections": [{"id": "a", "source": {"type": "google", "spreadsheetId": "x", "apiKey": "k", "rootUrl": "not a url"}}]}', 'connections[0].source.rootUrl: expected an absolute URL'],
  ['{"connections": [{"id": "a", "source": {"type": "google", "spreadsheetId": "x", "oauth": {"clientId": "c"}}}]}', 'connections[0].source.oauth.clientSecret: is required'],
  ['{"connections": [{"id": "a", "source": {"type": "google", "spreadsheetId": "x", "quota": {"readsPerMinutePerUser": 0}}}]}', 'connections[0].source.quota.readsPerMinutePerUser: expected a whole number >= 1, got 0'],
  ['{"connections": [{"id": "a", "source": {"type": "google", "spreadsheetId": "x", "quota": {"readsPerMinute": 5}}}]}', 'connections[0].source.quota.readsPerMinute'],
  ['{"connections": [{"id": "a", "source": {"type": "google", "spreadsheetId": "x", "accessToken": 42}}]}', 'connections[0].source.accessToken: expected a non-empty string or { "env": "VARIABLE_NAME" }, got a number'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}, {"id": "a", "source": {"type": "file", "path": "y"}}]}', 'connections[1].id: "a" is already the id of connections[0]'],
  ['{"connections": []}', 'connections: expected at least one connection'],
  ['{}', 'connections: is required'],
  ['[]', '(top level): expected an object with "connections", got an array'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}], "port": 70000}', 'port: expected a whole number from 0 to 65535, got 70000'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}], "limits": {"bodyBytes": 0}}', 'limits.bodyBytes: expected a whole number >= 1, got 0'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}], "limits": {"rows": 10}}', 'limits.rows: unknown field; expected one of "bodyBytes", "rowsPerWrite", "textIndexBytes", "answerCacheBytes", "idempotencyKeys", "idempotencyBytes"'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}], "limits": {"idempotencyKeys": 0}}', 'limits.idempotencyKeys: expected a whole number >= 1, got 0'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}], "limits": {"idempotencyBytes": 1.5}}', 'limits.idempotencyBytes: expected a whole number >= 1, got 1.5'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}], "limits": {"textIndexBytes": -1}}', 'limits.textIndexBytes: expected a whole number >= 0, got -1'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}], "limits": {"answerCacheBytes": "32MB"}}', 'limits.answerCacheBytes: expected a whole number >= 0, got "32MB"'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}, "cacheControl": {"maxAge": -5}}]}', 'connections[0].cacheControl.maxAge: expected a whole number from 0 to 31536000, got -5'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}, "cacheControl": {"maxage": 5}}]}', 'connections[0].cacheControl.maxage: unknown field (did you mean "maxAge"?); expected one of "maxAge", "staleWhileRevalidate"'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}, "cacheControl": {"staleWhileRevalidate": 30}}]}', 'connections[0].cacheControl: expected "maxAge" with "staleWhileRevalidate" (stale-while-revalidate extends max-age)'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}], "cors": {"origins": ["https://a.example/"]}}', 'cors.origins[0]: expected an origin such as "https://example.com" (no path or trailing slash), got "https://a.example/"'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}], "cors": {"origins": "https://a.example"}}', 'cors.origins: expected "*" or a list of origins, got "https://a.example"'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}], "cors": {"writes": "all"}}', 'cors.writes: expected "same-origin", "any" or a list of origins, got "all"'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}], "cors": {"writes": ["https://a.example/x"]}}', 'cors.writes[0]: expected an origin such as "https://example.com" (no path or trailing slash), got "https://a.example/x"'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}], "cors": {"origins": ["https://a.example"], "writes": ["https://b.example"]}}', 'cors: expected "writes" to be "same-origin" or "any" when "origins" is a list (the origins listed there may already write; list more there)'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}], "log": {"level": "verbose"}}', 'log.level: expected "debug", "info", "warn", "error" or "silent", got "verbose"'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}], "logLevel": "info"}', 'logLevel: unknown field'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}], "limits": []}', 'limits: expected an object, got an array'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}], "allowedHosts": "sheets.example.com"}', 'allowedHosts: expected "*" or a list of host names, got "sheets.example.com"'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}], "allowedHosts": ["https://sheets.example.com"]}', 'allowedHosts[0]: expected a host name such as "sheets.example.com" (no scheme, port or path), got "https://sheets.example.com"'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}], "allowedHosts": ["sheets.example.com:443"]}', 'allowedHosts[0]: expected a host name such as "sheets.example.com" (no scheme, port or path), got "sheets.example.com:443"'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}], "allowedHosts": [""]}', 'allowedHosts[0]: expected a host name such as "sheets.example.com" (no scheme, port or path), got ""'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}], "allowedhosts": []}', 'allowedhosts: unknown field (did you mean "allowedHosts"?)'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}], "timeouts": {"bodyMs": 0}}', 'timeouts.bodyMs: expected a whole number from 1 to 3600000, got 0'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}], "timeouts": {"shutdownMs": "10s"}}', 'timeouts.shutdownMs: expected a whole number from 0 to 3600000, got "10s"'],
  ['{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}], "timeouts": {"idleMs": 5}}', 'timeouts.idleMs: unknown field; expected one of "headersMs", "bodyMs", "shutdownMs"'],
  [connection(', "plan": []'), 'connections[0].plan: expected an object, got an array'],
  ['{"connections": [{"id": "a", "source": []}]}', 'connections[0].source.type: expected "file" or "google", got nothing'],
  ['{"connections": [], \n  "port": 80,\n}', 'not valid JSON: line 2, column 13: a comma before "}" is not allowed in JSON'],
  ['{\n  // comment\n}', 'not valid JSON: line 2, column 3: JSON has no comments'],
  ['{"connections": [{"key": a-secret}]}', 'not valid JSON: line 1, column 26: unexpected character "a"'],
  ['', 'not valid JSON: line 1, column 1: unexpected end of file'],
];

test('cors.writes takes "same-origin", "any", or a list of origins beside origins "*"', async (t) => {
  const cases: [string, unknown][] = [
    ['{}', { origins: '*', writes: 'same-origin' }],
    ['{"writes": "any"}', { origins: '*', writes: 'any' }],
    ['{"writes": ["https://app.example"]}', { origins: '*', writes: ['https://app.example'] }],
    ['{"origins": ["https://app.example"], "writes": "same-origin"}', { origins: ['https://app.example'], writes: 'same-origin' }],
  ];
  for (const [cors, expected] of cases) {
    await t.test(cors, async () => {
      const text = `{"connections": [{"id": "a", "source": {"type": "file", "path": "x"}}], "cors": ${cors}}`;
      await withConfig(text, async (path) => assert.deepEqual((await loadConfig(path)).cors, expected));
    });
  }
});

test('a plan counts by the month unless its period says "day" or "hour"', async (t) => {
  const ALL = ['read', 'create', 'update', 'delete'];
  const cases: [string, object][] = [
    ['{"name": "free", "monthlyRequests": 10000}', { name: 'free', monthlyRequests: 10000, operations: ALL }],
    ['{"name": "free", "period": "month", "monthlyRequests": 10000}', { name: 'free', period: 'month', monthlyRequests: 10000, operations: ALL }],
    ['{"name": "free", "period": "month", "requests": 10000}', { name: 'free', period: 'month', requests: 10000, operations: ALL }],
    ['{"name": "api", "period": "day", "requests": 1000}', { name: 'api', period: 'day', requests: 1000, operations: ALL }],
    ['{"name": "burst", "period": "hour", "requests": 100, "operations": ["read"]}', { name: 'burst', period: 'hour', requests: 100, operations: ['read'] }],
    ['{"name": "team", "period": "day"}', { name: 'team', period: 'day', operations: ALL }],
    ['{"name": "burst", "rateLimit": {"requests": 60, "perSeconds": 10}}', { name: 'burst', operations: ALL, rateLimit: { requests: 60, perSeconds: 10 } }],
  ];
  for (const [plan, expected] of cases) {
    await t.test(plan, async () => {
      await withConfig(connection(`, "plan": ${plan}`), async (path) => {
        assert.deepEqual((await loadConfig(path)).connections[0].plan, expected);
      });
    });
  }
});

test('each mistake names its field and what was expected', async (t) => {
  for (const [text, expected] of mistakes) {
    await t.test(text, async () => {
      const error = await loadError(text);
      assert.ok(error.message.includes(expected), `message was:\n${error.message}`);
    });
  }
});

test('every problem is reported at once, one line each', async () => {
  const error = await loadError('{"connections": [{"id": "a b", "source": {"type": "file", "path": "x"}, "readonly": true}], "port": "80"}');
  assert.equal(error.problems.length, 3, error.message);
  assert.match(error.message, /3 problems:\n {2}- /);
});

test('a missing config file is a ConfigError naming the file', async () => {
  const path = join(tmpdir(), 'sheetrest-no-such-dir', 'sheetrest.json');
  await assert.rejects(loadConfig(path), (error: unknown) => error instanceof ConfigError && error.message === `${path}: no such file`);
});

test('keys from the environment are read at start-up and hashed', async () => {
  await withConfig(connection(', "keys": [{"env": "SHEETREST_DEMO_KEY", "scope": "read"}]'), async (path) => {
    const config = await loadConfig(path, { env: { SHEETREST_DEMO_KEY: 'from-env' } });
    const [key] = config.connections[0].keys;
    assert.equal(hex(key.digest), sha256('from-env'));
    assert.deepEqual(key.operations, ['read']);
  });
});

test('a missing or empty environment variable names the variable, never a value', async (t) => {
  const cases: [Record<string, string>, string][] = [
    [{}, 'connections[0].keys[0].env: environment variable SHEETREST_DEMO_KEY is not set'],
    [{ SHEETREST_DEMO_KEY: '' }, 'connections[0].keys[0].env: environment variable SHEETREST_DEMO_KEY is empty'],
  ];
  for (const [env, expected] of cases) {
    await t.test(JSON.stringify(env), async () => {
      const error = await loadError(connection(', "keys": [{"env": "SHEETREST_DEMO_KEY"}]'), { ...env, OTHER: 'unrelated-value' });
      assert.ok(error.message.includes(expected), error.message);
      assert.equal(error.message.includes('unrelated-value'), false);
    });
  }
  await t.test('google secret from env', async () => {
    const error = await loadError('{"connections": [{"id": "a", "source": {"type": "google", "spreadsheetId": "x", "accessToken": {"env": "GOOGLE_TOKEN"}}}]}');
    assert.ok(error.message.includes('connections[0].source.accessToken.env: environment variable GOOGLE_TOKEN is not set'), error.message);
  });
});

test('secrets never appear in error messages', async (t) => {
  const secret = 'hunter2-very-secret';
  const cases = [
    connection(`, "keys": [{"sha256": "${secret}"}]`),
    connection(`, "keys": [{"key": "${secret}", "scope": "admin"}]`),
    connection(`, "keys": [{"key": "${secret}"}, {"key": "${secret}"}]`),
    connection(`, "keys": [{"key": "${secret}", "sha256": "${sha256(secret)}"}]`),
    `{"connections": [{"id": "a", "source": {"type": "google", "spreadsheetId": "x", "apiKey": "${secret}", "oauth": {}}}]}`,
    `{"connections": [{"keys": [{"key": "${secret}" "scope": "read"}]}]}`,
    `{"connections": [{"keys": [{"key": "${secret}\n"}]}]}`,
  ];
  for (const text of cases) {
    await t.test(text, async () => {
      const error = await loadError(text);
      assert.equal(error.message.includes('hunter2'), false, error.message);
    });
  }
});

test('a sha256 key is kept as its digest, and no key is held in plaintext', async () => {
  const digest = sha256('never-in-the-file');
  await withConfig(connection(`, "keys": [{"sha256": "${digest.toUpperCase()}"}, {"key": "plain-key"}]`), async (path) => {
    const config = await loadConfig(path);
    const [fromDigest, fromPlain] = config.connections[0].keys;
    assert.equal(hex(fromDigest.digest), digest);
    assert.deepEqual(Object.keys(fromPlain).sort(), ['digest', 'operations']);
    const shown = inspect(config, { depth: 10 }) + JSON.stringify(config);
    assert.equal(shown.includes('plain-key'), false);
  });
});

test('a key carries operations, tabs and an expiry; scope is the short form of operations', async (t) => {
  const ALL = ['read', 'create', 'update', 'delete'];
  const cases: [string, object][] = [
    ['{"key": "k"}', { operations: ALL }],
    ['{"key": "k", "scope": "write"}', { operations: ALL }],
    ['{"key": "k", "scope": "read"}', { operations: ['read'] }],
    ['{"key": "k", "operations": ["create"]}', { operations: ['create'] }],
    ['{"key": "k", "operations": ["read", "update"], "tabs": ["Orders", "Staff"]}', { operations: ['read', 'update'], tabs: ['Orders', 'Staff'] }],
    ['{"key": "k", "expiresAt": "2027-01-01"}', { operations: ALL, expiresAt: Date.UTC(2027, 0, 1) }],
    ['{"key": "k", "expiresAt": "2027-01-01T09:30:00+01:00"}', { operations: ALL, expiresAt: Date.UTC(2027, 0, 1, 8, 30) }],
    ['{"key": "k", "expiresAt": "2027-01-01T00:00:00.5Z"}', { operations: ALL, expiresAt: Date.UTC(2027, 0, 1) + 500 }],
  ];
  for (const [key, expected] of cases) {
    await t.test(key, async () => {
      await withConfig(connection(`, "keys": [${key}]`), async (path) => {
        const { digest: _digest, ...rest } = (await loadConfig(path)).connections[0].keys[0];
        assert.deepEqual(rest, expected);
      });
    });
  }
});

test('trustProxy is off unless set', async () => {
  await withConfig(connection(''), async (path) => assert.equal((await loadConfig(path)).trustProxy, false));
  await withConfig(connection('').replace('{"connections"', '{"trustProxy": true, "connections"'), async (path) => assert.equal((await loadConfig(path)).trustProxy, true));
  const error = await loadError(connection('').replace('{"connections"', '{"trustProxy": "yes", "connections"'));
  assert.ok(error.message.includes('trustProxy: expected true or false, got "yes"'), error.message);
});

test('single-file mode: one connection named after the workbook, state beside it', () => {
  const config = configForFile('/data/books/Sales Report (2024).xlsx');
  assert.equal(config.configPath, undefined);
  assert.equal(config.stateDir, '/data/books/.sheetrest');
  assert.equal(config.port, 8080);
  assert.equal(config.connections.length, 1);
  const [only] = config.connections;
  assert.equal(only.id, 'Sales-Report-2024');
  assert.deepEqual(only.source, { type: 'file', path: '/data/books/Sales Report (2024).xlsx' });
  assert.deepEqual(only.keys, []);
});

test('single-file mode takes overrides and names a bad one by its option', () => {
  const config = configForFile('/data/book.csv', {
    port: 9000,
    stateDir: '/var/lib/sheetrest',
    readOnly: true,
    keys: [{ env: 'KEY' }],
    plan: { name: 'trial', monthlyRequests: 100 },
    limits: { rowsPerWrite: 50 },
  }, { env: { KEY: 'k' } });
  assert.equal(config.port, 9000);
  assert.equal(config.stateDir, '/var/lib/sheetrest');
  assert.deepEqual(config.limits, { bodyBytes: 1048576, rowsPerWrite: 50, textIndexBytes: 67108864, answerCacheBytes: 33554432 });
  assert.equal(config.connections[0].readOnly, true);
  assert.equal(hex(config.connections[0].keys[0].digest), sha256('k'));
  assert.deepEqual(config.connections[0].plan?.operations, ['read', 'create', 'update', 'delete']);
  assert.throws(
    () => configForFile('/data/book.csv', { plan: { name: 'trial', monthlyRequests: -5 } }),
    (error: unknown) => error instanceof ConfigError && error.message === 'options: plan.monthlyRequests: expected a whole number >= 0, got -5',
  );
});

test('connection ids for workbook names', async (t) => {
  const cases: [string, string][] = [
    ['book.xlsx', 'book'],
    ['/a/b/My Book.ods', 'My-Book'],
    ['Données 2024.csv', 'Donnees-2024'],
    ['snake_case-name.xlsx', 'snake_case-name'],
    ['月次.xlsx', 'sheet'],
    ['.hidden.xlsx', 'hidden'],
  ];
  for (const [path, id] of cases) {
    await t.test(path, () => assert.equal(connectionIdFor(path), id));
  }
});

test('a Google source without credentials uses Application Default Credentials, with its tuning options', async () => {
  const text = '{"connections": [{"id": "crm", "source": {"type": "google", "spreadsheetId": "1AbC", "freshnessMs": 2000, "timeoutMs": 5000, "retries": 2}}]}';
  const config = await withConfig(text, (path) => loadConfig(path, { env: {} }));
  const { source } = config.connections[0];
  assert.equal(source.type, 'google');
  assert.ok(source.type === 'google');
  assert.deepEqual([source.credentialsFile, source.accessToken, source.apiKey, source.oauth], [undefined, undefined, undefined, undefined]);
  assert.deepEqual([source.freshnessMs, source.timeoutMs, source.retries], [2000, 5000, 2]);
});
