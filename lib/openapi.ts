// GET /sheets/demo/openapi.json -> an OpenAPI 3.1 document of the connection `demo`: every path of
// the contract for the first tab and for each tab under /tabs/{Tab}, a schema per tab from its
// live columns, the parameters, the error catalogue, the headers and (for a keyed connection)
// the X-Api-Key scheme. Pure: the server reads the workbook and passes what it knows of the
// connection. Only names and columns go in, never a cell, so the document changes only when
// a tab or a header does (and `info.version` says which layout it describes).
import { API_KEY_SCHEME, errorOf, headersFor, PARAMETERS, ref, sharedResponses, sharedSchemas, type JsonObject, type QuotaPeriod } from './openapi/components.ts';
import { componentKeys, pathSegment } from './openapi/names.ts';
import { documentResponses, type OperationContext } from './openapi/operations.ts';
import { tabPaths } from './openapi/paths.ts';
import { describeRateLimit, type RateLimitDescribed } from './openapi/rate-limit.ts';
import { tabParameters, tabResponses, tabSchemas } from './openapi/tab-schemas.ts';
import { withoutUnusedComponents } from './openapi/unused.ts';
import type { HiddenTabs } from './parse-request.ts';
import { tableOf } from './table.ts';
import type { Workbook } from './workbook.ts';

export type { JsonObject, QuotaPeriod } from './openapi/components.ts';

export const OPENAPI_VERSION = '3.1.0';
/** The document's place after `/sheets/{id}`: a one-segment path the contract's grammar never serves (it was 404). */
export const OPENAPI_SEGMENT = 'openapi.json';

export interface OpenApiConnection {
  readonly id: string;
  /** Whether the connection has keys: the document then requires X-Api-Key (and lists 401). */
  readonly keyed: boolean;
  /** False for a read-only connection: its document leaves out POST, PATCH, PUT and DELETE. */
  readonly writable: boolean;
  /** `hide`: hidden tabs are left out, as `/tabs` leaves them out. */
  readonly hiddenTabs?: HiddenTabs;
  /** The server's base URL (default `/`: the origin the document was fetched from). */
  readonly serverUrl?: string;
  /** The span its plan's allowance counts, for the quota headers' descriptions; left out: a month. */
  readonly quotaPeriod?: QuotaPeriod;
  /** The only tabs the caller's key sees: the others are left out, as `/tabs` leaves them out. */
  readonly tabs?: readonly string[];
  /** The plan's rate limit: every response then carries RateLimit-Policy and RateLimit, and may be 429. */
  readonly rateLimit?: RateLimitDescribed;
}

export function buildOpenApi(workbook: Workbook, connection: OpenApiConnection): JsonObject {
  const keyTabs = connection.tabs;
  const tabs = workbook.tabs.filter((tab) => (connection.hiddenTabs !== 'hide' || tab.visibility === undefined) && (keyTabs === undefined || keyTabs.includes(tab.name)));
  const layout = tabs.map((tab) => ({ name: tab.name, columns: tableOf(tab).columns.map((column) => column.name) }));
  const keys = componentKeys(layout.map((tab) => tab.name));
  const connectionPath = `/sheets/${encodeURIComponent(connection.id)}`;
  const context = (key: string, idSuffix: string, tags: string[]): OperationContext => ({ key, idSuffix, tags, keyed: connection.keyed });

  const paths: Record<string, JsonObject> = connectionPaths(connectionPath, connection.keyed);
  const schemas: Record<string, JsonObject> = sharedSchemas();
  const responses: Record<string, JsonObject> = sharedResponses();
  const parameters: Record<string, JsonObject> = { ...PARAMETERS };
  const tags: JsonObject[] = [{ name: 'connection', description: 'The connection as a whole.' }];
  if (layout.length > 0) {
    const first = layout[0];
    tags.push({ name: 'first tab', description: `Paths without /tabs/{Tab} address the first tab, ${JSON.stringify(first.name)}.` });
    Object.assign(paths, tabPaths({ ...context(keys[0], '', ['first tab']), base: connectionPath, tabName: first.name, columns: first.columns, writable: connection.writable, unprefixed: true }));
  }
  layout.forEach((tab, index) => {
    // Tab names are unique in a workbook, so the tags are too.
    const tag = `tab ${tab.name}`;
    tags.push({ name: tag, description: `The tab ${JSON.stringify(tab.name)}: ${tab.columns.length} columns.` });
    Object.assign(schemas, tabSchemas({ name: tab.name, key: keys[index], columns: tab.columns }));
    Object.assign(responses, tabResponses(keys[index]));
    Object.assign(parameters, tabParameters(keys[index]));
    const base = `${connectionPath}/tabs/${pathSegment(tab.name)}`;
    Object.assign(paths, tabPaths({ ...context(keys[index], `_${keys[index]}`, [tag]), base, tabName: tab.name, columns: tab.columns, writable: connection.writable, unprefixed: false }));
  });

  const components: JsonObject = { schemas, responses, parameters, headers: headersFor(connection.quotaPeriod) };
  const document: JsonObject = {
    openapi: OPENAPI_VERSION,
    info: {
      title: `sheetrest connection ${JSON.stringify(connection.id)}`,
      version: `layout-${fingerprint(JSON.stringify(layout))}`,
      description: description(connection),
    },
    servers: [{ url: connection.serverUrl ?? '/' }],
    // For a client that builds requests (the dashboard's playground): the tabs without parsing paths.
    'x-sheetrest': {
      connection: connection.id,
      tabs: layout.map((tab, index) => ({ name: tab.name, key: keys[index], path: `${connectionPath}/tabs/${pathSegment(tab.name)}`, columns: tab.columns })),
    },
    tags,
    paths,
    components,
  };
  if (connection.keyed) {
    components.securitySchemes = { apiKey: API_KEY_SCHEME };
    document.security = [{ apiKey: [] }];
  } else {
    // An empty requirement: said outright that no credentials are needed (not merely left out).
    document.security = [{}];
  }
  if (connection.rateLimit !== undefined) describeRateLimit(document, connection.rateLimit);
  return withoutUnusedComponents(document);
}

