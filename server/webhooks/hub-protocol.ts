// What the main thread (hub.ts) and the webhooks worker (hub-worker.ts) say to each other: the
// worker's settings, the messages each way, and a webhook's form across threads (its secret as
// text: a Secret hides its text from JSON and inspection, not from a structured clone).
import type { WebhookConfig } from '../config/config.ts';
import { Secret } from '../config/secret.ts';
import type { FeedEvent } from '../feed/event.ts';
import type { Level } from '../log.ts';
import type { Webhooks, WebhookSettings } from './webhooks.ts';

/** A webhook as it crosses threads. */
export interface PlainWebhook {
  readonly name: string;
  readonly url: string;
  readonly events?: readonly string[];
  readonly secret: string;
}

/** What hub.ts starts the worker with. */
export interface HubSettings {
  readonly stateDir: string;
  readonly connections: readonly { readonly id: string; readonly webhooks: readonly PlainWebhook[] }[];
  readonly settings: Omit<WebhookSettings, 'deliveryWorker' | 'engineWorker'>;
  /** The levels the main thread's logger writes, so that lines it would drop are not sent over. */
  readonly levels: readonly Exclude<Level, 'silent'>[];
}

export type Method = 'record' | 'set' | 'deliveries' | 'ping' | 'keep' | 'close';

export type ToHub =
  | { readonly kind: 'batch'; readonly seq: number; readonly adopted: readonly (readonly [string, readonly FeedEvent[]])[]; readonly started: number; readonly ended: number }
  | { readonly kind: 'call'; readonly id: number; readonly method: Method; readonly args: readonly unknown[] };

export type FromHub =
  | { readonly kind: 'ready'; readonly numbering: Record<string, string> }
  | { readonly kind: 'failed'; readonly error: string }
  | { readonly kind: 'reply'; readonly id: number; readonly value?: unknown; readonly error?: string }
  | { readonly kind: 'appended'; readonly seq: number }
  | { readonly kind: 'log'; readonly level: Exclude<Level, 'silent'>; readonly message: string; readonly fields?: Record<string, unknown> };

/** A webhook as it crosses to the worker. */
export function plainOf(hook: WebhookConfig): PlainWebhook {
  return { name: hook.name, url: hook.url, ...(hook.events === undefined ? {} : { events: hook.events }), secret: hook.secret.reveal() };
}

/** A webhook back from its form across threads. */
export function webhookOf(plain: PlainWebhook): WebhookConfig {
  return { name: plain.name, url: plain.url, ...(plain.events === undefined ? {} : { events: plain.events }), secret: new Secret(plain.secret) };
}

/**
 * A call as the engine answers it, wherever it runs (the worker, or the main thread after it):
 * `set` answers the connection's newest id numbered (its outbox is open then), the rest what
 * the engine's method does.
 */
export async function callOn(engine: Webhooks, method: Method, args: readonly unknown[]): Promise<unknown> {
  const [connection, second] = args as [string, unknown];
  switch (method) {
    case 'record':
      return engine.recordNumbered(connection, second as readonly FeedEvent[]);
    case 'set':
      await engine.set(connection, (second as readonly PlainWebhook[]).map(webhookOf));
      return engine.numbering()[connection] ?? null;
    case 'deliveries':
      return engine.deliveries(connection, second as string);
    case 'ping':
      return engine.ping(connection, second as string);
    case 'keep':
      return engine.keep(connection);
    case 'close':
      return engine.close();
  }
}
