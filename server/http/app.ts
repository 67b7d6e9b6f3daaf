// The whole server as one Web-standard handler: `await app.fetch(new Request('http://x/sheets/demo'))`.
// `answerRequest` below is a request's path through it, one named stage per line, each stage a
// module of server/http/ (PostgREST's `postgrestResponse` reads the same way): the Host check,
// the route, then for `/sheets/{id}/...` CORS, the connection, the key, the plan's rate limit, the quota, the engine
// over the source (reading the body of a write), the caching headers, and one log line. Node,
// Deno and Bun only wire this to a listener. Nothing waits unless it must (a route not seen
// before, a shared quota, a source with something to look at, a body, a write): a kept read
// answer goes out in the same turn, which spares Deno and Bun the promise round trip.
import { apiError, isApiError, type ApiError } from '../../lib/errors.ts';
import { OPERATIONS, type Operation } from '../../lib/parse-request.ts';
import { isOpen, type Authenticated } from '../auth.ts';
import { ConnectionRegistry, type Connection, type ConnectionLookup } from '../connections.ts';
import type { Logger } from '../log.ts';
import type { Quota, QuotaDecision } from '../quota/quota.ts';
import { memoryRateLimiter, type RateDecision, type RateLimiter } from '../rate-limit/rate-limit.ts';
import { AnswerCache } from './answer-cache.ts';
import { authorize, permissionRefusal, type AccessSettings } from './authorize.ts';
import { forwardedAddressOf } from './client-address.ts';
import { cachingHeaders, finishedAnswer, NO_STORE_HEADERS } from './caching.ts';
import { answerEvents, isEventsRequest, isEventStreamAnswer, type EventsSettings } from './events.ts';
import { MemoryEventLog } from '../feed/event-log.ts';
import { Feed } from '../feed/feed.ts';
import { CORS_WRITES_DEFAULT, corsHeaders, isPreflight, originRefusal, preflightAnswer, type CorsWrites, type Origins } from './cors.ts';
import type { Dashboard } from './dashboard-files.ts';
import { failureAnswer, sheetFailureAnswer } from './failures.ts';
import { findConnection } from './find-connection.ts';
import { hostCheck, hostRefusal, type AllowedHosts, type HostCheck } from './hosts.ts';
import { answerOpenApi, isOpenApiRequest } from './openapi-route.ts';
import { operationOf, quotaRefusal } from './quota.ts';
import { answerRead } from './read.ts';
import type { BodyLimits } from './read-body.ts';
import type { AdminHandler, App, IncomingRequest } from './request.ts';
import { logRequest } from './request-log.ts';
import { errorAnswer, toResponse, type Answer } from './respond.ts';
import { createRoutes, type Routes, type SheetRoute } from './route.ts';
import { Writes } from './write.ts';
import { epochMsOf } from '../usage/clock.ts';
import type { UsageRecorder } from '../usage/history.ts';

export interface AppOptions {
  /** A fixed list, or a registry the admin API changes while the server runs (looked up per request). */
  readonly connections: readonly Connection[] | ConnectionLookup;
  /** Absent: the admin API is off, and `/_admin/...` answers 404 like any unknown path. */
  readonly admin?: AdminHandler;
  /**
   * With the admin API on: whether a `/sheets/...` request carries the admin token (`Authorization:
   * Bearer`), which then acts as a key with every operation and tab, not counted (server/admin/sheet-access.ts).
   */
  readonly adminBearer?: (request: IncomingRequest) => boolean;
  /** The dashboard's page at `/` (for browsers) and its files under `/_dashboard/` (server/http/dashboard-files.ts). */
  readonly dashboard?: Dashboard;
  readonly quota: Quota;
  /** Where plans' rate limits are counted (Redis with several instances); left out: in this process's memory. */
  readonly rateLimiter?: RateLimiter;
  /** Whether X-Forwarded-For names the client, for rate limits on open connections (the config's `trustProxy`). */
  readonly trustProxy?: boolean;
  /** The clock keys expire by (ms since the epoch); tests inject one. */
  readonly now?: () => number;
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
  /** The change feed (server/feed/); left out: one of this process's own, kept in memory. */
  readonly feed?: Feed;
  /** How often an idle event stream gets a comment line (default 15 s); tests shorten it. */
  readonly eventsHeartbeatMs?: number;
  /** Where each request to a connection is recorded for the usage history (server/usage/); left out: nowhere. */
  readonly usage?: UsageRecorder;
}

export const DEFAULT_ANSWER_CACHE_BYTES = 32 * 1024 * 1024;

