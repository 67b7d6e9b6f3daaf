// Opens a Google spreadsheet as a source: `{ "type": "google", "spreadsheetId": "1AbC...",
// "credentialsFile": "service-account.json" }` -> a Source whose reads and writes go to the
// Sheets API v4 at `rootUrl`. Opening makes no request: a wrong id or missing access shows on
// the first read (404 not_found, 502 upstream_error), so the server starts while Google is down.
import type { GoogleSourceConfig } from '../../config.ts';
import type { Source } from '../source.ts';
import type { SpreadsheetCoordination } from '../../shared/spreadsheet.ts';
import { createSheetsApi, GOOGLE_ROOT_URL, type GoogleAuth, type SheetsApi } from './client.ts';
import { GoogleSource } from './google-source.ts';
import { openTransport, type Transport } from './transport.ts';
import { DEFAULT_RETRY, DEFAULT_TIMEOUT_MS, type RetryPolicy } from './upstream.ts';

export { GOOGLE_ROOT_URL, type GoogleAuth, type SheetsApi } from './client.ts';
export { GoogleSource } from './google-source.ts';
export { DEFAULT_RETRY, DEFAULT_TIMEOUT_MS, worstCaseMs, type RetryPolicy } from './upstream.ts';

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
  /** Several instances: the spreadsheet's version and write lease in Redis, by lock key. */
  readonly shared?: (lockKey: string) => SpreadsheetCoordination;
}

export async function openGoogleSource(options: GoogleSourceOptions): Promise<GoogleSource> {
  let transport: Transport | null = null;
  let api = options.api;
  if (api === undefined) {
    transport = await openTransport();
    api = createSheetsApi({ spreadsheetId: options.spreadsheetId, rootUrl: options.rootUrl, auth: options.auth, fetch: transport.fetch });
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
    release: async () => {
      await transport?.close();
    },
    sleep: options.sleep,
  });
}

/** The checked configuration's way in, as the client's auth. */
export function authOf(config: GoogleSourceConfig): GoogleAuth {
  if (config.credentialsFile !== undefined) return { kind: 'credentialsFile', path: config.credentialsFile };
  if (config.accessToken !== undefined) return { kind: 'accessToken', token: config.accessToken };
  if (config.apiKey !== undefined) return { kind: 'apiKey', key: config.apiKey };
  if (config.oauth !== undefined) return { kind: 'oauth', clientId: config.oauth.clientId, clientSecret: config.oauth.clientSecret, refreshToken: config.oauth.refreshToken };
  return { kind: 'applicationDefault' };
}

/** A Source from a connection's configuration. */
export function openGoogleSourceFromConfig(config: GoogleSourceConfig, options: { readonly readOnly: boolean; readonly log: (message: string) => void; readonly shared?: (lockKey: string) => SpreadsheetCoordination }): Promise<Source> {
  return openGoogleSource({
    spreadsheetId: config.spreadsheetId,
    rootUrl: config.rootUrl,
    auth: authOf(config),
    readOnly: options.readOnly,
    log: options.log,
    ...(options.shared === undefined ? {} : { shared: options.shared }),
    ...(config.freshnessMs === undefined ? {} : { freshnessMs: config.freshnessMs }),
    ...(config.timeoutMs === undefined ? {} : { timeoutMs: config.timeoutMs }),
    ...(config.retries === undefined ? {} : { retry: { retries: config.retries } }),
  });
}
