// The body and engine stages for everything but GET and HEAD: `POST /sheets/demo` with
// `[{"Name":"Ann"}]` -> the body read under its cap (server/http/read-body.ts), parsed by the
// engine, and the engine's write plan made durable by the source, in arrival order; with an
// Idempotency-Key, once (server/idempotency/). What the engine parses as a read or OPTIONS from
// such a request (an OPTIONS without a preflight's headers) is answered over the source's workbook.
import { execute } from '../../lib/engine.ts';
import { operationsOf, parseRequest, type ParsedRequest } from '../../lib/parse-request.ts';
import { apiError, isApiError, type ApiError } from '../../lib/errors.ts';
import { isOpen } from '../auth.ts';
import type { Connection } from '../connections.ts';
import { KeyStore } from '../idempotency/file-store.ts';
import { idempotent, keyCaller, OPEN_CALLER, type KeyStoreLike } from '../idempotency/idempotency.ts';
import type { Workbook } from '../../lib/workbook.ts';
import type { CarriedWrite, Feed } from '../feed/feed.ts';
import type { Logger } from '../log.ts';
import { readBody, type BodyLimits } from './read-body.ts';
import type { IncomingRequest } from './request.ts';
import { errorAnswer, type Answer } from './respond.ts';

export class Writes {
  readonly #bodyLimits: BodyLimits;
  readonly #log: Logger;
  /** Told of every acknowledged write (server/feed/); null: no change feed. */
  readonly #feed: Feed | null;
  // A connection opened without a store of its own (in-process use) keeps its keys in memory.
  readonly #memoryKeyStores = new WeakMap<Connection, KeyStore>();

  constructor(bodyLimits: BodyLimits, log: Logger, feed: Feed | null = null) {
    this.#bodyLimits = bodyLimits;
    this.#log = log;
    this.#feed = feed;
  }

  /** The answer of a request other than GET and HEAD, once its body is read and its write, if any, is durable. */
  async answer(connection: Connection, request: IncomingRequest): Promise<Answer> {
    let body: Uint8Array | null = null;
    if (request.method === 'POST' || request.method === 'PATCH' || request.method === 'PUT') {
      const read = await readBody(request, this.#bodyLimits);
      if (isApiError(read)) return errorAnswer(read);
      body = read;
    }
    const parsed = parseRequest({ method: request.method, url: request.url, headers: request.headers, body }, connection.engine);
    if (isApiError(parsed)) return errorAnswer(parsed);
    const lacking = lackingOperation(connection, parsed);
    if (lacking !== null) return errorAnswer(lacking);
    if (parsed.action === 'read' || parsed.action === 'options') {
      const result = execute(await connection.source.read(), parsed, connection.engine);
      return { status: result.status, headers: result.headers, body: result.bytes ?? result.body };
    }
    // A write with an Idempotency-Key runs once; its retries get the stored answer (idempotency.ts).
    // The key is the caller's own: the API key that authenticated it (one scope on an open connection).
    // Hashed only when the write sends an Idempotency-Key: most writes send none.
    const caller = () => (isOpen(connection) ? OPEN_CALLER : keyCaller(request.headers.get('x-api-key') ?? ''));
    const feed = this.#feed;
    return idempotent(this.#keyStoreOf(connection), connection.source, request, body, caller, async (source) => {
      let before: Workbook | null = null;
      // The write's events when its journal line carries them (a file source, with webhooks).
      let carried = null as CarriedWrite | null;
      const result = await source
        .write(
          (workbook) => {
            const result = execute(workbook, parsed as ParsedRequest, connection.engine);
            before = workbook;
            // The engine's WritePlan, which the source makes durable (`plan` in the Source contract): no billing plan.
            const writePlan = result.plan;
            // Asked for only by a source with a journal, while it plans: the events then need no fsync of their own.
            const events = feed === null || writePlan === null ? undefined : () => (carried = feed.carry(connection.id, writePlan, workbook, result.workbook))?.events ?? [];
            return { plan: writePlan, workbook: result.workbook, result, ...(events === undefined ? {} : { events }) };
          },
          // A key limited to some tabs writes to the first of them when it names none: every tab is needed to know which.
          parsed.tab === null && connection.engine.visibleTabs !== undefined ? {} : { tab: parsed.tab },
        )
        .finally(() => carried?.settle());
      // Acknowledged by the source (a refused or failed write threw above): its events, without waiting.
      // A connection with webhooks: the answer waits for the events' fsync in its outbox (unless the
      // journal line carried them), never for a receiver.
      if (feed !== null && result.plan !== null && before !== null) await feed.wrote(connection.id, result.plan, before, result.workbook, carried);
      return { status: result.status, headers: result.headers, body: result.body };
    }, (message) => this.#log.error(message));
  }

  #keyStoreOf(connection: Connection): KeyStoreLike {
    if (connection.idempotency !== undefined) return connection.idempotency;
    let store = this.#memoryKeyStores.get(connection);
    if (store === undefined) this.#memoryKeyStores.set(connection, (store = KeyStore.memory()));
    return store;
  }
}

/**
 * An upsert may update rows as well as create them (`POST ?_upsert=Email`): the quota stage
 * counted it as a create, by its method; a plan without updates refuses it here (402, as the
 * quota stage refuses an operation), before any row is touched.
 */
function lackingOperation(connection: Connection, parsed: ParsedRequest): ApiError | null {
  const plan = connection.plan;
  if (plan === undefined) return null;
  const missing = operationsOf(parsed).find((operation) => !plan.operations.includes(operation));
  return missing === undefined ? null : apiError('throttle', `The plan "${plan.name}" does not include ${missing} requests (an upsert both creates and updates rows).`);
}