/** What the stages need of the server, made once per app from its options. */
export interface Pipeline {
  readonly hostCheck: HostCheck;
  readonly routes: Routes;
  readonly connections: ConnectionLookup;
  readonly cors: Origins;
  readonly access: AccessSettings;
  /** Whether a request carries the admin token; null: the admin API is off and `Authorization` means nothing. */
  readonly adminBearer: ((request: IncomingRequest) => boolean) | null;
  readonly quota: Quota;
  readonly rateLimiter: RateLimiter;
  readonly trustProxy: boolean;
  /** The kept read answers; null: none are kept. */
  readonly answers: AnswerCache | null;
  readonly writes: Writes;
  /** The change feed and its streams' settings (`GET /sheets/{id}/events`). */
  readonly events: EventsSettings;
  readonly bodyLimits: BodyLimits;
  readonly log: Logger;
  /** A logger's level is fixed when it is made: asked once, not per request. */
  readonly logsRequests: boolean;
  /** Whether a request's start is read: for the log line or the usage history. */
  readonly timesRequests: boolean;
  /** The usage history's recorder; null: none. */
  readonly usage: UsageRecorder | null;
}

export function createApp(options: AppOptions): App {
  const pipeline = pipelineOf(options);
  return {
    answer: (request) => answerRequest(pipeline, request),
    fetch: async (request) => toResponse(await answerRequest(pipeline, request), request.method),
    abortBodies: () => {
      for (const giveUp of pipeline.bodyLimits.inFlight) giveUp();
    },
  };
}

/**
 * A request's path through the server. The stages are numbered across the three functions that
 * hold them: the only breaks are where a stage may have to wait (the router's first routing of a
 * target, a shared quota, the engine over a source), and a stage that need not wait does not.
 */
export function answerRequest(app: Pipeline, request: IncomingRequest): Answer | Promise<Answer> {
  // The one clock read of a request's start, for its log line and its usage history.
  const started = app.timesRequests ? performance.now() : 0;
  let answered: Answer | Promise<Answer>;
  try {
    // 1. Host check, before routing: Deno and Bun built the URL from this Host.
    const badHost = hostRefusal(app.hostCheck, request);
    if (badHost !== null) answered = errorAnswer(badHost);
    else {
      // 2. Route: a GET or HEAD of a target seen before goes where it went; the router answers
      //    health, index, admin and dashboard, and hands `/sheets/{id}/...` on to `serveSheet`.
      const noted = app.routes.noted(request);
      answered = noted === undefined ? app.routes.fetch(request) : serveSheet(app, request, noted, started);
    }
  } catch (error) {
    answered = failureAnswer(app.log, request, error);
  }
  // 9. Log: one line per request, once it is answered.
  if (answered instanceof Promise) {
    const settled = answered.catch((error: unknown) => failureAnswer(app.log, request, error));
    return app.logsRequests ? settled.then((done) => logRequest(app.log, request, done, started)) : settled;
  }
  return app.logsRequests ? logRequest(app.log, request, answered, started) : answered;
}

/**
 * Stages 3 to 5, for a request under `/sheets/{id}/`: the origin, the connection, the key; then
 * the rate limit and the quota count it. `started`: when the request came (`performance.now()`),
 * for the usage history; read here when the router hands on a target it had not seen.
 */
function serveSheet(app: Pipeline, request: IncomingRequest, route: SheetRoute, started = app.usage === null ? 0 : performance.now()): Answer | Promise<Answer> {
  // 3. CORS: a preflight is answered here (no key, not counted); a write from an unlisted origin is refused.
  const origin = request.headers.get('origin');
  if (isPreflight(request)) return preflightAnswer(app.cors, request, origin);
  const cors = corsHeaders(app.cors, origin);
  const badOrigin = originRefusal(app.cors, request, origin);
  if (badOrigin !== null) return errorAnswer(badOrigin, cors);
  // 4. Connection: looked up on every request, so the admin API's changes apply at once.
  const connection = findConnection(app.connections, route.rawId);
  if (isApiError(connection)) return errorAnswer(connection, cors);
  // 5. Auth: the admin token (every operation and tab, not rate limited or counted: the operator
  //    looking, server/admin/sheet-access.ts), else the key's operations and tabs, or why the caller may not ask.
  if (app.adminBearer !== null && app.adminBearer(request)) {
    return serveCounted(app, request, route, connection, ADMIN_ACCESS, operationOf(request.method), { allowed: true, headers: app.quota.peek(connection.id, connection.plan) }, null, cors);
  }
  const access = authorize(app.access, connection, request, origin);
  if (app.usage === null) return serveAuthorized(app, request, route, connection, access, cors);
  // A throw is answered here rather than by answerRequest's catch, so that its 500 is counted too.
  let answered: Answer | Promise<Answer>;
  try {
    answered = serveAuthorized(app, request, route, connection, access, cors);
  } catch (error) {
    answered = sheetFailureAnswer(app.log, connection, error);
  }
  return recordUsage(app, app.usage, connection, request, isApiError(access) ? null : access, answered, started);
}

