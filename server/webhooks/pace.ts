// How often the main thread and the delivery worker (poster.ts, delivery-worker.ts) message each
// other: `atMostEvery(MESSAGE_EVERY_MS, lastSentAt, send)` sends in the next turn, or once
// MESSAGE_EVERY_MS have passed since the last message.

/**
 * The least time between two messages each way (POSTs over, answers back). Each message wakes the
 * other thread, which on a busy core takes the core from the writes: while deliveries come
 * faster than this, they go over in fewer, bigger messages; a delivery after a quiet spell goes
 * at once.
 */
export const MESSAGE_EVERY_MS = 2;

/** Runs `then` in the next turn, or once `everyMs` have passed since `last` (performance.now()) if later. */
export function atMostEvery(everyMs: number, last: number, then: () => void): void {
  const wait = last + everyMs - performance.now();
  if (wait <= 0) setImmediate(then);
  else setTimeout(then, wait);
}
