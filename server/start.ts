// Starts sheetrest from a checked Config, in an order that keeps a second start harmless:
// 1. take the state folder's lock (server/durable/lock.ts): a second process on the same folder stops
//    here, before it reads or changes anything;
// 2. remove temp files a crash left in the state folder (safe now: none can be a live process's);
// 3. bind the port, answering 503 `upstream_unavailable` with Retry-After while the sources open
//    (a port already in use stops the start before any journal is recovered or folded);
// 4. with `"store": {"type": "redis"}`, connect to Redis (a Redis unreachable at start stops the
//    start: an instance that cannot share its counts and writes must not serve on its own);
// 5. open every connection's source (recovering journals) and the quota store, then the
//    connections the admin API made (admin.json in the state folder, or Redis with a store), then serve. The set of
//    connections is a registry the admin API changes while the server runs (server/admin/).
// Used by the CLI and by the integration tests (which listen on port 0).
import { join } from 'node:path';
import { apiError } from '../lib/errors.ts';
import { adminHandler } from './admin/routes.ts';
import { SignInThrottle } from './admin/sign-in-throttle.ts';
import { adminBearer } from './admin/sheet-access.ts';
import { AdminService } from './admin/service.ts';
import { readAdminFile } from './admin/store.ts';
import { loadDashboard } from './http/dashboard-files.ts';
import { GoogleConnect } from './admin/google-connect.ts';
import { createApp } from './http/app.ts';
import { MemoryEventLog } from './feed/event-log.ts';
import { Feed } from './feed/feed.ts';
import type { App } from './http/request.ts';
import { DEFAULTS, type AdminConfig, type Config } from './config/config.ts';
import { ConnectionRegistry, openConnection, type Connection } from './connections.ts';
import { defaultAllowedHosts } from './http/hosts.ts';
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_KEYS, KeyStore } from './idempotency/file-store.ts';
import { createLogger, type Logger } from './log.ts';
import type { Listen, Listener } from './runtime/listener.ts';
import { lockStateDir, type StateLock } from './durable/lock.ts';
import { openFileUsage } from './usage/file-store.ts';
import type { UsageHistory } from './usage/history.ts';
import { openRedisUsage } from './usage/redis-store.ts';
import { openQuotaStore, type QuotaStore } from './quota/quota.ts';
import type { SharedStore } from './shared-store.ts';
import { errorAnswer, toResponse } from './http/respond.ts';
import { ensureStateDir, removeLeftoverTempFiles } from './durable/state.ts';
import { openWebhooks, type WebhookHub } from './webhooks/hub.ts';
import { DEFAULT_WEBHOOK_SETTINGS } from './webhooks/webhooks.ts';
import { RedisOutbox } from './webhooks/redis-outbox.ts';

export interface Running {
  readonly app: App;
  readonly url: string;
  /** The connections served at start (the config file's, then the admin API's). */
  readonly connections: readonly Connection[];
  /** Whether `/_admin/...` is served (an admin token is set). */
  readonly admin: boolean;
  /**
   * Stops accepting, lets the requests in flight finish until the shutdown deadline
   * (`timeouts.shutdownMs`), then closes every connection still open; every source and the quota
   * are flushed after that in any case, and the state folder is released.
   */
  close(): Promise<void>;
  /**
   * For an exit that cannot wait (a forced stop, an uncaught exception): writes the quota counts
   * synchronously and releases the state folder's lock. Journals are durable already.
   */
  exitNow(): void;
}

export interface StartOptions {
  readonly listen: Listen;
  readonly log?: Logger;
}

