// Who is calling, and may they: `Authorization: Bearer <token>` (or `?access_token=`) names a
// principal that spreadsheets grant 'reader' or 'writer'; `?key=<apiKey>` reads public
// spreadsheets only. `GET /v4/spreadsheets/{id}` by a token with no grant -> 403 PERMISSION_DENIED.
// Tokens minted by the token endpoint (tokens.ts) name their principal (the service account's
// client_email, or the user a refresh token was issued for) until they expire (then 401), and
// carry their scopes: a write needs a read-write scope.
import { GoogleError } from './errors.ts';
import type { Role, Spreadsheet } from './store.ts';
import { decodeJwt, type TokenIssuer } from './tokens.ts';

export type Principal =
  | { readonly kind: 'user'; readonly id: string; readonly scopes?: readonly string[] }
  | { readonly kind: 'key'; readonly id: string }
  | { readonly kind: 'anonymous' };

/** Scopes that let a token write spreadsheets; the `.readonly` ones only read. */
const WRITE_SCOPES = new Set(['https://www.googleapis.com/auth/spreadsheets', 'https://www.googleapis.com/auth/drive', 'https://www.googleapis.com/auth/drive.file']);

/** No scope needed beyond signing in (a Sheets read with any token). */
const ANY: ReadonlySet<string> = new Set();

export class Credentials {
  /** Every token or key ever granted: the ones the emulator accepts as-is. */
  private readonly known = new Set<string>();
  readonly tokens: TokenIssuer;

  constructor(tokens: TokenIssuer) {
    this.tokens = tokens;
  }

  register(tokenOrKey: string): void {
    this.known.add(tokenOrKey);
  }

  /** The caller of a request; 401 for a bearer token nobody registered (or expired), 400 for an unknown key. */
  principal(authorization: string | null, query: URLSearchParams): Principal {
    const bearer = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1] ?? query.get('access_token') ?? undefined;
    if (bearer !== undefined) {
      const minted = this.tokens.lookup(bearer);
      if (minted === 'expired') throw new GoogleError(401);
      if (minted !== undefined) return { kind: 'user', id: minted.principal, scopes: minted.scopes };
      const id = jwtSubject(bearer, this.tokens.now()) ?? (this.known.has(bearer) ? bearer : undefined);
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
 * cannot write (401, as Google answers), a token without one of `scopes` is refused (403: a
 * read-only token writing, a Sheets token asking Drive), and the spreadsheet must grant the role (403).
 */
export function authorize(principal: Principal, spreadsheet: Spreadsheet, need: Role, scopes: ReadonlySet<string> = need === 'writer' ? WRITE_SCOPES : ANY): void {
  if (principal.kind === 'anonymous') throw new GoogleError(403, 'The request is missing a valid API key.');
  if (principal.kind === 'key' && need === 'writer') {
    throw new GoogleError(401, 'API keys are not supported by this API. Expected OAuth2 access token or other authentication credentials that assert a principal.');
  }
  if (principal.kind === 'user' && scopes !== ANY && principal.scopes !== undefined && !principal.scopes.some((scope) => scopes.has(scope))) {
    throw new GoogleError(403, 'Request had insufficient authentication scopes.');
  }
  const role = principal.kind === 'user' ? (spreadsheet.access.get(principal.id) ?? spreadsheet.publicAccess) : spreadsheet.publicAccess === null ? null : 'reader';
  if (role === null || (need === 'writer' && role !== 'writer')) throw new GoogleError(403);
}

export function principalKey(principal: Principal): string {
  return principal.kind === 'anonymous' ? 'anonymous' : `${principal.kind}:${principal.id}`;
}

/**
 * A self-signed JWT sent directly as the bearer token (Google accepts those from service
 * accounts): its subject (`sub`, else `iss`) while unexpired. Its signature is not checked here;
 * the token endpoint's assertions are.
 */
function jwtSubject(token: string, now: number): string | undefined {
  const jwt = decodeJwt(token);
  if (jwt === undefined) return undefined;
  const { header, claims } = jwt;
  if (typeof header.alg !== 'string' || typeof claims.iss !== 'string' || claims.aud === undefined) return undefined;
  if (typeof claims.exp !== 'number' || claims.exp * 1000 < now) return undefined;
  return typeof claims.sub === 'string' ? claims.sub : claims.iss;
}
