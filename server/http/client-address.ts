// The client's address, as the socket has it, for what counts per client (failed admin sign-ins:
// server/admin/sign-in-throttle.ts). Node's listener puts it on the request it builds
// (`remoteAddress`); Deno and Bun hand the app their own Request, so their listeners note it here
// for admin requests. X-Forwarded-For is never read: without a setting that says a proxy is
// trusted, any client could write it (docs/admin-api.md, "Failed sign-ins").
import type { IncomingRequest } from './request.ts';

const noted = new WeakMap<object, string>();

/** Only these paths use the address: the other requests skip noting it. */
export function wantsClientAddress(url: string): boolean {
  return url.includes('/_admin');
}

/** Deno and Bun: the socket's address for `request`. */
export function noteClientAddress(request: object, address: string | undefined): void {
  if (address !== undefined && address !== '') noted.set(request, address);
}

/** The socket's address, or `unknown` for a request made in process without one (all such share one count). */
export function clientAddressOf(request: IncomingRequest): string {
  return request.remoteAddress ?? noted.get(request) ?? 'unknown';
}
