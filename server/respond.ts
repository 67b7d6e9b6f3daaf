// What the shell answers, as plain parts: a status, headers and a body that is JSON text or
// bytes the engine already encoded. `toResponse` makes the Web Response that Deno and Bun take;
// the Node listener writes the parts straight to the socket.
import { ApiError, apiError } from '../lib/errors.ts';
import { JSON_CONTENT_TYPE } from '../lib/headers.ts';

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string | Uint8Array;
}

export function errorAnswer(error: ApiError, headers: Record<string, string> = {}): Answer {
  return { status: error.status, headers: { 'Content-Type': JSON_CONTENT_TYPE, ...headers, ...error.headers }, body: JSON.stringify(error) };
}

/** Anything thrown that is not an ApiError is our fault: the client sees a bare 500, the log the detail. */
export function asApiError(error: unknown): ApiError {
  return error instanceof ApiError ? error : apiError('internal_error', 'The server failed to answer this request; it has been logged.');
}

export function toResponse(answer: Answer, method: string): Response {
  // 204 and 304 may carry no body at all.
  if (answer.status === 204 || answer.status === 304) return new Response(null, { status: answer.status, headers: answer.headers });
  // A HEAD answer is GET's without the body, which it still measures.
  if (method === 'HEAD') return new Response(null, { status: answer.status, headers: { ...answer.headers, 'Content-Length': String(byteLength(answer.body)) } });
  return new Response(answer.body as BodyInit, { status: answer.status, headers: answer.headers });
}

const encoder = new TextEncoder();

function byteLength(body: string | Uint8Array): number {
  return typeof body === 'string' ? encoder.encode(body).byteLength : body.byteLength;
}