export async function start(config: Config, options: StartOptions): Promise<Running> {
  const log = options.log ?? createLogger(config.log?.level ?? 'info');
  await ensureStateDir(config.stateDir);
  const { lock, diskFull } = takeLock(config.stateDir, log);
  const opened: Connection[] = [];
  const registry = new ConnectionRegistry();
  let quota: QuotaStore | undefined;
  let shared: SharedStore | undefined;
  let listener: Listener | undefined;
  let webhooks: WebhookHub | undefined;
  let usage: UsageHistory | undefined;
  try {
    const leftovers = await removeLeftoverTempFiles(config.stateDir);
    if (leftovers.length > 0) log.warn('removed temp files a crash left in the state folder', { stateDir: config.stateDir, files: leftovers.length });
    const gate = gatedApp();
    const host = config.host ?? '127.0.0.1';
    const timeouts = config.timeouts ?? { headersMs: DEFAULTS.headersMs, bodyMs: DEFAULTS.bodyMs, shutdownMs: DEFAULTS.shutdownMs };
    listener = await options.listen(gate, { host, port: config.port ?? 8080, headersTimeoutMs: timeouts.headersMs, bodyTimeoutMs: timeouts.bodyMs });
    // Loaded only when configured: a server on its own has no use for the Redis client.
    if (config.store !== undefined) shared = await (await import('./shared-store.ts')).openSharedStore(config.store, log);
    // Webhooks (server/webhooks/): an outbox in the state folder for each connection that has any;
    // the admin API's are handed to it as the service opens and changes its connections. Before
    // the sources: a file source's journal carries its writes' events to the outbox (sinkFor).
    const webhookSettings = config.webhooks ?? DEFAULT_WEBHOOK_SETTINGS;
    // With Redis: one stream per connection, delivered by whichever instance holds its lease.
    const sharedQueue = shared === undefined ? undefined : ((redis, lease) => (connection: string, names: readonly string[]) => RedisOutbox.open(redis, connection, names, lease, log))(shared.redis, shared.lease);
    webhooks = await openWebhooks(config.stateDir, config.connections, webhookSettings, log, sharedQueue);
    const hooked = webhooks;
    const settings = { ...config, ...(shared === undefined ? {} : { shared }), ...(diskFull ? { readOnly: true } : {}), events: (connection: string) => hooked.sinkFor(connection) };
    for (const connection of config.connections) {
      const served = await openConnection(connection, settings, log);
      opened.push(served);
      registry.set(served);
    }
    quota = shared?.quota ?? (await openQuotaStore({ stateDir: config.stateDir, onError: (error) => log.error('quota counts could not be saved', { error: String(error) }) }));
    // The usage history (server/usage/): per day in the state folder, or summed in Redis across instances.
    usage = shared === undefined ? await openFileUsage({ stateDir: config.stateDir, log }) : openRedisUsage({ redis: shared.redis, log });
    // The admin API's connections are served whether or not the admin API is on now.
    const service = new AdminService({ registry, configConnections: config.connections, configPath: config.configPath, settings, quota, log, shared: shared?.admin, rules: config.admin, webhooks, usageHistory: usage });
    if (shared === undefined) await service.open(await readAdminFile(config.stateDir));
    else {
      // With Redis its state is shared by every instance (admin.json only seeds it once).
      const snapshot = await shared.admin.adopt(await readAdminFile(config.stateDir));
      await service.open(snapshot.connections, snapshot.revision);
      await service.follow();
    }
    // The change feed: with several instances a Redis stream per connection, else this process's memory.
    const feed = new Feed(shared?.events ?? new MemoryEventLog(), log, { outbox: webhooks });
    const app = createApp({
      connections: registry,
      feed,
      ...(config.admin === undefined ? {} : await adminParts(config.admin, service, log)),
      quota,
      usage,
      ...(shared === undefined ? {} : { keysStale: () => (shared as SharedStore).admin.stale(), rateLimiter: shared.rateLimiter }),
      trustProxy: config.trustProxy ?? false,
      bodyBytes: config.limits?.bodyBytes ?? 1024 * 1024,
      bodyTimeoutMs: timeouts.bodyMs,
      cors: config.cors?.origins ?? '*',
      corsWrites: config.cors?.writes ?? DEFAULTS.corsWrites,
      allowedHosts: config.allowedHosts ?? defaultAllowedHosts(host),
      answerCacheBytes: config.limits?.answerCacheBytes ?? DEFAULTS.answerCacheBytes,
      log,
    });
    gate.open(app);
    const shownHost = host.includes(':') ? `[${host}]` : host;
    const served = listener;
    const store = quota;
    const redis = shared;
    const hooks = webhooks;
    const history = usage;
    return {
      app,
      url: `http://${shownHost}:${served.port}`,
      connections: registry.list(),
      admin: config.admin !== undefined,
      async close() {
        try {
          // First: event streams stay open until ended, and the listener's close waits for them.
          await feed.close();
          await closeListener(served, timeouts.shutdownMs, log);
          const open = registry.list();
          // After the listener: a write answered meanwhile had its events made durable (its journal
          // line or an outbox). Before the outboxes: a source's last fold hands its journal's events to them.
          const sources = Promise.allSettled(open.map((connection) => connection.source.close()));
          await Promise.all([store.close(), history.close(), sources.then(async (closed) => {
            await hooks.close();
            for (const each of closed) if (each.status === 'rejected') throw each.reason;
          })]);
          // After the sources: a fold at close hands the keys of the writes it folds to their stores.
          await Promise.all(open.map((connection) => connection.idempotency?.close()));
          // After the sources: their last writes tell the other instances through it.
          await redis?.close();
          // Last, so the sources' and the quota's own lines about closing are written too.
          await flushLog(log);
        } finally {
          lock.release();
        }
      },
      exitNow() {
        try {
          store.flushSync();
          history.flushSync();
        } finally {
          lock.release();
        }
      },
    };
  } catch (error) {
    await listener?.close().catch(() => undefined);
    const every = new Set([...opened, ...registry.list()]);
    await Promise.allSettled([quota?.close(), usage?.close(), ...[...every].map((connection) => connection.source.close())]);
    await Promise.allSettled([...every].map((connection) => connection.idempotency?.close()));
    await shared?.close().catch(() => undefined);
    await webhooks?.close().catch(() => undefined);
    lock.release();
    await flushLog(log);
    throw error;
  }
}

