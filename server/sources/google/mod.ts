// Opens a Google spreadsheet as a source: `{ "type": "google", "spreadsheetId": "1AbC...",
// "credentialsFile": "service-account.json" }` -> a Source whose reads and writes go to the
// Sheets API v4 at `rootUrl`. Opening makes no request: a wrong id or missing access shows on
// the first read (404 not_found, 502 upstream_error), so the server starts while Google is down.
import type { GoogleSourceConfig } from './config.ts';
import type { Source } from '../source.ts';
import type { SpreadsheetCoordination } from './shared-spreadsheet.ts';
import { createSheetsApi, GOOGLE_ROOT_URL, type GoogleAuth, type SheetsApi } from './client.ts';
import { GoogleSource } from './google-source.ts';
import { openTransport, type Transport } from './transport.ts';
import { DEFAULT_RETRY, DEFAULT_TIMEOUT_MS, type RetryPolicy } from './upstream.ts';
import { Budgets, DEFAULT_QUOTA, type QuotaLimits, type SharedBudget } from './budget.ts';

export { GOOGLE_ROOT_URL, type GoogleAuth, type SheetsApi } from './client.ts';
export { GoogleSource } from './google-source.ts';
export { DEFAULT_RETRY, DEFAULT_TIMEOUT_MS, worstCaseMs, type RetryPolicy } from './upstream.ts';
export { Budgets, DEFAULT_QUOTA, type QuotaLimits, type SharedBudget } from './budget.ts';
export { openGoogleCoordination, type GoogleCoordination } from './coordination.ts';
export type { SpreadsheetCoordination } from './shared-spreadsheet.ts';
export type { SharedVersions } from './shared-versions.ts';

/** How long a read may be served from memory (ms) before Google is asked again. */
export const DEFAULT_FRESHNESS_MS = 5_000;

export interface GoogleSourceOptions {
  readonly spreadsheetId: string;
  /** Any server speaking the Sheets API v4; default Google's. */
  readonly rootUrl?: string;
  readonly auth: GoogleAuth;
  /** The connection's `readOnly`: writes answer 403 write_error without asking Google. */
  readonly readOnly?: boolean;
  readonly freshnessMs?: number;
  /** Each upstream attempt is abandoned after this long: 504 upstream_timeout. */
  readonly timeoutMs?: number;
  readonly retry?: Partial<RetryPolicy>;
  readonly log?: (message: string) => void;
  /** For tests: the API calls themselves (no client library, no network). */
  readonly api?: SheetsApi;
  /** For tests and benchmarks: how waits between retries pass. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Google's per-minute limits for these credentials (default Google's: 60 per user, 300 per project). */
  readonly quota?: Partial<QuotaLimits>;
  /** For tests: budgets of their own (with a short window); default the process's. */
  readonly budgets?: Budgets;
  /**
   * Check Drive's modifiedTime before reading a stale tab again, and keep the tab when the file
   * is unchanged (for at most `maxAgeMs` since it was read; default 5 minutes). Needs the Drive
   * API enabled and, for OAuth, the drive.metadata.readonly scope granted.
   */
  readonly revisionCheck?: boolean | { readonly maxAgeMs?: number };
  /** Where Drive's API is: default `rootUrl` when that is set (the emulator serves both), else Google's. */
  readonly driveRootUrl?: string;
  /** For tests: the source's clock (ms, monotonic). */
  readonly now?: () => number;
  /** For tests: how large one answer holding every tab may grow before the read goes tab by tab (default 20 MB). */
  readonly maxAnswerBytes?: number;
  /**
   * For tests and benchmarks: how many cells (estimated from the grids' sizes) a read of every
   * tab may bring in one request (default 250,000, about 20 MB); 0: always tab by tab.
   */
  readonly maxAnswerCells?: number;
  /** Several instances: the spreadsheet's version and write lease in Redis, by lock key. */
  readonly shared?: (lockKey: string) => SpreadsheetCoordination;
  /** Several instances: Google's per-minute budget in Redis, for all of them (server/sources/google/budget-redis.ts). */
  readonly sharedBudget?: SharedBudget;
}

/** How long the revision check may keep a tab read from Google without reading it again. */
export const DEFAULT_MAX_AGE_MS = 300_000;

