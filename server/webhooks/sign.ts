// A webhook's signature, as Stripe signs: the secret `whsec_x`, the body `{"id":"1718000000000-0",...}`
// sent at 1718000000 -> `Sheetrest-Signature: t=1718000000,v1=<hex HMAC-SHA256 of
// "1718000000.{"id":...}">`. A receiver recomputes v1 over the raw body with its secret, compares
// in constant time, and refuses a t too far from its clock (replays). Web Crypto, so the same code
// runs on Node, Deno and Bun.

const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

/** `t=1718000000,v1=5257a8...`: the header's value for `body` sent at `unixSeconds`. */
export async function signatureHeader(secret: string, body: string, unixSeconds: number): Promise<string> {
  return `t=${unixSeconds},v1=${await hmacHex(secret, `${unixSeconds}.${body}`)}`;
}

/** Hex HMAC-SHA256 of `text` under `secret`. */
export async function hmacHex(secret: string, text: string): Promise<string> {
  let key = keys.get(secret);
  if (key === undefined) {
    key = crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    // A handful of webhooks per server: their keys are kept, not re-imported per delivery.
    if (keys.size < 1_000) keys.set(secret, key);
  }
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', await key, encoder.encode(text)));
  return Array.from(mac, (byte) => byte.toString(16).padStart(2, '0')).join('');
}
