// Deno: Deno.serve takes the fetch handler as it is. It has no header or idle timeouts of its own
// and its shutdown waits for every request in flight, so at the deadline the app gives up the
// bodies still arriving; the handlers then answer and the connections close. Byte answers sent
// again go out as text (respond.ts, `textOnceSeen`): Deno copies every byte body.
import type { Listen } from './listener.ts';
import { textOnceSeen, toResponse } from './respond.ts';

declare const Deno: {
  serve(
    options: { hostname: string; port: number; onListen?: (address: { port: number }) => void },
    handler: (request: Request) => Promise<Response>,
  ): { finished: Promise<void>; shutdown(): Promise<void>; addr: { port: number } };
};

export const listen: Listen = async (app, { host, port }) => {
  const server = Deno.serve({ hostname: host, port, onListen: () => {} }, async (request) => toResponse(await app.answer(request), request.method, textOnceSeen));
  return { port: server.addr.port, close: () => server.shutdown(), closeAll: () => app.abortBodies() };
};
