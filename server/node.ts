// Node: node:http wired to the handler. The answer's parts are written straight to the socket,
// so a whole-tab read sends the bytes the engine keeps, with no Response in between.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { App, IncomingRequest } from './app.ts';
import type { Listen } from './listener.ts';

// Not `import { createServer } from 'node:http'`: an ES import of node:http reads every export,
// and its lazy WebSocket, CloseEvent and MessageEvent load Node's bundled undici, 13 MB of
// resident memory this server never uses (docs/benchmarks.md, "Memory").
const { createServer } = process.getBuiltinModule('node:http');

export const listen: Listen = (app, { host, port }) =>
  new Promise((resolve, reject) => {
    let closing = false;
    const server = createServer((incoming, outgoing) => {
      serve(app, incoming, outgoing, () => closing).catch(() => {
        if (!outgoing.headersSent) outgoing.writeHead(500, { 'Content-Type': 'application/json; charset=utf-8' });
        outgoing.end('{"error":"internal_error","message":"The server failed to answer this request."}');
      });
    });
    server.keepAliveTimeout = 5000;
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      resolve({
        port: typeof address === 'object' && address !== null ? address.port : port,
        close: () =>
          new Promise<void>((done) => {
            closing = true;
            server.close(() => done());
            server.closeIdleConnections();
          }),
      });
    });
  });

async function serve(app: App, incoming: IncomingMessage, outgoing: ServerResponse, closing: () => boolean): Promise<void> {
  const method = incoming.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
  // node:http already parsed the headers (names lower-cased); a Web Request would copy them all.
  const request: IncomingRequest = {
    url: `http://${incoming.headers.host ?? 'localhost'}${incoming.url ?? '/'}`,
    method,
    headers: { get: (name) => headerValue(incoming.headers[name.toLowerCase()]) },
    body: hasBody ? (Readable.toWeb(incoming) as ReadableStream<Uint8Array>) : null,
  };
  if (!hasBody) incoming.resume();
  const { status, headers: answerHeaders, body } = await app.answer(request);
  const empty = status === 204 || status === 304;
  const length = empty ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
  // The last answer on its connection: once the server is closing, so close() need not wait out
  // keep-alive; and when the body was left unread (413 at the cap), since the rest of it would
  // otherwise sit paused on the connection until the keep-alive timeout.
  const last = closing() || (hasBody && !incoming.complete);
  // A HEAD answer carries GET's body, measured here and not sent.
  outgoing.writeHead(status, { ...answerHeaders, 'Content-Length': String(length), ...(last ? { Connection: 'close' } : {}) });
  // Bytes go out as a Buffer view of the same memory, with no copy.
  const payload = typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  outgoing.end(empty || method === 'HEAD' ? undefined : payload);
}

function headerValue(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

