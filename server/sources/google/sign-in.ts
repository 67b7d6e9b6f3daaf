// How the source signs in to Google: the client library's auth for each way the configuration
// allows, built on first use, and rebuilt after Google refuses a token (401), so a revoked or
// expired access token costs one new token, not every request until the server restarts.
// Key files are read here rather than by the library, so that a missing or malformed file is
// answered 502 naming the setting to fix, and a key's `token_uri` is honoured (the library always
// posts to Google's own token URL): `"token_uri": "http://127.0.0.1:8085/token"` in a test key
// sends the JWT bearer grant to the emulator.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import process from 'node:process';
import sheetsModule from '@googleapis/sheets';
import { apiError, type ApiError } from '../../../lib/errors.ts';
import type { Secret } from '../../config/secret.ts';

export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
export const SPREADSHEETS_SCOPE = 'https://www.googleapis.com/auth/spreadsheets';
/** What the revision check (Drive's files.get of `modifiedTime`) needs besides the Sheets scope. */
export const DRIVE_METADATA_SCOPE = 'https://www.googleapis.com/auth/drive.metadata.readonly';

/** How the source proves who it is to Google: exactly one way, as the configuration allows. */
export type GoogleAuth =
  | { readonly kind: 'credentialsFile'; readonly path: string }
  /** GOOGLE_APPLICATION_CREDENTIALS's key file, else the environment's (Application Default Credentials). */
  | { readonly kind: 'applicationDefault' }
  | { readonly kind: 'accessToken'; readonly token: Secret }
  | { readonly kind: 'apiKey'; readonly key: Secret }
  | { readonly kind: 'oauth'; readonly clientId: string; readonly clientSecret: Secret; readonly refreshToken: Secret; readonly tokenUri?: string };

export type AuthOption = NonNullable<Parameters<typeof sheetsModule.sheets>[0] extends infer O ? (O extends { auth?: infer A } ? A : never) : never>;

/** What a refusal by Google's token endpoint is about, and the setting that holds it (for messages). */
export interface SignInKind {
  readonly grant: 'service-account' | 'refresh-token' | 'other';
  /** `credentialsFile`, `oauth.refreshToken`, `the key file named by GOOGLE_APPLICATION_CREDENTIALS`... */
  readonly setting: string;
}

/** Whom Google counts requests against: the user (a service account, an OAuth user, a token) and its project. */
export interface QuotaIdentity {
  readonly user: string;
  readonly project: string;
}

export interface SignIn extends SignInKind {
  /** The library's auth; throws ApiError(upstream_error) when the credentials cannot be loaded. */
  auth(): Promise<AuthOption>;
  /** Who the credentials are, for the shared quota budget (secrets only as digests). */
  identity(): Promise<QuotaIdentity>;
  /** Whether a 401 may be cured by signing in again (the source then calls `reset` and retries once). */
  readonly renewable: boolean;
  /** Drops the auth client and its token: the next call signs in afresh. */
  reset(): void;
}

export function createSignIn(auth: GoogleAuth, fetchImplementation: typeof fetch, scopes: readonly string[] = [SPREADSHEETS_SCOPE]): SignIn {
  const kind = signInKind(auth);
  let current: Promise<Built> | null = null;
  const built = () => {
    current ??= build(auth, kind, fetchImplementation, scopes);
    // A file that could not be read may be fixed meanwhile: try again on the next call.
    current.catch(() => {
      current = null;
    });
    return current;
  };
  return {
    ...kind,
    renewable: auth.kind !== 'accessToken' && auth.kind !== 'apiKey',
    auth: async () => (await built()).auth,
    identity: async () => (await built()).identity,
    reset() {
      current = null;
    },
  };
}

function signInKind(auth: GoogleAuth): SignInKind {
  switch (auth.kind) {
    case 'credentialsFile':
      return { grant: 'service-account', setting: 'credentialsFile' };
    case 'applicationDefault':
      return { grant: 'service-account', setting: process.env.GOOGLE_APPLICATION_CREDENTIALS ? 'the key file named by GOOGLE_APPLICATION_CREDENTIALS' : 'Application Default Credentials' };
    case 'oauth':
      return { grant: 'refresh-token', setting: 'oauth.refreshToken' };
    case 'accessToken':
      return { grant: 'other', setting: 'accessToken' };
    case 'apiKey':
      return { grant: 'other', setting: 'apiKey' };
  }
}

interface Built {
  readonly auth: AuthOption;
  readonly identity: QuotaIdentity;
}

/** A secret's stand-in in budget keys: equal secrets share a budget, and the key shows nothing. */
function digest(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url').slice(0, 22);
}

