// The whole server as one Web-standard handler: `await app.fetch(new Request('http://x/sheets/demo'))`.
// Per request: find the connection, check the key, count the quota, read the body under its cap,
// let the engine parse and answer (writes through the source, in order and durably), then add
// the quota and CORS headers and log one line. Node, Deno and Bun only wire this to a listener.
// Before any of it, the Host header is checked (a browser on a rebound DNS name is refused), and
// a browser write from an origin outside a CORS list is refused before it is read, and so is a
// write from another site's page to a connection without keys (unless `cors.writes` allows it).
import { Router } from 'itty-router';
import { execute, findTab } from '../../lib/engine.ts';
import { apiError, isApiError, type ApiError } from '../../lib/errors.ts';
import { JSON_CONTENT_TYPE } from '../../lib/headers.ts';
import { allowedMethods, parseRequest, type EngineOptions, type Operation, type ParsedRequest } from '../../lib/parse-request.ts';
import { noneMatchHits } from '../../lib/version.ts';
import { AnswerCache } from './answer-cache.ts';
import { authenticate, checkWrite, isOpen, OPEN_ACCESS, type ApiKey } from '../auth.ts';
import { CORS_WRITES_DEFAULT, corsHeaders, isOwnOrigin, isPreflight, mayWriteWithoutKey, preflightHeaders, type CorsWrites, type Origins } from './cors.ts';
import { ConnectionRegistry, type Connection, type ConnectionLookup } from '../connections.ts';
import { hostCheck, type AllowedHosts } from './hosts.ts';
import { idempotent, keyCaller, OPEN_CALLER, type KeyStoreLike } from '../idempotency/idempotency.ts';
import { KeyStore } from '../idempotency/file-store.ts';
import type { Logger } from '../log.ts';
import type { Quota, QuotaDecision } from '../quota/quota.ts';
import { answerOpenApi, isOpenApiRequest } from './openapi-route.ts';
import { readBody, type BodyLimits } from './read-body.ts';
import { asApiError, errorAnswer, toResponse, type Answer } from './respond.ts';
import type { AdminHandler, App, IncomingRequest } from './request.ts';
import { rootIndex } from './root-index.ts';
import { readScope } from '../sources/scope.ts';
import type { Dashboard } from './dashboard-files.ts';
import type { Source } from '../sources/source.ts';
import type { Tab, Workbook } from '../../lib/workbook.ts';

export interface AppOptions {
  /** A fixed list, or a registry the admin API changes while the server runs (looked up per request). */
  readonly connections: readonly Connection[] | ConnectionLookup;
  /** Absent: the admin API is off, and `/_admin/...` answers 404 like any unknown path. */
  readonly admin?: AdminHandler;
  /** The dashboard's page at `/` (for browsers) and its files under `/_dashboard/` (server/http/dashboard-files.ts). */
  readonly dashboard?: Dashboard;
  readonly quota: Quota;
  /**
   * With several instances (Redis): the 503 that requests to connections with keys answer while
   * this instance is out of touch with the admin API's state, a revoked key perhaps still
   * among its own (server/admin/redis-state.ts, `stale`); null while it is in touch.
   */
  readonly keysStale?: () => ApiError | null;
  readonly bodyBytes: number;
  /** How long a body may take to arrive before 408 (default 10 s). */
  readonly bodyTimeoutMs?: number;
  readonly cors: Origins;
  /** Which other sites' pages may write to a connection without keys (default: none but a CORS list's). */
  readonly corsWrites?: CorsWrites;
  /**
   * Host names served (besides `localhost` and IP addresses, which DNS rebinding cannot
   * produce), or `'*'` for any Host (the default).
   */
  readonly allowedHosts?: AllowedHosts;
  readonly log: Logger;
  /** Bytes the kept read answers may take across connections (default 32 MiB; 0 keeps none). */
  readonly answerCacheBytes?: number;
}

export const DEFAULT_ANSWER_CACHE_BYTES = 32 * 1024 * 1024;

type ReadScope = ReturnType<typeof readScope>;

/**
 * A request's place under `/sheets/{id}/`: the id as it stands in the path, and the tab it reads.
 * A route is made for one target (path and query), so it also keeps that target's key in the
 * answer cache, made once per connection object (a repeat then hashes no new string).
 */
interface SheetRoute {
  readonly rawId: string;
  readonly scope: ReadScope;
  answerKey?: { readonly generation: number; readonly key: string };
}

