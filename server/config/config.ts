// Loads the server's configuration: `sheetrest --config sheetrest.json` -> a checked Config, or
// a ConfigError that stops the server with `sheetrest.json: connections[0].plan.monthlyRequests:
// expected a whole number >= 0, got "10k"`. Also builds the config of single-file mode
// (`sheetrest book.xlsx`). Every field is listed at the top of schema.ts.
//
// Loading does all the work that can fail up front: relative paths become absolute (against
// the config file's folder), `{ "env": "NAME" }` secrets are read from the environment, and API
// keys are hashed, so that after start-up no plaintext key is held anywhere.
import { readFile } from 'node:fs/promises';
import { basename, dirname, extname, resolve } from 'node:path';
import * as v from 'valibot';
import type { BaseIssue } from 'valibot';
import { digestKey, operationsOfScope } from '../auth.ts';
import type { ApiKey } from '../auth.ts';
import { ConfigSchema, DEFAULTS, GOOGLE_ENDPOINTS } from './schema.ts';
import type { ConfigInput, ConnectionInputFields, ParsedConfig, ParsedConnection, ParsedGoogleConnect, ParsedKey, ParsedSecret } from './schema.ts';
import { JsonSyntaxError, parseJsonText } from './json.ts';
import { Secret } from './secret.ts';
import { sameFileKey } from '../durable/lock.ts';
import { DEFAULT_STATE_DIR } from '../durable/state.ts';
import { sourceTypeOf, type ReadSecret, type SourceConfig } from '../sources/registry.ts';

export { DEFAULTS, LOG_LEVELS, OPERATIONS } from './schema.ts';
export type { BillingPlan, ConfigInput, CorsConfig, FileSourceConfig, LimitsConfig, LogConfig, LogLevel, Operation, TimeoutsConfig } from './schema.ts';
export { Secret } from './secret.ts';
export type { GoogleOAuthConfig, GoogleSourceConfig, SourceConfig } from '../sources/registry.ts';

/** A connection as the server uses it: absolute paths, hashed keys (empty: an open connection). */
export type ConnectionConfig = Omit<ParsedConnection, 'keys' | 'source' | 'webhooks'> & {
  readonly source: SourceConfig;
  readonly keys: readonly ApiKey[];
  /** Where its events are POSTed (server/webhooks/); none for a connection made through the admin API. */
  readonly webhooks?: readonly WebhookConfig[];
};

/** A webhook with its secret read (from the environment where it says `{ "env" }`) and its name given. */
export interface WebhookConfig {
  readonly name: string;
  readonly url: string;
  /** Left out: every event type. */
  readonly events?: readonly string[];
  readonly secret: Secret;
}

/** The environment variable that turns the admin API on when the config has no `admin` section. */
export const ADMIN_TOKEN_ENV = 'SHEETREST_ADMIN_TOKEN';
/** Shorter admin tokens are refused: the token guards every connection and key at once. */
export const ADMIN_TOKEN_MIN_LENGTH = 16;

/**
 * What a connection made through the admin API may use (server/admin/admission.ts,
 * docs/admin-api.md "What the admin API may open"). The config file's own connections are
 * not bound by them: the operator wrote those.
 */
export interface AdminRules {
  /** Absolute. An admin connection's file (and a credentials file) must be a regular file inside it, after following symlinks. */
  readonly fileRoot: string;
  /** Whether an admin Google source may use the server's credentials (Application Default Credentials, a credentials file). */
  readonly allowServerCredentials: boolean;
  /** The URLs an admin Google source may name as rootUrl, driveRootUrl or oauth.tokenUri (origins or origin + path prefix). */
  readonly allowedEndpoints: readonly string[];
  /** How long an admin change waits for a source to open. */
  readonly openTimeoutMs: number;
}

export interface AdminConfig extends AdminRules {
  readonly token: Secret;
  /** The largest workbook `PUT /_admin/files/{name}` stores (server/admin/files.ts). */
  readonly uploadBytes: number;
  /** "Connect a Google spreadsheet" (server/admin/google-connect.ts); absent: not offered. */
  readonly google?: GoogleConnectConfig;
}

