// The whole server as one Web-standard handler: `await app.fetch(new Request('http://x/sheets/demo'))`.
// Per request: find the connection, check the key, count the quota, read the body under its cap,
// let the engine parse and answer (writes through the source, in order and durably), then add
// the quota and CORS headers and log one line. Node, Deno and Bun only wire this to a listener.
import { Router } from 'itty-router';
import { execute } from '../lib/engine.ts';
import { apiError, isApiError, type ApiError } from '../lib/errors.ts';
import { JSON_CONTENT_TYPE } from '../lib/headers.ts';
import { allowedMethods, parseRequest, type EngineOptions, type Operation, type ParsedRequest } from '../lib/parse-request.ts';
import { authenticate, checkWrite, type ApiKey } from './auth.ts';
import { corsHeaders, isPreflight, preflightHeaders, type Origins } from './cors.ts';
import type { PlanConfig } from './config.ts';
import type { Logger } from './log.ts';
import { readBody } from './read-body.ts';
import { asApiError, errorResponse, textResponse } from './respond.ts';
import type { Source } from './sources/source.ts';

export type Plan = PlanConfig;

/** A connection as the server runs it: its source opened, its keys as digests. */
export interface Connection {
  readonly id: string;
  readonly source: Source;
  readonly keys: readonly ApiKey[];
  readonly plan?: Plan;
  readonly readOnly: boolean;
  readonly engine: EngineOptions;
}

export interface QuotaDecision {
  readonly allowed: boolean;
  readonly headers: Record<string, string>;
  readonly error?: ApiError;
}

export interface Quota {
  take(connection: string, plan: Plan | undefined, operation: Operation): QuotaDecision;
}

export interface AppOptions {
  readonly connections: readonly Connection[];
  readonly quota: Quota;
  readonly bodyBytes: number;
  readonly cors: Origins;
  readonly log: Logger;
}

export interface App {
  fetch(request: Request): Promise<Response>;
}

const METHOD_OPERATIONS: Record<string, Operation> = { POST: 'create', PATCH: 'update', PUT: 'update', DELETE: 'delete' };

export function createApp(options: AppOptions): App {
  const connections = new Map(options.connections.map((connection) => [connection.id, connection]));
  const router = Router();
  router.get('/healthz', () => textResponse(200, { 'Content-Type': JSON_CONTENT_TYPE, 'Cache-Control': 'no-store' }, '{"status":"ok"}'));
  router.all('/sheets/:id/*', (request: Request & { params: { id: string } }) => serveSheet(request, request.params.id));
  router.all('*', (request: Request) => errorResponse(apiError('not_found', `No resource at ${new URL(request.url).pathname}: paths start with /sheets/{id}.`)));

  async function serveSheet(request: Request, rawId: string): Promise<Response> {
    const origin = request.headers.get('origin');
    if (isPreflight(request)) {
      // A preflight carries no key and is not counted: the browser sends it on its own.
      const parsed = parseRequest({ method: 'OPTIONS', url: request.url });
      const methods = isApiError(parsed) ? ['GET', 'HEAD'] : allowedMethods(parsed.target);
      return textResponse(204, preflightHeaders(options.cors, origin, methods), '');
    }
    const cors = corsHeaders(options.cors, origin);
    const connection = connections.get(safeDecode(rawId));
    if (connection === undefined) return errorResponse(apiError('not_found', `There is no connection "${safeDecode(rawId)}".`), cors);

    const authenticated = authenticate(connection.keys, request.headers.get('x-api-key'));
    if (isApiError(authenticated)) return errorResponse(authenticated, cors);

    const operation = operationOf(request);
    const quota = options.quota.take(connection.id, connection.plan, operation);
    const shellHeaders = { ...quota.headers, ...cors };
    if (!quota.allowed) return errorResponse(quota.error ?? apiError('throttle', 'The monthly request quota is used up.'), shellHeaders);

    const answered = await answer(connection, request, operation, authenticated.scope).catch((error: unknown) => {
      const apiErr = asApiError(error);
      if (apiErr.code === 'internal_error') options.log.error('request failed', { connection: connection.id, error: String(error) });
      return { status: apiErr.status, headers: { 'Content-Type': JSON_CONTENT_TYPE, ...apiErr.headers }, body: JSON.stringify(apiErr) };
    });
    return textResponse(answered.status, { ...answered.headers, ...shellHeaders }, answered.body);
  }

  async function answer(connection: Connection, request: Request, operation: Operation, scope: 'read' | 'write'): Promise<{ status: number; headers: Record<string, string>; body: string }> {
    if (operation !== 'read') {
      const denied = checkWrite(scope);
      if (denied !== null) return errorParts(denied);
      if (connection.readOnly || !connection.source.writable) {
        return errorParts(apiError('write_error', `The connection "${connection.id}" is read-only: it has no edit access to its spreadsheet.`));
      }
    }
    let body: Uint8Array | null = null;
    if (request.method === 'POST' || request.method === 'PATCH' || request.method === 'PUT') {
      const read = await readBody(request, options.bodyBytes);
      if (isApiError(read)) return errorParts(read);
      body = read;
    }
    const parsed = parseRequest({ method: request.method, url: request.url, headers: request.headers, body }, connection.engine);
    if (isApiError(parsed)) return errorParts(parsed);
    if (parsed.action === 'read' || parsed.action === 'options') {
      const fresh = /no-cache/i.test(request.headers.get('cache-control') ?? '') || /no-cache/i.test(request.headers.get('pragma') ?? '');
      const workbook = await connection.source.read({ fresh });
      return execute(workbook, parsed, connection.engine);
    }
    return connection.source.write((workbook) => {
      const result = execute(workbook, parsed as ParsedRequest, connection.engine);
      return { plan: result.plan, workbook: result.workbook, result };
    });
  }

  return {
    async fetch(request: Request): Promise<Response> {
      const started = performance.now();
      let response: Response;
      try {
        response = (await router.fetch(request)) as Response;
      } catch (error) {
        options.log.error('request failed', { error: String(error) });
        response = errorResponse(asApiError(error));
      }
      const url = new URL(request.url);
      const connection = url.pathname.startsWith('/sheets/') ? safeDecode(url.pathname.split('/')[2] ?? '') : undefined;
      options.log.info('request', {
        method: request.method,
        path: url.pathname,
        status: response.status,
        ms: Math.round((performance.now() - started) * 100) / 100,
        connection,
      });
      return response;
    },
  };
}

/** The quota operation, known from the method before the body is read (the override only turns PUT into PATCH). */
function operationOf(request: Request): Operation {
  return METHOD_OPERATIONS[request.method] ?? 'read';
}

function errorParts(error: ApiError): { status: number; headers: Record<string, string>; body: string } {
  return { status: error.status, headers: { 'Content-Type': JSON_CONTENT_TYPE, ...error.headers }, body: JSON.stringify(error) };
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