/** Targets longer than this are routed every time (a path of filters and a long query). */
const ROUTE_NOTE_MAX_TARGET = 512;
/** Targets whose route is noted, at most: 2 MB of keys at the longest. */
const ROUTE_NOTE_MAX_ENTRIES = 4096;

const METHOD_OPERATIONS: Record<string, Operation> = { POST: 'create', PATCH: 'update', PUT: 'update', DELETE: 'delete' };

/** The methods a page on any site may send without a preflight and that change nothing. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Why a page on another site may not write to a connection without keys, and the settings that let it. */
const OPEN_WRITE_REFUSED =
  'This connection has no API key, so writes from pages on other websites are refused; list the origin in cors.origins or cors.writes, or set cors.writes to "any", in the config.';

/** Errors and write answers: never stored by a cache (a 404 would otherwise be, by heuristics). */
const NO_STORE_HEADERS: Readonly<Record<string, string>> = Object.freeze({ 'Cache-Control': 'no-store' });

export function createApp(options: AppOptions): App {
  const connections: ConnectionLookup = 'get' in options.connections ? options.connections : new ConnectionRegistry(options.connections);
  // A connection opened without a store of its own (in-process use) keeps its keys in memory.
  const memoryKeyStores = new WeakMap<Connection, KeyStore>();
  const keyStoreOf = (connection: Connection): KeyStoreLike => {
    if (connection.idempotency !== undefined) return connection.idempotency;
    let store = memoryKeyStores.get(connection);
    if (store === undefined) memoryKeyStores.set(connection, (store = KeyStore.memory()));
    return store;
  };
  const checkHostHeader = hostCheck(options.allowedHosts ?? '*');
  const corsWrites = options.corsWrites ?? CORS_WRITES_DEFAULT;
  const bodyLimits: BodyLimits = { maxBytes: options.bodyBytes, timeoutMs: options.bodyTimeoutMs ?? 10_000, inFlight: new Set() };
  const answerCacheBytes = options.answerCacheBytes ?? DEFAULT_ANSWER_CACHE_BYTES;
  // A logger's level is fixed when it is made: asked once, not per request.
  const logsRequests = options.log.enabled('info');
  const answers = answerCacheBytes > 0 ? new AnswerCache(answerCacheBytes) : null;
  const readCachings = new WeakMap<Connection, { modified: number | undefined; headers: Record<string, string> }>();
  const router = Router();
  router.get('/healthz', (): Answer => ({ status: 200, headers: { 'Content-Type': JSON_CONTENT_TYPE, 'Cache-Control': 'no-store' }, body: '{"status":"ok"}' }));
  // Where a GET or HEAD of one exact target was routed, so a repeat skips itty-router (which parses
  // the URL and tries each pattern: about half of a kept answer's cost). Routes are fixed once made,
  // so a target always goes where it went before; only short targets are noted, and the note is
  // started over when full.
  const sheetRoutes = new Map<string, SheetRoute>();
  router.all('/sheets/:id/*', (request: IncomingRequest & { params: { id: string } }) => {
    const route: SheetRoute = { rawId: request.params.id, scope: readScope(request.url) };
    if (request.method === 'GET' || request.method === 'HEAD') {
      const target = pathAndQuery(request.url);
      if (target.length <= ROUTE_NOTE_MAX_TARGET) {
        if (sheetRoutes.size >= ROUTE_NOTE_MAX_ENTRIES) sheetRoutes.clear();
        sheetRoutes.set(target, route);
      }
    }
    return serveSheet(request, route);
  });
  const admin = options.admin;
  if (admin !== undefined) {
    const serveAdmin = (request: IncomingRequest) => admin(request, () => readBody(request, bodyLimits));
    router.all('/_admin', serveAdmin);
    router.all('/_admin/*', serveAdmin);
  }
  const dashboard = options.dashboard;
  if (dashboard !== undefined) {
    // A browser asking for / gets the page; a client asking for JSON (curl's */* too) the index.
    router.all('/', (request: IncomingRequest) => (wantsHtml(request) ? dashboardAnswer(dashboard, request) : undefined));
    router.all('/_dashboard/*', (request: IncomingRequest) => dashboardAnswer(dashboard, request));
  }
  router.all('/', (request: IncomingRequest) => rootIndex(request.method, connections.list()));
  router.all('*', (request: IncomingRequest) => errorAnswer(apiError('not_found', `No resource at ${new URL(request.url).pathname}: paths start with /sheets/{id}.`)));

  /**
   * Everything under `/sheets/{id}/`: a preflight, else the origin, key and quota checks, then the
   * engine's answer with the caching, quota and CORS headers. Nothing in it waits unless it must
   * (a shared quota, a source with something to look at, a body, a write): a kept read answer
   * goes out in the same turn, which spares Deno and Bun the promise round trip.
   */
  function serveSheet(request: IncomingRequest, route: SheetRoute): Answer | Promise<Answer> {
    const { rawId } = route;
    const origin = request.headers.get('origin');
    if (isPreflight(request)) {
      // A preflight carries no key and is not counted: the browser sends it on its own.
      const parsed = parseRequest({ method: 'OPTIONS', url: request.url });
      const methods = isApiError(parsed) ? ['GET', 'HEAD'] : allowedMethods(parsed.target);
      return { status: 204, headers: preflightHeaders(options.cors, origin, methods), body: '' };
    }
    const cors = corsHeaders(options.cors, origin);
    // A page elsewhere can POST a text/plain body without a preflight; the answer is hidden from
    // it, but the write would land. A CORS list says which sites may write at all; under `*`, a
    // connection without keys is guarded below (`cors.writes`), a keyed one by its keys.
    // The server's own pages (the dashboard's playground) are no other site, listed or not.
    if (origin !== null && options.cors !== '*' && !SAFE_METHODS.has(request.method) && !options.cors.includes(origin) && !isOwnOrigin(origin, ownHost(request))) {
      return errorAnswer(apiError('origin_not_allowed', `Requests from ${JSON.stringify(origin).slice(0, 200)} may only read: it is not in this server's CORS origins.`), cors);
    }
    const connection = connections.get(safeDecode(rawId));
    if (connection === undefined) return errorAnswer(apiError('not_found', `There is no connection "${safeDecode(rawId)}".`), cors);

    if (!isOpen(connection) && options.keysStale !== undefined) {
      const stale = options.keysStale();
      if (stale !== null) return errorAnswer(stale, cors);
    }
    // An open connection takes any caller: its key header is not even read. A closed one with no
    // keys left refuses everyone: an empty key list never opens it.
    const authenticated = isOpen(connection) ? OPEN_ACCESS : authenticate(connection.keys, request.headers.get('x-api-key'));
    if (isApiError(authenticated)) return errorAnswer(authenticated, cors);
    // Nor may another site's page write where no key stands in its way: it needs no preflight to
    // POST a text/plain body, and the write would land though the answer is hidden from it.
    if (origin !== null && isOpen(connection) && !SAFE_METHODS.has(request.method) && !mayWriteWithoutKey(options.cors, corsWrites, origin, ownHost(request))) {
      return errorAnswer(apiError('permission_denied', OPEN_WRITE_REFUSED), cors);
    }

    const operation = operationOf(request);
    const taken = options.quota.take(connection.id, connection.plan, operation);
    if (taken instanceof Promise) return taken.then((quota) => serveCounted(connection, request, operation, authenticated.scope, route, quota, cors));
    return serveCounted(connection, request, operation, authenticated.scope, route, taken, cors);
  }

  /** A request the quota has decided on: refused, or answered and finished with its headers. */
  function serveCounted(
    connection: Connection,
    request: IncomingRequest,
    operation: Operation,
    keyScope: 'read' | 'write',
    route: SheetRoute,
    quota: QuotaDecision,
    cors: Readonly<Record<string, string>>,
  ): Answer | Promise<Answer> {
    if (!quota.allowed) return errorAnswer(quota.error ?? apiError('throttle', 'The monthly request quota is used up.'), { ...quota.headers, ...cors });
    let answered: Answer | Promise<Answer>;
    try {
      answered = answerSheet(connection, request, operation, keyScope, route);
    } catch (error) {
      answered = sheetFailed(connection, error);
    }
    if (answered instanceof Promise) {
      return answered.catch((error: unknown) => sheetFailed(connection, error)).then((done) => finishSheet(done, connection, request, operation, quota, cors));
    }
    return finishSheet(answered, connection, request, operation, quota, cors);
  }

  /** A sheet's answer as sent: a read's caching headers (or no-store), the quota's and CORS. */
  function finishSheet(answered: Answer, connection: Connection, request: IncomingRequest, operation: Operation, quota: QuotaDecision, cors: Readonly<Record<string, string>>): Answer {
    const read = operation === 'read' && (answered.status === 200 || answered.status === 304) && request.method !== 'OPTIONS';
    return finished(answered, read ? readCaching(connection) : NO_STORE_HEADERS, quota.headers, cors, !isOpen(connection));
  }

  /** A throw while answering on a connection: the client's error as it is, ours logged and a bare 500. */
  function sheetFailed(connection: Connection, error: unknown): Answer {
    const apiErr = asApiError(error);
    if (apiErr.code === 'internal_error') options.log.error('request failed', { connection: connection.id, error: String(error) });
    return errorAnswer(apiErr);
  }

  /** Cache-Control and Last-Modified of a read (200 or 304): the connection's settings, the source's time; made once per time. */
  function readCaching(connection: Connection): Record<string, string> {
    const modified = connection.source.lastModified?.();
    let made = readCachings.get(connection);
    if (made === undefined || made.modified !== modified) {
      const cacheControl = cacheControlOf(connection);
      const headers: Record<string, string> = { 'Cache-Control': cacheControl };
      if (modified !== undefined) headers['Last-Modified'] = new Date(modified).toUTCString();
      readCachings.set(connection, { modified, headers });
      return headers;
    }
    return made.headers;
  }

  function answerSheet(connection: Connection, request: IncomingRequest, operation: Operation, keyScope: 'read' | 'write', route: SheetRoute): Answer | Promise<Answer> {
    if (operation !== 'read') {
      const denied = checkWrite(keyScope);
      if (denied !== null) return errorAnswer(denied);
      if (connection.readOnly || !connection.source.writable) {
        return errorAnswer(apiError('write_error', `The connection "${connection.id}" is read-only: it has no edit access to its spreadsheet.`));
      }
    }
    // Before the contract's grammar, which has no one-segment path of that name (docs/openapi.md).
    if (isOpenApiRequest(request.url)) return answerOpenApi(connection, request);
    if (request.method === 'GET' || request.method === 'HEAD') return answerRead(connection, request, route);
    return answerOther(connection, request);
  }

  /** Writes, and the rest the engine parses from the request itself (OPTIONS without a preflight's headers). */
  async function answerOther(connection: Connection, request: IncomingRequest): Promise<Answer> {
    let body: Uint8Array | null = null;
    if (request.method === 'POST' || request.method === 'PATCH' || request.method === 'PUT') {
      const read = await readBody(request, bodyLimits);
      if (isApiError(read)) return errorAnswer(read);
      body = read;
    }
    const parsed = parseRequest({ method: request.method, url: request.url, headers: request.headers, body }, connection.engine);
    if (isApiError(parsed)) return errorAnswer(parsed);
    if (parsed.action === 'read' || parsed.action === 'options') {
      const result = execute(await connection.source.read(), parsed, connection.engine);
      return { status: result.status, headers: result.headers, body: result.bytes ?? result.body };
    }
    // A write with an Idempotency-Key runs once; its retries get the stored answer (idempotency.ts).
    // The key is the caller's own: the API key that authenticated it (one scope on an open connection).
    // Hashed only when the write sends an Idempotency-Key: most writes send none.
    const caller = () => (isOpen(connection) ? OPEN_CALLER : keyCaller(request.headers.get('x-api-key') ?? ''));
    return idempotent(keyStoreOf(connection), connection.source, request, body, caller, async (source) => {
      const result = await source.write(
        (workbook) => {
          const result = execute(workbook, parsed as ParsedRequest, connection.engine);
          return { plan: result.plan, workbook: result.workbook, result };
        },
        { tab: parsed.tab },
      );
      return { status: result.status, headers: result.headers, body: result.body };
    }, (message) => options.log.error(message));
  }

  /**
   * GET and HEAD: the answer kept for this path and query when the tab it was built from is still
   * served (a 304 when If-None-Match names it), else parsed and built by the engine, and kept.
   * The workbook is taken at once where the source has it (`readNow`), else waited for.
   */
  function answerRead(connection: Connection, request: IncomingRequest, route: SheetRoute): Answer | Promise<Answer> {
    const fresh = /no-cache/i.test(request.headers.get('cache-control') ?? '') || /no-cache/i.test(request.headers.get('pragma') ?? '');
    // Sources that read tab by tab (Google) are told which tab the answer needs.
    const readOptions = fresh ? { fresh, ...route.scope } : route.scope;
    const workbook = connection.source.readNow?.(readOptions);
    if (workbook !== undefined) return answerReadOf(connection, request, route, workbook);
    return connection.source.read(readOptions).then((read) => answerReadOf(connection, request, route, read));
  }

  function answerReadOf(connection: Connection, request: IncomingRequest, route: SheetRoute, workbook: Workbook): Answer {
    const key = answers === null ? '' : answerKeyOf(connection, request, route);
    const kept = answers?.get(key, workbook);
    const reused = kept === undefined ? undefined : revalidated(kept, request.headers.get('if-none-match'));
    if (reused !== undefined) return reused;
    // HEAD is answered as GET, so its Content-Length is the GET body's; the listener sends no body.
    const parsed = parseRequest({ method: 'GET', url: request.url, headers: request.headers, body: null }, connection.engine);
    if (isApiError(parsed)) return errorAnswer(parsed);
    const result = execute(workbook, parsed, connection.engine);
    const answered: Answer = { status: result.status, headers: result.headers, body: result.bytes ?? result.body };
    // A 304 is kept too: after a restart, clients and caches revalidate with the tags they hold
    // (the same content has the same tag), and the 200 may not be asked for again for a while.
    if (answers !== null && (result.status === 200 || result.status === 304)) answers.set(key, workbook, builtFrom(workbook, parsed, connection.engine), answered, parsed.tab === null);
    return answered;
  }

  function answer(request: IncomingRequest): Answer | Promise<Answer> {
    const started = logsRequests ? performance.now() : 0;
    let answered: Answer | Promise<Answer>;
    try {
      answered = route(request);
    } catch (error) {
      answered = failed(request, error);
    }
    if (answered instanceof Promise) {
      const settled = answered.catch((error: unknown) => failed(request, error));
      return logsRequests ? settled.then((done) => logRequest(request, done, started)) : settled;
    }
    return logsRequests ? logRequest(request, answered, started) : answered;
  }

  /** Where a GET or HEAD of this target went before, else through itty-router; the Host first. */
  function route(request: IncomingRequest): Answer | Promise<Answer> {
    const refused = checkHost(request);
    if (refused !== null) return errorAnswer(refused);
    const routed = request.method === 'GET' || request.method === 'HEAD' ? sheetRoutes.get(pathAndQuery(request.url)) : undefined;
    return routed === undefined ? (router.fetch(request) as Promise<Answer>) : serveSheet(request, routed);
  }

  /** What a throw while routing or answering becomes. */
  function failed(request: IncomingRequest, error: unknown): Answer {
    // Routing parses the URL; a target no URL can hold (`GET http://h:99999/ HTTP/1.1`, which
    // Deno passes on) is the client's mistake. Checked only here, off the hot path.
    if (!URL.canParse(request.url)) return errorAnswer(apiError('invalid_parameter', 'The request target is not a path or URL the server can read.'));
    options.log.error('request failed', { error: String(error) });
    return errorAnswer(asApiError(error));
  }

  /**
   * The request line, at the info level. It is built only when it is written, later and many
   * lines at a time: a request pays for the four values it holds.
   */
  function logRequest(request: IncomingRequest, answered: Answer, started: number): Answer {
    const ms = Math.round((performance.now() - started) * 100) / 100;
    options.log.info('request', requestEntry(request.method, request.url, answered.status, ms));
    return answered;
  }

  /** Before routing: Deno and Bun built the URL from this Host. */
  function checkHost(request: IncomingRequest): ApiError | null {
    const host = request.headers.get('host');
    // HTTP/1.0 and in-process calls send none; the URL is then the listener's (Bun leaves it relative).
    if (host === null && request.url.charCodeAt(0) === 47) return apiError('invalid_host', 'The request has no Host header; HTTP/1.1 requires one.');
    return checkHostHeader(host);
  }

  return {
    answer,
    fetch: async (request) => toResponse(await answer(request), request.method),
    abortBodies: () => {
      for (const giveUp of bodyLimits.inFlight) giveUp();
    },
  };
}

