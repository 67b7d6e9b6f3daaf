// Bun: Bun.serve takes the fetch handler as it is.
import type { Listen } from './listener.ts';

declare const Bun: {
  serve(options: { hostname: string; port: number; maxRequestBodySize?: number; fetch: (request: Request) => Promise<Response> }): {
    port: number;
    stop(closeActiveConnections?: boolean): Promise<void>;
  };
};

export const listen: Listen = async (app, { host, port }) => {
  // The app caps bodies itself while they stream (413 with a JSON body). Bun's own cap (128 MiB by
  // default) would answer a larger declared Content-Length first with a bare 413 and hang up,
  // often before the client can read it.
  const server = Bun.serve({ hostname: host, port, maxRequestBodySize: Number.MAX_SAFE_INTEGER, fetch: (request) => app.fetch(request) });
  return { port: server.port, close: () => server.stop(false) };
};
