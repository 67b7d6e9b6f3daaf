// Who is calling, and may they: `Authorization: Bearer <token>` (or `?access_token=`) names a
// principal that spreadsheets grant 'reader' or 'writer'; `?key=<apiKey>` reads public
// spreadsheets only. `GET /v4/spreadsheets/{id}` by a token with no grant -> 403 PERMISSION_DENIED.
// Also the OAuth token endpoint: `POST /token grant_type=refresh_token&refresh_token=R` -> an
// access token whose principal is R; a jwt-bearer assertion -> one whose principal is its
// `sub` or `iss` (the service account's client_email). Assertion signatures are not checked.
import { GoogleError } from './errors.ts';
import type { Role, Spreadsheet } from './store.ts';

export type Principal = { readonly kind: 'user'; readonly id: string } | { readonly kind: 'key'; readonly id: string } | { readonly kind: 'anonymous' };

const MINTED_PREFIX = 'ya29.emulator.';

export class Credentials {
  /** Every token or key ever granted: the ones the emulator accepts as-is. */
  private readonly known = new Set<string>();

  register(tokenOrKey: string): void {
    this.known.add(tokenOrKey);
  }

  /** The caller of a request; 401 for a bearer token nobody registered, 400 for an unknown key. */
  principal(authorization: string | null, query: URLSearchParams): Principal {
    const bearer = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1] ?? query.get('access_token') ?? undefined;
    if (bearer !== undefined) {
      const id = minted(bearer) ?? jwtSubject(bearer) ?? (this.known.has(bearer) ? bearer : undefined);
      if (id === undefined) throw new GoogleError(401);
      return { kind: 'user', id };
    }
    const key = query.get('key');
    if (key !== null) {
      if (!this.known.has(key)) throw new GoogleError(400, 'API key not valid. Please pass a valid API key.');
      return { kind: 'key', id: key };
    }
    return { kind: 'anonymous' };
  }
}

/**
 * Refuses a call the principal may not make: anonymous calls need an API key (403), API keys
 * cannot write (401, as Google answers), and the spreadsheet must grant the role (403).
 */
export function authorize(principal: Principal, spreadsheet: Spreadsheet, need: Role): void {
  if (principal.kind === 'anonymous') throw new GoogleError(403, 'The request is missing a valid API key.');
  if (principal.kind === 'key' && need === 'writer') {
    throw new GoogleError(401, 'API keys are not supported by this API. Expected OAuth2 access token or other authentication credentials that assert a principal.');
  }
  const role = principal.kind === 'user' ? (spreadsheet.access.get(principal.id) ?? spreadsheet.publicAccess) : spreadsheet.publicAccess === null ? null : 'reader';
  if (role === null || (need === 'writer' && role !== 'writer')) throw new GoogleError(403);
}

export function principalKey(principal: Principal): string {
  return principal.kind === 'anonymous' ? 'anonymous' : `${principal.kind}:${principal.id}`;
}

/** The OAuth 2.0 token endpoint's answer: 200 with a token, or 400 in OAuth's own error shape. */
export function tokenEndpoint(form: URLSearchParams): { status: number; body: unknown } {
  const grant = form.get('grant_type');
  const invalid = (error: string, description: string) => ({ status: 400, body: { error, error_description: description } });
  let subject: string | undefined;
  if (grant === 'refresh_token') {
    subject = form.get('refresh_token') ?? undefined;
    if (subject === undefined || subject === '') return invalid('invalid_request', 'Missing required parameter: refresh_token');
  } else if (grant === 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
    subject = jwtSubject(form.get('assertion') ?? '');
    if (subject === undefined) return invalid('invalid_grant', 'Invalid JWT: the assertion must be a JWT with iss, aud and exp claims, not expired.');
  } else {
    return invalid('unsupported_grant_type', `Invalid grant_type: ${grant ?? ''}`);
  }
  const scope = form.get('scope') ?? 'https://www.googleapis.com/auth/spreadsheets';
  return { status: 200, body: { access_token: MINTED_PREFIX + base64url(subject), expires_in: 3599, token_type: 'Bearer', scope } };
}

function minted(token: string): string | undefined {
  if (!token.startsWith(MINTED_PREFIX)) return undefined;
  const subject = decodeBase64url(token.slice(MINTED_PREFIX.length));
  return subject === '' ? undefined : subject;
}

/** A well-formed, unexpired JWT's subject (`sub`, else `iss`); undefined for anything else. */
function jwtSubject(token: string): string | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const header = JSON.parse(decodeBase64url(parts[0])) as { alg?: unknown };
    const claims = JSON.parse(decodeBase64url(parts[1])) as { iss?: unknown; sub?: unknown; aud?: unknown; exp?: unknown };
    if (typeof header.alg !== 'string' || typeof claims.iss !== 'string' || claims.aud === undefined) return undefined;
    if (typeof claims.exp !== 'number' || claims.exp * 1000 < Date.now()) return undefined;
    return typeof claims.sub === 'string' ? claims.sub : claims.iss;
  } catch {
    return undefined;
  }
}

function base64url(text: string): string {
  return btoa(String.fromCharCode(...new TextEncoder().encode(text))).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

function decodeBase64url(text: string): string {
  try {
    const binary = atob(text.replaceAll('-', '+').replaceAll('_', '/'));
    return new TextDecoder().decode(Uint8Array.from(binary, (char) => char.charCodeAt(0)));
  } catch {
    return '';
  }
}
