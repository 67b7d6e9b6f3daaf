// The auth stage: who may ask this connection what. `GET /sheets/crm` with `X-Api-Key: a-read-key`
// -> the key's operations (`["read"]`) and tabs; no key -> 401, a wrong or expired one -> 401, a
// key while this instance is out of touch with the admin API's state -> 503. An open connection
// takes any caller (its key header is not even read), except a write from another site's page
// that `cors.writes` does not allow. After the quota, `operationRefusal` turns away what the key
// may not do (403 naming what it may), and a write to a read-only connection.
import { apiError, isApiError, type ApiError } from '../../lib/errors.ts';
import type { Operation } from '../../lib/parse-request.ts';
import { authenticate, isOpen, OPEN_ACCESS, operationRefusal, type Authenticated } from '../auth.ts';
import type { Connection } from '../connections.ts';
import { openWriteRefusal, type CorsWrites, type Origins } from './cors.ts';
import type { IncomingRequest } from './request.ts';

/** What the auth stage reads of the server's settings. */
export interface AccessSettings {
  readonly cors: Origins;
  readonly corsWrites: CorsWrites;
  /** The 503 while this instance may hold a revoked key (server/admin/redis-state.ts); null while it is in touch. */
  readonly keysStale?: () => ApiError | null;
  /** The clock keys expire by (ms since the epoch); Date.now when left out. */
  readonly now?: () => number;
}

/** The caller's access to `connection`, or why it has none. */
export function authorize(settings: AccessSettings, connection: Connection, request: IncomingRequest, origin: string | null): Authenticated | ApiError {
  if (!isOpen(connection) && settings.keysStale !== undefined) {
    const stale = settings.keysStale();
    if (stale !== null) return stale;
  }
  // A closed connection with no keys left refuses everyone: an empty key list never opens it.
  const authenticated = isOpen(connection) ? OPEN_ACCESS : authenticate(connection.keys, request.headers.get('x-api-key'), settings.now === undefined ? Date.now() : settings.now());
  if (isApiError(authenticated)) return authenticated;
  return openWriteRefusal(settings.cors, settings.corsWrites, request, origin, isOpen(connection)) ?? authenticated;
}

/** 403 for what the key may not do, or a write to a connection that cannot write; null when allowed. */
export function permissionRefusal(connection: Connection, operation: Operation, operations: readonly Operation[]): ApiError | null {
  const denied = operationRefusal(operations, operation);
  if (denied !== null) return denied;
  if (operation === 'read') return null;
  if (connection.readOnly || !connection.source.writable) {
    return apiError('write_error', `The connection "${connection.id}" is read-only: it has no edit access to its spreadsheet.`);
  }
  return null;
}
