// What the shell answers, as plain parts: a status, headers and a body that is JSON text or
// bytes the engine already encoded. `toResponse` makes the Web Response that Deno and Bun take;
// the Node listener writes the parts straight to the socket.
import { ApiError, apiError } from '../../lib/errors.ts';
import { JSON_CONTENT_TYPE } from '../../lib/headers.ts';

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string | Uint8Array;
  /**
   * A body sent as it is produced, each chunk flushed as written (the change feed's
   * `text/event-stream`, server/http/events.ts); `body` is then ''. Cancelled when the client goes.
   */
  readonly stream?: ReadableStream<Uint8Array>;
}

export function errorAnswer(error: ApiError, headers: Record<string, string> = {}): Answer {
  // No cache may keep an error: a 404 is otherwise cacheable by heuristics, and would outlive the fix.
  return { status: error.status, headers: { 'Content-Type': JSON_CONTENT_TYPE, 'Cache-Control': 'no-store', ...headers, ...error.headers }, body: JSON.stringify(error) };
}

/** Anything thrown that is not an ApiError is our fault: the client sees a bare 500, the log the detail. */
export function asApiError(error: unknown): ApiError {
  return error instanceof ApiError ? error : apiError('internal_error', 'The server failed to answer this request; it has been logged.');
}

/** How an answer's body becomes a Response body; Deno's listener passes `textOnceSeen`. */
export type BodyOf = (body: string | Uint8Array) => BodyInit;

/** What a listener's runtime allows in making Responses (server/runtime/deno.ts). */
export interface ResponseOptions {
  readonly bodyOf?: BodyOf;
  /**
   * A kept Response with no body (a 304, a HEAD answer) is sent again as the same object, not a
   * clone. Deno reads a returned Response and leaves it as it was; Bun empties its headers once
   * it has sent it, so there only a clone can go out again (test/http/caching.test.ts fails otherwise).
   */
  readonly reuseBodiless?: boolean;
}

const asIs: BodyOf = (body) => body as BodyInit;

/** The Response for a request: at once when the app answered at once (a kept answer), else once it has. */
export function respond(app: { answer(request: Request): Answer | Promise<Answer> }, request: Request, options?: ResponseOptions): Response | Promise<Response> {
  const answered = app.answer(request);
  return answered instanceof Promise ? answered.then((done) => toResponse(done, request.method, options)) : toResponse(answered, request.method, options);
}

export function toResponse(answer: Answer, method: string, { bodyOf = asIs, reuseBodiless = false }: ResponseOptions = {}): Response {
  // An answer met a second time (a kept answer, sent again as the same object: server/http/caching.ts)
  // gets a Response made once and cloned after: a clone skips turning the headers object into
  // header fields (a 304 with eight headers, in process: Deno 2.5 µs made, 0.3 µs cloned; Bun 1 µs, 0.3 µs).
  if (answer.stream !== undefined) return newResponse(answer, method, bodyOf);
  const made = method === 'HEAD' ? headResponses : getResponses;
  const seen = made.get(answer);
  // Bodiless is told from the answer: asking a Response for its `body` would turn Deno's kept text
  // into a stream, which every later clone would tee and send chunked.
  if (seen !== undefined) return reuseBodiless && isBodiless(answer, method) ? seen : seen.clone();
  const response = newResponse(answer, method, bodyOf);
  // The first time, only a mark: most answers (errors, writes, one filter) are met once.
  if (!answerMarks.has(answer)) answerMarks.add(answer);
  else if (typeof answer.body === 'string' || answer.body.byteLength <= KEPT_RESPONSE_MAX_BYTES) made.set(answer, response.clone());
  return response;
}

/**
 * Deno and Bun copy a byte body into each Response they make (a string they share): a Response
 * kept for a large byte answer (a whole tab) would hold a second copy of it for as long as the
 * answer lives. Past this size the header fields are a small part of the cost anyway.
 */
const KEPT_RESPONSE_MAX_BYTES = 64 * 1024;

const answerMarks = new WeakSet<Answer>();
const getResponses = new WeakMap<Answer, Response>();
const headResponses = new WeakMap<Answer, Response>();

/** The answers whose Response is made with no body: 204, 304 and every HEAD answer. */
function isBodiless(answer: Answer, method: string): boolean {
  return answer.status === 204 || answer.status === 304 || method === 'HEAD';
}

function newResponse(answer: Answer, method: string, bodyOf: BodyOf): Response {
  if (answer.stream !== undefined) return new Response(answer.stream, { status: answer.status, headers: answer.headers });
  // 204 and 304 may carry no body at all.
  if (answer.status === 204 || answer.status === 304) return new Response(null, { status: answer.status, headers: answer.headers });
  // A HEAD answer is GET's without the body, which it still measures.
  if (method === 'HEAD') return new Response(null, { status: answer.status, headers: { ...answer.headers, 'Content-Length': String(byteLength(answer.body)) } });
  return new Response(bodyOf(answer.body), { status: answer.status, headers: answer.headers });
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Deno's Response copies a byte body in JavaScript every time (a new ArrayBuffer per answer),
 * but hands a string to its HTTP layer as it is: with the same 61 KB answer, text served 1.6x
 * the requests bytes did (docs/benchmarks.md). So Deno's listener sends a byte answer met a
 * second time (the whole-tab answer the engine keeps with the table is the same Uint8Array on
 * every read) as its text, decoded once; the same UTF-8 goes out. Bun gains nothing from this,
 * and Node writes the bytes itself.
 */
export const textOnceSeen: BodyOf = (body) => {
  if (typeof body === 'string' || body.byteLength > TEXT_BODY_MAX_BYTES) return body as BodyInit;
  const seen = seenBodies.get(body);
  if (typeof seen === 'string') return seen;
  if (seen === undefined) {
    // Most byte answers (a filter's rows) are built for one request: keep only the mark.
    seenBodies.set(body, null);
    return body as BodyInit;
  }
  const text = decoder.decode(body);
  seenBodies.set(body, text);
  return text;
};

/** Up to this size: the text is kept as long as the engine keeps the bytes, so it costs memory too. */
const TEXT_BODY_MAX_BYTES = 1024 * 1024;
const seenBodies = new WeakMap<Uint8Array, string | null>();

function byteLength(body: string | Uint8Array): number {
  return typeof body === 'string' ? encoder.encode(body).byteLength : body.byteLength;
}
