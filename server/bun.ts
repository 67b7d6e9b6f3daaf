// Bun: Bun.serve takes the fetch handler as it is.
import type { Listen } from './listener.ts';

declare const Bun: {
  serve(options: { hostname: string; port: number; fetch: (request: Request) => Promise<Response> }): {
    port: number;
    stop(closeActiveConnections?: boolean): Promise<void>;
  };
};

export const listen: Listen = async (app, { host, port }) => {
  const server = Bun.serve({ hostname: host, port, fetch: (request) => app.fetch(request) });
  return { port: server.port, close: () => server.stop(false) };
};
