// What the admin API shows of a webhook: `GET /_admin/connections/crm/webhooks` ->
// `[{"name": "hook-1", "url": "https://hooks.example.com/x", "events": null, "origin": "admin",
// "created": "2026-11-26T21:30:00.000Z", "links": {...}}]`. Never its secret, except once, in the
// answer that made it (`"secret": "whsec_..."`).
import { randomBytes } from 'node:crypto';
import type { Secret, WebhookConfig } from '../config/config.ts';
import type { StoredWebhook } from './store.ts';

export interface WebhookView {
  readonly name: string;
  readonly url: string;
  /** The event types it gets; null: every type. */
  readonly events: readonly string[] | null;
  /** `config`: from the config file, read-only here. */
  readonly origin: 'config' | 'admin';
  readonly created: string | null;
  readonly links: { readonly deliveries: string; readonly ping: string };
}

export interface NewWebhookView extends WebhookView {
  /** Signs every delivery (`Sheetrest-Signature`): shown in this answer only. */
  readonly secret: string;
}

/** A config webhook's fields or a stored one's (its secret is not shown). */
export function webhookView(connection: string, hook: { name: string; url: string; events?: readonly string[]; created?: string }, origin: 'config' | 'admin'): WebhookView {
  const base = `/_admin/connections/${encodeURIComponent(connection)}/webhooks/${encodeURIComponent(hook.name)}`;
  return { name: hook.name, url: hook.url, events: hook.events ?? null, origin, created: hook.created ?? null, links: { deliveries: `${base}/deliveries`, ping: `${base}/ping` } };
}

/** `whsec_` and 32 random bytes in base64url: the secret a webhook gets when none is given. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/** Stored webhooks as the deliverer takes them (server/webhooks/). */
export function webhookConfigsOf(hooks: readonly StoredWebhook[], secretOf: (text: string) => Secret): WebhookConfig[] {
  return hooks.map((hook) => ({ name: hook.name, url: hook.url, ...(hook.events === undefined ? {} : { events: hook.events }), secret: secretOf(hook.secret) }));
}
