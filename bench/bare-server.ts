// The floor for the HTTP benchmark: the runtime's own server (node:http, Deno.serve, Bun.serve)
// answering every request with the same pre-serialized bytes (sheetrest's own all-rows answer,
// read from a file at start). `node bench/bare-server.ts rows.json 8081`, `deno run -A ...`, `bun ...`.
import { readFileSync } from 'node:fs';
import process from 'node:process';

declare const Deno: { serve(options: { hostname: string; port: number; onListen?: () => void }, handler: () => Response): unknown } | undefined;
declare const Bun: { serve(options: { hostname: string; port: number; fetch: () => Response }): unknown } | undefined;

const [file, port] = process.argv.slice(2);
const body = new Uint8Array(readFileSync(file));
const headers = { 'Content-Type': 'application/json; charset=utf-8' };

if (typeof Deno !== 'undefined') {
  // As text: Deno copies a byte body on every Response but not a string, and sheetrest's Deno
  // path sends kept answers as text too (server/respond.ts). The same UTF-8 goes out.
  const text = new TextDecoder().decode(body);
  Deno.serve({ hostname: '127.0.0.1', port: Number(port), onListen: () => {} }, () => new Response(text, { headers }));
} else if (typeof Bun !== 'undefined') {
  Bun.serve({ hostname: '127.0.0.1', port: Number(port), fetch: () => new Response(body, { headers }) });
} else {
  // As server/node.ts does: an ES import of node:http would load Node's bundled undici (13 MB).
  const { createServer } = process.getBuiltinModule('node:http');
  createServer((request, response) => {
    request.resume();
    response.writeHead(200, { ...headers, 'Content-Length': body.byteLength });
    response.end(body);
  }).listen(Number(port), '127.0.0.1');
}
// Exits, rather than dies, on SIGTERM: Node then writes its compile cache (bench/memory.ts).
process.on('SIGTERM', () => process.exit(0));