/**
 * 9b. Usage: the request's status, duration and key go to the usage history (server/usage/),
 * with no I/O and one clock read on the way (the answer's time is the history's timestamp too).
 * An answer that waited adds no promise of its own but the one that records it.
 */
function recordUsage(app: Pipeline, usage: UsageRecorder, connection: Connection, request: IncomingRequest, key: Authenticated | null, answered: Answer | Promise<Answer>, started: number): Answer | Promise<Answer> {
  if (!(answered instanceof Promise)) {
    recordAnswer(usage, connection.id, request, answered.status, key, started);
    return answered;
  }
  return answered.then(
    (done) => {
      recordAnswer(usage, connection.id, request, done.status, key, started);
      return done;
    },
    (error: unknown) => {
      const failed = sheetFailureAnswer(app.log, connection, error);
      recordAnswer(usage, connection.id, request, failed.status, key, started);
      return failed;
    },
  );
}

function recordAnswer(usage: UsageRecorder, connectionId: string, request: IncomingRequest, status: number, key: Authenticated | null, started: number): void {
  const ended = performance.now();
  usage.record(connectionId, request.method, request.url, status, Math.round((ended - started) * 100) / 100, key, epochMsOf(ended));
}

/** Stage 6a onwards, once the caller is known (or refused). */
function serveAuthorized(app: Pipeline, request: IncomingRequest, route: SheetRoute, connection: Connection, access: Authenticated | ApiError, cors: Readonly<Record<string, string>>): Answer | Promise<Answer> {
  if (isApiError(access)) return errorAnswer(access, cors);
  // 6a. Rate limit: the plan's short window, per key (per client address when open); a promise only where counts are shared.
  const plan = connection.plan;
  if (plan?.rateLimit === undefined) return serveLimited(app, request, route, connection, access, null, cors);
  const caller = access.caller ?? `address:${forwardedAddressOf(request, app.trustProxy)}`;
  const rate = app.rateLimiter.take(connection.id, caller, plan.name, plan.rateLimit);
  if (rate instanceof Promise) return rate.then((decided) => serveLimited(app, request, route, connection, access, decided, cors));
  return serveLimited(app, request, route, connection, access, rate, cors);
}

/** Stage 6b, once the rate limit has decided (null: the plan has none): a refusal is not counted by the quota; else the quota counts it. */
function serveLimited(app: Pipeline, request: IncomingRequest, route: SheetRoute, connection: Connection, access: Authenticated, rate: RateDecision | null, cors: Readonly<Record<string, string>>): Answer | Promise<Answer> {
  // A refusal is not counted, but carries the quota's X-RateLimit-* headers as the count stands (the contract: on every response).
  if (rate !== null && !rate.allowed) return errorAnswer(rate.error ?? apiError('rate_limited', 'Too many requests.'), { ...app.quota.peek(connection.id, connection.plan), ...rate.headers, ...cors });
  // 6b. Quota: counted against the connection's billing plan (a promise only where counts are shared).
  const operation = operationOf(request.method);
  const quota = app.quota.take(connection.id, connection.plan, operation);
  if (quota instanceof Promise) return quota.then((decided) => serveCounted(app, request, route, connection, access, operation, decided, rate, cors));
  return serveCounted(app, request, route, connection, access, operation, quota, rate, cors);
}

