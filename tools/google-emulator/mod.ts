// A local stand-in for the Google Sheets API v4, for offline tests of code that uses
// `@googleapis/sheets`: `const emulator = await startEmulator(); const id = emulator.createSpreadsheet(...)`,
// then point the client's rootUrl at `emulator.rootUrl`, e.g.
// `GET {rootUrl}v4/spreadsheets/{id}/values/Sheet1` with `Authorization: Bearer <granted token>`.
// See README.md beside this file for what it emulates and where it departs from Google.
import { Credentials } from './auth.ts';
import { Faults, type FailOptions, type HangOptions, type ResetOptions } from './faults.ts';
import { listen, type LoggedRequest } from './listener.ts';
import { Quota, type QuotaLimits } from './quota.ts';
import { SheetReader } from './render.ts';
import { seedCell, type EmulatorCell } from './seed.ts';
import { getCell, newSheet, usedExtent, type GridRange, type Role, type Spreadsheet } from './store.ts';
import { TokenIssuer, type ServiceAccountKey } from './tokens.ts';

export type { EmulatorCell } from './seed.ts';
export type { LoggedRequest } from './listener.ts';
export type { QuotaLimits } from './quota.ts';
export type { ServiceAccountKey } from './tokens.ts';
export { ALLOWED_SKEW_SECONDS, GOOGLE_TOKEN_URL } from './tokens.ts';

export interface EmulatorOptions {
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  latencyMs?: number;
  quota?: QuotaLimits;
  /** How long minted access tokens live (`expires_in`); default 3599 s, as Google's. */
  tokenLifetimeSeconds?: number;
}

export interface SpreadsheetInput {
  spreadsheetId?: string;
  title?: string;
  /**
   * `rowCount`/`columnCount`: the grid Google reports (`gridProperties`), when larger than the
   * rows need (default: the rows, at least 1,000 x 26 as a new Google sheet); empty beyond the rows.
   */
  sheets: { title: string; rows: EmulatorCell[][]; rowCount?: number; columnCount?: number; merges?: GridRange[] }[];
  /** Bearer tokens (or principals: a refresh token, a service account's client_email) and API keys -> role. */
  access?: Record<string, Role>;
  /** "Anyone with the link": what any signed-in caller, and API keys for reading, may do. */
  publicAccess?: Role | null;
}

export interface StoredCell {
  formattedValue?: string;
  effectiveValue?: unknown;
  userEnteredValue?: unknown;
  numberFormat?: { type: string; pattern?: string };
}

export interface Emulator {
  /** e.g. 'http://127.0.0.1:41234/': pass as the client's rootUrl. */
  readonly rootUrl: string;
  createSpreadsheet(input: SpreadsheetInput): string;
  deleteSpreadsheet(spreadsheetId: string): void;
  grant(spreadsheetId: string, tokenOrKey: string, role: Role | null): void;
  /** The sheet as stored: each cell's userEntered/effective/formatted value and number format. */
  sheet(spreadsheetId: string, title: string): { rows: StoredCell[][] };
  /** Every API request served since start or the last reset: method, path, query, status, time. */
  readonly requests: readonly LoggedRequest[];
  resetRequests(): void;
  setLatency(ms: number): void;
  /** The next `times` requests whose path matches `path` (all when absent) fail with `status` (429, 500, 503...) in Google's error shape. */
  failNext(options: FailOptions): void;
  /** The next `times` matching requests never answer (until close), to test client timeouts. */
  hangNext(options?: HangOptions): void;
  /** The next `times` matching requests get their connection cut instead of an answer (`afterApply`: after running them). */
  resetNext(options?: ResetOptions): void;
  /** Forgets the requests counted against the per-minute quotas. */
  resetQuota(): void;
  /** `{rootUrl}token`: the token endpoint (also each service-account key's `token_uri`). */
  readonly tokenUrl: string;
  /**
   * A new JSON key for service account `email` (created on first use), generated now; the
   * emulator keeps only its public half. Share a spreadsheet with the account: `grant(id, email, role)`.
   */
  createServiceAccountKey(email: string): ServiceAccountKey;
  /** Deletes the account's keys (or one, by `private_key_id`): token requests they sign are refused. */
  deleteServiceAccountKey(email: string, keyId?: string): void;
  /** A Desktop-app OAuth client: refresh-token grants must name it with its secret. */
  createOAuthClient(): { clientId: string; clientSecret: string };
  /** A refresh token acting as user `principal` for `clientId` (grant the user access like any principal). */
  issueRefreshToken(clientId: string, principal: string, scopes?: readonly string[]): string;
  revokeRefreshToken(refreshToken: string): void;
  /** Every access token minted so far stops working (401), as if expired. */
  expireAccessTokens(): void;
  /** The emulator's clock runs `ms` ahead of this machine's (negative: behind), for token times. */
  setClockSkew(ms: number): void;
  /** The lifetime (`expires_in`) of tokens minted from now on. */
  setTokenLifetime(seconds: number): void;
  close(): Promise<void>;
}