/** The host (and port) a request was sent to: its Host header, else its URL's (an in-process call). */
function ownHost(request: IncomingRequest): string | null {
  const host = request.headers.get('host');
  if (host !== null) return host;
  return URL.canParse(request.url) ? new URL(request.url).host : null;
}

function wantsHtml(request: IncomingRequest): boolean {
  return (request.headers.get('accept') ?? '').includes('text/html');
}

function dashboardAnswer(dashboard: Dashboard, request: IncomingRequest): Answer | null {
  return dashboard.answer(request.method, new URL(request.url, 'http://localhost').pathname, request.headers.get('if-none-match'));
}

/**
 * What a kept answer gives this request: a kept 200 itself, or the 304 its ETag earns; a kept
 * 304 only to a request naming its tag (not to `*`, which the engine grants only after checking
 * the read would be a 200), else nothing (undefined: the engine answers).
 */
function revalidated(kept: Answer, ifNoneMatch: string | null): Answer | undefined {
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

/** The last headers each answer went out with, and what they were made of. */
const finishedAnswers = new WeakMap<Answer, { caching: object; quota: object; cors: object; keyed: boolean; answer: Answer }>();

/**
 * The answer as sent: its own headers, then the caching's, the quota's and CORS (later wins).
 * A kept answer under the same parts (the same objects: an unlimited plan, CORS `*`, an unchanged
 * file) goes out as the same object again, which the listeners turn into bytes faster the
 * second time (server/runtime/node.ts, respond.ts).
 */
function finished(answered: Answer, caching: Record<string, string>, quota: Record<string, string>, cors: Readonly<Record<string, string>>, keyed: boolean): Answer {
  const last = finishedAnswers.get(answered);
  if (last !== undefined && last.caching === caching && last.quota === quota && last.cors === cors && last.keyed === keyed) return last.answer;
  const headers: Record<string, string> = Object.assign({}, answered.headers, caching, quota, cors);
  // A keyed connection answers each key on its own: a shared cache must not hand one key's answer to another.
  if (keyed) headers.Vary = cors.Vary === undefined ? 'X-Api-Key' : `${cors.Vary}, X-Api-Key`;
  const answer: Answer = { status: answered.status, headers, body: answered.body };
  finishedAnswers.set(answered, { caching, quota, cors, keyed, answer });
  return answer;
}

/** The 304 of each kept answer, made once. */
const notModifiedAnswers = new WeakMap<Answer, Answer>();

/**
 * The tab an answer depends on, for the answer cache; null when it depends on the whole
 * workbook: `/tabs`, and the "first tab" of a connection hiding hidden tabs (which tab is first
 * then depends on the others).
 */
function builtFrom(workbook: Workbook, parsed: ParsedRequest, engine: EngineOptions): Tab | null {
  if (parsed.target.kind === 'tabs' || (parsed.tab === null && engine.hiddenTabs === 'hide')) return null;
  const tab = findTab(workbook, parsed.tab);
  return isApiError(tab) ? null : tab;
}

/**
 * A number per connection object, for the answer cache's keys: a connection the admin API changes
 * (hidden tabs, a new source) is a new object, so the old one's answers are never served for it.
 */
function generationOf(connection: Connection): number {
  let generation = generations.get(connection);
  if (generation === undefined) {
    generation = ++lastGeneration;
    generations.set(connection, generation);
  }
  return generation;
}

const generations = new WeakMap<Connection, number>();
let lastGeneration = 0;

/** The answer cache's key of a read: the connection object's number and the path and query as sent. */
function answerKeyOf(connection: Connection, request: IncomingRequest, route: SheetRoute): string {
  const generation = generationOf(connection);
  if (route.answerKey?.generation === generation) return route.answerKey.key;
  const key = `${generation}\n${pathAndQuery(request.url)}`;
  route.answerKey = { generation, key };
  return key;
}

const cacheControls = new WeakMap<Connection, string>();

/**
 * `no-cache` by default (store, but ask every time: a 304 is cheap); `max-age` and
 * `stale-while-revalidate` when configured; `private` whenever the connection has keys, so a
 * shared cache never serves one key's answer to another client.
 */
function cacheControlOf(connection: Connection): string {
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

/** `http://h:1/sheets/a?b` -> `/sheets/a?b`; a target already relative is kept. */
function pathAndQuery(url: string): string {
  if (url.charCodeAt(0) === 47) return url;
  const start = url.indexOf('/', url.indexOf('//') + 2);
  return start === -1 ? '/' : url.slice(start);
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
function requestFields(method: string, url: string, status: number, ms: number): string {
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

/** The quota operation, known from the method before the body is read (the override only turns PUT into PATCH). */
function operationOf(request: IncomingRequest): Operation {
  return METHOD_OPERATIONS[request.method] ?? 'read';
}

function safeDecode(segment: string): string {
  // Most ids hold no escape: nothing to decode.
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
