// What a throw becomes: the client's own mistake as its error (a request target no URL can hold,
// an ApiError thrown on its behalf), anything else our fault: logged once, a bare 500 to the client.
import { apiError } from '../../lib/errors.ts';
import type { Connection } from '../connections.ts';
import type { Logger } from '../log.ts';
import type { IncomingRequest } from './request.ts';
import { asApiError, errorAnswer, type Answer } from './respond.ts';

/** A throw while routing or answering, before a connection was found or outside one. */
export function failureAnswer(log: Logger, request: IncomingRequest, error: unknown): Answer {
  // Routing parses the URL; a target no URL can hold (`GET http://h:99999/ HTTP/1.1`, which
  // Deno passes on) is the client's mistake. Checked only here, off the hot path.
  if (!URL.canParse(request.url)) return errorAnswer(apiError('invalid_parameter', 'The request target is not a path or URL the server can read.'));
  log.error('request failed', { error: String(error) });
  return errorAnswer(asApiError(error));
}

/** A throw while answering on a connection: the client's error as it is, ours logged (with the connection) and a bare 500. */
export function sheetFailureAnswer(log: Logger, connection: Connection, error: unknown): Answer {
  const apiErr = asApiError(error);
  if (apiErr.code === 'internal_error') log.error('request failed', { connection: connection.id, error: String(error) });
  return errorAnswer(apiErr);
}