/** The OAuth client the dashboard signs in with; `clientSecretSetting` is the file's own form, kept in the connections it makes. */
export type GoogleConnectConfig = Omit<ParsedGoogleConnect, 'clientSecret'> & { readonly clientSecret: Secret; readonly clientSecretSetting: ParsedSecret };

/** The environment variable holding the Redis URL when `store.url` is left out. */
export const REDIS_URL_ENV = 'REDIS_URL';

/** Shared state through Redis (docs/scaling.md). */
export interface StoreConfig {
  readonly type: 'redis';
  /** May hold a password: shown only through `redactedUrl` (redis/client.ts). */
  readonly url: Secret;
  readonly leaseMs: number;
  readonly leaseWaitMs: number;
  /** How long out of touch with Redis before requests with keys answer 503 (docs/scaling.md). */
  readonly maxStaleMs: number;
}

export type Config = Omit<ParsedConfig, '$schema' | 'stateDir' | 'connections' | 'admin' | 'store'> & {
  /** Absolute path of the config file; absent in single-file mode. */
  readonly configPath?: string;
  /** Absolute path of the state folder (quota counts, journals). */
  readonly stateDir: string;
  readonly connections: readonly ConnectionConfig[];
  /** Set when the admin API is on (`admin.token`, or $SHEETREST_ADMIN_TOKEN). */
  readonly admin?: AdminConfig;
  /** Set when several instances share state through Redis. */
  readonly store?: StoreConfig;
};

/** A configuration the server cannot start with. Its message names each field and what was expected. */
export class ConfigError extends Error {
  /** One line per problem: `connections[0].id: is required`. */
  readonly problems: readonly string[];
  constructor(where: string, problems: readonly string[]) {
    super(
      problems.length === 1
        ? `${where}: ${problems[0]}`
        : `${where}: ${problems.length} problems:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`,
    );
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export interface LoadOptions {
  /** Where `{ "env": "NAME" }` is looked up; `process.env` by default. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Reads, checks and resolves a config file. Throws ConfigError. */
export async function loadConfig(path: string, options: LoadOptions = {}): Promise<Config> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a folder, not a file' : `cannot be read (${code ?? 'unknown error'})`;
    throw new ConfigError(path, [reason]);
  }
  let input: unknown;
  try {
    input = parseJsonText(text);
  } catch (error) {
    if (error instanceof JsonSyntaxError) throw new ConfigError(path, [`not valid JSON: ${error.message}`]);
    throw error;
  }
  const configPath = resolve(path);
  const baseDir = dirname(configPath);
  const parsed = validate(input, path, (field) => field);
  return { ...resolveConfig(parsed, baseDir, resolve(baseDir, parsed.stateDir ?? DEFAULT_STATE_DIR), options, path, (field) => field, baseDir), configPath };
}

/** What single-file mode takes from the command line: the server settings and the one connection's options. */
export type FileModeOverrides = Omit<ConfigInput, 'connections'> & Partial<Omit<ConnectionInputFields, 'source'>>;

/**
 * The config of `sheetrest book.xlsx`: one connection named after the file (`book`), state in
 * `.sheetrest/` beside the workbook. Relative paths in `overrides` (as typed on a command line)
 * resolve against the working directory. Throws ConfigError.
 */
export function configForFile(workbookPath: string, overrides: FileModeOverrides = {}, options: LoadOptions = {}): Config {
  const workbook = resolve(workbookPath);
  const { id, keys, plan, readOnly, formulas, hiddenTabs, ...server } = overrides;
  const connection = { id: id ?? connectionIdFor(workbook), source: { type: 'file', path: workbook }, keys, plan, readOnly, formulas, hiddenTabs };
  const input = { ...server, connections: [dropUndefined(connection)] };
  // Errors name the option (`plan.monthlyRequests`), not a config file position nobody wrote.
  const display = (field: string): string => field.replace(/^connections\[0\]\.?/, '') || 'options';
  const parsed = validate(dropUndefined(input), 'options', display);
  const stateDir = parsed.stateDir === undefined ? resolve(dirname(workbook), DEFAULT_STATE_DIR) : resolve(parsed.stateDir);
  // The admin API's files: beside the workbook by default, where its state folder is too.
  return resolveConfig(parsed, process.cwd(), stateDir, options, 'options', display, dirname(workbook));
}

/** `Sales Report (2024).xlsx` -> `Sales-Report-2024`: what may stand in a URL path segment unescaped. */
export function connectionIdFor(workbookPath: string): string {
  const stem = basename(workbookPath, extname(workbookPath));
  const id = stem
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '') // `Données` -> `Donnees`, not `Donn-es`
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 100);
  return id === '' ? 'sheet' : id;
}

