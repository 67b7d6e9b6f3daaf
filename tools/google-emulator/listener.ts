// The emulator on a port, with node:http (which Node, Deno and Bun all provide): each request is
// read whole, delayed by the injected latency, maybe failed or left hanging, else routed;
// `GET http://127.0.0.1:PORT/v4/spreadsheets/{id}/values/Sheet1` -> the router's answer.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Faults } from './faults.ts';
import type { ApiResponse, State } from './exchange.ts';
import { errorResponse, route } from './router.ts';

export interface LoggedRequest {
  readonly method: string;
  /** The path, percent-decoded: `/v4/spreadsheets/abc/values/Sheet1!A1:append`. */
  readonly path: string;
  /** The query string without `?`. */
  readonly query: string;
  readonly status: number;
  /** When the request arrived (ms since the epoch). */
  readonly at: number;
  /** The answer's body size in bytes (what the client downloaded, before any compression). */
  readonly bytes: number;
}

export interface Running {
  readonly port: number;
  close(): Promise<void>;
}

export function listen(state: State, faults: Faults, log: LoggedRequest[], host: string, port: number): Promise<Running> {
  const sockets = new Set<Socket>();
  const hung = new Set<ServerResponse>();
  const server = createServer((incoming, outgoing) => {
    serve(state, faults, log, incoming, outgoing, hung).catch((error: unknown) => send(outgoing, errorResponse(error)));
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      resolve({
        port: typeof address === 'object' && address !== null ? address.port : port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            for (const response of hung) response.destroy();
            for (const socket of sockets) socket.destroy();
            server.closeAllConnections?.();
          }),
      });
    });
  });
}

async function serve(state: State, faults: Faults, log: LoggedRequest[], incoming: IncomingMessage, outgoing: ServerResponse, hung: Set<ServerResponse>): Promise<void> {
  const at = Date.now();
  const url = new URL(incoming.url ?? '/', 'http://emulator');
  const body = await readText(incoming);
  const path = safeDecode(url.pathname);
  if (faults.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, faults.latencyMs));
  const injected = faults.take(path);
  if (injected?.kind === 'hang') {
    if (injected.afterApply) route(state, { method: incoming.method ?? 'GET', path: url.pathname, query: url.searchParams, authorization: headerValue(incoming.headers.authorization), body });
    hung.add(outgoing);
    return;
  }
  const before = injected !== undefined && !injected.afterApply;
  if (before && injected.kind === 'reset') {
    log.push({ method: incoming.method ?? 'GET', path, query: url.search.slice(1), status: 0, at, bytes: 0 });
    incoming.socket.destroy();
    return;
  }
  // Applied (unless failed before), whatever the client is told after.
  const routed = before ? null : route(state, { method: incoming.method ?? 'GET', path: url.pathname, query: url.searchParams, authorization: headerValue(incoming.headers.authorization), body });
  const response = injected?.kind === 'fail' ? errorResponse(injected.error) : injected?.kind === 'reset' ? null : routed;
  log.push({ method: incoming.method ?? 'GET', path, query: url.search.slice(1), status: response?.status ?? 0, at, bytes: response === null ? 0 : Buffer.byteLength(response.body) });
  // A cut connection is logged with status 0.
  if (response === null) {
    incoming.socket.destroy();
    return;
  }
  send(outgoing, response);
}

function send(outgoing: ServerResponse, response: ApiResponse): void {
  if (outgoing.headersSent) return;
  outgoing.writeHead(response.status, { ...response.headers, 'content-length': String(Buffer.byteLength(response.body)) });
  outgoing.end(response.body);
}

async function readText(incoming: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function headerValue(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
