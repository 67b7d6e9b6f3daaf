// The route stage: `GET /sheets/demo/tabs/Orders?_limit=5` -> a sheet route (id `demo`, tab
// `Orders`) that the rest of the pipeline answers; `/healthz`, `/`, `/_admin/...`,
// `/_dashboard/...`, `/_docs/...` and `/favicon.ico` are answered here, and any other path is 404 not_found. A GET or HEAD of a
// target routed before goes where it went without the router (`noted`): itty-router parses the
// URL and tries each pattern, about half of a kept answer's cost.
import { Router } from 'itty-router';
import { apiError } from '../../lib/errors.ts';
import { JSON_CONTENT_TYPE } from '../../lib/headers.ts';
import type { ConnectionLookup } from '../connections.ts';
import { readScope } from '../sources/scope.ts';
import { createApiDocs, type ApiDocs } from './api-docs.ts';
import type { Dashboard } from './dashboard-files.ts';
import { readBody, type BodyLimits } from './read-body.ts';
import type { AdminHandler, IncomingRequest } from './request.ts';
import { errorAnswer, type Answer } from './respond.ts';
import { rootIndex } from './root-index.ts';

/**
 * A request's place under `/sheets/{id}/`: the id as it stands in the path, and the tab it reads.
 * A route is made for one target (path and query), so it also keeps that target's key in the
 * answer cache, made once per connection object (a repeat then hashes no new string).
 */
export interface SheetRoute {
  readonly rawId: string;
  readonly scope: ReturnType<typeof readScope>;
  answerKey?: { readonly generation: number; readonly key: string };
}

export interface Routes {
  /** Where a GET or HEAD of this exact target was routed before; undefined: ask `fetch`. */
  noted(request: IncomingRequest): SheetRoute | undefined;
  /** The router: a sheet's request goes on to `serveSheet`, the rest is answered here. */
  fetch(request: IncomingRequest): Promise<Answer>;
}

export interface RouteSettings {
  readonly connections: ConnectionLookup;
  /** Absent: the admin API is off, and `/_admin/...` answers 404 like any unknown path. */
  readonly admin?: AdminHandler;
  readonly dashboard?: Dashboard;
  /** Swagger UI per connection, the project's docs and the favicon (server/http/api-docs.ts); made here when not given. */
  readonly apiDocs?: ApiDocs;
  /** The admin API's bodies are capped like any other. */
  readonly bodyLimits: BodyLimits;
  /** The rest of the pipeline, for a request under `/sheets/{id}/`. */
  readonly serveSheet: (request: IncomingRequest, route: SheetRoute) => Answer | Promise<Answer>;
}

/** Targets longer than this are routed every time (a path of filters and a long query). */
const ROUTE_NOTE_MAX_TARGET = 512;
/** Targets whose route is noted, at most: 2 MB of keys at the longest. */
const ROUTE_NOTE_MAX_ENTRIES = 4096;

export function createRoutes(settings: RouteSettings): Routes {
  const { connections, serveSheet } = settings;
  const router = Router();
  router.all('/healthz', (request: IncomingRequest): Answer => {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return errorAnswer(apiError('method_not_allowed', `${request.method} is not allowed on /healthz; use GET or HEAD.`, { Allow: 'GET, HEAD' }));
    }
    return { status: 200, headers: { 'Content-Type': JSON_CONTENT_TYPE, 'Cache-Control': 'no-store' }, body: '{"status":"ok"}' };
  });
  // Routes are fixed once made, so a target always goes where it went before; only short targets
  // are noted, and the note is started over when full.
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
  const admin = settings.admin;
  if (admin !== undefined) {
    const serveAdmin = (request: IncomingRequest) =>
      admin(request, (maxBytes) => readBody(request, maxBytes === undefined ? settings.bodyLimits : { ...settings.bodyLimits, maxBytes }));
    router.all('/_admin', serveAdmin);
    router.all('/_admin/*', serveAdmin);
  }
  const dashboard = settings.dashboard;
  if (dashboard !== undefined) {
    // A browser asking for / gets the page; a client asking for JSON (curl's */* too) the index.
    router.all('/', (request: IncomingRequest) => (wantsHtml(request) ? dashboardAnswer(dashboard, request) : undefined));
    router.all('/_dashboard/*', (request: IncomingRequest) => dashboardAnswer(dashboard, request));
  }
  // Served with the admin API on or off: the docs are for the API's users, and every page asks for the icon.
  const apiDocs = settings.apiDocs ?? createApiDocs();
  const docsAnswer = (request: IncomingRequest) => apiDocs.answer(request.method, new URL(request.url, 'http://localhost').pathname, request.headers.get('if-none-match'));
  router.all('/favicon.ico', docsAnswer);
  router.all('/_docs/*', docsAnswer);
  router.all('/', (request: IncomingRequest) => rootIndex(request.method, connections.list()));
  router.all('*', (request: IncomingRequest) => errorAnswer(apiError('not_found', `No resource at ${new URL(request.url).pathname}: paths start with /sheets/{id}.`)));
  return {
    noted: (request) => (request.method === 'GET' || request.method === 'HEAD' ? sheetRoutes.get(pathAndQuery(request.url)) : undefined),
    fetch: (request) => router.fetch(request) as Promise<Answer>,
  };
}

/** `http://h:1/sheets/a?b` -> `/sheets/a?b`; a target already relative is kept. */
export function pathAndQuery(url: string): string {
  if (url.charCodeAt(0) === 47) return url;
  const start = url.indexOf('/', url.indexOf('//') + 2);
  return start === -1 ? '/' : url.slice(start);
}

function wantsHtml(request: IncomingRequest): boolean {
  return (request.headers.get('accept') ?? '').includes('text/html');
}

function dashboardAnswer(dashboard: Dashboard, request: IncomingRequest): Answer | null {
  return dashboard.answer(request.method, new URL(request.url, 'http://localhost').pathname, request.headers.get('if-none-match'));
}
