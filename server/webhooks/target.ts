// Whether a webhook may be sent where it points: `https://hooks.example.com/x` resolving to
// 93.184.216.34 -> yes; `http://127.0.0.1:9000/`, `http://10.0.0.7/`, `http://[fe80::1]/`, or a
// name resolving to any such address -> no, unless the server allows private targets (tests, a
// receiver on the same network). Checked when a webhook is configured and again before each
// delivery, as DNS may answer differently then (rebinding).
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/** Every address a host name resolves to. */
export type Resolve = (host: string) => Promise<readonly string[]>;

export const resolveAll: Resolve = async (host) => (await lookup(host, { all: true, verbatim: true })).map((found) => found.address);

/** Why `url` may not be a webhook's target (a sentence), or null when it may. */
export async function whyRefused(url: string, allowPrivate: boolean, resolve: Resolve = resolveAll): Promise<string | null> {
  if (allowPrivate) return null;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  let addresses: readonly string[];
  try {
    addresses = isIP(host) === 0 ? await resolve(host) : [host];
  } catch (error) {
    return `its host ${host} does not resolve (${error instanceof Error ? error.message : String(error)})`;
  }
  if (addresses.length === 0) return `its host ${host} does not resolve`;
  for (const address of addresses) {
    const kind = privateKind(address);
    if (kind !== null) return `its host ${host} is ${address === host ? '' : `at ${address}, `}a ${kind} address (set "webhooks": {"allowPrivateTargets": true} to allow it)`;
  }
  return null;
}

/** `127.0.0.1` -> "loopback", `10.1.2.3` -> "private", `8.8.8.8` -> null. */
export function privateKind(address: string): string | null {
  if (isIP(address) === 4) return v4Kind(address.split('.').map(Number));
  if (isIP(address) !== 6) return 'unparsable';
  const groups = v6Groups(address.toLowerCase());
  if (groups === null) return 'unparsable';
  // ::ffff:10.0.0.1 and the like: the IPv4 address inside decides.
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) return v4Kind([groups[6] >> 8, groups[6] & 255, groups[7] >> 8, groups[7] & 255]);
  if (groups.every((group) => group === 0)) return 'unspecified';
  if (groups.slice(0, 7).every((group) => group === 0) && groups[7] === 1) return 'loopback';
  if ((groups[0] & 0xffc0) === 0xfe80) return 'link-local';
  if ((groups[0] & 0xfe00) === 0xfc00) return 'unique-local';
  if ((groups[0] & 0xffc0) === 0xfec0) return 'site-local';
  if ((groups[0] & 0xff00) === 0xff00) return 'multicast';
  return null;
}

function v4Kind([a, b]: readonly number[]): string | null {
  if (a === 127) return 'loopback';
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return 'private';
  if (a === 169 && b === 254) return 'link-local';
  if (a === 100 && b >= 64 && b <= 127) return 'shared (carrier-grade NAT)';
  if (a === 0) return 'unspecified';
  if (a >= 224) return 'multicast or reserved';
  return null;
}

/** `fe80::1` -> eight 16-bit groups; null when it is not an address. */
function v6Groups(address: string): number[] | null {
  let text = address.split('%')[0];
  // A trailing dotted IPv4 part (::ffff:10.0.0.1) as two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted !== null) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = text.slice(0, dotted.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const part = (side: string | undefined) => (side === undefined || side === '' ? [] : side.split(':').map((group) => parseInt(group, 16)));
  const front = part(head);
  const back = part(tail);
  const missing = 8 - front.length - back.length;
  if (tail === undefined ? missing !== 0 : missing < 0) return null;
  return [...front, ...new Array<number>(tail === undefined ? 0 : missing).fill(0), ...back];
}
