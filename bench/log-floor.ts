// What one log line per request costs a runtime at the least: a bare server (node:http,
// Deno.serve, Bun.serve) answering a small fixed answer, and logging each request one of three
// ways: not at all; through the simplest buffered writer (the line built on the request's path,
// text appended to a string, written to fd 2 every 16 KiB or 25 ms); or through sheetrest's own
// logger (server/log.ts, with the request line sheetrest writes). bench/log-floor.sh pairs them.
//   node bench/log-floor.ts PORT none|minimal|sheetrest   (deno run -A ..., bun ...)
import { write } from 'node:fs';
import process from 'node:process';
import { createLogger } from '../server/log.ts';

declare const Deno: { serve(options: { hostname: string; port: number; onListen?: () => void }, handler: (request: Request) => Response): unknown } | undefined;
declare const Bun: { serve(options: { hostname: string; port: number; fetch: (request: Request) => Response }): unknown } | undefined;

const [port, mode = 'none'] = process.argv.slice(2);
const body = '[{"id":500,"Name":"Ann Annson 500","Age":40,"City":"Lisbon","Score":12.5,"Joined":"2020-01-01","Active":true}]';
const headers = { 'Content-Type': 'application/json; charset=utf-8' };

let lastMs = -1;
let lastIso = '';
const isoAt = (ms: number) => (ms === lastMs ? lastIso : ((lastMs = ms), (lastIso = new Date(ms).toISOString())));

/** The simplest buffered line writer: built now, appended, written a chunk at a time. */
let pending = '';
let writing = false;
const flush = () => {
  if (writing || pending === '') return;
  const chunk = pending;
  pending = '';
  writing = true;
  write(2, chunk, null, 'utf8', () => {
    writing = false;
    if (pending.length >= 16384) flush();
  });
};
if (mode === 'minimal') setInterval(flush, 25);
const minimal = (method: string, path: string, status: number, ms: number) => {
  pending += `{"time":"${isoAt(Date.now())}","level":"info","message":"request","method":"${method}","path":"${path}","status":${status},"ms":${ms},"connection":"bench"}\n`;
  if (pending.length >= 16384) flush();
};

const logger = createLogger('info');
const ours = (method: string, path: string, status: number, ms: number) =>
  logger.info('request', () => `{"method":"${method}","path":"${path}","status":${status},"ms":${ms},"connection":"bench"}`);

const log = mode === 'minimal' ? minimal : mode === 'sheetrest' ? ours : null;
const pathOf = (url: string) => url.slice(url.indexOf('/', url.indexOf('//') + 2));

function answered(method: string, url: string, started: number): void {
  if (log !== null) log(method, pathOf(url), 200, Math.round((performance.now() - started) * 100) / 100);
}

if (typeof Deno !== 'undefined') {
  Deno.serve({ hostname: '127.0.0.1', port: Number(port), onListen: () => {} }, (request) => {
    const started = performance.now();
    const response = new Response(body, { headers });
    answered(request.method, request.url, started);
    return response;
  });
} else if (typeof Bun !== 'undefined') {
  Bun.serve({
    hostname: '127.0.0.1',
    port: Number(port),
    fetch: (request) => {
      const started = performance.now();
      const response = new Response(body, { headers });
      answered(request.method, request.url, started);
      return response;
    },
  });
} else {
  const { createServer } = process.getBuiltinModule('node:http');
  createServer((request, response) => {
    const started = performance.now();
    request.resume();
    response.writeHead(200, { ...headers, 'Content-Length': String(Buffer.byteLength(body)) });
    response.end(body);
    answered(request.method ?? 'GET', `http://localhost${request.url ?? '/'}`, started);
  }).listen(Number(port), '127.0.0.1');
}
process.on('SIGTERM', () => process.exit(0));
