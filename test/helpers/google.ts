// What a test sees of the Google emulator's traffic: one short string per upstream request.
import type { Emulator, LoggedRequest } from '../../tools/google-emulator/mod.ts';

/** What each upstream request read: `list` (no cells), `all` (every tab's cells), `tab 'People'!1:10000`, or the write (`POST values:batchUpdate`). */
export function upstreamReads(emulator: Emulator): string[] {
  return emulator.requests.map(describe);
}

function describe(request: LoggedRequest): string {
  if (request.method !== 'GET') return `${request.method} ${request.path.split('/').at(-1)}`;
  const query = new URLSearchParams(request.query);
  const ranges = query.getAll('ranges');
  if (ranges.length > 0) return `tab ${ranges.join(', ')}`;
  return query.get('fields')?.includes('rowData') === true ? 'all' : 'list';
}
