// The OAuth 2.0 token endpoint, `POST {rootUrl}token`, checking what Google checks so sign-in
// code can be tested offline: a service account's JWT assertion must be signed (RS256) by one of
// the account's keys, with `iss`, `scope`, `aud`, `iat` and `exp` in order; a refresh token must
// have been issued to the client whose id and secret come with it. Access tokens it mints expire.
// `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<JWT>` ->
// `{"access_token": "ya29.emulator.…", "expires_in": 3599, "token_type": "Bearer"}`;
// a JWT signed by a deleted key -> 400 `{"error": "invalid_grant", "error_description": "Invalid JWT Signature."}`.
import { generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';

/** Google's token URL: what `aud` says in every assertion Google's client libraries sign. */
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** How far `iat` may be ahead of the emulator's clock: Google allows a few minutes of clock drift (the value is the emulator's choice). */
export const ALLOWED_SKEW_SECONDS = 300;
const MINTED_PREFIX = 'ya29.emulator.';

/** A service-account JSON key, as the Cloud console downloads it. */
export interface ServiceAccountKey {
  readonly type: 'service_account';
  readonly project_id: string;
  readonly private_key_id: string;
  readonly private_key: string;
  readonly client_email: string;
  readonly client_id: string;
  readonly auth_uri: string;
  readonly token_uri: string;
}

export interface AccessGrant {
  readonly principal: string;
  readonly scopes: readonly string[];
}

interface Minted extends AccessGrant {
  readonly expiresAt: number;
}

interface Answer {
  readonly status: number;
  readonly body: unknown;
}

export class TokenIssuer {
  /** The emulator's clock minus this machine's (ms): a clock ahead of the client's is positive. */
  clockSkewMs = 0;
  lifetimeSeconds: number;
  /** `{rootUrl}token`, also accepted as an assertion's audience. */
  tokenUrl = GOOGLE_TOKEN_URL;
  readonly #accountKeys = new Map<string, Map<string, KeyObject>>();
  readonly #clients = new Map<string, string>();
  readonly #refreshTokens = new Map<string, { readonly clientId: string; readonly principal: string; readonly scopes: readonly string[] }>();
  readonly #minted = new Map<string, Minted>();

  constructor(lifetimeSeconds = 3599) {
    this.lifetimeSeconds = lifetimeSeconds;
  }

  now(): number {
    return Date.now() + this.clockSkewMs;
  }