/** Stages 6 to 8, once the quota has decided: refused, or answered and sent with its caching, quota, rate limit and CORS headers. */
function serveCounted(app: Pipeline, request: IncomingRequest, route: SheetRoute, connection: Connection, access: Authenticated, operation: Operation, quota: QuotaDecision, rate: RateDecision | null, cors: Readonly<Record<string, string>>): Answer | Promise<Answer> {
  if (!quota.allowed) return quotaRefusal(quota, rate === null ? cors : { ...rate.headers, ...cors });
  // 7. Engine or source: the OpenAPI document, a read (kept or built), or a write (its body read
  //    first); what the key may not do, or a write the connection does not allow, is refused before
  //    (counted: the quota counts every request that got past the key). A key limited to some tabs
  //    sees the connection as if it had only those.
  let answered: Answer | Promise<Answer>;
  try {
    // An upsert (`POST ?_upsert=Email`) updates rows as well as creating them: the key needs both.
    const refused = permissionRefusal(connection, operation, access.operations) ?? (operation === 'create' && isUpsert(request.url) ? permissionRefusal(connection, 'update', access.operations) : null);
    const seen = access.tabs === undefined ? connection : withTabs(connection, access.tabs);
    if (refused !== null) answered = errorAnswer(refused);
    // Before the contract's grammar, which has no one-segment path of that name (docs/change-feed.md).
    else if (isEventsRequest(request.url)) answered = answerEvents(app.events, seen, request);
    // Before the contract's grammar, which has no one-segment path of that name (docs/openapi.md).
    else if (isOpenApiRequest(request.url)) answered = answerOpenApi(seen, request);
    else if (request.method === 'GET' || request.method === 'HEAD') answered = answerRead(app.answers, seen, request, route);
    else answered = app.writes.answer(seen, request);
  } catch (error) {
    answered = sheetFailureAnswer(app.log, connection, error);
  }
  // 8. Caching headers: a read's Cache-Control and Last-Modified (errors and writes: no-store), with the quota's, the rate limit's and CORS'.
  if (answered instanceof Promise) {
    return answered
      .catch((error: unknown) => sheetFailureAnswer(app.log, connection, error))
      .then((done) => finishedAnswer(done, isEventStreamAnswer(done) ? NO_STORE_HEADERS : cachingHeaders(connection, operation, request.method, done.status), quota.headers, cors, !isOpen(connection), rate?.headers));
  }
  return finishedAnswer(answered, cachingHeaders(connection, operation, request.method, answered.status), quota.headers, cors, !isOpen(connection), rate?.headers);
}

/** What the admin token may do on any connection: everything, on every tab (a read-only connection still refuses writes). */
const ADMIN_ACCESS: Authenticated = Object.freeze({ operations: OPERATIONS, keyName: 'admin', caller: 'admin' });

function isUpsert(url: string): boolean {
  return new URL(url, 'http://localhost').searchParams.has('_upsert');
}

/**
 * The connection as a key limited to `tabs` sees it: its engine told the tabs. One object per
 * connection and key (the key's `tabs` array), so the answer cache keeps that key's answers apart.
 */
function withTabs(connection: Connection, tabs: readonly string[]): Connection {
  let seen = tabViews.get(connection);
  if (seen === undefined) tabViews.set(connection, (seen = new WeakMap()));
  let view = seen.get(tabs);
  if (view === undefined) seen.set(tabs, (view = { ...connection, engine: { ...connection.engine, visibleTabs: tabs } }));
  return view;
}

const tabViews = new WeakMap<Connection, WeakMap<readonly string[], Connection>>();

function pipelineOf(options: AppOptions): Pipeline {
  const connections: ConnectionLookup = 'get' in options.connections ? options.connections : new ConnectionRegistry(options.connections);
  const bodyLimits: BodyLimits = { maxBytes: options.bodyBytes, timeoutMs: options.bodyTimeoutMs ?? 10_000, inFlight: new Set() };
  const answerCacheBytes = options.answerCacheBytes ?? DEFAULT_ANSWER_CACHE_BYTES;
  const feed = options.feed ?? new Feed(new MemoryEventLog(), options.log);
  const routes = createRoutes({ connections, admin: options.admin, dashboard: options.dashboard, bodyLimits, serveSheet: (request, route) => serveSheet(pipeline, request, route) });
  const pipeline: Pipeline = {
    hostCheck: hostCheck(options.allowedHosts ?? '*'),
    routes,
    connections,
    cors: options.cors,
    adminBearer: options.adminBearer ?? null,
    access: { cors: options.cors, corsWrites: options.corsWrites ?? CORS_WRITES_DEFAULT, keysStale: options.keysStale, now: options.now },
    quota: options.quota,
    rateLimiter: options.rateLimiter ?? memoryRateLimiter(options.now === undefined ? {} : { now: options.now }),
    trustProxy: options.trustProxy ?? false,
    answers: answerCacheBytes > 0 ? new AnswerCache(answerCacheBytes) : null,
    writes: new Writes(bodyLimits, options.log, feed),
    events: { feed, ...(options.eventsHeartbeatMs === undefined ? {} : { heartbeatMs: options.eventsHeartbeatMs }) },
    bodyLimits,
    log: options.log,
    logsRequests: options.log.enabled('info'),
    timesRequests: options.log.enabled('info') || options.usage !== undefined,
    usage: options.usage ?? null,
  };
  return pipeline;
}
