// A Google source's object in sheetrest.json, as valibot schemas (the messages say what was
// expected: `spreadsheetId: expected a spreadsheet id (letters, digits, _ and -), got "a b"`), and
// as the server uses it, its secrets read (`GoogleSourceConfig`). Its own module, apart from
// descriptor.ts, so that the source (mod.ts) can take its type without importing the descriptor
// that imports it.
import * as v from 'valibot';
import { absoluteUrl, atMostOne, expected, flag, secret, strict, strictBare, text, wholeNumber } from '../../config/fields.ts';
import type { Secret } from '../../config/secret.ts';

export const GoogleOAuthSchema = strict('an object with "clientId", "clientSecret" and "refreshToken" (and optionally "tokenUri")', {
  clientId: text(),
  clientSecret: secret,
  refreshToken: secret,
  /** Where refresh tokens are exchanged (default Google's, https://oauth2.googleapis.com/token). */
  tokenUri: v.optional(absoluteUrl),
});

/** Google's per-minute request limits (defaults: 60 per user, 300 per project, reads and writes apart). */
export const GoogleQuotaSchema = strict('an object', {
  readsPerMinutePerUser: v.optional(wholeNumber(1)),
  writesPerMinutePerUser: v.optional(wholeNumber(1)),
  readsPerMinutePerProject: v.optional(wholeNumber(1)),
  writesPerMinutePerProject: v.optional(wholeNumber(1)),
  /** How long a request may wait for a slot before it is answered 503 (default 10000 ms). */
  maxWaitMs: v.optional(wholeNumber(0)),
});

export const GoogleSourceSchema = v.pipe(
  strictBare('an object', {
    type: v.literal('google'),
    spreadsheetId: v.pipe(text('a spreadsheet id'), v.regex(/^[A-Za-z0-9_-]+$/, expected('a spreadsheet id (letters, digits, _ and -)'))),
    credentialsFile: v.optional(text('a file path')),
    accessToken: v.optional(secret),
    apiKey: v.optional(secret),
    oauth: v.optional(GoogleOAuthSchema),
    rootUrl: v.optional(absoluteUrl),
    /** How long reads are answered from memory (default 5000 ms). */
    freshnessMs: v.optional(wholeNumber(0)),
    /** How long one upstream attempt may take before 504 (default 10000 ms). */
    timeoutMs: v.optional(wholeNumber(1)),
    /** Retries of a 429 or 5xx before 503 (default 4). */
    retries: v.optional(wholeNumber(0, 10)),
    /** Google's per-minute limits, kept on this side for every connection with the same credentials. */
    quota: v.optional(GoogleQuotaSchema),
    /** Before reading a stale tab again, ask Drive whether the file changed (its modifiedTime). */
    checkModifiedTime: v.optional(flag()),
    /** With checkModifiedTime: the longest a tab is kept unread however unchanged the file looks (default 300000 ms). */
    maxAgeMs: v.optional(wholeNumber(0)),
    /** Where Drive's API is (default rootUrl when set, else https://www.googleapis.com/). */
    driveRootUrl: v.optional(absoluteUrl),
  }),
  // None of them: Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS).
  atMostOne(['credentialsFile', 'accessToken', 'apiKey', 'oauth']),
);

export type ParsedGoogleSource = v.InferOutput<typeof GoogleSourceSchema>;

export interface GoogleOAuthConfig {
  readonly clientId: string;
  readonly clientSecret: Secret;
  readonly refreshToken: Secret;
  /** The OAuth token endpoint (default Google's); for emulators and private endpoints. */
  readonly tokenUri?: string;
}

/** A Google source with its secrets resolved; at most one of credentialsFile, accessToken, apiKey, oauth is set (none: Application Default Credentials). */
export type GoogleSourceConfig = Omit<ParsedGoogleSource, 'accessToken' | 'apiKey' | 'oauth'> & {
  readonly accessToken?: Secret;
  readonly apiKey?: Secret;
  readonly oauth?: GoogleOAuthConfig;
};
