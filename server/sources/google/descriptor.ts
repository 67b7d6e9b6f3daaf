// The Google source type: `{"type": "google", "spreadsheetId": "1AbC...", "apiKey": "..."}`
// serves a spreadsheet through the Sheets API v4. Its credentials are at most one of a key file
// (`credentialsFile`, relative to the config file's folder), an access token, an API key or an
// OAuth refresh token; none means Application Default Credentials. Its client (the Sheets
// library and Google's auth stack, about 5 MB resident) is imported only when one is opened.
// Several instances may serve one spreadsheet: with Redis they share its write lease, budget
// and Idempotency-Keys (docs/scaling.md). Listed in server/sources/registry.ts.
import { resolve } from 'node:path';
import type { SourceType } from '../source-type.ts';
import { GoogleSourceSchema, type GoogleSourceConfig, type ParsedGoogleSource } from './config.ts';

export type { GoogleOAuthConfig, GoogleSourceConfig, ParsedGoogleSource } from './config.ts';

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
