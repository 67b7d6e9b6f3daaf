// Stand-ins for a connection's source while it cannot serve: one being replaced by a PATCH
// (503, Retry-After: 1, as while the server starts) and one stored connection that could not be
// opened (503, Retry-After: 60). Its clients are not told why: the reason may name paths, and
// is shown to the admin API only.
import { apiError, type ApiError } from '../../lib/errors.ts';
import type { Source } from '../sources/source.ts';

/** A source that is being replaced: 503 with Retry-After: 1, as while the server starts. */
export function pausedSource(id: string): Source {
  return failingSource(`connection ${id} (being changed)`, () => apiError('upstream_unavailable', `The connection "${id}" is being changed; try again in a moment.`, { 'Retry-After': '1' }));
}

/** A stored connection that could not be opened: 503 to its clients (the reason is for the admin API only: it may name paths). */
export function brokenSource(id: string, problem: string): Source {
  return failingSource(`connection ${id} (unavailable: ${problem})`, () =>
    apiError('upstream_unavailable', `The connection "${id}" cannot be served right now; its administrator has been told why.`, { 'Retry-After': '60' }),
  );
}

function failingSource(description: string, error: () => ApiError): Source {
  return {
    description,
    // Writes reach `write` and get the 503 too, rather than a misleading 403 write_error.
    writable: true,
    read: () => Promise.reject(error()),
    write: () => Promise.reject(error()),
    close: () => Promise.resolve(),
  };
}
