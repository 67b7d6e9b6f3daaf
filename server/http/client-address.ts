// The client's address, as the socket has it, for what counts per client (failed admin sign-ins:
// server/admin/sign-in-throttle.ts; rate limits on an open connection: server/rate-limit/).
// Node's listener puts it on the request it builds (`remoteAddress`); Deno and Bun hand the app
// their own Request, so their listeners note it here for admin and sheet requests.
// X-Forwarded-For is read only for rate limits, and only with the server's `trustProxy`: without
// a proxy that writes it, any client could (docs/admin-api.md, "Failed sign-ins").
import type { IncomingRequest } from './request.ts';

const noted = new WeakMap<object, string>();

/** Only these paths use the address: the other requests skip noting it. */
export function wantsClientAddress(url: string): boolean {
  return url.includes('/_admin') || url.includes('/sheets/');
}

/** Deno and Bun: the socket's address for `request`. */
export function noteClientAddress(request: object, address: string | undefined): void {
  if (address !== undefined && address !== '') noted.set(request, address);
}

/** The socket's address, or `unknown` for a request made in process without one (all such share one count). */
export function clientAddressOf(request: IncomingRequest): string {
  return request.remoteAddress ?? noted.get(request) ?? 'unknown';
}

/**
 * The address a rate limit counts: with `trustProxy`, the first of X-Forwarded-For (the client
 * as the proxy saw it; `X-Forwarded-For: 203.0.113.7, 10.0.0.2` -> `203.0.113.7`), else the socket's.
 */
export function forwardedAddressOf(request: IncomingRequest, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = request.headers.get('x-forwarded-for');
    const first = forwarded?.split(',')[0].trim();
    if (first !== undefined && first !== '') return first;
  }
  return clientAddressOf(request);
}
