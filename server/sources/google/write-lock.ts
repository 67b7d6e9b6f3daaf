// Writes to one spreadsheet run one at a time, in arrival order, even when several connections
// serve the same spreadsheet: `PATCH /sheets/a/...` and `DELETE /sheets/b/...` on one
// spreadsheet id never interleave their fresh read and their write.
const TAILS = new Map<string, Promise<void>>();

/** Runs `step` once every step queued before it under `key` has settled. */
export function underWriteLock<T>(key: string, step: () => Promise<T>): Promise<T> {
  const tail = TAILS.get(key) ?? Promise.resolve();
  const result = tail.then(step);
  const settled = result.then(
    () => undefined,
    () => undefined,
  );
  TAILS.set(key, settled);
  void settled.then(() => {
    if (TAILS.get(key) === settled) TAILS.delete(key);
  });
  return result;
}

/** Resolves once every step queued so far under `key` has settled. */
export function writesSettled(key: string): Promise<void> {
  return TAILS.get(key) ?? Promise.resolve();
}