export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const host = options.host ?? '127.0.0.1';
  const tokens = new TokenIssuer(options.tokenLifetimeSeconds);
  const state = { spreadsheets: new Map<string, Spreadsheet>(), credentials: new Credentials(tokens), quota: new Quota(options.quota) };
  const faults = new Faults(options.latencyMs ?? 0);
  const log: LoggedRequest[] = [];
  const running = await listen(state, faults, log, host, options.port ?? 0);
  const find = (spreadsheetId: string) => {
    const spreadsheet = state.spreadsheets.get(spreadsheetId);
    if (spreadsheet === undefined) throw new Error(`No spreadsheet ${spreadsheetId} in the emulator`);
    return spreadsheet;
  };
  const rootUrl = `http://${host.includes(':') ? `[${host}]` : host}:${running.port}/`;
  tokens.tokenUrl = `${rootUrl}token`;
  return {
    rootUrl,
    tokenUrl: tokens.tokenUrl,
    createServiceAccountKey: (email) => tokens.createServiceAccountKey(email),
    deleteServiceAccountKey: (email, keyId) => tokens.deleteServiceAccountKey(email, keyId),
    createOAuthClient: () => tokens.createOAuthClient(),
    issueRefreshToken: (clientId, principal, scopes) => tokens.issueRefreshToken(clientId, principal, scopes),
    revokeRefreshToken: (refreshToken) => tokens.revokeRefreshToken(refreshToken),
    expireAccessTokens: () => tokens.expireAccessTokens(),
    setClockSkew(ms) {
      tokens.clockSkewMs = ms;
    },
    setTokenLifetime(seconds) {
      tokens.lifetimeSeconds = seconds;
    },
    createSpreadsheet(input) {
      const spreadsheetId = input.spreadsheetId ?? randomId();
      if (state.spreadsheets.has(spreadsheetId)) throw new Error(`Spreadsheet ${spreadsheetId} already exists`);
      if (input.sheets.length === 0) throw new Error('A spreadsheet has at least one sheet');
      const sheets = input.sheets.map((sheet, index) => {
        const created = newSheet(index === 0 ? 0 : 1_000_000_000 + 7919 * index, sheet.title, index, sheet.rows.map((row) => row.map(seedCell)));
        created.rowCount = Math.max(created.rowCount, sheet.rowCount ?? 0);
        created.columnCount = Math.max(created.columnCount, sheet.columnCount ?? 0);
        created.merges = (sheet.merges ?? []).map((merge) => ({ ...merge }));
        return created;
      });
      const access = new Map(Object.entries(input.access ?? {}));
      for (const tokenOrKey of access.keys()) state.credentials.register(tokenOrKey);
      state.spreadsheets.set(spreadsheetId, { spreadsheetId, title: input.title ?? 'Untitled spreadsheet', sheets, access, publicAccess: input.publicAccess ?? null, modifiedTime: Date.now() });
      return spreadsheetId;
    },
    deleteSpreadsheet(spreadsheetId) {
      state.spreadsheets.delete(spreadsheetId);
    },
    grant(spreadsheetId, tokenOrKey, role) {
      const { access } = find(spreadsheetId);
      state.credentials.register(tokenOrKey);
      if (role === null) access.delete(tokenOrKey);
      else access.set(tokenOrKey, role);
    },
    sheet(spreadsheetId, title) {
      const sheet = find(spreadsheetId).sheets.find((candidate) => candidate.title === title);
      if (sheet === undefined) throw new Error(`No sheet "${title}" in spreadsheet ${spreadsheetId}`);
      const reader = new SheetReader(sheet);
      const used = usedExtent(sheet);
      const rows = Array.from({ length: used.rows }, (_, r) => {
        const width = sheet.rows[r]?.findLastIndex((cell) => cell !== undefined) ?? -1;
        return Array.from({ length: width + 1 }, (_, c): StoredCell => {
          const cell = getCell(sheet, r, c);
          if (cell === undefined) return {};
          const stored: StoredCell = { userEnteredValue: cell.entered, effectiveValue: reader.effective(r, c), formattedValue: reader.formatted(r, c) };
          return cell.format === undefined ? stored : { ...stored, numberFormat: { ...cell.format } };
        });
      });
      return { rows };
    },
    get requests() {
      return log;
    },
    resetRequests() {
      log.length = 0;
    },
    setLatency(ms) {
      faults.latencyMs = ms;
    },
    failNext: (fail) => faults.failNext(fail),
    hangNext: (hang) => faults.hangNext(hang),
    resetNext: (reset) => faults.resetNext(reset),
    resetQuota: () => state.quota.reset(),
    close: () => running.close(),
  };
}

/** An id shaped like Google's: 44 URL-safe characters. */
function randomId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(33));
  return btoa(String.fromCharCode(...bytes)).replaceAll('+', '-').replaceAll('/', '_');
}
