// The floor for the HTTP benchmark: the runtime's own server (node:http, Deno.serve, Bun.serve)
// answering with pre-serialized bytes read from files at start: sheetrest's own all-rows answer
// at `/`, and its answer to an exact filter at `/one` when a third argument names it.
// With `--headers` it sends the contract's headers (fixed values) and nothing else more.
// With `--not-modified HEADERS.json` it answers every request `304` with exactly the headers in
// that file (sheetrest's own 304, recorded by bench/pairs.ts) and no body: the same bytes.
// With `--routed` it first does what sheetrest's stack does for any request before the engine
// runs: routes it with itty-router (which the project uses, and which parses the URL), parses the
// URL again and decodes the path's segments (as the engine's parser does), and sends the
// contract's headers (CORS, X-Sheet-*, X-Total-Count, X-RateLimit-Plan, fixed values). So the
// bench can tell what the stack costs from what sheetrest's own code does.
// `node bench/bare-server.ts rows.json 8081 [one.json] [--routed | --headers | --not-modified h.json]`, `deno run -A ...`, `bun ...`.
import { readFileSync } from 'node:fs';
import process from 'node:process';
import { Router } from 'itty-router';

declare const Deno: { serve(options: { hostname: string; port: number; onListen?: () => void }, handler: (request: Request) => Response | Promise<Response>): unknown } | undefined;
declare const Bun: { serve(options: { hostname: string; port: number; fetch: (request: Request) => Response | Promise<Response> }): unknown } | undefined;

const [file, port, oneFile, mode, headersFile] = process.argv.slice(2);
const notModified: Record<string, string> | null = mode === '--not-modified' ? JSON.parse(readFileSync(headersFile, 'utf8')) : null;
const all = new Uint8Array(readFileSync(file));
const one = oneFile === undefined ? all : new Uint8Array(readFileSync(oneFile));
const pick = (url: string) => (url.endsWith('/one') ? one : all);
const plain: Record<string, string> = { 'Content-Type': 'application/json; charset=utf-8' };

const router = Router();
router.all('*', (request: { url: string }) => {
  const segments = new URL(request.url).pathname.split('/').map(decodeURIComponent);
  return {
    ...plain,
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Expose-Headers': 'X-Sheet-Rows, X-Sheet-Columns, X-Total-Count, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Plan, X-RateLimit-Reset, Retry-After, Allow',
    'X-Sheet-Rows': '1000',
    'X-Sheet-Columns': '6',
    'X-Total-Count': String(segments.length > 2 ? 1 : 1000),
    'X-RateLimit-Plan': 'unlimited',
  };
});

/** The contract's headers as one fixed object, for `--headers`: their cost without the routing. */
const contract: Record<string, string> = {
  ...plain,
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'X-Sheet-Rows, X-Sheet-Columns, X-Total-Count, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Plan, X-RateLimit-Reset, Retry-After, Allow',
  'X-Sheet-Rows': '1000',
  'X-Sheet-Columns': '6',
  'X-Total-Count': '1',
  'X-RateLimit-Plan': 'unlimited',
};

/** The answer's headers for this request: one header bare, the contract's after routing (or, `--headers`, without it). */
const headersOf: (url: string, method: string) => Record<string, string> | Promise<Record<string, string>> =
  mode === '--routed' ? (url, method) => router.fetch({ url, method }) as Promise<Record<string, string>> : mode === '--headers' ? () => contract : () => plain;

if (notModified !== null) {
  if (typeof Deno !== 'undefined') Deno.serve({ hostname: '127.0.0.1', port: Number(port), onListen: () => {} }, () => new Response(null, { status: 304, headers: notModified }));
  else if (typeof Bun !== 'undefined') Bun.serve({ hostname: '127.0.0.1', port: Number(port), fetch: () => new Response(null, { status: 304, headers: notModified }) });
  else {
    const { createServer } = process.getBuiltinModule('node:http');
    createServer((request, response) => {
      request.resume();
      response.writeHead(304, notModified);
      response.end();
    }).listen(Number(port), '127.0.0.1');
  }
} else if (typeof Deno !== 'undefined') {
  // As text: Deno copies a byte body on every Response but not a string, and sheetrest's Deno
  // path sends kept answers as text too (server/http/respond.ts). The same UTF-8 goes out.
  const [allText, oneText] = [new TextDecoder().decode(all), new TextDecoder().decode(one)];
  const text = (url: string) => (url.endsWith('/one') ? oneText : allText);
  Deno.serve({ hostname: '127.0.0.1', port: Number(port), onListen: () => {} }, (request) => {
    const headers = headersOf(request.url, request.method);
    return headers instanceof Promise ? headers.then((resolved) => new Response(text(request.url), { headers: resolved })) : new Response(text(request.url), { headers });
  });
} else if (typeof Bun !== 'undefined') {
  Bun.serve({
    hostname: '127.0.0.1',
    port: Number(port),
    fetch: (request) => {
      const headers = headersOf(request.url, request.method);
      return headers instanceof Promise ? headers.then((resolved) => new Response(pick(request.url), { headers: resolved })) : new Response(pick(request.url), { headers });
    },
  });
} else {
  // As server/runtime/node.ts does: an ES import of node:http would load Node's bundled undici (13 MB).
  const { createServer } = process.getBuiltinModule('node:http');
  createServer((request, response) => {
    request.resume();
    const url = `http://localhost${request.url ?? '/'}`;
    const body = pick(url);
    const send = (headers: Record<string, string>) => {
      response.writeHead(200, { ...headers, 'Content-Length': body.byteLength });
      response.end(body);
    };
    const headers = headersOf(url, request.method ?? 'GET');
    if (headers instanceof Promise) void headers.then(send);
    else send(headers);
  }).listen(Number(port), '127.0.0.1');
}
// Exits, rather than dies, on SIGTERM: Node then writes its compile cache (bench/memory.ts).
process.on('SIGTERM', () => process.exit(0));