  /** A new RSA key for `email` (the account is created on first use); only its public half stays here. */
  createServiceAccountKey(email: string): ServiceAccountKey {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const keyId = randomBytes(20).toString('hex');
    const keys = this.#accountKeys.get(email) ?? new Map<string, KeyObject>();
    keys.set(keyId, publicKey);
    this.#accountKeys.set(email, keys);
    return {
      type: 'service_account',
      project_id: email.split('@')[1]?.split('.')[0] ?? 'emulator',
      private_key_id: keyId,
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      client_email: email,
      client_id: String(100_000_000_000_000_000_000n + BigInt(this.#accountKeys.size)),
      auth_uri: 'https://accounts.google.com/o/oauth2/auth',
      token_uri: this.tokenUrl,
    };
  }

  /** Deletes every key of `email` (or only `keyId`): assertions they sign are refused from now on. */
  deleteServiceAccountKey(email: string, keyId?: string): void {
    if (keyId === undefined) this.#accountKeys.get(email)?.clear();
    else this.#accountKeys.get(email)?.delete(keyId);
  }

  createOAuthClient(): { clientId: string; clientSecret: string } {
    const clientId = `${randomBytes(8).toString('hex')}.apps.googleusercontent.com`;
    const clientSecret = `GOCSPX-${randomBytes(12).toString('base64url')}`;
    this.#clients.set(clientId, clientSecret);
    return { clientId, clientSecret };
  }

  /** A refresh token for `principal` (a user such as `ann@example.com`), as the consent flow would give `clientId`. */
  issueRefreshToken(clientId: string, principal: string, scopes: readonly string[] = ['https://www.googleapis.com/auth/spreadsheets']): string {
    if (!this.#clients.has(clientId)) throw new Error(`No OAuth client ${clientId} in the emulator`);
    const token = `1//emulator-${randomBytes(24).toString('base64url')}`;
    this.#refreshTokens.set(token, { clientId, principal, scopes });
    return token;
  }

  /**
   * The authorization_code grant's tokens (consent.ts): a refresh token for `principal`, which the
   * refresh grant then honours, and a first access token. An OAuth client the emulator has not seen
   * is registered with the secret it presents, standing in for the Cloud console.
   */
  codeGrant(clientId: string, clientSecret: string, principal: string, scopes: readonly string[]): Answer {
    const known = this.#clients.get(clientId);
    if (known === undefined) this.#clients.set(clientId, clientSecret);
    else if (known !== clientSecret) return refusal(401, 'invalid_client', 'The OAuth client was not found.');
    const refreshToken = this.issueRefreshToken(clientId, principal, scopes);
    const minted = this.#mint(principal, scopes);
    return { status: minted.status, body: { ...(minted.body as Record<string, unknown>), refresh_token: refreshToken } };
  }

  revokeRefreshToken(token: string): void {
    this.#refreshTokens.delete(token);
  }

  /** Every access token minted so far stops working, as if each had expired or been revoked. */
  expireAccessTokens(): void {
    this.#minted.clear();
  }

  /** A minted token's grant; 'expired' once its lifetime is over; undefined when not one of ours. */
  lookup(token: string): AccessGrant | 'expired' | undefined {
    if (!token.startsWith(MINTED_PREFIX)) return undefined;
    const minted = this.#minted.get(token);
    if (minted === undefined || minted.expiresAt <= this.now()) return 'expired';
    return minted;
  }

  /** `POST /token`: 200 with an access token, or OAuth's error shape (400 invalid_grant, 401 invalid_client). */
  grant(form: URLSearchParams): Answer {
    const grantType = form.get('grant_type');
    if (grantType === JWT_BEARER) return this.#jwtBearer(form.get('assertion') ?? '');
    if (grantType === 'refresh_token') return this.#refresh(form);
    return refusal(400, 'unsupported_grant_type', `Invalid grant_type: ${grantType ?? ''}`);
  }

  #jwtBearer(assertion: string): Answer {
    const jwt = decodeJwt(assertion);
    if (jwt === undefined) return refusal(400, 'invalid_grant', 'Invalid JWT: the assertion is not a JWT.');
    const { header, claims, signed, signature } = jwt;
    const iss = typeof claims.iss === 'string' ? claims.iss : '';
    const keys = this.#accountKeys.get(iss);
    if (keys === undefined) return refusal(400, 'invalid_grant', 'Invalid grant: account not found');
    const candidates = typeof header.kid === 'string' ? [keys.get(header.kid)].filter((key) => key !== undefined) : [...keys.values()];
    const signedBy = header.alg === 'RS256' && candidates.some((key) => verify('RSA-SHA256', signed, key, signature));
    if (!signedBy) return refusal(400, 'invalid_grant', 'Invalid JWT Signature.');
    if (claims.aud !== GOOGLE_TOKEN_URL && claims.aud !== this.tokenUrl) return refusal(400, 'invalid_grant', 'Invalid JWT: Failed audience check.');
    const now = Math.floor(this.now() / 1000);
    const { iat, exp } = claims;
    // Google's own wording; the client's clock being off is the usual cause.
    if (typeof iat !== 'number' || typeof exp !== 'number' || exp - iat > 3600 || exp <= now || iat > now + ALLOWED_SKEW_SECONDS) {
      return refusal(400, 'invalid_grant', 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.');
    }
    const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ').filter((scope) => scope !== '') : [];
    if (scopes.length === 0) return refusal(400, 'invalid_scope', 'Empty or missing scope not allowed.');
    return this.#mint(typeof claims.sub === 'string' ? claims.sub : iss, scopes);
  }

  #refresh(form: URLSearchParams): Answer {
    const clientId = form.get('client_id') ?? '';
    const secret = this.#clients.get(clientId);
    if (secret === undefined || secret !== form.get('client_secret')) return refusal(401, 'invalid_client', 'The OAuth client was not found.');
    const issued = this.#refreshTokens.get(form.get('refresh_token') ?? '');
    if (issued === undefined || issued.clientId !== clientId) return refusal(400, 'invalid_grant', 'Token has been expired or revoked.');
    return this.#mint(issued.principal, issued.scopes);
  }

  #mint(principal: string, scopes: readonly string[]): Answer {
    const token = MINTED_PREFIX + randomBytes(24).toString('base64url');
    this.#minted.set(token, { principal, scopes, expiresAt: this.now() + this.lifetimeSeconds * 1000 });
    return { status: 200, body: { access_token: token, expires_in: this.lifetimeSeconds, scope: scopes.join(' '), token_type: 'Bearer' } };
  }
}

function refusal(status: number, error: string, description: string): Answer {
  return { status, body: { error, error_description: description } };
}

interface Jwt {
  readonly header: Record<string, unknown>;
  readonly claims: Record<string, unknown>;
  readonly signed: Buffer;
  readonly signature: Buffer;
}

export function decodeJwt(token: string): Jwt | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8')) as unknown;
    const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as unknown;
    if (typeof header !== 'object' || header === null || typeof claims !== 'object' || claims === null) return undefined;
    return { header: header as Record<string, unknown>, claims: claims as Record<string, unknown>, signed: Buffer.from(`${parts[0]}.${parts[1]}`), signature: Buffer.from(parts[2], 'base64url') };
  } catch {
    return undefined;
  }
}
