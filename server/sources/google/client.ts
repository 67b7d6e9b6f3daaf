// The Sheets API calls the source makes, through the official `@googleapis/sheets` client:
// authenticated as configured, sent to `rootUrl`, over the runtime's transport (transport.ts),
// with the client's own retries off (upstream.ts retries, with a bound it can state).
// `getSpreadsheet()` -> GET {rootUrl}/v4/spreadsheets/1AbC...?includeGridData=true&fields=...
import sheetsModule from '@googleapis/sheets';
import type { SheetRequest } from './encode-cells.ts';
import { quoteSheetName, type UserEnteredValue, type ValueRange } from './encode-plan.ts';
import { GRID_FIELDS, METADATA_FIELDS, type GoogleSpreadsheet } from './read-grid.ts';
import { createSignIn, DRIVE_METADATA_SCOPE, SPREADSHEETS_SCOPE, type AuthOption, type GoogleAuth, type QuotaIdentity, type SignInKind } from './sign-in.ts';

export type { GoogleAuth } from './sign-in.ts';
export const GOOGLE_ROOT_URL = 'https://sheets.googleapis.com/';
export const DRIVE_ROOT_URL = 'https://www.googleapis.com/';

export interface SheetsApi {
  /** Which credentials the calls use, for messages when Google refuses them. */
  readonly signIn?: SignInKind;
  /** Whom Google counts the calls against (loads the credentials on first use). */
  identity?(): Promise<QuotaIdentity>;
  /** Every tab's properties and cells in one request; null when the answer grew past `maxBytes` (abandoned there). */
  getSpreadsheet(signal: AbortSignal, maxBytes?: number): Promise<GoogleSpreadsheet | null>;
  /** Every tab's properties, no cells: a few hundred bytes. */
  getMetadata(signal: AbortSignal): Promise<GoogleSpreadsheet>;
  /** Rows `startRow` (0-based) up to `endRow` (exclusive) of one tab, with its properties; nothing of the other tabs. */
  getTabPage(name: string, startRow: number, endRow: number, signal: AbortSignal): Promise<GoogleSpreadsheet>;
  /** Whole tabs by name, several in one request, with their properties; nothing of the other tabs. */
  getTabs(names: readonly string[], signal: AbortSignal): Promise<GoogleSpreadsheet>;
  /** Drive's `modifiedTime` of the spreadsheet (`2026-11-23T23:59:01.123Z`): one small request, outside the Sheets quota. */
  getModifiedTime(signal: AbortSignal): Promise<string | null>;
  /** values.append; answers the range Google wrote (`'People'!A5:C7`) when it says. */
  append(range: string, values: UserEnteredValue[][], signal: AbortSignal): Promise<string | null>;
  /** values.batchUpdate of fixed ranges. */
  updateValues(data: readonly ValueRange[], signal: AbortSignal): Promise<void>;
  /** spreadsheets.batchUpdate: all requests applied atomically, or none. */
  batchUpdate(requests: readonly SheetRequest[], signal: AbortSignal): Promise<void>;
}

export interface ClientOptions {
  readonly spreadsheetId: string;
  readonly rootUrl?: string;
  readonly auth: GoogleAuth;
  readonly fetch: typeof fetch;
  /** The fetch of sign-ins (token requests); `fetch` when left out (transport.ts says why they may differ). */
  readonly signInFetch?: typeof fetch;
  /** Where Drive's API is (default Google's, `https://www.googleapis.com/`). */
  readonly driveRootUrl?: string;
  /** Sign in for Drive's metadata too (the revision check). */
  readonly driveScope?: boolean;
}

type Sheets = ReturnType<typeof sheetsModule.sheets>;

