// How a webhook's POST leaves the process: `send('http://127.0.0.1:9000/hook', headers, body,
// stop)` -> the receiver's status, or a thrown error (no answer within the timeout, refused...).
// Node: undici's `request` on a keep-alive Agent, a few connections per target (one per delivery
// in flight), without fetch's Request, Headers and Response objects. Deno and Bun: their fetch,
// which keeps connections alive itself.
// Redirects are never followed.
import type { Agent } from 'undici';
import { signatureHeader } from './sign.ts';

/** One POST to make: `{url, secret, eventId: '1718000000000-0', body: '{"id":...}'}` (the body shared by every webhook sending the event). */
export interface Delivery {
  readonly url: string;
  readonly secret: string;
  readonly eventId: string;
  readonly body: string;
}

/** The receiver's status (0 for none) and why it failed. */
export interface Answer {
  readonly status: number;
  readonly error?: string;
}

export interface Sender {
  /** The receiver's status; throws on no answer (a timeout's error is named `TimeoutError`). */
  send(url: string, headers: Record<string, string>, body: string, stop: AbortSignal): Promise<number>;
  close(): Promise<void>;
}

/** Node's pool: `connections` per target, idle ones closed after a while. */
export function openSender(timeoutMs: number, connections: number): Sender {
  return 'Deno' in globalThis || 'Bun' in globalThis ? fetchSender(timeoutMs) : undiciSender(timeoutMs, connections);
}

function fetchSender(timeoutMs: number): Sender {
  return {
    async send(url, headers, body, stop) {
      const response = await fetch(url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), stop]) });
      await response.body?.cancel().catch(() => undefined);
      return response.status;
    },
    close: () => Promise.resolve(),
  };
}

function undiciSender(timeoutMs: number, connections: number): Sender {
  let agent: Promise<Agent> | null = null;
  const pool = () => (agent ??= import('undici').then((undici) => new undici.Agent({ connections, keepAliveTimeout: 30_000, keepAliveMaxTimeout: 120_000, connectTimeout: timeoutMs })));
  return {
    async send(url, headers, body, stop) {
      const target = new URL(url);
      try {
        const answer = await (await pool()).request({
          origin: target.origin,
          path: target.pathname + target.search,
          method: 'POST',
          headers,
          body,
          signal: stop,
          // The timeouts as undici counts them, rather than a timer and a combined signal per delivery.
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
        await answer.body.dump().catch(() => undefined);
        return answer.statusCode;
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') throw Object.assign(new Error('timeout'), { name: 'TimeoutError' });
        throw error;
      }
    },
    close: async () => {
      await (await agent)?.close();
    },
  };
}

/**
 * Signs `delivery` now and POSTs it: the receiver's status, or 0 and why (`no answer within
 * 10000 ms`, a refused connection...), never throwing. The error is the sender's message only:
 * never the headers, so never the signature, and never the secret.
 */
export async function deliver(sender: Sender, timeoutMs: number, delivery: Delivery, stop: AbortSignal): Promise<Answer> {
  try {
    const signature = signatureHeader(delivery.secret, delivery.body, Math.floor(Date.now() / 1000));
    const headers = { 'content-type': 'application/json', 'user-agent': 'sheetrest-webhooks', 'sheetrest-event-id': delivery.eventId, 'sheetrest-signature': signature };
    return { status: await sender.send(delivery.url, headers, delivery.body, stop) };
  } catch (error) {
    const name = error instanceof Error ? error.name : '';
    return { status: 0, error: name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : error instanceof Error ? error.message : String(error) };
  }
}
