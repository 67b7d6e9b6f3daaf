// GET /sheets/demo/openapi.json -> the connection's OpenAPI 3.1 document (lib/openapi.ts), built
// from the workbook the source holds now. app.ts sends such a request here after the key, the
// quota and the write checks, so the document is keyed and counted like any read of the connection.
import { apiError } from '../../lib/errors.ts';
import { JSON_CONTENT_TYPE } from '../../lib/headers.ts';
import { buildOpenApi, isOpenApiPath, type OpenApiConnection, type QuotaPeriod } from '../../lib/openapi.ts';
import { etag, noneMatchHits, workbookVersion } from '../../lib/version.ts';
import type { Workbook } from '../../lib/workbook.ts';
import type { Connection } from '../connections.ts';
import type { IncomingRequest } from './request.ts';
import { isOpen } from '../auth.ts';
import { DEFAULT_PERIOD, PERIODS, periodOf } from '../quota/period.ts';
import { errorAnswer, type Answer } from './respond.ts';

const METHODS = 'GET, HEAD';

/** Whether the request is for `/sheets/{id}/openapi.json`; a cheap test first, as every request asks. */
export function isOpenApiRequest(url: string): boolean {
  return url.includes('openapi') && isOpenApiPath(new URL(url, 'http://sheetrest.invalid').pathname);
}

export async function answerOpenApi(connection: Connection, request: IncomingRequest): Promise<Answer> {
  if (request.method === 'OPTIONS') return { status: 204, headers: { Allow: METHODS }, body: '' };
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    return errorAnswer(apiError('method_not_allowed', `${request.method} is not accepted here; this path takes ${METHODS}.`, { Allow: METHODS }));
  }
  const fresh = /no-cache/i.test(request.headers.get('cache-control') ?? '') || /no-cache/i.test(request.headers.get('pragma') ?? '');
  const workbook = await connection.source.read({ fresh });
  const described: OpenApiConnection = {
    id: connection.id,
    keyed: !isOpen(connection),
    writable: !connection.readOnly && connection.source.writable,
    hiddenTabs: connection.engine.hiddenTabs,
    // Left out for a month (the default), so a month plan's document and ETag are what they were.
    ...quotaPeriodOf(connection),
    // The caller's key's tabs (app.ts hands over the connection as that key sees it).
    ...(connection.engine.visibleTabs === undefined ? {} : { tabs: connection.engine.visibleTabs }),
    ...(connection.plan?.rateLimit === undefined ? {} : { rateLimit: connection.plan.rateLimit }),
  };
  // The workbook's version stands for its layout (any write changes it: a revalidation too many,
  // never one too few). Cache-Control is added by the caching stage (caching.ts), as for every read.
  const tag = etag('w', workbookVersion(workbook), `openapi ${JSON.stringify(described)}`);
  const ifNoneMatch = request.headers.get('if-none-match');
  if (ifNoneMatch !== null && noneMatchHits(ifNoneMatch, tag)) return { status: 304, headers: { ETag: tag }, body: '' };
  // HEAD is answered as GET (toResponse and the Node listener measure the body and drop it).
  return { status: 200, headers: { 'Content-Type': JSON_CONTENT_TYPE, ETag: tag }, body: documentOf(workbook, described) };
}

/**
 * The document's JSON, kept with the workbook it describes until a write replaces it: a
 * workbook of 20 tabs of 30 columns takes ~25 ms to describe (a 1 MB document), too much to
 * redo for every client that reloads Swagger UI. A WeakMap: a replaced workbook frees it.
 */
const documents = new WeakMap<Workbook, Map<string, string>>();

function documentOf(workbook: Workbook, connection: OpenApiConnection): string {
  let built = documents.get(workbook);
  if (built === undefined) {
    built = new Map();
    documents.set(workbook, built);
  }
  const key = JSON.stringify(connection);
  let body = built.get(key);
  if (body === undefined) {
    body = JSON.stringify(buildOpenApi(workbook, connection));
    built.set(key, body);
  }
  return body;
}

/** The quota headers' period, when the connection's billing plan counts other than by the month. */
function quotaPeriodOf(connection: Connection): { quotaPeriod?: QuotaPeriod } {
  const name = periodOf(connection.plan);
  return name === DEFAULT_PERIOD ? {} : { quotaPeriod: { name, adjective: PERIODS[name].adjective } };
}
