// Bun: Bun.serve takes the fetch handler as it is.
import type { Listen } from './listener.ts';

declare const Bun: {
  serve(options: {
    hostname: string;
    port: number;
    maxRequestBodySize?: number;
    idleTimeout?: number;
    fetch: (request: Request) => Promise<Response>;
  }): {
    port: number;
    stop(closeActiveConnections?: boolean): Promise<void>;
  };
};

export const listen: Listen = async (app, { host, port, headersTimeoutMs = 10_000, bodyTimeoutMs = 10_000 }) => {
  const server = Bun.serve({
    hostname: host,
    port,
    // The app caps bodies itself while they stream (413 with a JSON body). Bun's own cap (128 MiB
    // by default) would answer a larger declared Content-Length first with a bare 413 and hang
    // up, often before the client can read it.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    // Bun's only timeout (seconds, at most 255) closes a connection that sends nothing for that
    // long, slow headers included. It stays above the body deadline so that the app's JSON 408
    // comes first.
    idleTimeout: Math.min(255, Math.ceil(Math.max(headersTimeoutMs, bodyTimeoutMs) / 1000) + 2),
    fetch: (request) => app.fetch(request),
  });
  return {
    port: server.port,
    close: () => server.stop(false),
    closeAll: () => {
      app.abortBodies();
      void server.stop(true);
    },
  };
};