// ---- validation --------------------------------------------------------------------------

function validate(input: unknown, where: string, display: (field: string) => string): ParsedConfig {
  // valibot takes an array for an object whose fields are all missing; say what it is instead.
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    const got = Array.isArray(input) ? 'an array' : input === null ? 'null' : `a ${typeof input}`;
    throw new ConfigError(where, [`(top level): expected an object with "connections", got ${got}`]);
  }
  const result = v.safeParse(ConfigSchema, input);
  if (result.success) return result.output;
  throw new ConfigError(where, result.issues.map((issue) => `${display(fieldPath(issue))}: ${issue.message}`));
}

/** `connections[0].plan.monthlyRequests`, or `(top level)` for the whole file. */
export function fieldPath(issue: BaseIssue<unknown>): string {
  let path = '';
  for (const item of issue.path ?? []) {
    const key = item.key;
    if (typeof key === 'number') path += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key)) path += path === '' ? key : `.${key}`;
    else path += `[${JSON.stringify(String(key))}]`;
  }
  return path === '' ? '(top level)' : path;
}

// ---- resolution --------------------------------------------------------------------------

function resolveConfig(
  parsed: ParsedConfig,
  baseDir: string,
  stateDir: string,
  options: LoadOptions,
  where: string,
  display: (field: string) => string,
  /** `admin.fileRoot` when the config leaves it out. */
  defaultFileRoot: string,
): Config {
  const env = options.env ?? process.env;
  const problems: string[] = [];
  const problem = (field: string, message: string): void => void problems.push(`${display(field)}: ${message}`);

  const readSecret = (value: ParsedSecret, field: string): Secret => {
    if (typeof value === 'string') return new Secret(value);
    const found = env[value.env];
    // Name the variable, never its value.
    if (found === undefined) problem(`${field}.env`, `environment variable ${value.env} is not set`);
    else if (found === '') problem(`${field}.env`, `environment variable ${value.env} is empty`);
    return new Secret(found ?? '');
  };

  const firstUse = new Map<string, number>();
  const connections = parsed.connections.map((connection, index): ConnectionConfig => {
    const at = `connections[${index}]`;
    const earlier = firstUse.get(connection.id);
    if (earlier === undefined) firstUse.set(connection.id, index);
    else problem(`${at}.id`, `"${connection.id}" is already the id of connections[${earlier}]`);
    return {
      ...connection,
      source: resolveSource(connection.source, baseDir, `${at}.source`, readSecret),
      keys: resolveKeys(connection.keys, `${at}.keys`, env, problem),
      webhooks: connection.webhooks.map((hook, n) => ({
        name: hook.name ?? `hook-${n + 1}`,
        url: hook.url,
        ...(hook.events === undefined ? {} : { events: hook.events }),
        secret: readSecret(hook.secret, `${at}.webhooks[${n}].secret`),
      })),
    };
  });
  checkOneWriterPerFile(connections, problem);
  const admin = resolveAdmin(parsed.admin, env, readSecret, problem, parsed.admin?.fileRoot === undefined ? defaultFileRoot : resolve(baseDir, parsed.admin.fileRoot));
  const store = resolveStore(parsed.store, env, readSecret, problem);
  if (problems.length > 0) throw new ConfigError(where, problems);

  const { $schema: _ignored, stateDir: _written, connections: _parsed, admin: _admin, store: _store, ...server } = parsed;
  return { ...server, stateDir, connections, ...(admin === undefined ? {} : { admin }), ...(store === undefined ? {} : { store }) };
}

