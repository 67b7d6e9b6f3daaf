// GET / -> a small JSON index of what this server serves to anyone: the open connections (those
// that need no key) with their links, so a newcomer who opens the server's address finds a way
// in instead of a 404. Connections that need a key are left out: their ids are for their owners.
//   {"name":"sheetrest","connections":[{"id":"demo","links":{"rows":"/sheets/demo",...}}],"links":{"health":"/healthz"}}
import { apiError } from '../../lib/errors.ts';
import { JSON_CONTENT_TYPE } from '../../lib/headers.ts';
import type { Connection } from '../connections.ts';
import { isOpen } from '../auth.ts';
import { errorAnswer, type Answer } from './respond.ts';

export function rootIndex(method: string, connections: readonly Connection[]): Answer {
  if (method !== 'GET' && method !== 'HEAD') {
    return errorAnswer(apiError('method_not_allowed', `${method} is not allowed on /; use GET.`, { Allow: 'GET, HEAD' }));
  }
  const open = connections.filter((connection) => isOpen(connection));
  const body = {
    name: 'sheetrest',
    connections: open.map((connection) => {
      const base = `/sheets/${encodeURIComponent(connection.id)}`;
      return { id: connection.id, links: { rows: base, tabs: `${base}/tabs`, openapi: `${base}/openapi.json` } };
    }),
    links: { health: '/healthz' },
  };
  // no-store: the list changes when the admin API adds or removes a connection.
  return { status: 200, headers: { 'Content-Type': JSON_CONTENT_TYPE, 'Cache-Control': 'no-store' }, body: JSON.stringify(body) };
}
