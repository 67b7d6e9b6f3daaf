// The engine stage for GET and HEAD: `GET /sheets/demo?Age=__gte(18)` -> the answer kept for this
// path and query while the tab it was built from is still served (its 304 when If-None-Match
// names it), else parsed and built by the engine (lib/engine.ts) over the source's workbook, and
// kept (server/http/answer-cache.ts). The workbook is taken at once where the source has it
// (`readNow`), so a kept answer goes out in the same turn; else it is waited for.
import { execute, findTab } from '../../lib/engine.ts';
import { isApiError } from '../../lib/errors.ts';
import { parseRequest, type EngineOptions, type ParsedRequest } from '../../lib/parse-request.ts';
import type { Tab, Workbook } from '../../lib/workbook.ts';
import type { Connection } from '../connections.ts';
import type { AnswerCache } from './answer-cache.ts';
import { revalidated } from './caching.ts';
import type { IncomingRequest } from './request.ts';
import { errorAnswer, type Answer } from './respond.ts';
import { pathAndQuery, type SheetRoute } from './route.ts';

/** A read's answer; `answers` null: none are kept (`answerCacheBytes: 0`). */
export function answerRead(answers: AnswerCache | null, connection: Connection, request: IncomingRequest, route: SheetRoute): Answer | Promise<Answer> {
  const fresh = /no-cache/i.test(request.headers.get('cache-control') ?? '') || /no-cache/i.test(request.headers.get('pragma') ?? '');
  // Sources that read tab by tab (Google) are told which tab the answer needs. A key limited to
  // some tabs reads the first of them when it names none: which one that is needs every tab.
  const scope = route.scope.tab === null && connection.engine.visibleTabs !== undefined ? {} : route.scope;
  const readOptions = fresh ? { fresh, ...scope } : scope;
  const workbook = connection.source.readNow?.(readOptions);
  if (workbook !== undefined) return answerReadOf(answers, connection, request, route, workbook);
  return connection.source.read(readOptions).then((read) => answerReadOf(answers, connection, request, route, read));
}

function answerReadOf(answers: AnswerCache | null, connection: Connection, request: IncomingRequest, route: SheetRoute, workbook: Workbook): Answer {
  const key = answers === null ? '' : answerKeyOf(connection, request, route);
  const kept = answers?.get(key, workbook);
  const reused = kept === undefined ? undefined : revalidated(kept, request.headers.get('if-none-match'));
  if (reused !== undefined) return reused;
  // HEAD is answered as GET, so its Content-Length is the GET body's; the listener sends no body.
  const parsed = parseRequest({ method: 'GET', url: request.url, headers: request.headers, body: null }, connection.engine);
  if (isApiError(parsed)) return errorAnswer(parsed);
  const result = execute(workbook, parsed, connection.engine);
  const answered: Answer = { status: result.status, headers: result.headers, body: result.bytes ?? result.body };
  // A 304 is kept too: after a restart, clients and caches revalidate with the tags they hold
  // (the same content has the same tag), and the 200 may not be asked for again for a while.
  if (answers !== null && (result.status === 200 || result.status === 304)) answers.set(key, workbook, builtFrom(workbook, parsed, connection.engine), answered, parsed.tab === null);
  return answered;
}

/**
 * The tab an answer depends on, for the answer cache; null when it depends on the whole
 * workbook: `/tabs`, and the "first tab" of a connection hiding hidden tabs or of a key limited
 * to some tabs (which tab is first then depends on the others).
 */
function builtFrom(workbook: Workbook, parsed: ParsedRequest, engine: EngineOptions): Tab | null {
  if (parsed.target.kind === 'tabs' || (parsed.tab === null && (engine.hiddenTabs === 'hide' || engine.visibleTabs !== undefined))) return null;
  const tab = findTab(workbook, parsed.tab);
  return isApiError(tab) ? null : tab;
}

/**
 * A number per connection object, for the answer cache's keys: a connection the admin API changes
 * (hidden tabs, a new source) is a new object, so the old one's answers are never served for it.
 */
function generationOf(connection: Connection): number {
  let generation = generations.get(connection);
  if (generation === undefined) {
    generation = ++lastGeneration;
    generations.set(connection, generation);
  }
  return generation;
}

const generations = new WeakMap<Connection, number>();
let lastGeneration = 0;

/** The answer cache's key of a read: the connection object's number and the path and query as sent. */
export function answerKeyOf(connection: Connection, request: IncomingRequest, route: SheetRoute): string {
  const generation = generationOf(connection);
  if (route.answerKey?.generation === generation) return route.answerKey.key;
  const key = `${generation}\n${pathAndQuery(request.url)}`;
  route.answerKey = { generation, key };
  return key;
}
