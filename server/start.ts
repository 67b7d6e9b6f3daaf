// Starts sheetrest from a checked Config: opens every connection's source and the quota store,
// builds the fetch handler and serves it with the runtime's listener. Used by the CLI and by the
// integration tests (which listen on port 0).
import { createApp, type App, type Connection } from './app.ts';
import { DEFAULTS, type Config, type ConnectionConfig } from './config.ts';
import { defaultAllowedHosts } from './hosts.ts';
import { createLogger, type Logger } from './log.ts';
import type { Listen, Listener } from './listener.ts';
import { openQuotaStore } from './quota.ts';
import { openFileSource } from './sources/file/mod.ts';
import { openGoogleSourceFromConfig } from './sources/google/mod.ts';
import type { Source } from './sources/source.ts';

export interface Running {
  readonly app: App;
  readonly url: string;
  readonly connections: readonly Connection[];
  /**
   * Stops accepting, lets the requests in flight finish until the shutdown deadline
   * (`timeouts.shutdownMs`), then closes every connection still open; every source and the quota
   * are flushed after that in any case.
   */
  close(): Promise<void>;
}

export interface StartOptions {
  readonly listen: Listen;
  readonly log?: Logger;
}

export async function start(config: Config, options: StartOptions): Promise<Running> {
  const log = options.log ?? createLogger(config.log?.level ?? 'info');
  const opened: Connection[] = [];
  try {
    for (const connection of config.connections) opened.push(await openConnection(connection, config, log));
  } catch (error) {
    await Promise.allSettled(opened.map((connection) => connection.source.close()));
    throw error;
  }
  const quota = await openQuotaStore({ stateDir: config.stateDir, onError: (error) => log.error('quota counts could not be saved', { error: String(error) }) });
  const host = config.host ?? '127.0.0.1';
  const timeouts = config.timeouts ?? { headersMs: DEFAULTS.headersMs, bodyMs: DEFAULTS.bodyMs, shutdownMs: DEFAULTS.shutdownMs };
  const app = createApp({
    connections: opened,
    quota,
    bodyBytes: config.limits?.bodyBytes ?? 1024 * 1024,
    bodyTimeoutMs: timeouts.bodyMs,
    cors: config.cors?.origins ?? '*',
    allowedHosts: config.allowedHosts ?? defaultAllowedHosts(host),
    log,
  });
  let listener: Listener;
  try {
    listener = await options.listen(app, { host, port: config.port ?? 8080, headersTimeoutMs: timeouts.headersMs, bodyTimeoutMs: timeouts.bodyMs });
  } catch (error) {
    await Promise.allSettled([quota.close(), ...opened.map((connection) => connection.source.close())]);
    throw error;
  }
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    app,
    url: `http://${shownHost}:${listener.port}`,
    connections: opened,
    async close() {
      await closeListener(listener, timeouts.shutdownMs, log);
      await Promise.all([quota.close(), ...opened.map((connection) => connection.source.close())]);
    },
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

async function openConnection(connection: ConnectionConfig, config: Config, log: Logger): Promise<Connection> {
  return {
    id: connection.id,
    source: await openSource(connection, config, log),
    keys: connection.keys,
    plan: connection.plan,
    readOnly: connection.readOnly ?? false,
    engine: { formulas: connection.formulas ?? false, maxRows: config.limits?.rowsPerWrite ?? 5000 },
  };
}

async function openSource(connection: ConnectionConfig, config: Config, log: Logger): Promise<Source> {
  const { source } = connection;
  if (source.type === 'file') {
    return openFileSource({ path: source.path, stateDir: config.stateDir, readOnly: connection.readOnly ?? false, log: (message: string) => log.error(message) });
  }
  return openGoogleSourceFromConfig(source, { readOnly: connection.readOnly ?? false, log: (message: string) => log.error(message) });
}
