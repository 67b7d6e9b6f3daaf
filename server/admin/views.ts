// What the admin API shows of a connection and its usage: `GET /_admin/connections/crm` ->
// `{"id": "crm", "origin": "admin", "source": {...}, "keys": [...], "usage": {...}, ...}`.
// Never a secret: a config source's secrets are Secret objects (JSON "[secret]"), a stored
// source's text secrets are masked, and keys show their prefix, never the key or its digest.
import type { Connection } from '../connections.ts';
import { isOpen } from '../auth.ts';
import type { BillingPlan, ConnectionConfig } from '../config/config.ts';
import { isoSeconds, periodOf, spanAt, type PeriodName } from '../quota/period.ts';
import { allowanceOf } from '../quota/quota.ts';
import { configKeyView, isExpired, keyView, type KeyView } from './keys.ts';
import type { StoredConnection } from './store.ts';
import { sourceTypeOf } from '../sources/registry.ts';

/**
 * The count of the current span of the plan's period, named after the period: `"month":
 * "2026-11"` (the only one before periods existed), `"day": "2026-11-23"` or `"hour": "2026-11-23T14"`.
 */
export type UsageView = { readonly [period in PeriodName]?: string } & UsageCount;

interface UsageCount {
  readonly requests: number;
  readonly plan: string;
  readonly limit: number | null;
  readonly remaining: number | null;
  /** Unix seconds when the span ends and the count starts again (UTC), as `X-RateLimit-Reset`. */
  readonly reset: number;
  readonly resetAt: string;
}

export interface ConnectionView {
  readonly id: string;
  readonly origin: 'config' | 'admin';
  readonly editable: boolean;
  readonly status: 'ok' | 'unavailable';
  readonly problem: string | null;
  readonly description: string;
  readonly source: unknown;
  readonly writable: boolean;
  readonly readOnly: boolean;
  readonly formulas: boolean;
  readonly hiddenTabs: string;
  readonly unknownColumns: string;
  readonly rowId: { readonly column: string; readonly generate: string } | null;
  readonly tabs: Readonly<Record<string, unknown>> | null;
  readonly cacheControl: { readonly maxAge?: number; readonly staleWhileRevalidate?: number } | null;
  readonly plan: BillingPlan | null;
  /** Open to any caller without a key; false: a key is needed (with none left, every request is refused). */
  readonly open: boolean;
  readonly keys: readonly KeyView[];
  readonly usage: UsageView;
  readonly created: string | null;
  readonly updated: string | null;
  readonly links: Record<string, string>;
}

export interface ViewInput {
  readonly connection: Connection;
  /** Set for a connection of the config file. */
  readonly config: ConnectionConfig | undefined;
  /** Set for a connection of the admin API. */
  readonly stored: StoredConnection | undefined;
  /** Why it could not be opened, or null. */
  readonly problem: string | null;
  /** Requests counted in the current span of the plan's period (the quota store's count). */
  readonly requests: number;
  readonly now: Date;
}

export function viewOf({ connection, config, stored, problem, requests, now }: ViewInput): ConnectionView {
  const base = `/sheets/${encodeURIComponent(connection.id)}`;
  return {
    id: connection.id,
    origin: config === undefined ? 'admin' : 'config',
    editable: config === undefined,
    status: problem === null ? 'ok' : 'unavailable',
    problem,
    description: connection.source.description,
    source: config === undefined ? (stored === undefined ? undefined : maskSecrets(stored.source, sourceTypeOf(stored.source).secretFields)) : JSON.parse(JSON.stringify(config.source)),
    writable: !connection.readOnly && connection.source.writable,
    readOnly: connection.readOnly,
    formulas: connection.engine.formulas ?? false,
    hiddenTabs: connection.engine.hiddenTabs ?? 'serve',
    unknownColumns: connection.engine.unknownColumns ?? 'ignore',
    rowId: connection.engine.rowId ?? null,
    tabs: connection.engine.tabs ?? null,
    cacheControl: connection.cacheControl ?? null,
    plan: connection.plan ?? null,
    open: isOpen(connection),
    keys: config === undefined ? (stored?.keys ?? []).filter((key) => !isExpired(key, now)).map(keyView) : config.keys.map(configKeyView),
    usage: usageOf(connection, requests, now),
    created: stored?.created ?? null,
    updated: stored?.updated ?? null,
    links: { rows: base, tabs: `${base}/tabs`, openapi: `${base}/openapi.json`, admin: `/_admin/connections/${encodeURIComponent(connection.id)}` },
  };
}

/** The current span's count against the connection's plan; the reset is when the span ends (UTC), as `X-RateLimit-Reset`. */
export function usageOf(connection: Pick<Connection, 'plan'>, requests: number, now: Date): UsageView {
  const limit = allowanceOf(connection.plan) ?? null;
  const period = periodOf(connection.plan);
  const span = spanAt(period, now.getTime());
  const reset = span.to / 1000;
  return {
    [period]: span.key,
    requests,
    plan: connection.plan?.name ?? 'unlimited',
    limit,
    remaining: limit === null ? null : Math.max(0, limit - requests),
    reset,
    resetAt: isoSeconds(span.to),
  };
}

/**
 * A stored source as shown: a secret written as text (in one of its type's `secretFields`)
 * becomes "[secret]"; `{ "env": NAME }` stays (it names, it does not hold).
 */
function maskSecrets(value: unknown, secretFields: readonly string[]): unknown {
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([field, inner]) => [field, secretFields.includes(field) && typeof inner === 'string' ? '[secret]' : maskSecrets(inner, secretFields)]),
  );
}
