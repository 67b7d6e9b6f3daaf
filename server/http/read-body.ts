// POST /sheets/demo with a 2 GiB body -> 413 as soon as the cap is passed. The body is read
// while streaming and counted chunk by chunk, so it is never buffered past the cap. A body that
// trickles in is given up after a deadline (408), so a slow client cannot hold a request, or a
// shutdown, open for as long as it likes; a client that hangs up mid-body is a 400, not our fault.
import { apiError, type ApiError } from '../../lib/errors.ts';

export interface BodyLimits {
  readonly maxBytes: number;
  /** The whole body must arrive within this many milliseconds of the first read. */
  readonly timeoutMs: number;
  /**
   * The reads in progress, each as a function that gives it up now: the app cancels them all at
   * the shutdown deadline (Deno's shutdown would otherwise wait for a stalled body for ever).
   */
  readonly inFlight: Set<() => void>;
}

export async function readBody(
  request: { headers: { get(name: string): string | null }; body: ReadableStream<Uint8Array> | null },
  limits: BodyLimits,
): Promise<Uint8Array | ApiError> {
  const { maxBytes, timeoutMs } = limits;
  const tooLarge = () => apiError('payload_too_large', `The body is larger than ${maxBytes} bytes; send fewer rows per request.`);
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > maxBytes) return tooLarge();
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  let gaveUp: 'timeout' | 'shutdown' | null = null;
  // Cancelling the reader ends a pending read() with `done`, so the loop below notices.
  const giveUp = (why: 'timeout' | 'shutdown') => {
    gaveUp ??= why;
    reader.cancel().catch(() => {});
  };
  const stop = () => giveUp('shutdown');
  const timer = setTimeout(giveUp, timeoutMs, 'timeout');
  limits.inFlight.add(stop);
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (gaveUp !== null) break;
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => {});
        return tooLarge();
      }
      chunks.push(value);
    }
  } catch {
    // The runtime errors the stream when the connection closes before the body's end.
    if (gaveUp === null) return apiError('invalid_body', 'The body ended before it was complete: the connection was closed mid-request.');
  } finally {
    clearTimeout(timer);
    limits.inFlight.delete(stop);
  }
  if (gaveUp === 'timeout') return apiError('request_timeout', `The body did not arrive within ${timeoutMs} ms; send it faster or in smaller requests.`);
  if (gaveUp === 'shutdown') return apiError('request_timeout', 'The server is stopping and the body had not arrived yet; send it again.');
  if (chunks.length === 1) return chunks[0];
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}
