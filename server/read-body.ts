// POST /sheets/demo with a 2 GiB body -> 413 as soon as the cap is passed. The body is read
// while streaming and counted chunk by chunk, so it is never buffered past the cap.
import { apiError, type ApiError } from '../lib/errors.ts';

export async function readBody(request: { headers: { get(name: string): string | null }; body: ReadableStream<Uint8Array> | null }, maxBytes: number): Promise<Uint8Array | ApiError> {
  const tooLarge = () => apiError('payload_too_large', `The body is larger than ${maxBytes} bytes; send fewer rows per request.`);
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > maxBytes) return tooLarge();
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      return tooLarge();
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0];
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}
