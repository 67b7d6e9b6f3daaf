// Node: node:http wired to the handler. The answer's parts are written straight to the socket,
// so a whole-tab read sends the bytes the engine keeps, with no Response in between. Requests
// node:http refuses itself (headers over 16 KiB, headers too slow, not HTTP) get the same JSON
// error bodies as the app's.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { Readable } from 'node:stream';
import { apiError, type ApiError } from '../../lib/errors.ts';
import type { App, IncomingRequest } from '../http/request.ts';
import type { Answer } from '../http/respond.ts';
import type { Listen } from './listener.ts';

// Not `import { createServer } from 'node:http'`: an ES import of node:http reads every export,
// and its lazy WebSocket, CloseEvent and MessageEvent load Node's bundled undici, 13 MB of
// resident memory this server never uses (docs/benchmarks.md, "Memory").
const { createServer } = process.getBuiltinModule('node:http');

/** node:http's default cap on the request line and headers together. */
const MAX_HEADER_BYTES = 16 * 1024;

/**
 * The URL is built on a fixed origin: the Host header is only checked (by the app), never
 * parsed into the URL, where `Host: x/sheets/other#` would rewrite the path.
 */
const ORIGIN = 'http://localhost';

export const listen: Listen = (app, { host, port, headersTimeoutMs = 10_000, bodyTimeoutMs = 10_000 }) =>
  new Promise((resolve, reject) => {
    let closing = false;
    const server = createServer(
      {
        maxHeaderSize: MAX_HEADER_BYTES,
        headersTimeout: headersTimeoutMs,
        // The whole request, a backstop above the app's own JSON 408 for a body that stalls.
        requestTimeout: headersTimeoutMs + bodyTimeoutMs + 5000,
        // How often node:http looks at both; its default of 30 s would overrun them by that much.
        connectionsCheckingInterval: Math.min(1000, headersTimeoutMs),
        keepAliveTimeout: 5000,
        // A request without Host reaches the app, which answers a JSON 400 (not a bare one).
        requireHostHeader: false,
      },
      (incoming, outgoing) => {
        try {
          serve(app, incoming, outgoing, () => closing)?.catch(() => failed(outgoing));
        } catch {
          failed(outgoing);
        }
      },
    );
    server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => answerClientError(error, socket, headersTimeoutMs));
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
        closeAll: () => server.closeAllConnections(),
      });
    });
  });

/** Sends the app's answer: in the same turn when the app answered at once (a kept answer), else once it has. */
function serve(app: App, incoming: IncomingMessage, outgoing: ServerResponse, closing: () => boolean): Promise<void> | undefined {
  const method = incoming.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
  // node:http already parsed the headers (names lower-cased); a Web Request would copy them all.
  const request: IncomingRequest = {
    url: urlOf(incoming.url ?? '/', incoming.headers.host),
    method,
    headers: { get: (name) => headerValue(incoming.headers[name.toLowerCase()]) },
    body: hasBody ? (Readable.toWeb(incoming) as ReadableStream<Uint8Array>) : null,
    // The socket's peer (node:http caches it per connection): what failed admin sign-ins count by.
    remoteAddress: incoming.socket.remoteAddress,
  };
  if (!hasBody) incoming.resume();
  const answered = app.answer(request);
  if (answered instanceof Promise) return answered.then((answer) => send(answer, method, outgoing, closing() || (hasBody && !incoming.complete)));
  send(answered, method, outgoing, closing() || (hasBody && !incoming.complete));
  return undefined;
}

/** What a listener answers when the app itself failed (it answers every request's own errors). */
function failed(outgoing: ServerResponse): void {
  if (!outgoing.headersSent) outgoing.writeHead(500, { 'Content-Type': 'application/json; charset=utf-8' });
  outgoing.end('{"error":"internal_error","message":"The server failed to answer this request."}');
}

/**
 * The answer's head and body. `last`: the last answer on its connection: once the server is
 * closing, so close() need not wait out keep-alive; and when the body was left unread (413 at
 * the cap), since the rest of it would otherwise sit paused on the connection until the
 * keep-alive timeout.
 */
