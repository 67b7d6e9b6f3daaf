// A plan's rate limit in a connection's OpenAPI document: `"rateLimit": {"requests": 60,
// "perSeconds": 10}` -> the `RateLimit-Policy` and `RateLimit` headers on every response, and 429
// `rate_limited` (with `Retry-After`) named on every operation. Applied to a built document, so
// a connection without a limit gets the document it always got.
import { errorResponse, ref, type JsonObject } from './components.ts';

export interface RateLimitDescribed {
  readonly requests: number;
  readonly perSeconds: number;
}

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options'];

/** Adds the rate limit's headers and 429 to `document` (built by buildOpenApi), in place. */
export function describeRateLimit(document: JsonObject, limit: RateLimitDescribed): void {
  const components = document.components as Record<string, Record<string, JsonObject>>;
  const per = `${limit.requests} requests per ${limit.perSeconds} s for each key (each client address on a connection without keys)`;
  components.headers = {
    ...components.headers,
    'RateLimit-Policy': { description: `The plan's rate limit (IETF httpapi draft): \`"<plan>";q=${limit.requests};w=${limit.perSeconds}\`, ${per}.`, schema: { type: 'string' } },
    RateLimit: { description: 'What is left of the current window: `"<plan>";r=<requests left>;t=<seconds until it ends>`.', schema: { type: 'string' } },
  };
  for (const response of Object.values(components.responses)) {
    if (typeof response.headers === 'object' && response.headers !== null) {
      response.headers = { ...(response.headers as JsonObject), 'RateLimit-Policy': ref('headers', 'RateLimit-Policy'), RateLimit: ref('headers', 'RateLimit') };
    }
  }
  for (const item of Object.values(document.paths as Record<string, JsonObject>)) {
    for (const method of METHODS) {
      const operation = item[method] as JsonObject | undefined;
      // /healthz has no key and no plan: never limited.
      if (operation === undefined || (Array.isArray(operation.security) && operation.security.length === 0)) continue;
      const responses = operation.responses as JsonObject;
      if (!('429' in responses)) operation.responses = sortedResponses({ ...responses, 429: errorResponse(429) });
    }
  }
}

/** Statuses ascending, then `default`, as the other operations list them. */
function sortedResponses(responses: JsonObject): JsonObject {
  const entries = Object.entries(responses);
  const statuses = entries.filter(([status]) => status !== 'default').sort(([a], [b]) => Number(a) - Number(b));
  return Object.fromEntries([...statuses, ...entries.filter(([status]) => status === 'default')]);
}