/**
 * Two connections writing one file would journal and fold over each other, however their paths
 * are written: `data/people.csv` and `link/people.csv` through a symlinked folder, a symlink, a
 * hard link. Compared by the file itself (device and inode, else the real path; lock.ts). A
 * read-only connection beside a writing one is allowed: it never writes the file or the journal.
 */
function checkOneWriterPerFile(connections: readonly ConnectionConfig[], problem: (field: string, message: string) => void): void {
  const writers = new Map<string, number>();
  const served = connections.map((connection) => sourceTypeOf(connection.source).servedFile(connection.source));
  connections.forEach((connection, index) => {
    const file = served[index];
    if (file === undefined || connection.readOnly === true) return;
    const key = sameFileKey(file.path);
    const earlier = writers.get(key);
    if (earlier === undefined) return void writers.set(key, index);
    const first = connections[earlier];
    problem(
      `connections[${index}].source.${file.field}`,
      `the connection "${connection.id}" (${file.path}) and the connection "${first.id}" (connections[${earlier}], ${served[earlier]?.path}) write the same file; ` +
        'two connections writing one file would overwrite each other\'s writes: make one of them "readOnly": true, or serve a copy',
    );
  });
}

/**
 * The `store` section, its URL from the config or else from $REDIS_URL. Only a `store` section
 * turns Redis on: a REDIS_URL set for some other program must not change what this one shares.
 */
