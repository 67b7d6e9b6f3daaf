// Starts sheetrest from a checked Config: opens every connection's source and the quota store,
// builds the fetch handler and serves it with the runtime's listener. Used by the CLI and by the
// integration tests (which listen on port 0).
import { createApp, type App, type Connection } from './app.ts';
import type { Config, ConnectionConfig } from './config.ts';
import { createLogger, type Logger } from './log.ts';
import type { Listen } from './listener.ts';
import { openQuotaStore } from './quota.ts';
import { openFileSource } from './sources/file/mod.ts';
import type { Source } from './sources/source.ts';

export interface Running {
  readonly app: App;
  readonly url: string;
  readonly connections: readonly Connection[];
  /** Stops accepting, finishes the requests and writes in flight, flushes every source and the quota. */
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
    await flushLog(log);
    throw error;
  }
  const quota = await openQuotaStore({ stateDir: config.stateDir, onError: (error) => log.error('quota counts could not be saved', { error: String(error) }) });
  const app = createApp({
    connections: opened,
    quota,
    bodyBytes: config.limits?.bodyBytes ?? 1024 * 1024,
    cors: config.cors?.origins ?? '*',
    log,
  });
  const host = config.host ?? '127.0.0.1';
  let listener;
  try {
    listener = await options.listen(app, { host, port: config.port ?? 8080 });
  } catch (error) {
    await Promise.allSettled([quota.close(), ...opened.map((connection) => connection.source.close())]);
    await flushLog(log);
    throw error;
  }
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    app,
    url: `http://${shownHost}:${listener.port}`,
    connections: opened,
    async close() {
      await listener.close();
      await Promise.all([quota.close(), ...opened.map((connection) => connection.source.close())]);
      // Last, so the sources' and the quota's own lines about closing are written too.
      await flushLog(log);
    },
  };
}

/** Waits for the log's lines, for a few seconds at most: a stderr nobody reads must not hold a stop. */
async function flushLog(log: Logger): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([log.flush(), new Promise((resolve) => (timer = setTimeout(resolve, 5000)))]);
  clearTimeout(timer);
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
  // Loaded only when a Google connection is configured: the Sheets client and Google's auth stack
  // are about 40 MB of resident memory that a server of local files never uses.
  const { openGoogleSourceFromConfig } = await import('./sources/google/mod.ts');
  return openGoogleSourceFromConfig(source, { readOnly: connection.readOnly ?? false, log: (message: string) => log.error(message) });
}
