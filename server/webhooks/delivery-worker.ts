// The webhook deliveries' thread (poster.ts starts it through delivery-worker.js): the main thread
// hands it `{kind: 'send', sends: [{id: 7, url, secret, eventId, body}, ...]}`, one message per
// turn; it signs each (sign.ts), POSTs it (send.ts: undici on Node, fetch on Deno and Bun) and
// answers `{kind: 'sent', answers: [{id: 7, status: 204}, ...]}`, again one message per turn
// for every POST that ended in it. `{kind: 'abort', ids}` cuts POSTs off (a webhook removed, the
// server stopping). It first posts `started`, once its modules are loaded: a worker that never
// says so could not start, and the main thread sends in its own thread instead. Nothing here is
// logged: an answer's error is the sender's message, never a header (so never the secret).
import { parentPort, workerData } from 'node:worker_threads';
import { atMostEvery, MESSAGE_EVERY_MS } from './pace.ts';
import { deliver, openSender, type Answer, type Delivery } from './send.ts';

/** What the main thread starts the worker with (poster.ts). */
export interface WorkerSettings {
  readonly timeoutMs: number;
  /** Connections per target (Node's pool). */
  readonly connections: number;
}

/** One POST handed over, numbered by the main thread. */
export interface Send extends Delivery {
  readonly id: number;
}

export type ToWorker = { readonly kind: 'send'; readonly sends: readonly Send[] } | { readonly kind: 'abort'; readonly ids: readonly number[] };

export type FromWorker = { readonly kind: 'started' } | { readonly kind: 'sent'; readonly answers: readonly (Answer & { readonly id: number })[] };

const port = parentPort;
if (port !== null) {
  const { timeoutMs, connections } = workerData as WorkerSettings;
  const sender = openSender(timeoutMs, connections);
  const inFlight = new Map<number, AbortController>();
  let answers: (Answer & { id: number })[] = [];
  let flushedAt = 0;
  const flush = () => {
    const batch = answers;
    answers = [];
    flushedAt = performance.now();
    port.postMessage({ kind: 'sent', answers: batch } satisfies FromWorker);
  };
  port.on('message', (message: ToWorker) => {
    if (message.kind === 'abort') {
      for (const id of message.ids) inFlight.get(id)?.abort();
      return;
    }
    for (const send of message.sends) {
      const stop = new AbortController();
      inFlight.set(send.id, stop);
      void deliver(sender, timeoutMs, send, stop.signal).then((answer) => {
        inFlight.delete(send.id);
        // The answers that end in one turn (or within MESSAGE_EVERY_MS of the last message) go back in one message.
        if (answers.length === 0) atMostEvery(MESSAGE_EVERY_MS, flushedAt, flush);
        answers.push({ id: send.id, ...answer });
      });
    }
  });
  port.postMessage({ kind: 'started' } satisfies FromWorker);
}
