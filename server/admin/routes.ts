// The admin API over HTTP, on the server's own port under /_admin (docs/admin-api.md):
//   POST /_admin/connections  Authorization: Bearer <admin token>  {"id":"crm","source":{...}}
//   -> 201 the connection as the admin API shows it.
// Every request needs the admin token (never a connection key): none, or not as `Bearer`, is
// 401 not_authenticated; a wrong one 401 authentication_failed. The token is compared as a
// SHA-256 digest in constant time and never logged. Ten wrong tokens from one address within a
// minute: 429 rate_limited for the rest of it (sign-in-throttle.ts). Answers are JSON and never cached.
import { timingSafeEqual } from 'node:crypto';
import type * as v from 'valibot';
import { apiError, isApiError, type ApiError } from '../../lib/errors.ts';
import { JSON_CONTENT_TYPE } from '../../lib/headers.ts';
import type { AdminHandler, IncomingRequest } from '../http/request.ts';
import { digestKey } from '../auth.ts';
import { clientAddressOf } from '../http/client-address.ts';
import type { Secret } from '../config/config.ts';
import { errorAnswer, type Answer } from '../http/respond.ts';
import { ChangeConnectionSchema, CreateConnectionSchema, CreateKeySchema, CreateWebhookSchema, parseAdminBody, RotateKeySchema } from './requests.ts';
import type { AdminService } from './service.ts';
import type { SignInThrottle } from './sign-in-throttle.ts';
import { KEEP_DAYS } from '../usage/tally.ts';
import { AuthorizeSchema, CALLBACK_PATH, NewKeySchema, type GoogleConnect } from './google-connect.ts';
import { checkUploadName, replaceOf, storeUpload, tooLargeUpload, undecodableUploadName, type UploadSettings } from './files.ts';

const NO_STORE = { 'Cache-Control': 'no-store' };
const CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="sheetrest admin"' };

type Params = readonly string[];
/** Reads the request's body and checks it against `schema`. */
type ReadBody = <TSchema extends v.GenericSchema>(schema: TSchema) => Promise<v.InferOutput<TSchema> | ApiError>;
/** The body as bytes, capped at `maxBytes` (an upload's cap, not limits.bodyBytes). */
type ReadRaw = (maxBytes: number) => Promise<Uint8Array | ApiError>;
/**
 * `origin`: this server as the client reached it (`http://` and its Host), for the Google
 * callback's address; `query`: the request's query string; `raw`: the body unparsed.
 */
type Handler = (params: Params, read: ReadBody, origin: string, query: URLSearchParams, raw: ReadRaw) => Promise<Answer> | Answer;

interface Route {
  /** Path segments after `_admin`; `:` marks a parameter. */
  readonly pattern: readonly string[];
  readonly methods: Readonly<Record<string, Handler>>;
}

/**
 * `google`: the dashboard's "Connect a Google spreadsheet" (google-connect.ts), when the config
 * has `admin.google`. `throttle` counts wrong tokens per client address. `uploads`: where
 * `PUT /_admin/files/{name}` stores workbooks (files.ts); absent, that path is 404.
 */
