// The operations of the contract as OpenAPI Operation objects, for one tab's schemas:
// `read('listRows', ...)` is `GET /sheets/demo` (or its HEAD), `write('patch', ...)` a PATCH.
// Each names the error statuses a client should expect of it; `default` covers the rest of the
// catalogue (405, 408, 429, 431, 5xx), as docs/decisions.md ("## 10: OpenAPI") says.
import { errorResponse, ref, type JsonObject } from './components.ts';

export interface OperationContext {
  /** The tab's component key: its schemas are `${key}.Row` and so on. */
  readonly key: string;
  /** Appended to every operationId (`_Staff`); '' for the first tab's unprefixed paths. */
  readonly idSuffix: string;
  readonly tags: readonly string[];
  /** Whether the connection has keys: only then can it answer 401. */
  readonly keyed: boolean;
}

/** Statuses worth naming on every operation; the rest of the catalogue falls under `default`. */
function commonErrors(context: OperationContext): number[] {
  return [400, ...(context.keyed ? [401] : []), 402, 403, 404];
}

function responsesOf(success: Record<string, JsonObject>, errors: number[]): JsonObject {
  const responses: JsonObject = { ...success };
  for (const status of [...new Set(errors)].sort((a, b) => a - b)) responses[String(status)] = errorResponse(status);
  responses.default = ref('responses', 'Error');
  return responses;
}

const parameterRefs = (names: readonly string[]): JsonObject[] => names.map((name) => ref('parameters', name));

/** GET (with `head`: HEAD) of rows: the tab's rows in the `_format` asked for. */
export function read(id: string, summary: string, context: OperationContext, parameters: readonly (string | JsonObject)[], head: boolean): JsonObject {
  const params = parameters.map((parameter) => (typeof parameter === 'string' ? ref('parameters', parameter) : parameter));
  const ok = head ? ref('responses', 'Head') : ref('responses', `${context.key}.Rows`);
  return {
    operationId: head ? `head${id[0].toUpperCase()}${id.slice(1)}${context.idSuffix}` : `${id}${context.idSuffix}`,
    summary: head ? `${summary} (headers only)` : summary,
    tags: [...context.tags],
    parameters: params,
    responses: responsesOf({ 200: ok, 304: ref('responses', 'NotModified') }, commonErrors(context)),
  };
}

export type WriteKind = 'append' | 'patch' | 'put' | 'delete' | 'batch';

const WRITE_IDS: Record<WriteKind, string> = { append: 'appendRows', patch: 'patch', put: 'put', delete: 'delete', batch: 'batchUpdate' };

/**
 * `GET /sheets/demo/aggregate?_group=City&_agg=count()`: one answer row per group, in the
 * `_format` asked for. GET only: the path takes no write.
 */
export function aggregate(summary: string, context: OperationContext, description: string): JsonObject {
  return {
    operationId: `aggregate${context.idSuffix}`,
    summary,
    description,
    tags: [...context.tags],
    responses: responsesOf({ 200: ref('responses', 'AggregateRows'), 304: ref('responses', 'NotModified') }, commonErrors(context)),
  };
}

/**
 * POST, PATCH, PUT or DELETE; `target` says what the path addresses (`Row`, `Matching`);
 * `pathParameters` narrow the path item's own (a write takes one row where a read takes a slice).
 */
export function write(kind: WriteKind, target: string, summary: string, context: OperationContext, pathParameters: readonly JsonObject[] = []): JsonObject {
  const writeBody = ref('schemas', `${context.key}.Write`);
  const parameters = [...pathParameters, ...parameterRefs(kind === 'append' ? ['upsert', 'idempotencyKey'] : kind === 'put' ? ['ifMatch', 'idempotencyKey', 'methodOverride'] : ['ifMatch', 'idempotencyKey'])];
  // 409: an upsert's key or a row id that two rows hold, an id already taken.
  const errors = [...commonErrors(context), 409, 422];
  if (kind !== 'delete') errors.push(413, 415);
  if (kind !== 'append') errors.push(412);
  const operation: JsonObject = {
    operationId: kind === 'append' ? `appendRows${context.idSuffix}` : `${WRITE_IDS[kind]}${target}${context.idSuffix}`,
    summary,
    tags: [...context.tags],
    parameters,
  };
  if (kind === 'append') {
    const json = { schema: { anyOf: [writeBody, { type: 'array', items: writeBody }] } };
    const form = { schema: writeBody };
    operation.requestBody = {
      required: true,
      description: 'One row (an object) or several (an array, written in order in one write; `[]` writes nothing). `text/plain` is read as JSON; a form posts one row.',
      content: { 'application/json': json, 'text/plain': json, 'application/x-www-form-urlencoded': form, 'multipart/form-data': form },
    };
    operation.responses = responsesOf({ 200: ref('responses', `${context.key}.Upserted`), 201: ref('responses', `${context.key}.Created`) }, errors);
    return operation;
  }
  if (kind === 'batch') {
    const item = {
      type: 'object',
      required: ['where', 'set'],
      additionalProperties: false,
      properties: {
        where: {
          description: '`{"_index": n}` (a data row, zero-based; past the last: 404 `row_not_found`), or conditions as `/query` takes them: `{"Email": "a@x.org", "Age": "__gt(30)"}`, a list for a column given twice.',
          type: 'object',
          minProperties: 1,
          additionalProperties: { anyOf: [{ type: ['string', 'number', 'boolean'] }, { type: 'array', minItems: 1, items: { type: ['string', 'number', 'boolean'] } }] },
        },
        set: writeBody,
      },
    };
    const json = { schema: { type: 'array', items: item } };
    operation.requestBody = {
      required: true,
      description: 'Items applied in order, each on the rows the ones before it left, in one atomic write: an invalid item writes nothing, and the error names it (`items[3].where.Age: ...`). An object body is 405.',
      content: { 'application/json': json, 'text/plain': json },
    };
    operation.responses = responsesOf({ 200: ref('responses', `${context.key}.Batch`) }, errors);
    return operation;
  }
  if (kind !== 'delete') {
    const json = { schema: writeBody };
    operation.requestBody = {
      required: true,
      description: kind === 'patch' ? 'The columns to set; the others keep their values.' : 'The whole row: columns left out become empty.',
      content: { 'application/json': json, 'text/plain': json },
    };
  }
  operation.responses = responsesOf({ 200: ref('responses', `${context.key}.${kind === 'delete' ? 'Removed' : 'Written'}`) }, errors);
  return operation;
}

/** OPTIONS: the methods of the path, in `Allow`. */
export function options(id: string, context: OperationContext): JsonObject {
  return {
    operationId: `options${id}${context.idSuffix}`,
    summary: 'The methods this path accepts (every path answers OPTIONS the same way; a CORS preflight needs no key).',
    tags: [...context.tags],
    responses: responsesOf({ 204: ref('responses', 'Options') }, commonErrors(context)),
  };
}

/** The statuses a request for the document itself may answer. */
export function documentResponses(keyed: boolean, ok: JsonObject): JsonObject {
  return responsesOf({ 200: ok }, commonErrors({ key: '', idSuffix: '', tags: [], keyed }));
}