function resolveStore(
  store: ParsedConfig['store'],
  env: Readonly<Record<string, string | undefined>>,
  readSecret: (value: ParsedSecret, field: string) => Secret,
  problem: (field: string, message: string) => void,
): StoreConfig | undefined {
  if (store === undefined) return undefined;
  let url: Secret;
  if (store.url !== undefined) {
    url = readSecret(store.url, 'store.url');
  } else {
    const fromEnv = env[REDIS_URL_ENV];
    if (fromEnv === undefined || fromEnv === '') problem('store.url', `is required (or set $${REDIS_URL_ENV})`);
    else if (!/^rediss?:\/\//.test(fromEnv) || !URL.canParse(fromEnv)) problem(`$${REDIS_URL_ENV}`, 'expected a URL such as "redis://127.0.0.1:6379/0"');
    url = new Secret(fromEnv ?? '');
  }
  return { type: 'redis', url, leaseMs: store.leaseMs, leaseWaitMs: store.leaseWaitMs, maxStaleMs: store.maxStaleMs };
}

/** The admin token from the config, else from $SHEETREST_ADMIN_TOKEN (empty there: off); undefined: the admin API is off. */
function resolveAdmin(
  admin: ParsedConfig['admin'],
  env: Readonly<Record<string, string | undefined>>,
  readSecret: (value: ParsedSecret, field: string) => Secret,
  problem: (field: string, message: string) => void,
  fileRoot: string,
): AdminConfig | undefined {
  let token: Secret;
  let field: string;
  if (admin !== undefined) {
    token = readSecret(admin.token, 'admin.token');
    field = typeof admin.token === 'string' ? 'admin.token' : 'admin.token.env';
  } else {
    const fromEnv = env[ADMIN_TOKEN_ENV];
    if (fromEnv === undefined || fromEnv === '') return undefined;
    token = new Secret(fromEnv);
    field = `$${ADMIN_TOKEN_ENV}`;
  }
  const length = token.reveal().length;
  // An empty variable named in the config is reported by readSecret already.
  if (length > 0 && length < ADMIN_TOKEN_MIN_LENGTH) {
    problem(field, `the admin token has ${length} characters; use at least ${ADMIN_TOKEN_MIN_LENGTH} (e.g. openssl rand -hex 32)`);
  }
  // It travels as `Authorization: Bearer <token>`, which ends at the first space.
  if (/\s/.test(token.reveal())) problem(field, 'the admin token contains white space, which an Authorization header cannot carry; use e.g. openssl rand -hex 32');
  const rules: AdminRules = {
    fileRoot,
    allowServerCredentials: admin?.allowServerCredentials ?? false,
    allowedEndpoints: admin?.allowedEndpoints ?? GOOGLE_ENDPOINTS,
    openTimeoutMs: admin?.openTimeoutMs ?? DEFAULTS.adminOpenMs,
  };
  const uploadBytes = admin?.uploadBytes ?? DEFAULTS.uploadBytes;
  const google = admin?.google;
  if (google === undefined) return { token, ...rules, uploadBytes };
  const clientSecret = readSecret(google.clientSecret, typeof google.clientSecret === 'string' ? 'admin.google.clientSecret' : 'admin.google.clientSecret.env');
  return { token, ...rules, uploadBytes, google: { ...google, clientSecret, clientSecretSetting: google.clientSecret } };
}

/**
 * One connection of the admin API, resolved as the config's are (paths against `baseDir`,
 * `{ "env" }` secrets read now); it has no config keys. Throws ConfigError naming each field.
 */
export function resolveConnection(
  connection: Omit<ParsedConnection, 'keys' | 'webhooks'>,
  baseDir: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): ConnectionConfig {
  const problems: string[] = [];
  const readSecret = (value: ParsedSecret, field: string): Secret => {
    if (typeof value === 'string') return new Secret(value);
    const found = env[value.env];
    if (found === undefined || found === '') problems.push(`${field}.env: environment variable ${value.env} is ${found === undefined ? 'not set' : 'empty'}`);
    return new Secret(found ?? '');
  };
  const source = resolveSource(connection.source, baseDir, 'source', readSecret);
  if (problems.length > 0) throw new ConfigError(connection.id, problems);
  const { webhooks: _none, ...fields } = connection as ParsedConnection;
  return { ...fields, source, keys: [] };
}

function resolveSource(source: ParsedConnection['source'], baseDir: string, field: string, readSecret: ReadSecret): SourceConfig {
  return sourceTypeOf(source).resolve(source, baseDir, readSecret, field);
}

/** Hashes each key (plaintext or from the environment); a `sha256` key is taken as its digest. */
function resolveKeys(
  keys: readonly ParsedKey[],
  field: string,
  env: Readonly<Record<string, string | undefined>>,
  problem: (field: string, message: string) => void,
): ApiKey[] {
  const resolved: ApiKey[] = [];
  const firstUse = new Map<string, number>();
  keys.forEach((key, index) => {
    const at = `${field}[${index}]`;
    let digest: Uint8Array;
    if (key.sha256 !== undefined) {
      digest = new Uint8Array(Buffer.from(key.sha256, 'hex'));
    } else if (key.key !== undefined) {
      digest = digestKey(key.key);
    } else {
      const name = key.env ?? '';
      const found = env[name];
      if (found === undefined || found === '') {
        problem(`${at}.env`, `environment variable ${name} is ${found === undefined ? 'not set' : 'empty'}`);
        return;
      }
      digest = digestKey(found);
    }
    // The same key twice, perhaps with different scopes, would make its scope a guess.
    const hex = Buffer.from(digest).toString('hex');
    const earlier = firstUse.get(hex);
    if (earlier !== undefined) problem(at, `the same key as ${field}[${earlier}]`);
    firstUse.set(hex, earlier ?? index);
    resolved.push({
      digest,
      operations: key.operations ?? operationsOfScope(key.scope ?? 'write'),
      ...(key.tabs === undefined ? {} : { tabs: key.tabs }),
      ...(key.name === undefined ? {} : { name: key.name }),
      ...(key.expiresAt === undefined ? {} : { expiresAt: Date.parse(key.expiresAt) }),
    });
  });
  return resolved;
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as T;
}
