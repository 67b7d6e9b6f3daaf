// CORS: browsers may call sheetrest from the configured origins (default `*`). Every response
// exposes the contract's headers; a preflight (OPTIONS with Access-Control-Request-Method)
// allows the path's methods and the headers a client sends. A write from a page on another
// site to a connection without keys (`POST /sheets/demo` with `Origin: https://elsewhere.example`)
// is refused unless `cors.writes` or a CORS list lets that origin write (`mayWriteWithoutKey`).
import { apiError, isApiError, type ApiError } from '../../lib/errors.ts';
import { allowedMethods, parseRequest } from '../../lib/parse-request.ts';
import type { IncomingRequest } from './request.ts';
import type { Answer } from './respond.ts';

export const EXPOSED_HEADERS = [
  'X-Sheet-Rows', 'X-Sheet-Columns', 'X-Total-Count', 'X-RateLimit-Limit', 'X-RateLimit-Remaining',
  'X-RateLimit-Plan', 'X-RateLimit-Reset', 'Retry-After', 'Allow', 'ETag', 'Idempotent-Replayed', 'Link',
  'RateLimit-Policy', 'RateLimit',
  'Sheetrest-Ignored-Columns', 'Sheetrest-Inserted', 'Sheetrest-Updated',
].join(', ');

const ALLOWED_REQUEST_HEADERS = 'X-Api-Key, Content-Type, X-HTTP-Method-Override, If-Match, If-None-Match, Idempotency-Key, Last-Event-ID';

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

/** The methods a page on any site may send without a preflight and that change nothing. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Why a page on another site may not write to a connection without keys, and the settings that let it. */
const OPEN_WRITE_REFUSED =
  'This connection has no API key, so writes from pages on other websites are refused; list the origin in cors.origins or cors.writes, or set cors.writes to "any", in the config.';

/** A preflight's answer: the path's methods. It carries no key and is not counted: the browser sends it on its own. */
export function preflightAnswer(origins: Origins, request: IncomingRequest, origin: string | null): Answer {
  const parsed = parseRequest({ method: 'OPTIONS', url: request.url });
  const methods = isApiError(parsed) ? ['GET', 'HEAD'] : allowedMethods(parsed.target);
  return { status: 204, headers: preflightHeaders(origins, origin, methods), body: '' };
}

/**
 * 403 origin_not_allowed for a write from a page whose origin a CORS list leaves out; null when it
 * may go on. A page elsewhere can POST a text/plain body without a preflight; the answer is hidden
 * from it, but the write would land. A CORS list says which sites may write at all; under `*`, a
 * connection without keys is guarded by `openWriteRefusal`, a keyed one by its keys. The server's
 * own pages (the dashboard's playground) are no other site, listed or not.
 */
export function originRefusal(origins: Origins, request: IncomingRequest, origin: string | null): ApiError | null {
  if (origin !== null && origins !== '*' && !SAFE_METHODS.has(request.method) && !origins.includes(origin) && !isOwnOrigin(origin, ownHost(request))) {
    return apiError('origin_not_allowed', `Requests from ${JSON.stringify(origin).slice(0, 200)} may only read: it is not in this server's CORS origins.`);
  }
  return null;
}

/**
 * 403 permission_denied for a write from another site's page to a connection without keys (`open`)
 * that `cors.writes` does not let it make: it needs no preflight to POST a text/plain body, and the
 * write would land though the answer is hidden from it. Null when it may go on.
 */
export function openWriteRefusal(origins: Origins, writes: CorsWrites, request: IncomingRequest, origin: string | null, open: boolean): ApiError | null {
  if (origin !== null && open && !SAFE_METHODS.has(request.method) && !mayWriteWithoutKey(origins, writes, origin, ownHost(request))) {
    return apiError('permission_denied', OPEN_WRITE_REFUSED);
  }
  return null;
}

/** The host (and port) a request was sent to: its Host header, else its URL's (an in-process call). */
function ownHost(request: IncomingRequest): string | null {
  const host = request.headers.get('host');
  if (host !== null) return host;
  return URL.canParse(request.url) ? new URL(request.url).host : null;
}
