// The Google source type: `{"type": "google", "spreadsheetId": "1AbC...", "apiKey": "..."}`
// serves a spreadsheet through the Sheets API v4. Its credentials are at most one of a key file
// (`credentialsFile`, relative to the config file's folder), an access token, an API key or an
// OAuth refresh token; none means Application Default Credentials. Its client (the Sheets
// library and Google's auth stack, about 5 MB resident) is imported only when one is opened.
// Several instances may serve one spreadsheet: with Redis they share its write lease, budget
// and Idempotency-Keys (docs/scaling.md). Listed in server/sources/registry.ts.
import { resolve } from 'node:path';
import * as v from 'valibot';
import { absoluteUrl, atMostOne, expected, flag, secret, strict, strictBare, text, wholeNumber } from '../../config/fields.ts';
import type { Secret } from '../../config/secret.ts';
import type { SourceType } from '../source-type.ts';

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

export const googleSourceType = {
  type: 'google',
  schema: GoogleSourceSchema,
  fieldNames: [
    'type', 'spreadsheetId', 'credentialsFile', 'accessToken', 'apiKey', 'oauth', 'clientId', 'clientSecret', 'refreshToken', 'tokenUri', 'rootUrl',
    'freshnessMs', 'timeoutMs', 'retries', 'quota', 'readsPerMinutePerUser', 'writesPerMinutePerUser', 'readsPerMinutePerProject', 'writesPerMinutePerProject', 'maxWaitMs',
    'checkModifiedTime', 'maxAgeMs', 'driveRootUrl', 'env',
  ],
  secretFields: ['accessToken', 'apiKey', 'clientSecret', 'refreshToken'],
  absolutePaths: (source, base) => (source.credentialsFile === undefined ? source : { ...source, credentialsFile: resolve(base, source.credentialsFile) }),
  resolve(source, base, readSecret, field) {
    const { accessToken, apiKey, oauth, credentialsFile, ...rest } = source;
    return {
      ...rest,
      ...(credentialsFile === undefined ? {} : { credentialsFile: resolve(base, credentialsFile) }),
      ...(accessToken === undefined ? {} : { accessToken: readSecret(accessToken, `${field}.accessToken`) }),
      ...(apiKey === undefined ? {} : { apiKey: readSecret(apiKey, `${field}.apiKey`) }),
      ...(oauth === undefined
        ? {}
        : {
            oauth: {
              clientId: oauth.clientId,
              clientSecret: readSecret(oauth.clientSecret, `${field}.oauth.clientSecret`),
              ...(oauth.tokenUri === undefined ? {} : { tokenUri: oauth.tokenUri }),
              refreshToken: readSecret(oauth.refreshToken, `${field}.oauth.refreshToken`),
            },
          }),
    };
  },
  servedFile: () => undefined,
  sharedByInstances: true,
  async open(source, { readOnly, log, shared }) {
    // Loaded only when a Google connection is configured: the Sheets client and Google's auth stack
    // (about 5 MB resident, and their load time) are of no use to a server of local files.
    const { openGoogleSourceFromConfig } = await import('./mod.ts');
    const note = (message: string) => log.error(message);
    return openGoogleSourceFromConfig(source, { readOnly, log: note, ...(shared === undefined ? {} : { shared: (key: string) => shared.spreadsheet(key, note), sharedBudget: shared.budget }) });
  },
  endpoints: (source, field) => [
    [`${field}.rootUrl`, source.rootUrl],
    [`${field}.driveRootUrl`, source.driveRootUrl],
    [`${field}.oauth.tokenUri`, source.oauth?.tokenUri],
  ],
  serverCredentials(source) {
    if (source.accessToken !== undefined || source.apiKey !== undefined || source.oauth !== undefined) return null;
    const which = source.credentialsFile === undefined ? 'no credentials means the server\'s own (Application Default Credentials)' : '"credentialsFile" is a key file of the server\'s';
    return `a Google source made through the admin API carries its own credentials ("accessToken", "apiKey" or "oauth"); ${which}`;
  },
  serverFile: (source, field) => (source.credentialsFile === undefined ? null : { path: source.credentialsFile, field: `${field}.credentialsFile`, problem: null }),
} as const satisfies SourceType<ParsedGoogleSource, GoogleSourceConfig>;
