// One clock read per request: the app reads `performance.now()` when a request starts and when it
// is answered, and the usage history takes its wall time from the second read: 12,345.6 (ms
// since the process started) -> 1,795,000,012,345.6 (ms since the epoch). The offset between the
// two clocks is read again once a second, so NTP's corrections to the wall clock show within a
// second, at the cost of one more clock read per second rather than per request.
const RESYNC_MS = 1000;

let offset = Date.now() - performance.now();
let resyncAt = performance.now() + RESYNC_MS;

/** `performance.now()`'s reading -> ms since the epoch. */
export function epochMsOf(monotonic: number): number {
  if (monotonic >= resyncAt) {
    offset = Date.now() - performance.now();
    resyncAt = monotonic + RESYNC_MS;
  }
  return offset + monotonic;
}
