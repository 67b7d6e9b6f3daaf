// The connections a running server serves, by id: `GET /sheets/demo` asks `registry.get('demo')`
// on every request, so a connection the admin API adds, changes or removes (server/admin/)
// takes effect with the next request, without a restart. Also how a configured connection is
// opened into one the app serves (its source opened by its type, server/sources/registry.ts,
// its engine options fixed).
import { join } from 'node:path';
import type { EngineOptions } from '../lib/parse-request.ts';
import type { ApiKey } from './auth.ts';
import { DEFAULTS, type BillingPlan, type Config, type ConnectionConfig } from './config/config.ts';
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_KEYS, KeyStore } from './idempotency/file-store.ts';
import type { KeyStoreLike } from './idempotency/idempotency.ts';
import type { Logger } from './log.ts';
import { sourceTypeOf } from './sources/registry.ts';
import type { EventSink, ReceiptSink, Source } from './sources/source.ts';
import type { SharedStore } from './shared-store.ts';

/** A connection as the server runs it: its source opened, its keys as digests. */
export interface Connection {
  readonly id: string;
  readonly source: Source;
  readonly keys: readonly ApiKey[];
  /** Open to any caller without a key; left out: open exactly when it has no keys (server/auth.ts, `isOpen`). */
  readonly open?: boolean;
  /** The billing plan its requests are counted against (the config's `plan`); left out: unlimited. */
  readonly plan?: BillingPlan;
  readonly readOnly: boolean;
  readonly engine: EngineOptions;
  /** How long clients and shared caches may reuse a read (`Cache-Control`); left out: revalidate every time. */
  readonly cacheControl?: CacheControl;
  /** Where its Idempotency-Keys are kept; left out: in memory only. */
  readonly idempotency?: KeyStoreLike;
}

/** Seconds; see docs/http-caching.md. */
export interface CacheControl {
  readonly maxAge?: number;
  readonly staleWhileRevalidate?: number;
}

/** What the app reads of the connections: one lookup per request. */
export interface ConnectionLookup {
  get(id: string): Connection | undefined;
  /** Every connection, in the order they were added. */
  list(): Connection[];
}

/** The set of connections, changeable while the server runs. */
export class ConnectionRegistry implements ConnectionLookup {
  readonly #byId = new Map<string, Connection>();

  constructor(connections: readonly Connection[] = []) {
    for (const connection of connections) this.#byId.set(connection.id, connection);
  }

  get(id: string): Connection | undefined {
    return this.#byId.get(id);
  }

  list(): Connection[] {
    return [...this.#byId.values()];
  }

  /** Adds a connection, or replaces the one with its id (keeping its place in the list). */
  set(connection: Connection): void {
    this.#byId.set(connection.id, connection);
  }

  delete(id: string): boolean {
    return this.#byId.delete(id);
  }
}

/** The settings a connection's opening needs from the server's config. */
export type OpenSettings = Pick<Config, 'stateDir' | 'limits'> & {
  /** Several instances sharing state through Redis (server/redis/); left out: this one alone. */
  readonly shared?: SharedStore;
  /** Every connection served read-only, whatever it says: the state folder's disk was full at start (start.ts). */
  readonly readOnly?: boolean;
  /** Where a journaling source hands the change-feed events its journal lines carry: the connection's webhook outbox (server/webhooks/). */
  readonly events?: (connection: string) => EventSink | undefined;
};

export async function openConnection(configured: ConnectionConfig, settings: OpenSettings, log: Logger): Promise<Connection> {
  const connection = settings.readOnly === true ? { ...configured, readOnly: true } : configured;
  // Several instances share a spreadsheet's keys through Redis (a file is served by one).
  const shared = settings.shared;
  let idempotency: KeyStoreLike;
  let receipts: ReceiptSink | undefined;
  if (shared !== undefined && sourceTypeOf(connection.source).sharedByInstances) {
    const { redisKeyStore } = await import('./idempotency/redis-store.ts');
    idempotency = redisKeyStore(shared.redis, connection.id, shared.lease, { log: (message) => log.warn(message) });
  } else {
    // Before the source: recovering a journal hands its writes' Idempotency-Keys to this store.
    const store = await KeyStore.open({
      path: join(settings.stateDir, `${connection.id}.idempotency`),
      maxKeys: settings.limits?.idempotencyKeys ?? DEFAULT_MAX_KEYS,
      maxBytes: settings.limits?.idempotencyBytes ?? DEFAULT_MAX_BYTES,
      log: (message) => log.warn(message),
    });
    idempotency = store;
    receipts = store;
  }
  let source: Source;
  try {
    source = await openSource(connection, settings, log, receipts);
  } catch (error) {
    await idempotency.close();
    throw error;
  }
  return {
    id: connection.id,
    source,
    idempotency,
    keys: connection.keys,
    // The config file's rule: a connection without keys is open (docs/configuration.md).
    open: connection.keys.length === 0,
    plan: connection.plan,
    readOnly: connection.readOnly ?? false,
    cacheControl: connection.cacheControl,
    engine: engineOptions(connection, settings),
  };
}

export function engineOptions(connection: Pick<ConnectionConfig, 'formulas' | 'hiddenTabs' | 'unknownColumns' | 'rowId' | 'tabs'>, settings: OpenSettings): Connection['engine'] {
  return {
    formulas: connection.formulas ?? false,
    hiddenTabs: connection.hiddenTabs ?? 'serve',
    unknownColumns: connection.unknownColumns ?? 'ignore',
    ...(connection.rowId === undefined ? {} : { rowId: connection.rowId }),
    ...(connection.tabs === undefined ? {} : { tabs: connection.tabs }),
    maxRows: settings.limits?.rowsPerWrite ?? DEFAULTS.rowsPerWrite,
    textIndexBytes: settings.limits?.textIndexBytes ?? DEFAULTS.textIndexBytes,
  };
}

function openSource(connection: ConnectionConfig, settings: OpenSettings, log: Logger, receipts: ReceiptSink | undefined): Promise<Source> {
  const { source } = connection;
  const events = settings.events?.(connection.id);
  return sourceTypeOf(source).open(source, { readOnly: connection.readOnly ?? false, stateDir: settings.stateDir, log, receipts, shared: settings.shared, ...(events === undefined ? {} : { events }) });
}
