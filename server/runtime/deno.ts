// Deno: Deno.serve takes the fetch handler as it is. It has no header or idle timeouts of its own
// and its shutdown waits for every request in flight, so at the deadline the app gives up the
// bodies still arriving; the handlers then answer and the connections close. Byte answers sent
// again go out as text (respond.ts, `textOnceSeen`): Deno copies every byte body. A kept answer
// is returned in the same turn, not as a promise, and a kept 304 as the very Response sent
// before: both spare Deno's HTTP layer work (docs/benchmarks.md).
import { noteClientAddress, wantsClientAddress } from '../http/client-address.ts';
import type { Listen } from './listener.ts';
import { respond, textOnceSeen, type ResponseOptions } from '../http/respond.ts';

const RESPONSES: ResponseOptions = { bodyOf: textOnceSeen, reuseBodiless: true };

declare const Deno: {
  serve(
    options: { hostname: string; port: number; onListen?: (address: { port: number }) => void },
    handler: (request: Request, info: { remoteAddr: { hostname?: string } }) => Response | Promise<Response>,
  ): { finished: Promise<void>; shutdown(): Promise<void>; addr: { port: number } };
};

export const listen: Listen = async (app, { host, port }) => {
  const server = Deno.serve({ hostname: host, port, onListen: () => {} }, (request, info) => {
    // Only admin requests use it (failed sign-ins are counted per address): the rest skip the lookup.
    if (wantsClientAddress(request.url)) noteClientAddress(request, info.remoteAddr.hostname);
    return respond(app, request, RESPONSES);
  });
  return { port: server.addr.port, close: () => server.shutdown(), closeAll: () => app.abortBodies() };
};