export function createSheetsApi(options: ClientOptions): SheetsApi {
  const { spreadsheetId } = options;
  // Every request: no retries of the client's own, and the pooled fetch.
  const requestOptions = { retry: false, fetchImplementation: options.fetch };
  const signIn = createSignIn(options.auth, options.signInFetch ?? options.fetch, options.driveScope === true ? [SPREADSHEETS_SCOPE, DRIVE_METADATA_SCOPE] : [SPREADSHEETS_SCOPE]);
  const fileUrl = `${options.driveRootUrl ?? DRIVE_ROOT_URL}drive/v3/files/${encodeURIComponent(spreadsheetId)}?fields=modifiedTime&supportsAllDrives=true`;
  const clients = new WeakMap<object, Sheets>();
  const clientFor = (auth: AuthOption): Sheets => {
    const key = typeof auth === 'string' ? signIn : auth;
    let client = clients.get(key);
    if (client === undefined) {
      client = sheetsModule.sheets({ version: 'v4', rootUrl: options.rootUrl ?? GOOGLE_ROOT_URL, auth, ...requestOptions });
      clients.set(key, client);
    }
    return client;
  };
  /** One call; after a 401 (a token Google no longer accepts) it signs in afresh and sends it once more. */
  const run = async <T>(call: (client: Sheets) => Promise<T>): Promise<T> => {
    try {
      return await call(clientFor(await signIn.auth()));
    } catch (error) {
      if (!signIn.renewable || !isRefusedToken(error)) throw error;
      signIn.reset();
      return call(clientFor(await signIn.auth()));
    }
  };
  return {
    signIn: { grant: signIn.grant, setting: signIn.setting },
    identity: () => signIn.identity(),
    async getSpreadsheet(signal, maxBytes) {
      const over = { hit: false };
      const fetchImplementation = maxBytes === undefined ? options.fetch : capped(options.fetch, maxBytes, over);
      try {
        const response = await run((client) => client.spreadsheets.get({ spreadsheetId, includeGridData: true, fields: GRID_FIELDS }, { ...requestOptions, fetchImplementation, signal }));
        return response.data as GoogleSpreadsheet;
      } catch (error) {
        if (over.hit) return null;
        throw error;
      }
    },
    async getMetadata(signal) {
      const response = await run((client) => client.spreadsheets.get({ spreadsheetId, fields: METADATA_FIELDS }, { ...requestOptions, signal }));
      return response.data as GoogleSpreadsheet;
    },
    async getTabPage(name, startRow, endRow, signal) {
      // Whole rows of one sheet: `'People'!1:10000`, `'Bob''s'!10001:60000`.
      const ranges = [`${quoteSheetName(name)}!${startRow + 1}:${endRow}`];
      const response = await run((client) => client.spreadsheets.get({ spreadsheetId, ranges, includeGridData: true, fields: GRID_FIELDS }, { ...requestOptions, signal }));
      return response.data as GoogleSpreadsheet;
    },
    async getTabs(names, signal) {
      const ranges = names.map(quoteSheetName);
      const response = await run((client) => client.spreadsheets.get({ spreadsheetId, ranges, includeGridData: true, fields: GRID_FIELDS }, { ...requestOptions, signal }));
      return response.data as GoogleSpreadsheet;
    },
    async getModifiedTime(signal) {
      const auth = await signIn.auth();
      let data: unknown;
      if (typeof auth === 'string') {
        // An API key reads a public file's metadata as it reads its cells.
        const response = await options.fetch(`${fileUrl}&key=${encodeURIComponent(auth)}`, { signal });
        data = await response.json();
        if (!response.ok) throw Object.assign(new Error(`Drive answered ${response.status}`), { response: { status: response.status, data, headers: response.headers } });
      } else {
        data = (await (auth as { request(options: object): Promise<{ data: unknown }> }).request({ url: fileUrl, signal, retry: false })).data;
      }
      const modified = (data as { modifiedTime?: unknown } | null)?.modifiedTime;
      return typeof modified === 'string' ? modified : null;
    },
    async append(range, values, signal) {
      const response = await run((client) =>
        client.spreadsheets.values.append(
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
        ),
      );
      return response.data.updates?.updatedRange ?? null;
    },
    async updateValues(data, signal) {
      await run((client) =>
        client.spreadsheets.values.batchUpdate(
          { spreadsheetId, fields: 'totalUpdatedCells', requestBody: { valueInputOption: 'USER_ENTERED', data: data.map((range) => ({ range: range.range, values: range.values })) } },
          { ...requestOptions, signal },
        ),
      );
    },
    async batchUpdate(requests, signal) {
      await run((client) =>
        client.spreadsheets.batchUpdate({ spreadsheetId, fields: 'spreadsheetId', requestBody: { requests: requests.map((request) => ({ ...request })) } }, { ...requestOptions, signal }),
      );
    },
  };
}

/**
 * A fetch whose answers end in an error once their body passes `maxBytes` (decoded), setting
 * `over.hit`: the rest is not downloaded, and the client library never holds more than that.
 */
function capped(fetch: typeof globalThis.fetch, maxBytes: number, over: { hit: boolean }): typeof globalThis.fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (response.body === null || !response.ok) return response;
    let seen = 0;
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen > maxBytes) {
            over.hit = true;
            controller.error(new Error(`the answer is larger than ${maxBytes} bytes`));
            return;
          }
          controller.enqueue(chunk);
        },
      }),
    );
    // The body is already decoded: its encoding and length headers no longer describe it.
    const headers = new Headers(response.headers);
    headers.delete('content-encoding');
    headers.delete('content-length');
    return new Response(counted, { status: response.status, statusText: response.statusText, headers });
  };
}

/** A 401 from the Sheets API itself (not the token endpoint, whose refusals say why in OAuth's shape). */
function isRefusedToken(error: unknown): boolean {
  const response = (error as { response?: { status?: unknown; data?: { error?: unknown } } } | null)?.response;
  return response?.status === 401 && typeof response.data?.error !== 'string';
}
