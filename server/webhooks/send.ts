// How a webhook's POST leaves the process: `send('http://127.0.0.1:9000/hook', headers, body,
// stop)` -> the receiver's status, or a thrown error (no answer within the timeout, refused...).
// Node: undici's `request` on a keep-alive Agent, a few connections per target (one per delivery
// in flight), without fetch's Request, Headers and Response objects. Deno and Bun: their fetch,
// which keeps connections alive itself.
// Redirects are never followed.
import type { Agent } from 'undici';

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
