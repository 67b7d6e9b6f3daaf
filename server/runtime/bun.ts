// Bun: Bun.serve takes the fetch handler as it is, with its one timeout kept off the handler.
import { noteClientAddress, wantsClientAddress } from '../http/client-address.ts';
import type { Listen } from './listener.ts';
import { respond } from '../http/respond.ts';
import { isEventsRequest } from '../http/events.ts';

interface BunServer {
  port: number;
  stop(closeActiveConnections?: boolean): Promise<void>;
  /** The idle timeout of this request's connection, in seconds; 0 turns it off. */
  timeout(request: Request, seconds: number): void;
  /** The socket's peer for this request. */
  requestIP(request: Request): { address: string } | null;
}

declare const Bun: {
  serve(options: {
    hostname: string;
    port: number;
    maxRequestBodySize?: number;
    idleTimeout?: number;
    fetch: (request: Request, server: BunServer) => Response | Promise<Response>;
  }): BunServer;
};

export const listen: Listen = async (app, { host, port, headersTimeoutMs = 10_000 }) => {
  // Bun's only timeout (seconds, 1 to 255) closes a connection that has not sent a whole request
  // for that long: slow heads and idle keep-alive connections alike.
  const idleSeconds = Math.min(255, Math.max(1, Math.ceil(headersTimeoutMs / 1000)));
  const server = Bun.serve({
    hostname: host,
    port,
    // The app caps bodies itself while they stream (413 with a JSON body). Bun's own cap (128 MiB
    // by default) would answer a larger declared Content-Length first with a bare 413 and hang
    // up, often before the client can read it.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    idleTimeout: idleSeconds,
    // It would also drop a request whose handler takes longer (a body pausing, a slow upstream),
    // and a write could then land unanswered; so for anything but a read it is off while the app
    // works (a stalled body is the app's 408) and set again for the connection's idle time after
    // the answer. Reads skip the two calls, which cost Bun a quarter of its throughput on a small
    // answer: a read cut off changes nothing and can be sent again.
    fetch: (request, served) => {
      // Only admin requests use it (failed sign-ins are counted per address): the rest skip the lookup.
      if (wantsClientAddress(request.url)) noteClientAddress(request, served.requestIP(request)?.address);
      // An event stream stays open for as long as the client listens, quiet between events and comments.
      if (request.method === 'GET' && isEventsRequest(request.url)) served.timeout(request, 0);
      return request.method === 'GET' || request.method === 'HEAD' ? respond(app, request) : answerUntimed(request, served);
    },
  });
  async function answerUntimed(request: Request, served: BunServer): Promise<Response> {
    served.timeout(request, 0);
    const response = await app.fetch(request);
    served.timeout(request, idleSeconds);
    return response;
  }
  return {
    port: server.port,
    close: () => server.stop(false),
    closeAll: () => {
      app.abortBodies();
      void server.stop(true);
    },
  };
};
