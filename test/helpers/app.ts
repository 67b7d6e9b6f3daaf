// The app over one source, in process, for tests that drive a source through HTTP-shaped
// requests without a listener: `const call = await appOver(t, source); await call('/sheets/crm')`.
// The quota store's temp folder is removed after the test; the source is the caller's to close.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../server/http/app.ts';
import type { App } from '../../server/http/request.ts';
import { createLogger, type Logger } from '../../server/log.ts';
import { openQuotaStore } from '../../server/quota/quota.ts';
import type { Source } from '../../server/sources/source.ts';

export type Call = (path: string, init?: RequestInit) => Promise<Response>;

/** Serves `source` as the open, writable connection `id` (default `crm`). */
export async function appOver(t: { after(fn: () => Promise<void>): void }, source: Source, options: { id?: string; log?: Logger } = {}): Promise<Call> {
  const stateDir = await mkdtemp(join(tmpdir(), 'sheetrest-app-'));
  const quota = await openQuotaStore({ stateDir });
  const app = createApp({
    connections: [{ id: options.id ?? 'crm', source, keys: [], readOnly: false, engine: {} }],
    quota,
    bodyBytes: 1024 * 1024,
    cors: '*',
    log: options.log ?? createLogger('silent'),
  });
  t.after(async () => {
    await quota.close();
    await rm(stateDir, { recursive: true, force: true });
  });
  return (path, init = {}) => app.fetch(new Request('http://x' + path, init));
}

/** Serves `source` as the open, writable connection `id` (default `book`), with no quota at all: for tests that need the app object itself. */
export function appOf(source: Source, id = 'book'): App {
  return createApp({
    connections: [{ id, source, keys: [], readOnly: false, engine: { formulas: false, maxRows: 5000 } }],
    quota: { take: () => ({ allowed: true, headers: {} }), peek: () => ({}) },
    bodyBytes: 1024 * 1024,
    cors: '*',
    log: createLogger('silent'),
  });
}

/** One request of a list: a path under the connection, a method and a JSON body. */
export interface WriteCall {
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
}

/** Sends `calls` in order (`/sheets/<id>` + path), JSON bodies as application/json; their statuses. */
export async function statusesOf(call: Call, id: string, calls: readonly WriteCall[]): Promise<number[]> {
  const statuses: number[] = [];
  for (const { method, path, body } of calls) {
    const init: RequestInit = body === undefined ? { method } : { method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
    const answer = await call(`/sheets/${id}${path}`, init);
    statuses.push(answer.status);
    await answer.body?.cancel();
  }
  return statuses;
}