export function adminHandler(service: AdminService, token: Secret, google: GoogleConnect | undefined, throttle: SignInThrottle, uploads?: UploadSettings): AdminHandler {
  const expected = digestKey(token.reveal());

  const routes: Route[] = [
    { pattern: [], methods: { GET: () => json(200, { name: 'sheetrest admin', links: { connections: '/_admin/connections' } }) } },
    {
      pattern: ['connections'],
      methods: {
        GET: () => json(200, service.list()),
        POST: async (_, read) => {
          const input = await read(CreateConnectionSchema);
          if (isApiError(input)) return failure(input);
          const created = await service.create(input);
          return isApiError(created) ? failure(created) : json(201, created, { Location: created.links.admin });
        },
      },
    },
    {
      pattern: ['connections', ':'],
      methods: {
        GET: ([id]) => answer(200, service.get(id)),
        PATCH: async ([id], read) => {
          const input = await read(ChangeConnectionSchema);
          return isApiError(input) ? failure(input) : answer(200, await service.change(id, input));
        },
        DELETE: async ([id]) => empty(await service.remove(id)),
      },
    },
    { pattern: ['connections', ':', 'usage'], methods: { GET: ([id]) => answer(200, service.usage(id)) } },
    {
      pattern: ['connections', ':', 'usage', 'history'],
      methods: {
        GET: async ([id], _read, _origin, query) => {
          const days = daysOf(query);
          return isApiError(days) ? failure(days) : answer(200, await service.usageHistory(id, days));
        },
      },
    },
    { pattern: ['connections', ':', 'requests'], methods: { GET: ([id]) => answer(200, service.recentRequests(id)) } },
    {
      pattern: ['connections', ':', 'keys'],
      methods: {
        GET: ([id]) => answer(200, service.keys(id)),
        POST: async ([id], read) => {
          const input = await read(CreateKeySchema);
          return isApiError(input) ? failure(input) : answer(201, await service.createKey(id, input));
        },
      },
    },
    {
      pattern: ['connections', ':', 'keys', ':'],
      methods: {
        GET: ([id, key]) => answer(200, service.key(id, key)),
        DELETE: async ([id, key]) => empty(await service.revokeKey(id, key)),
      },
    },
    {
      pattern: ['connections', ':', 'keys', ':', 'rotate'],
      methods: {
        POST: async ([id, key], read) => {
          const input = await read(RotateKeySchema);
          return isApiError(input) ? failure(input) : answer(201, await service.rotateKey(id, key, input));
        },
      },
    },
    {
      pattern: ['connections', ':', 'webhooks'],
      methods: {
        GET: ([id]) => answer(200, service.webhooks(id)),
        POST: async ([id], read) => {
          const input = await read(CreateWebhookSchema);
          return isApiError(input) ? failure(input) : answer(201, await service.createWebhook(id, input));
        },
      },
    },
    { pattern: ['connections', ':', 'webhooks', ':'], methods: { DELETE: async ([id, name]) => empty(await service.removeWebhook(id, name)) } },
    { pattern: ['connections', ':', 'webhooks', ':', 'deliveries'], methods: { GET: async ([id, name]) => answer(200, await service.deliveries(id, name)) } },
    // 200 whatever the receiver answered: its status is in the body.
    { pattern: ['connections', ':', 'webhooks', ':', 'ping'], methods: { POST: async ([id, name]) => answer(200, await service.ping(id, name)) } },
  ];
  if (uploads !== undefined) {
    routes.push({
      pattern: ['files', ':'],
      methods: {
        // The name and the query are checked before the body is read: a refused upload costs no transfer.
        PUT: async ([name], _read, _origin, query, raw) => {
          const refused = checkUploadName(name);
          if (refused !== null) return failure(refused);
          const replace = replaceOf(query);
          if (isApiError(replace)) return failure(replace);
          const bytes = await raw(uploads.uploadBytes);
          if (isApiError(bytes)) return failure(bytes.code === 'payload_too_large' ? tooLargeUpload(uploads) : bytes);
          const stored = await storeUpload(name, bytes, replace, uploads);
          return isApiError(stored) ? failure(stored) : json(stored.replaced ? 200 : 201, stored);
        },
      },
    });
  }
  if (google !== undefined) {
    routes.push(
      { pattern: ['google'], methods: { GET: (_params, _read, origin) => json(200, { ...google.describe(origin), links: { authorize: '/_admin/google/authorize' } }) } },
      {
        pattern: ['google', 'authorize'],
        methods: {
          POST: async (_, read, origin) => {
            const input = await read(AuthorizeSchema);
            return isApiError(input) ? failure(input) : answer(200, google.authorize(input, origin));
          },
        },
      },
      {
        pattern: ['google', 'new-key'],
        methods: {
          POST: async (_, read) => {
            const input = await read(NewKeySchema);
            return isApiError(input) ? failure(input) : answer(200, google.newKey(input));
          },
        },
      },
    );
  }

  return async (request, readBody) => {
    // Google's redirect back cannot carry the admin token: the flow's `state` stands for it.
    if (google !== undefined && request.method === 'GET' && new URL(request.url, 'http://localhost').pathname === CALLBACK_PATH) return google.callback(request.url);
    const address = clientAddressOf(request);
    // Before the token is even looked at: during a lockout the right token is refused too.
    const throttled = throttle.check(address);
    if (throttled !== null) return failure(throttled);
    const refused = checkToken(request.headers.get('authorization'), expected);
    if (refused !== null) {
      if (refused.code === 'authentication_failed') throttle.failed(address);
      return failure(refused, CHALLENGE);
    }
    throttle.succeeded(address);
    const segments = segmentsOf(request.url);
    if (segments === null) {
      // An upload's name is the client's text: percent-encoding that is not UTF-8 is a bad name (400), as other bad names are.
      const upload = uploads === undefined || request.method !== 'PUT' ? null : /^\/_admin\/files\/([^/]+)$/.exec(new URL(request.url, 'http://localhost').pathname);
      return failure(upload === null ? apiError('not_found', 'No admin resource at this path.') : undecodableUploadName(upload[1]));
    }
    const route = routes.find((each) => matches(each.pattern, segments));
    if (route === undefined) return failure(apiError('not_found', `No admin resource at /_admin/${segments.join('/')}; see docs/admin-api.md.`));
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    const handler = route.methods[method];
    if (handler === undefined) {
      const allowed = Object.keys(route.methods).flatMap((name) => (name === 'GET' ? ['GET', 'HEAD'] : [name]));
      return failure(apiError('method_not_allowed', `${request.method} is not allowed here; use ${allowed.join(', ')}.`, { Allow: allowed.join(', ') }));
    }
    const params = segments.filter((_, index) => route.pattern[index] === ':');
    const read: ReadBody = async (schema) => {
      const bytes = await readBody();
      return isApiError(bytes) ? bytes : parseAdminBody(schema, request.headers.get('content-type'), bytes);
    };
    // The Host was checked against allowedHosts before routing; behind a proxy, admin.google.redirectUri says better.
    const host = request.headers.get('host');
    const url = new URL(request.url, 'http://localhost');
    return handler(params, read, host === null ? url.origin : `http://${host}`, url.searchParams, (maxBytes) => readBody(maxBytes));
  };
}