function send(answer: Answer, method: string, outgoing: ServerResponse, last: boolean): void {
  if (answer.stream !== undefined) return sendStream(answer, answer.stream, outgoing, last);
  const { status, body } = answer;
  const empty = status === 204 || status === 304;
  const headers = headersOf(answer, empty);
  outgoing.writeHead(status, last ? { ...headers, Connection: 'close' } : headers);
  // Bytes go out as a Buffer view of the same memory, with no copy.
  const payload = typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  outgoing.end(empty || method === 'HEAD' ? undefined : payload);
}

/**
 * A streamed answer (server-sent events): chunked, each chunk written as the stream gives it
 * (node:http sends a write at once); the client going away cancels the stream, which frees
 * what it held.
 */
function sendStream(answer: Answer, stream: ReadableStream<Uint8Array>, outgoing: ServerResponse, last: boolean): void {
  outgoing.writeHead(answer.status, last ? { ...answer.headers, Connection: 'close' } : answer.headers);
  outgoing.flushHeaders();
  const reader = stream.getReader();
  outgoing.once('close', () => void reader.cancel().catch(() => undefined));
  const pump = (): void => {
    reader.read().then(
      ({ done, value }) => {
        if (done) return void outgoing.end();
        if (outgoing.destroyed) return;
        // A client that reads slowly holds the rest in the stream's queue, which events.ts bounds.
        if (outgoing.write(value)) pump();
        else outgoing.once('drain', pump);
      },
      () => outgoing.destroy(),
    );
  };
  pump();
}

/**
 * The header fields an answer goes out with: its own, and its body's length. A HEAD answer
 * carries GET's body, measured here and not sent; 204 and 304 carry no Content-Length (a 304's
 * would describe the 200 it stands for). Made once per answer object: a kept answer is sent
 * again as the same object (server/http/caching.ts, `finishedAnswer`).
 */
function headersOf(answer: Answer, empty: boolean): Record<string, string> {
  if (empty) return answer.headers;
  let headers = sentHeaders.get(answer);
  if (headers === undefined) {
    const length = typeof answer.body === 'string' ? Buffer.byteLength(answer.body) : answer.body.byteLength;
    headers = { ...answer.headers, 'Content-Length': String(length) };
    sentHeaders.set(answer, headers);
  }
  return headers;
}

const sentHeaders = new WeakMap<Answer, Record<string, string>>();

function urlOf(target: string, host: string | undefined): string {
  // No Host: left relative, which the app refuses with its JSON 400 (HTTP/1.1 requires one).
  if (host === undefined && target.charCodeAt(0) === 47) return target;
  if (target.charCodeAt(0) === 47) return ORIGIN + target;
  // The absolute form (`GET http://h/p HTTP/1.1`, meant for proxies) is served by its path, as
  // Deno and Bun do; anything else (`OPTIONS *`) is handed on as it is, for the app to refuse.
  const absolute = URL.canParse(target) ? new URL(target) : null;
  if (absolute !== null && (absolute.protocol === 'http:' || absolute.protocol === 'https:')) return ORIGIN + absolute.pathname + absolute.search;
  return target;
}

/** What node:http refuses before the app sees a request, answered as the app would, then the connection closed. */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex, headersTimeoutMs: number): void {
  // Nothing to answer: the client left, or an answer is already on its way (as node:http's own handler checks).
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent: boolean } })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent === true) {
    socket.destroy();
    return;
  }
  const refusal = clientErrorAnswer(error.code, headersTimeoutMs);
  const body = JSON.stringify(refusal);
  const head = `HTTP/1.1 ${refusal.status} ${REASONS[refusal.status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
  socket.end(head + body, () => socket.destroy());
}

const REASONS: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 413: 'Content Too Large', 431: 'Request Header Fields Too Large' };

function clientErrorAnswer(code: string | undefined, headersTimeoutMs: number): ApiError {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return apiError('headers_too_large', `The request line and headers are longer than ${MAX_HEADER_BYTES} bytes; shorten the path or the query string.`);
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'HPE_HEADERS_TIMEOUT') {
    return apiError('request_timeout', `The request did not arrive within its deadline (headers within ${headersTimeoutMs} ms).`);
  }
  if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return apiError('payload_too_large', 'The chunk extensions of the body are too long.');
  return apiError('invalid_parameter', `The request is not valid HTTP/1.1 (${code ?? 'unreadable'}).`);
}

function headerValue(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

