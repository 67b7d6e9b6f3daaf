// A webhook's signature, as Stripe signs: the secret `whsec_x`, the body `{"id":"1718000000000-0",...}`
// sent at 1718000000 -> `Sheetrest-Signature: t=1718000000,v1=<hex HMAC-SHA256 of
// "1718000000.{"id":...}">`. A receiver recomputes v1 over the raw body with its secret, compares
// in constant time, and refuses a t too far from its clock (replays). node:crypto's HMAC, which
// Node, Deno and Bun all have: computed in the same turn, where Web Crypto's `subtle.sign` took
// a quarter of a busy Node server's time with ten webhooks (a promise and a thread-pool job per
// delivery; docs/benchmarks.md).
import { createHmac } from 'node:crypto';

/** `t=1718000000,v1=5257a8...`: the header's value for `body` sent at `unixSeconds`. */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${hmacHex(secret, `${unixSeconds}.${body}`)}`;
}

/** Hex HMAC-SHA256 of `text` under `secret`. */
export function hmacHex(secret: string, text: string): string {
  return createHmac('sha256', secret).update(text).digest('hex');
}
