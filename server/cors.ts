// CORS: browsers may call sheetrest from the configured origins (default `*`). Every response
// exposes the contract's headers; a preflight (OPTIONS with Access-Control-Request-Method)
// allows the path's methods and the headers a client sends.

export const EXPOSED_HEADERS = [
  'X-Sheet-Rows', 'X-Sheet-Columns', 'X-Total-Count', 'X-RateLimit-Limit', 'X-RateLimit-Remaining',
  'X-RateLimit-Plan', 'X-RateLimit-Reset', 'Retry-After', 'Allow', 'ETag', 'Idempotent-Replayed',
].join(', ');

const ALLOWED_REQUEST_HEADERS = 'X-Api-Key, Content-Type, X-HTTP-Method-Override, If-Match, If-None-Match, Idempotency-Key';

export type Origins = '*' | readonly string[];

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
