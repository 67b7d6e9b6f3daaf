// The request line, at the info level: `GET /sheets/demo/Name/Ann?_limit=5` answered 200 in
// 0.42 ms -> {"method":"GET","path":"/sheets/demo/Name/…","status":200,"ms":0.42,"connection":"demo"}.
// Never a query string or a filter value (data, as a search is): the path is masked. The line is
// built only when it is written, later and many lines at a time: a request pays for the four
// values it holds.
import type { Logger } from '../log.ts';
import { safeDecode } from './find-connection.ts';
import type { IncomingRequest } from './request.ts';
import type { Answer } from './respond.ts';

/** Logs the line of a request answered now, and hands the answer on. */
export function logRequest(log: Logger, request: IncomingRequest, answered: Answer, started: number): Answer {
  const ms = Math.round((performance.now() - started) * 100) / 100;
  log.info('request', requestEntry(request.method, request.url, answered.status, ms));
  return answered;
}

/**
 * The request line, to be built when it is written. Made out here so that the function holds
 * these four values only: one made inside the handler could keep the handler's whole scope (the
 * request, its headers) alive until the line is written.
 */
function requestEntry(method: string, url: string, status: number, ms: number): () => string {
  return () => requestFields(method, url, status, ms);
}

/** A request line's fields, as JSON text; the path is masked (no query string, no filter value). */
export function requestFields(method: string, url: string, status: number, ms: number): string {
  // A busy server logs the same few requests over and over: the text around the duration is
  // made once per method, target and status.
  let line = requestLines.get(url);
  if (line === undefined || line.method !== method || line.status !== status) {
    line = requestLine(method, url, status);
    if (requestLines.size >= REQUEST_LINES_KEPT) requestLines.clear();
    requestLines.set(url, line);
  }
  return line.head + ms + line.tail;
}

/** `{"method":…,"path":…,"status":…,"ms":` and what follows the duration. */
function requestLine(method: string, url: string, status: number): RequestLine {
  const segments = pathOf(url).split('/');
  const onSheet = segments[1] === 'sheets' && segments.length > 2;
  // The JSON of {method, path, status, ms, connection}, written out: JSON.stringify of an object
  // cost Bun about a tenth of a small answer's throughput at the default level.
  const path = JSON.stringify(onSheet ? withoutFilterValue(segments) : segments.join('/'));
  const connection = onSheet ? `,"connection":${JSON.stringify(safeDecode(segments[2]))}` : '';
  return { method, status, head: `{"method":${JSON.stringify(method)},"path":${path},"status":${status},"ms":`, tail: `${connection}}` };
}

interface RequestLine {
  readonly method: string;
  readonly status: number;
  readonly head: string;
  readonly tail: string;
}

/** Request lines' text by target; started over when full. */
const requestLines = new Map<string, RequestLine>();
const REQUEST_LINES_KEPT = 1024;

/** The path of a URL, without its query string (which may hold search values: never logged). */
function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start === -1) return '/';
  const path = url.slice(start);
  const end = path.search(/[?#]/);
  return end === -1 ? path : path.slice(0, end);
}

/**
 * `/sheets/demo/Name/Ann` -> `/sheets/demo/Name/…`: a filter value in the path is data, as a
 * query string is, so the log keeps only its column (and the tab). Rows by index stay as they are.
 */
function withoutFilterValue(segments: string[]): string {
  // ['', 'sheets', id, ('tabs', Tab)?, Column, Value...]
  const rest = segments[3] === 'tabs' && segments.length > 4 ? 5 : 3;
  if (segments.length - rest < 2) return segments.join('/');
  return `${segments.slice(0, rest + 1).join('/')}/…`;
}