/** `/sheets/demo/tabs`, the document itself and `/healthz` (which needs no key). */
function connectionPaths(connectionPath: string, keyed: boolean): Record<string, JsonObject> {
  const tags = ['connection'];
  const tabList = { description: 'The tabs in workbook order.', content: { 'application/json': { schema: ref('schemas', 'TabListing') } } };
  const openApi = { description: 'This document.', content: { 'application/json': { schema: { type: 'object' } } } };
  const headOf = (get: JsonObject, operationId: string): JsonObject => ({ ...get, operationId, summary: `${String(get.summary)} (headers only)` });
  const listTabs = { operationId: 'listTabs', summary: 'The tabs, with their row and column counts', tags, responses: documentResponses(keyed, tabList) };
  const getOpenApi = { operationId: 'getOpenApi', summary: 'This OpenAPI document', tags, responses: documentResponses(keyed, openApi) };
  const health = {
    operationId: 'health',
    summary: 'Whether the server is up (no key, not counted)',
    tags,
    security: [],
    responses: {
      200: { description: 'Up.', content: { 'application/json': { schema: ref('schemas', 'Health') } } },
      // The Host check comes before any route, this one included.
      400: errorOf(['invalid_host'], 'the `Host` header is not a host[:port].'),
      403: errorOf(['host_not_allowed'], 'the `Host` is not among the server\'s `allowedHosts`.'),
      default: ref('responses', 'Error'),
    },
  };
  // The change feed (docs/change-feed.md): the same stream per tab under /tabs/{Tab}/events.
  const eventStream = { description: 'Server-sent events: `id:` the event id, `event:` its type (`rows.created`, `rows.updated`, `rows.deleted`, `tab.changed`, or `reset`), `data:` the event as JSON; a comment line every 15 s.', content: { 'text/event-stream': { schema: { type: 'string' } } } };
  const streamEvents = {
    operationId: 'streamEvents',
    summary: 'The change feed: every write and outside edit, as server-sent events',
    description: 'Resumes after `Last-Event-ID` (or `lastEventId` for a first connection) within the last 10,000 events of 24 h, else sends `reset`. `/tabs/{Tab}/events` streams one tab.',
    tags,
    parameters: [
      { name: 'Last-Event-ID', in: 'header', description: 'The last event id the client has.', schema: { type: 'string', pattern: '^[0-9]+-[0-9]+$' } },
      { name: 'lastEventId', in: 'query', description: 'As `Last-Event-ID`, for a client that cannot send headers; the header wins.', schema: { type: 'string', pattern: '^[0-9]+-[0-9]+$' } },
    ],
    responses: documentResponses(keyed, eventStream),
  };
  return {
    [`${connectionPath}/tabs`]: { get: listTabs, head: headOf(listTabs, 'headTabs') },
    [`${connectionPath}/${OPENAPI_SEGMENT}`]: { get: getOpenApi, head: headOf(getOpenApi, 'headOpenApi') },
    [`${connectionPath}/events`]: { get: streamEvents },
    '/healthz': { get: health, head: headOf(health, 'headHealth') },
  };
}

function description(connection: OpenApiConnection): string {
  return [
    `The REST API of the spreadsheet behind the connection ${JSON.stringify(connection.id)}, built from its live workbook: a schema per tab, from its header row.`,
    'Paths without `/tabs/{Tab}` address the first tab. Every error answers `{"error": code, "message": sentence}` (`#/components/schemas/Error`).',
    connection.keyed ? 'Every request needs the `X-Api-Key` header (a CORS preflight excepted).' : 'The connection has no keys: no credentials are needed.',
    connection.writable ? '' : 'The connection is read-only, so its writes are left out (they would answer 403 `write_error`).',
  ].filter((line) => line !== '').join('\n\n');
}

/** FNV-1a (32 bits) as 8 hex digits: enough to tell two layouts apart in `info.version`. */
function fingerprint(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, '0');
}

/** Whether a request path is `/sheets/{id}/openapi.json` (a trailing `/` allowed, as everywhere). */
export function isOpenApiPath(pathname: string): boolean {
  const segments = (pathname.endsWith('/') ? pathname.slice(0, -1) : pathname).split('/');
  if (segments.length !== 4 || segments[1] !== 'sheets' || segments[2] === '') return false;
  try {
    return decodeURIComponent(segments[3]) === OPENAPI_SEGMENT;
  } catch {
    return false;
  }
}
