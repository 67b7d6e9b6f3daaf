// The webhooks' thread (hub.ts starts it through hub-worker.js): the whole delivery engine
// (webhooks.ts: the outboxes in the state folder, the cursors, every webhook's loop, the retries
// and the POSTs) runs here, so that the thread answering requests only numbers a write's events
// and hands them over. The main thread sends, at most every MESSAGE_EVERY_MS while writes come
// faster, `{kind: 'batch', seq: 7, adopted: [['crm', [event, ...]]], started: 3, ended: 2}` (the
// events its writes' journal lines made durable, and the writes begun and answered since the
// last batch, which deliveries take turns with) and `{kind: 'call', id, method, args}` for
// everything else; this thread answers calls with `{kind: 'reply', id, value}` or `{..., error}`,
// says `{kind: 'appended', seq}` once a batch's events are in the outbox's file (at most every
// ACK_EVERY_MS), and forwards its log lines. It first says `ready` with each outbox's numbering,
// or `failed` when the engine could not open. Secrets come over as text and leave only in signatures.
import { parentPort, workerData } from 'node:worker_threads';
import type { FeedEvent } from '../feed/event.ts';
import type { Fields, Level, Logger } from '../log.ts';
import { callOn, webhookOf, type FromHub, type HubSettings, type Method, type ToHub } from './hub-protocol.ts';
import { ADOPT_FAILED, Webhooks } from './webhooks.ts';

/** How often this thread says which batches are in the outbox's file, at most (the main thread keeps them until then). */
const ACK_EVERY_MS = 100;

const port = parentPort;
if (port !== null) {
  const started = workerData as HubSettings;
  const post = (message: FromHub) => port.postMessage(message);
  const log = forwardingLogger(started.levels, post);
  const connections = started.connections.map((connection) => ({ id: connection.id, webhooks: connection.webhooks.map(webhookOf) }));
  try {
    // POSTs from this thread: it is the delivery worker.
    const engine = await Webhooks.open(started.stateDir, connections, { ...started.settings, deliveryWorker: null }, log);
    serve(engine, post, log);
    post({ kind: 'ready', numbering: engine.numbering() });
  } catch (error) {
    post({ kind: 'failed', error: error instanceof Error ? error.message : String(error) });
  }
}

function serve(engine: Webhooks, post: (message: FromHub) => void, log: Logger): void {
  /** Batches' events are adopted one batch after another (an outbox may still be opening); calls that depend on them wait for them. */
  let adopting: Promise<unknown> = Promise.resolve();
  let appended = 0;
  let acked = 0;
  let ackTimer: ReturnType<typeof setTimeout> | null = null;
  const ack = () => {
    ackTimer = null;
    if (appended === acked) return;
    acked = appended;
    post({ kind: 'appended', seq: acked });
  };
  /** Calls that must see every event handed over before them. */
  const afterAdopting = new Set<Method>(['record', 'keep', 'close']);
  parentPort!.on('message', (message: ToHub) => {
    if (message.kind === 'batch') {
      engine.writesCounted(message.started, message.ended);
      if (message.adopted.length === 0) return;
      // An outbox that cannot take them is logged, and the batch counts as done: its events wait
      // in the journal for a restart, as after any failed append (not in the main thread's memory).
      const adopted = (connection: string, events: readonly FeedEvent[]) => engine.adopt(connection, events).catch((error: unknown) => log.error(ADOPT_FAILED, { connection, error: String(error) }));
      adopting = adopting
        .then(() => Promise.all(message.adopted.map(([connection, events]) => adopted(connection, events))))
        .then(() => {
          appended = message.seq;
          ackTimer ??= setTimeout(ack, ACK_EVERY_MS);
        });
      return;
    }
    const { id, method, args } = message;
    if (method === 'close' && ackTimer !== null) clearTimeout(ackTimer);
    (afterAdopting.has(method) ? adopting : Promise.resolve())
      .then(() => callOn(engine, method, args))
      .then(
        (value) => post({ kind: 'reply', id, value: value ?? undefined }),
        (error: unknown) => post({ kind: 'reply', id, error: error instanceof Error ? error.message : String(error) }),
      );
  });
}

/** A Logger whose lines are written by the main thread's (only those at the levels it writes). */
function forwardingLogger(levels: readonly Exclude<Level, 'silent'>[], post: (message: FromHub) => void): Logger {
  const line = (level: Exclude<Level, 'silent'>) => (message: string, fields?: Fields) => {
    if (!levels.includes(level)) return;
    // Fields made on demand are made here: a function does not cross threads.
    const made = typeof fields === 'function' ? fields() : fields;
    post({ kind: 'log', level, message, ...(made === undefined ? {} : { fields: typeof made === 'string' ? { detail: made } : made }) });
  };
  return {
    enabled: (level) => levels.includes(level),
    debug: line('debug'),
    info: line('info'),
    warn: line('warn'),
    error: line('error'),
    flush: () => Promise.resolve(),
    flushSync: () => undefined,
  };
}
