// The caching headers stage: what a sheet's answer says to HTTP caches. A read (200 or 304) gets
// the connection's Cache-Control (`no-cache` by default; `private` when it has keys) and the
// source's Last-Modified; errors and writes get `no-store`. Also the ETag handling that is not
// the engine's: a kept answer met with If-None-Match naming its tag becomes its 304. Then the
// answer goes out with its own headers, the caching's, the quota's and CORS' (`finishedAnswer`).
import type { Operation } from '../../lib/parse-request.ts';
import { noneMatchHits } from '../../lib/version.ts';
import { isOpen } from '../auth.ts';
import type { Connection } from '../connections.ts';
import type { Answer } from './respond.ts';

/** Errors and write answers: never stored by a cache (a 404 would otherwise be, by heuristics). */
export const NO_STORE_HEADERS: Readonly<Record<string, string>> = Object.freeze({ 'Cache-Control': 'no-store' });

/** The caching headers of a sheet's answer: a read's (200 or 304 to GET or HEAD), else no-store. */
export function cachingHeaders(connection: Connection, operation: Operation, method: string, status: number): Readonly<Record<string, string>> {
  const read = operation === 'read' && (status === 200 || status === 304) && method !== 'OPTIONS';
  return read ? readCaching(connection) : NO_STORE_HEADERS;
}

/** Cache-Control and Last-Modified of a read: the connection's settings, the source's time; made once per time. */
function readCaching(connection: Connection): Record<string, string> {
  const modified = connection.source.lastModified?.();
  const made = readCachings.get(connection);
  if (made === undefined || made.modified !== modified) {
    const headers: Record<string, string> = { 'Cache-Control': cacheControlOf(connection) };
    if (modified !== undefined) headers['Last-Modified'] = new Date(modified).toUTCString();
    readCachings.set(connection, { modified, headers });
    return headers;
  }
  return made.headers;
}

const readCachings = new WeakMap<Connection, { modified: number | undefined; headers: Record<string, string> }>();

/**
 * `no-cache` by default (store, but ask every time: a 304 is cheap); `max-age` and
 * `stale-while-revalidate` when configured; `private` whenever the connection has keys, so a
 * shared cache never serves one key's answer to another client.
 */
export function cacheControlOf(connection: Connection): string {
  let value = cacheControls.get(connection);
  if (value === undefined) {
    const { maxAge, staleWhileRevalidate } = connection.cacheControl ?? {};
    const scope = !isOpen(connection) ? 'private' : maxAge === undefined ? null : 'public';
    const freshness = maxAge === undefined ? 'no-cache' : `max-age=${maxAge}${staleWhileRevalidate === undefined ? '' : `, stale-while-revalidate=${staleWhileRevalidate}`}`;
    value = scope === null ? freshness : `${scope}, ${freshness}`;
    cacheControls.set(connection, value);
  }
  return value;
}

const cacheControls = new WeakMap<Connection, string>();

/**
 * What a kept answer gives this request: a kept 200 itself, or the 304 its ETag earns; a kept
 * 304 only to a request naming its tag (not to `*`, which the engine grants only after checking
 * the read would be a 200), else nothing (undefined: the engine answers).
 */
export function revalidated(kept: Answer, ifNoneMatch: string | null): Answer | undefined {
  const tag = kept.headers.ETag;
  // One tag, the one given out, is what a client sends back; a list or `*` is parsed.
  const hit = ifNoneMatch !== null && tag !== undefined && (ifNoneMatch === tag || noneMatchHits(ifNoneMatch, tag));
  if (kept.status === 304) return hit && ifNoneMatch.trim() !== '*' ? kept : undefined;
  if (!hit) return kept;
  let answer = notModifiedAnswers.get(kept);
  if (answer === undefined) {
    // The headers the engine's own 304 has: the validator, and the tab's size where the answer has one.
    const headers: Record<string, string> = { ETag: tag };
    for (const name of ['X-Sheet-Rows', 'X-Sheet-Columns']) if (kept.headers[name] !== undefined) headers[name] = kept.headers[name];
    answer = { status: 304, headers, body: '' };
    notModifiedAnswers.set(kept, answer);
  }
  return answer;
}

/** The 304 of each kept answer, made once. */
const notModifiedAnswers = new WeakMap<Answer, Answer>();

/**
 * The answer as sent: its own headers, then the caching's, the quota's and CORS (later wins).
 * A kept answer under the same parts (the same objects: an unlimited billing plan, CORS `*`, an
 * unchanged file) goes out as the same object again, which the listeners turn into bytes faster
 * the second time (server/runtime/node.ts, respond.ts).
 */
export function finishedAnswer(answered: Answer, caching: Readonly<Record<string, string>>, quota: Readonly<Record<string, string>>, cors: Readonly<Record<string, string>>, keyed: boolean, rate?: Readonly<Record<string, string>>): Answer {
  // A rate limit's headers change with every request: such an answer is never the last one again.
  const last = rate === undefined ? finishedAnswers.get(answered) : undefined;
  if (last !== undefined && last.caching === caching && last.quota === quota && last.cors === cors && last.keyed === keyed) return last.answer;
  const headers: Record<string, string> = Object.assign({}, answered.headers, caching, quota, rate, cors);
  // A keyed connection answers each key on its own: a shared cache must not hand one key's answer to another.
  if (keyed) headers.Vary = cors.Vary === undefined ? 'X-Api-Key' : `${cors.Vary}, X-Api-Key`;
  const answer: Answer = answered.stream === undefined ? { status: answered.status, headers, body: answered.body } : { status: answered.status, headers, body: '', stream: answered.stream };
  if (rate === undefined) finishedAnswers.set(answered, { caching, quota, cors, keyed, answer });
  return answer;
}

/** The last headers each answer went out with, and what they were made of. */
const finishedAnswers = new WeakMap<Answer, { caching: object; quota: object; cors: object; keyed: boolean; answer: Answer }>();
