// The four Sheets API calls the source makes, through the official `@googleapis/sheets` client:
// authenticated as configured, sent to `rootUrl`, over the runtime's transport (transport.ts),
// with the client's own retries off (upstream.ts retries, with a bound it can state).
// `getSpreadsheet()` -> GET {rootUrl}/v4/spreadsheets/1AbC...?includeGridData=true&fields=...
import sheetsModule from '@googleapis/sheets';
import type { Secret } from '../../config.ts';
import type { DeleteDimensionRequest, UserEnteredValue, ValueRange } from './encode-plan.ts';
import { GRID_FIELDS, type GoogleSpreadsheet } from './read-grid.ts';

export const GOOGLE_ROOT_URL = 'https://sheets.googleapis.com/';
const SPREADSHEETS_SCOPE = 'https://www.googleapis.com/auth/spreadsheets';

/** How the source proves who it is to Google: exactly one way, as the configuration allows. */
export type GoogleAuth =
  | { readonly kind: 'credentialsFile'; readonly path: string }
  /** The service account named by GOOGLE_APPLICATION_CREDENTIALS (Application Default Credentials). */
  | { readonly kind: 'applicationDefault' }
  | { readonly kind: 'accessToken'; readonly token: Secret }
  | { readonly kind: 'apiKey'; readonly key: Secret }
  | { readonly kind: 'oauth'; readonly clientId: string; readonly clientSecret: Secret; readonly refreshToken: Secret };

export interface SheetsApi {
  /** Every tab's properties and cells in one request. */
  getSpreadsheet(signal: AbortSignal): Promise<GoogleSpreadsheet>;
  /** values.append; answers the range Google wrote (`'People'!A5:C7`) when it says. */
  append(range: string, values: UserEnteredValue[][], signal: AbortSignal): Promise<string | null>;
  /** values.batchUpdate of fixed ranges. */
  updateValues(data: readonly ValueRange[], signal: AbortSignal): Promise<void>;
  /** spreadsheets.batchUpdate: all requests applied atomically, or none. */
  batchUpdate(requests: readonly DeleteDimensionRequest[], signal: AbortSignal): Promise<void>;
}

export interface ClientOptions {
  readonly spreadsheetId: string;
  readonly rootUrl?: string;
  readonly auth: GoogleAuth;
  readonly fetch: typeof fetch;
}

export function createSheetsApi(options: ClientOptions): SheetsApi {
  const { spreadsheetId } = options;
  // Every request: no retries of the client's own, and the pooled fetch.
  const requestOptions = { retry: false, fetchImplementation: options.fetch };
  const client = sheetsModule.sheets({
    version: 'v4',
    rootUrl: options.rootUrl ?? GOOGLE_ROOT_URL,
    auth: authClient(options.auth, options.fetch),
    ...requestOptions,
  });
  return {
    async getSpreadsheet(signal) {
      const response = await client.spreadsheets.get({ spreadsheetId, includeGridData: true, fields: GRID_FIELDS }, { ...requestOptions, signal });
      return response.data as GoogleSpreadsheet;
    },
    async append(range, values, signal) {
      const response = await client.spreadsheets.values.append(
        {
          spreadsheetId,
          range,
          valueInputOption: 'USER_ENTERED',
          // New rows are inserted, never written over cells someone else filled meanwhile.
          insertDataOption: 'INSERT_ROWS',
          fields: 'updates(updatedRange)',
          requestBody: { values },
        },
        { ...requestOptions, signal },
      );
      return response.data.updates?.updatedRange ?? null;
    },
    async updateValues(data, signal) {
      await client.spreadsheets.values.batchUpdate(
        { spreadsheetId, fields: 'totalUpdatedCells', requestBody: { valueInputOption: 'USER_ENTERED', data: data.map((range) => ({ range: range.range, values: range.values })) } },
        { ...requestOptions, signal },
      );
    },
    async batchUpdate(requests, signal) {
      await client.spreadsheets.batchUpdate(
        { spreadsheetId, fields: 'spreadsheetId', requestBody: { requests: requests.map((request) => ({ ...request })) } },
        { ...requestOptions, signal },
      );
    },
  };
}

type AuthOption = NonNullable<Parameters<typeof sheetsModule.sheets>[0] extends infer O ? (O extends { auth?: infer A } ? A : never) : never>;

/** The client library's auth for each way in; token refreshes use the same transport. */
function authClient(auth: GoogleAuth, fetchImplementation: typeof fetch): AuthOption {
  const transporterOptions = { fetchImplementation };
  const { auth: google } = sheetsModule;
  switch (auth.kind) {
    case 'apiKey':
      // The library sends a string as the `key` query parameter; such a connection only reads.
      return auth.key.reveal();
    case 'accessToken': {
      const client = new google.OAuth2({ transporterOptions });
      client.setCredentials({ access_token: auth.token.reveal() });
      return client;
    }
    case 'oauth': {
      const client = new google.OAuth2({ clientId: auth.clientId, clientSecret: auth.clientSecret.reveal(), transporterOptions });
      client.setCredentials({ refresh_token: auth.refreshToken.reveal() });
      return client;
    }
    case 'credentialsFile':
      return new google.GoogleAuth({ keyFile: auth.path, scopes: [SPREADSHEETS_SCOPE], clientOptions: { transporterOptions } }) as AuthOption;
    case 'applicationDefault':
      return new google.GoogleAuth({ scopes: [SPREADSHEETS_SCOPE], clientOptions: { transporterOptions } }) as AuthOption;
  }
}
