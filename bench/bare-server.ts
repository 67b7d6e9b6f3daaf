// The floor for the HTTP benchmark: the runtime's own server (node:http, Deno.serve, Bun.serve)
// answering with pre-serialized bytes read from files at start: sheetrest's own all-rows answer
// at `/`, and its answer to an exact filter at `/one` when a third argument names it.
// `node bench/bare-server.ts rows.json 8081 [one.json]`, `deno run -A ...`, `bun ...`.
import { readFileSync } from 'node:fs';
import process from 'node:process';

declare const Deno: { serve(options: { hostname: string; port: number; onListen?: () => void }, handler: (request: Request) => Response): unknown } | undefined;
declare const Bun: { serve(options: { hostname: string; port: number; fetch: (request: Request) => Response }): unknown } | undefined;

const [file, port, oneFile] = process.argv.slice(2);
const all = new Uint8Array(readFileSync(file));
const one = oneFile === undefined ? all : new Uint8Array(readFileSync(oneFile));
const pick = (url: string) => (url.endsWith('/one') ? one : all);
const headers = { 'Content-Type': 'application/json; charset=utf-8' };

if (typeof Deno !== 'undefined') {
  // As text: Deno copies a byte body on every Response but not a string, and sheetrest's Deno
  // path sends kept answers as text too (server/respond.ts). The same UTF-8 goes out.
  const [allText, oneText] = [new TextDecoder().decode(all), new TextDecoder().decode(one)];
  Deno.serve({ hostname: '127.0.0.1', port: Number(port), onListen: () => {} }, (request) => new Response(request.url.endsWith('/one') ? oneText : allText, { headers }));
} else if (typeof Bun !== 'undefined') {
  Bun.serve({ hostname: '127.0.0.1', port: Number(port), fetch: (request) => new Response(pick(request.url), { headers }) });
} else {
  // As server/node.ts does: an ES import of node:http would load Node's bundled undici (13 MB).
  const { createServer } = process.getBuiltinModule('node:http');
  createServer((request, response) => {
    request.resume();
    const body = pick(request.url ?? '/');
    response.writeHead(200, { ...headers, 'Content-Length': body.byteLength });
    response.end(body);
  }).listen(Number(port), '127.0.0.1');
}
// Exits, rather than dies, on SIGTERM: Node then writes its compile cache (bench/memory.ts).
process.on('SIGTERM', () => process.exit(0));
