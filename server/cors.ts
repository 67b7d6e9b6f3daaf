// CORS: browsers may call sheetrest from the configured origins (default `*`). Every response
// exposes the contract's headers; a preflight (OPTIONS with Access-Control-Request-Method)
// allows the path's methods and the headers a client sends.

export const EXPOSED_HEADERS = [
  'X-Sheet-Rows', 'X-Sheet-Columns', 'X-Total-Count', 'X-RateLimit-Limit', 'X-RateLimit-Remaining',
  'X-RateLimit-Plan', 'X-RateLimit-Reset', 'Retry-After', 'Allow', 'Idempotent-Replayed',
].join(', ');

const ALLOWED_REQUEST_HEADERS = 'X-Api-Key, Content-Type, X-HTTP-Method-Override, Idempotency-Key';

export type Origins = '*' | readonly string[];

export function corsHeaders(origins: Origins, origin: string | null): Record<string, string> {
  if (origins === '*') return { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': EXPOSED_HEADERS };
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
