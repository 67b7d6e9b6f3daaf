// Deno: Deno.serve takes the fetch handler as it is.
import type { Listen } from './listener.ts';

declare const Deno: {
  serve(
    options: { hostname: string; port: number; onListen?: (address: { port: number }) => void },
    handler: (request: Request) => Promise<Response>,
  ): { finished: Promise<void>; shutdown(): Promise<void>; addr: { port: number } };
};

export const listen: Listen = async (app, { host, port }) => {
  const server = Deno.serve({ hostname: host, port, onListen: () => {} }, (request) => app.fetch(request));
  return { port: server.addr.port, close: () => server.shutdown() };
};
