// A call to the emulator and its answer, as the listener hands them to the router and the
// consent screen: `GET /v4/spreadsheets/abc?fields=sheets` -> `{ method: 'GET', path:
// '/v4/spreadsheets/abc', query, authorization, body: '' }` in, `{ status: 200, headers, body }`
// out; and the state every route reads. Its own module so router.ts and consent.ts, which
// router.ts calls, both take the types from here.
import type { Credentials } from './auth.ts';
import type { Quota } from './quota.ts';
import type { Spreadsheet } from './store.ts';

export interface ApiRequest {
  readonly method: string;
  /** The raw (still percent-encoded) path. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly authorization: string | null;
  readonly body: string;
}

export interface ApiResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface State {
  readonly spreadsheets: Map<string, Spreadsheet>;
  readonly credentials: Credentials;
  readonly quota: Quota;
}
