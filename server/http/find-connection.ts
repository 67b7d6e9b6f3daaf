// The connection stage: `GET /sheets/demo%20book/...` -> the connection "demo book", or 404
// not_found naming the id as the client sent it (decoded). Looked up on every request, so a
// connection the admin API adds, changes or removes is served from the next request on.
import { apiError, type ApiError } from '../../lib/errors.ts';
import type { Connection, ConnectionLookup } from '../connections.ts';

/** The connection a path's id (`rawId`, as it stands in the path) names, or the 404. */
export function findConnection(connections: ConnectionLookup, rawId: string): Connection | ApiError {
  const connection = connections.get(safeDecode(rawId));
  return connection ?? apiError('not_found', `There is no connection "${safeDecode(rawId)}".`);
}

/** A path segment decoded (`demo%20book` -> `demo book`); one no URL decoder takes is kept as sent. */
export function safeDecode(segment: string): string {
  // Most ids hold no escape: nothing to decode.
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