/** `?days=30` (the default) -> 30; 1 to KEEP_DAYS, else 400 naming the range. */
function daysOf(query: URLSearchParams): number | ApiError {
  const unknown = [...query.keys()].find((name) => name !== 'days');
  if (unknown !== undefined) return apiError('invalid_parameter', `Unknown parameter "${unknown}"; the usage history takes only "days" (1 to ${KEEP_DAYS}).`);
  const given = query.getAll('days');
  if (given.length === 0) return DEFAULT_HISTORY_DAYS;
  const days = given.length === 1 && /^[0-9]{1,3}$/.test(given[0]) ? Number(given[0]) : Number.NaN;
  if (!(days >= 1 && days <= KEEP_DAYS)) return apiError('invalid_parameter', `"days" must be a whole number from 1 to ${KEEP_DAYS} (the days of history kept); got "${given.join('", "').slice(0, 40)}".`);
  return days;
}

/** Days of history answered when `days` is left out. */
const DEFAULT_HISTORY_DAYS = 30;

function checkToken(header: string | null, expected: Uint8Array): ApiError | null {
  const presented = /^Bearer +(\S+) *$/i.exec(header ?? '');
  if (presented === null) {
    return apiError('not_authenticated', 'The admin API needs the admin token: send Authorization: Bearer <token>.');
  }
  // Digests have one length, as timingSafeEqual requires, whatever length was sent.
  if (!timingSafeEqual(digestKey(presented[1]), expected)) {
    return apiError('authentication_failed', 'The admin token in the Authorization header is not valid.');
  }
  return null;
}

/** `/_admin/connections/crm` -> ['connections', 'crm'], decoded; null for a path that cannot be decoded. */
function segmentsOf(url: string): string[] | null {
  const path = new URL(url, 'http://localhost').pathname;
  const rest = path.replace(/^\/_admin\/?/, '').replace(/\/$/, '');
  try {
    return rest === '' ? [] : rest.split('/').map((segment) => decodeURIComponent(segment));
  } catch {
    return null;
  }
}

function matches(pattern: readonly string[], segments: readonly string[]): boolean {
  return pattern.length === segments.length && pattern.every((part, index) => part === ':' || part === segments[index]);
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Answer {
  return { status, headers: { 'Content-Type': JSON_CONTENT_TYPE, ...NO_STORE, ...headers }, body: JSON.stringify(body) };
}

function answer(status: number, result: unknown): Answer {
  return isApiError(result) ? failure(result) : json(status, result);
}

function empty(result: ApiError | null): Answer {
  return result === null ? { status: 204, headers: { ...NO_STORE }, body: '' } : failure(result);
}

function failure(error: ApiError, headers: Record<string, string> = {}): Answer {
  return errorAnswer(error, { ...NO_STORE, ...headers });
}
