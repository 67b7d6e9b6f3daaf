// A server-sent events client for the change feed's tests, on any runtime's fetch: `const stream =
// await openEvents(url, { lastEventId })`, then `await stream.next(3)` -> the next three events
// (`{id, event, data}`), comments skipped (kept in `comments`); `stream.close()` hangs up.
import { within } from './http.ts';

export interface StreamedEvent {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: Record<string, unknown>;
}

export interface EventStreamClient {
  readonly response: Response;
  readonly comments: string[];
  /** The next `count` events, within `ms`. */
  next(count: number, ms?: number): Promise<StreamedEvent[]>;
  /** Events already received and not yet taken. */
  readonly pending: StreamedEvent[];
  close(): void;
}

export async function openEvents(url: string, headers: Record<string, string> = {}): Promise<EventStreamClient> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { Accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const pending: StreamedEvent[] = [];
  const comments: string[] = [];
  const waiting: { wake: (() => void) | null } = { wake: null };
  let ended = false;
  if (response.ok && response.body !== null) {
    void (async () => {
      const decoder = new TextDecoder();
      let text = '';
      const reader = response.body!.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          text += decoder.decode(value, { stream: true });
          let end: number;
          while ((end = text.indexOf('\n\n')) >= 0) {
            const block = text.slice(0, end);
            text = text.slice(end + 2);
            const fields: Record<string, string> = {};
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) comments.push(line.slice(1).trim());
              else {
                const colon = line.indexOf(':');
                fields[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, '');
              }
            }
            if (fields.data !== undefined) pending.push({ id: fields.id, event: fields.event ?? 'message', data: JSON.parse(fields.data) as Record<string, unknown> });
            waiting.wake?.();
          }
          waiting.wake?.();
        }
      } catch {
        // Aborted by close().
      } finally {
        ended = true;
        waiting.wake?.();
      }
    })();
  }
  return {
    response,
    comments,
    pending,
    async next(count, ms = 10_000) {
      return within(ms, `${count} events (had ${pending.length})`, (async () => {
        while (pending.length < count) {
          if (ended) throw new Error(`the stream ended after ${pending.length} of ${count} events`);
          await new Promise<void>((resolve) => (waiting.wake = resolve));
        }
        return pending.splice(0, count);
      })());
    },
    close: () => controller.abort(),
  };
}
