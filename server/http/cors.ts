// CORS: browsers may call sheetrest from the configured origins (default `*`). Every response
// exposes the contract's headers; a preflight (OPTIONS with Access-Control-Request-Method)
// allows the path's methods and the headers a client sends. A write from a page on another
// site to a connection without keys (`POST /sheets/demo` with `Origin: https://elsewhere.example`)
// is refused unless `cors.writes` or a CORS list lets that origin write (`mayWriteWithoutKey`).

export const EXPOSED_HEADERS = [
  'X-Sheet-Rows', 'X-Sheet-Columns', 'X-Total-Count', 'X-RateLimit-Limit', 'X-RateLimit-Remaining',
  'X-RateLimit-Plan', 'X-RateLimit-Reset', 'Retry-After', 'Allow', 'ETag', 'Idempotent-Replayed',
].join(', ');

const ALLOWED_REQUEST_HEADERS = 'X-Api-Key, Content-Type, X-HTTP-Method-Override, If-Match, If-None-Match, Idempotency-Key';

export type Origins = '*' | readonly string[];

/**
 * `cors.writes`: which other sites' pages may write to a connection that has no keys.
 * `same-origin` (the default): none but those a CORS list names; `any`: every site; a list: those too.
 */
export type CorsWrites = 'same-origin' | 'any' | readonly string[];

export const CORS_WRITES_DEFAULT: CorsWrites = 'same-origin';

/** Shared by every answer of a server open to all origins; callers copy it, never change it. */
const ANY_ORIGIN: Readonly<Record<string, string>> = Object.freeze({ 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': EXPOSED_HEADERS });

export function corsHeaders(origins: Origins, origin: string | null): Readonly<Record<string, string>> {
  if (origins === '*') return ANY_ORIGIN;
  // A list answers with the caller's origin when it is listed, so caches must key on Origin.
  if (origin !== null && origins.includes(origin)) {
    return { 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': EXPOSED_HEADERS, Vary: 'Origin' };
  }
  return { Vary: 'Origin' };
}

export function isPreflight(request: { method: string; headers: { get(name: string): string | null } }): boolean {
  return request.method === 'OPTIONS' && request.headers.get('access-control-request-method') !== null;
}

export function preflightHeaders(origins: Origins, origin: string | null, methods: readonly string[]): Record<string, string> {
  return {
    ...corsHeaders(origins, origin),
    'Access-Control-Allow-Methods': [...methods, 'OPTIONS'].join(', '),
    'Access-Control-Allow-Headers': ALLOWED_REQUEST_HEADERS,
    'Access-Control-Max-Age': '600',
  };
}

/**
 * Whether a page at `origin` may write to a connection without keys. Its own pages may (the
 * Origin names the host the request was sent to; the scheme is not compared, so that a proxy
 * ending TLS in front of the server does not make its own pages strangers); other sites only
 * when listed in `cors.origins` or `cors.writes`, or when `cors.writes` is "any". `Origin: null`
 * (a sandboxed frame, a `file:` page) is never the server's own page and cannot be listed.
 */
export function mayWriteWithoutKey(origins: Origins, writes: CorsWrites, origin: string, host: string | null): boolean {
  if (writes === 'any') return true;
  if (origins !== '*' && origins.includes(origin)) return true;
  if (writes !== 'same-origin' && writes.includes(origin)) return true;
  return isOwnOrigin(origin, host);
}

/** Whether `origin` names the host (and port) the request was sent to: the server's own page. */
export function isOwnOrigin(origin: string, host: string | null): boolean {
  return host !== null && hostOfOrigin(origin) === normalHost(host);
}

/** `https://Sheets.example.com:8443` -> `sheets.example.com:8443`; null for `null` or anything not an origin. */
function hostOfOrigin(origin: string): string | null {
  if (!URL.canParse(origin)) return null;
  const url = new URL(origin);
  return url.protocol === 'http:' || url.protocol === 'https:' ? normalHost(url.host) : null;
}

/** A Host header's name and port as compared: lower case, without a default port (80, 443). */
function normalHost(host: string): string {
  return host.toLowerCase().replace(/:(?:80|443)$/, '');
}