async function build(auth: GoogleAuth, kind: SignInKind, fetchImplementation: typeof fetch, scopes: readonly string[]): Promise<Built> {
  const { auth: google } = sheetsModule;
  const transporterOptions = { fetchImplementation };
  const alone = (user: string): QuotaIdentity => ({ user, project: user });
  switch (auth.kind) {
    case 'apiKey':
      // The library sends a string as the `key` query parameter; such a connection only reads.
      return { auth: auth.key.reveal(), identity: alone(`key ${digest(auth.key.reveal())}`) };
    case 'accessToken': {
      const client = new google.OAuth2({ transporterOptions });
      client.setCredentials({ access_token: auth.token.reveal() });
      return { auth: client, identity: alone(`token ${digest(auth.token.reveal())}`) };
    }
    case 'oauth':
      return refreshClient(auth.clientId, auth.clientSecret.reveal(), auth.refreshToken.reveal(), auth.tokenUri, fetchImplementation);
    case 'credentialsFile':
      return fromKeyFile(auth.path, kind, fetchImplementation, scopes);
    case 'applicationDefault': {
      const path = process.env.GOOGLE_APPLICATION_CREDENTIALS;
      if (path !== undefined && path !== '') return fromKeyFile(path, kind, fetchImplementation, scopes);
      // No file named: the library looks further (gcloud's file, the metadata server on Google Cloud).
      return { auth: new google.GoogleAuth({ scopes: [...scopes], clientOptions: { transporterOptions } }) as AuthOption, identity: alone('application default') };
    }
  }
}

interface KeyFile {
  readonly type?: unknown;
  readonly client_email?: unknown;
  readonly private_key?: unknown;
  readonly private_key_id?: unknown;
  readonly client_id?: unknown;
  readonly client_secret?: unknown;
  readonly refresh_token?: unknown;
  readonly token_uri?: unknown;
  readonly project_id?: unknown;
}

/** A service-account key (or gcloud's authorized_user file) as the library's auth; 502 naming the setting when it cannot be. */
async function fromKeyFile(path: string, kind: SignInKind, fetchImplementation: typeof fetch, scopes: readonly string[]): Promise<Built> {
  const unusable = (why: string): ApiError => apiError('upstream_error', `The Google credentials in ${kind.setting} cannot be used: ${why}; nothing was done.`);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw unusable(`the file cannot be read (${(error as { code?: string }).code ?? 'error'})`);
  }
  let json: KeyFile;
  try {
    json = JSON.parse(text) as KeyFile;
  } catch {
    throw unusable('the file is not JSON');
  }
  if (typeof json !== 'object' || json === null) throw unusable('the file is not a JSON key');
  const tokenUri = typeof json.token_uri === 'string' && json.token_uri !== '' ? json.token_uri : undefined;
  if (json.type === 'service_account') {
    if (typeof json.client_email !== 'string' || typeof json.private_key !== 'string') throw unusable('the service account key has no client_email or private_key');
    const client = new sheetsModule.auth.JWT({
      email: json.client_email,
      key: json.private_key,
      keyId: typeof json.private_key_id === 'string' ? json.private_key_id : undefined,
      scopes: [...scopes],
      transporterOptions: { fetchImplementation: toTokenUri(tokenUri, fetchImplementation) },
    });
    const project = typeof json.project_id === 'string' ? json.project_id : json.client_email;
    return { auth: client, identity: { user: `service account ${json.client_email}`, project: `project ${project}` } };
  }
  if (json.type === 'authorized_user') {
    if (typeof json.client_id !== 'string' || typeof json.client_secret !== 'string' || typeof json.refresh_token !== 'string') {
      throw unusable('the authorized_user file has no client_id, client_secret or refresh_token');
    }
    return refreshClient(json.client_id, json.client_secret, json.refresh_token, tokenUri, fetchImplementation);
  }
  if (typeof json.type !== 'string') throw unusable('it has no "type" (a service account key says "service_account")');
  // Other kinds (external_account for workload identity federation, impersonated_service_account)
  // go to the library as they did before; their token requests are its business.
  const other = new sheetsModule.auth.GoogleAuth({ credentials: json as never, scopes: [...scopes], clientOptions: { transporterOptions: { fetchImplementation } } });
  const who = `${json.type} ${digest(text)}`;
  return { auth: other as AuthOption, identity: { user: who, project: who } };
}

/** An OAuth client acting as the user who granted `refreshToken`; the client belongs to one project. */
function refreshClient(clientId: string, clientSecret: string, refreshToken: string, tokenUri: string | undefined, fetchImplementation: typeof fetch): Built {
  const client = new sheetsModule.auth.OAuth2({
    clientId,
    clientSecret,
    transporterOptions: { fetchImplementation },
    ...(tokenUri === undefined ? {} : { endpoints: { oauth2TokenUrl: tokenUri } }),
  });
  client.setCredentials({ refresh_token: refreshToken });
  return { auth: client, identity: { user: `oauth user ${digest(`${clientId} ${refreshToken}`)}`, project: `oauth client ${clientId}` } };
}

/** The fetch for a service account's token requests: Google's token URL replaced by the key's `token_uri`. */
function toTokenUri(tokenUri: string | undefined, fetchImplementation: typeof fetch): typeof fetch {
  if (tokenUri === undefined || tokenUri === GOOGLE_TOKEN_URL) return fetchImplementation;
  return (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : null;
    return fetchImplementation(url !== null && url.startsWith(GOOGLE_TOKEN_URL) ? tokenUri + url.slice(GOOGLE_TOKEN_URL.length) : input, init);
  };
}
