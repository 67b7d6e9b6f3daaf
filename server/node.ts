// Node: node:http wired to the fetch handler. Bodies the app built as text are written
// directly; anything else is streamed from the Response.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { App } from './app.ts';
import type { Listen } from './listener.ts';
import { responseText } from './respond.ts';

export const listen: Listen = (app, { host, port }) =>
  new Promise((resolve, reject) => {
    const server = createServer((incoming, outgoing) => {
      serve(app, incoming, outgoing).catch(() => {
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
            server.close(() => done());
            server.closeIdleConnections();
          }),
      });
    });
  });

async function serve(app: App, incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> {
  const headers = new Headers();
  const raw = incoming.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i], raw[i + 1]);
  const method = incoming.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
  // `duplex: 'half'` is what Node's Request requires for a streamed body; the DOM types lack it.
  const init: RequestInit & { duplex: 'half' } = {
    method,
    headers,
    body: hasBody ? (Readable.toWeb(incoming) as ReadableStream<Uint8Array>) : undefined,
    duplex: 'half',
  };
  const request = new Request(`http://${headers.get('host') ?? 'localhost'}${incoming.url ?? '/'}`, init);
  const response = await app.fetch(request);
  const responseHeaders: Record<string, string> = {};
  response.headers.forEach((value, name) => (responseHeaders[name] = value));
  const text = responseText(response);
  if (text !== undefined) {
    responseHeaders['content-length'] = String(Buffer.byteLength(text));
    outgoing.writeHead(response.status, responseHeaders);
    outgoing.end(method === 'HEAD' || response.status === 204 ? undefined : text);
    return;
  }
  outgoing.writeHead(response.status, responseHeaders);
  if (response.body === null || method === 'HEAD') {
    outgoing.end();
    return;
  }
  for await (const chunk of response.body) outgoing.write(chunk);
  outgoing.end();
}
