// Which Host headers the server answers: `Host: x/sheets/open/Name/p#` -> 400 invalid_host (Deno
// and Bun build the request URL from it, so it must never reach routing), and on a server bound
// to 127.0.0.1 `Host: attacker.example:8080` -> 403 host_not_allowed: a page whose DNS name was
// rebound to this machine would otherwise read and write through the victim's browser.
import { apiError, type ApiError } from '../../lib/errors.ts';
import type { IncomingRequest } from './request.ts';

/** The names served (besides localhost and IP addresses), or `'*'` for any Host. */
export type AllowedHosts = '*' | readonly string[];

/** `host[:port]` as RFC 9110 has it: a name or IPv4 address, or an IPv6 address in brackets. */
const VALID_HOST = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;
const IPV4 = /^[0-9]{1,3}(?:\.[0-9]{1,3}){3}$/;

/**
 * The default when the config names none: a loopback bind (only this machine connects, but a
 * browser on it can be rebound) answers to localhost and IP addresses only; any other bind is
 * meant to be reached by names nobody listed, so it answers any Host.
 */
export function defaultAllowedHosts(bindHost: string): AllowedHosts {
  const loopback = bindHost === 'localhost' || bindHost === '::1' || bindHost === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bindHost);
  return loopback ? [] : '*';
}

/** A check of one request's Host header (null: none sent): null when it is served, else the refusal. */
export function hostCheck(allowed: AllowedHosts): (host: string | null) => ApiError | null {
  const names = allowed === '*' ? null : new Set(['localhost', ...allowed.map((name) => name.toLowerCase().replace(/\.$/, ''))]);
  // Nearly every request repeats the last Host served: one comparison instead of the checks.
  let lastServed: string | null = null;
  return (host) => {
    if (host === null || host === lastServed) return null;
    // The characters alone pass `x:99999`, `a.1` and `[1:2]`, which no URL can hold (Deno and Bun
    // would then fail to route: a 500); the URL parser has the last word.
    if (!VALID_HOST.test(host) || !URL.canParse(`http://${host}/`)) return apiError('invalid_host', `The Host header ${JSON.stringify(host.slice(0, 100))} is not a host name or address with an optional port.`);
    const colon = host.indexOf(':');
    // `example.com.` (the fully qualified form) is the same name as `example.com`.
    const name = (colon === -1 ? host : host.slice(0, colon)).toLowerCase().replace(/\.$/, '');
    // A rebinding page always comes by a name: an IP address in Host was typed by someone.
    if (names === null || host.charCodeAt(0) === 91 /* [ an IPv6 address */ || names.has(name) || IPV4.test(name)) {
      lastServed = host;
      return null;
    }
    return apiError('host_not_allowed', `This server does not answer to the host name "${name}"; add it to "allowedHosts" in the configuration to serve it.`);
  };
}

/** A check made by `hostCheck`. */
export type HostCheck = ReturnType<typeof hostCheck>;

/** The host stage, before routing (Deno and Bun built the URL from this Host): null when served, else the refusal. */
export function hostRefusal(check: HostCheck, request: IncomingRequest): ApiError | null {
  const host = request.headers.get('host');
  // HTTP/1.0 and in-process calls send none; the URL is then the listener's (Bun leaves it relative).
  if (host === null && request.url.charCodeAt(0) === 47) return apiError('invalid_host', 'The request has no Host header; HTTP/1.1 requires one.');
  return check(host);
}
