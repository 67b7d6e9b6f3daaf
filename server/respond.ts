// Responses the shell builds: JSON text with the engine's headers plus the shell's own. The text
// is remembered beside the Response so the Node listener can write it without re-reading the
// body stream (the Deno and Bun servers take the Response as it is).
import { ApiError, apiError } from '../lib/errors.ts';
import { JSON_CONTENT_TYPE } from '../lib/headers.ts';

const texts = new WeakMap<Response, string>();

export function textResponse(status: number, headers: Record<string, string>, body: string): Response {
  // 204 and 304 may not carry a body at all, not even an empty one.
  const response = new Response(status === 204 || status === 304 ? null : body, { status, headers });
  texts.set(response, body);
  return response;
}

/** The body text of a Response built by `textResponse`, if it was. */
export function responseText(response: Response): string | undefined {
  return texts.get(response);
}

export function errorResponse(error: ApiError, headers: Record<string, string> = {}): Response {
  return textResponse(error.status, { 'Content-Type': JSON_CONTENT_TYPE, ...headers, ...error.headers }, JSON.stringify(error));
}

/** Anything thrown that is not an ApiError is our fault: the client sees a bare 500, the log the detail. */
export function asApiError(error: unknown): ApiError {
  return error instanceof ApiError ? error : apiError('internal_error', 'The server failed to answer this request; it has been logged.');
}