/**
 * The lock, or none where the state folder does not let this process create files: then it
 * cannot write there either (no journal, no quota snapshot), so it cannot harm a server that can.
 * On a full disk, none either, and every connection is served read-only (`diskFull`): its
 * workbooks and journals are read, nothing is written to them, so reads go on during the outage.
 */
function takeLock(stateDir: string, log: Logger): { lock: StateLock; diskFull: boolean } {
  const none = { path: '', release: () => undefined };
  try {
    return { lock: lockStateDir(stateDir), diskFull: false };
  } catch (error) {
    const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
    if (code === 'ENOSPC' || code === 'EDQUOT') {
      log.error('the disk of the state folder is full: serving every connection read-only, without the state folder\'s lock, until the server is restarted with space freed', { stateDir, error: error instanceof Error ? error.message : code });
      return { lock: none, diskFull: true };
    }
    if (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS') throw error;
    log.warn('the state folder is not writable: serving without its lock, and nothing there is written', { stateDir, error: code });
    return { lock: none, diskFull: false };
  }
}

/** The handler served while the sources open: 503 until `open(app)` hands over to the real one. */
function gatedApp(): App & { open(app: App): void } {
  const starting = errorAnswer(apiError('upstream_unavailable', 'The server is starting; try again in a moment.', { 'Retry-After': '1' }));
  let app: App | undefined;
  return {
    open: (ready) => void (app = ready),
    answer: (request) => (app === undefined ? starting : app.answer(request)),
    abortBodies: () => app?.abortBodies(),
    fetch: (request) => (app === undefined ? Promise.resolve(toResponse(starting, request.method)) : app.fetch(request)),
  };
}

/**
 * A graceful stop with a deadline: the requests in flight get `deadlineMs` to finish (a client
 * trickling a body must not hold the stop for ever), then every connection is closed. What was
 * acknowledged is in the sources already; they are flushed by the caller either way.
 */
async function closeListener(listener: Listener, deadlineMs: number, log: Logger): Promise<void> {
  const graceful = listener.close();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<'deadline'>((resolve) => {
    timer = setTimeout(resolve, deadlineMs, 'deadline');
  });
  try {
    if ((await Promise.race([graceful, deadline])) !== 'deadline') return;
    log.warn('requests still in flight at the shutdown deadline; closing their connections', { deadlineMs });
    listener.closeAll();
    // The handlers end once their connections are gone; a request stuck elsewhere is not waited for.
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, 1000);
    });
    await Promise.race([graceful, grace]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits for the log's lines, for a few seconds at most: a stderr nobody reads must not hold a stop. */
async function flushLog(log: Logger): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([log.flush(), new Promise((resolve) => (timer = setTimeout(resolve, 5000)))]);
  clearTimeout(timer);
}

/** The admin API, the dashboard, and the admin token on `/sheets/...`; one count of wrong tokens per address for both. */
async function adminParts(admin: AdminConfig, service: AdminService, log: Logger) {
  const throttle = new SignInThrottle({ log });
  return {
    admin: adminHandler(service, admin.token, googleConnectOf(admin, service, log), throttle, admin),
    adminBearer: adminBearer(admin.token, throttle),
    dashboard: await loadDashboard(),
  };
}

/** The dashboard's Google sign-in, when the config names an OAuth client (`admin.google`). */
function googleConnectOf(admin: AdminConfig, service: AdminService, log: Logger): GoogleConnect | undefined {
  return admin.google === undefined ? undefined : new GoogleConnect({ config: admin.google, service, log });
}