export async function openGoogleSource(options: GoogleSourceOptions): Promise<GoogleSource> {
  let transport: Transport | null = null;
  let api = options.api;
  if (api === undefined) {
    transport = await openTransport();
    api = createSheetsApi({
      spreadsheetId: options.spreadsheetId,
      rootUrl: options.rootUrl,
      auth: options.auth,
      fetch: transport.fetch,
      signInFetch: transport.signInFetch,
      driveRootUrl: options.driveRootUrl ?? options.rootUrl,
      driveScope: options.revisionCheck !== undefined && options.revisionCheck !== false,
    });
  }
  const lockKey = `${options.rootUrl ?? GOOGLE_ROOT_URL} ${options.spreadsheetId}`;
  return new GoogleSource({
    spreadsheetId: options.spreadsheetId,
    lockKey,
    ...(options.shared === undefined ? {} : { shared: options.shared(lockKey) }),
    api,
    // An API key reads public sheets only: Google refuses every write made with one.
    writable: options.readOnly !== true && options.auth.kind !== 'apiKey',
    freshnessMs: options.freshnessMs ?? DEFAULT_FRESHNESS_MS,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    retry: { ...DEFAULT_RETRY, ...options.retry },
    log: options.log ?? (() => undefined),
    quota: { ...DEFAULT_QUOTA, ...options.quota },
    ...(options.budgets === undefined ? {} : { budgets: options.budgets }),
    ...(options.sharedBudget === undefined ? {} : { sharedBudget: options.sharedBudget }),
    budgetScope: options.rootUrl ?? GOOGLE_ROOT_URL,
    revisionCheck: revisionCheckOf(options.revisionCheck),
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(options.maxAnswerBytes === undefined ? {} : { maxAnswerBytes: options.maxAnswerBytes }),
    ...(options.maxAnswerCells === undefined ? {} : { maxAnswerCells: options.maxAnswerCells }),
    release: async () => {
      await transport?.close();
    },
    sleep: options.sleep,
  });
}

function revisionCheckOf(option: GoogleSourceOptions['revisionCheck']): { maxAgeMs: number } | null {
  if (option === undefined || option === false) return null;
  return { maxAgeMs: (option === true ? undefined : option.maxAgeMs) ?? DEFAULT_MAX_AGE_MS };
}

/** The checked configuration's way in, as the client's auth. */
export function authOf(config: GoogleSourceConfig): GoogleAuth {
  if (config.credentialsFile !== undefined) return { kind: 'credentialsFile', path: config.credentialsFile };
  if (config.accessToken !== undefined) return { kind: 'accessToken', token: config.accessToken };
  if (config.apiKey !== undefined) return { kind: 'apiKey', key: config.apiKey };
  if (config.oauth !== undefined) {
    const { clientId, clientSecret, refreshToken, tokenUri } = config.oauth;
    return { kind: 'oauth', clientId, clientSecret, refreshToken, ...(tokenUri === undefined ? {} : { tokenUri }) };
  }
  return { kind: 'applicationDefault' };
}

/** A Source from a connection's configuration. */
export function openGoogleSourceFromConfig(
  config: GoogleSourceConfig,
  options: { readonly readOnly: boolean; readonly log: (message: string) => void; readonly shared?: (lockKey: string) => SpreadsheetCoordination; readonly sharedBudget?: SharedBudget },
): Promise<Source> {
  return openGoogleSource({
    spreadsheetId: config.spreadsheetId,
    rootUrl: config.rootUrl,
    auth: authOf(config),
    readOnly: options.readOnly,
    log: options.log,
    ...(options.shared === undefined ? {} : { shared: options.shared }),
    ...(options.sharedBudget === undefined ? {} : { sharedBudget: options.sharedBudget }),
    ...(config.freshnessMs === undefined ? {} : { freshnessMs: config.freshnessMs }),
    ...(config.timeoutMs === undefined ? {} : { timeoutMs: config.timeoutMs }),
    ...(config.retries === undefined ? {} : { retry: { retries: config.retries } }),
    ...(config.quota === undefined ? {} : { quota: config.quota }),
    ...(config.checkModifiedTime === true ? { revisionCheck: { maxAgeMs: config.maxAgeMs } } : {}),
    ...(config.driveRootUrl === undefined ? {} : { driveRootUrl: config.driveRootUrl }),
  });
}
