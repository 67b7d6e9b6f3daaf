// The command line: `npm start` (the demo workbook), `npm start -- book.xlsx`,
// `npm start -- --config sheetrest.json --port 8081`. The same file runs on Node, Deno and Bun;
// only the listener differs, picked from the table below.
import { copyFile, mkdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ADMIN_TOKEN_ENV, ADMIN_TOKEN_MIN_LENGTH, configForFile, ConfigError, loadConfig, type Config } from './config/config.ts';
import { IdleTrim } from './runtime/idle-trim.ts';
import type { Listen } from './runtime/listener.ts';
import { start } from './start.ts';
import { adminTokenFile, type AdminTokenFile } from './admin/token-file.ts';

const LISTENERS: Record<string, () => Promise<{ listen: Listen }>> = {
  node: () => import('./runtime/node.ts'),
  deno: () => import('./runtime/deno.ts'),
  bun: () => import('./runtime/bun.ts'),
};

/** `SHEETREST_ADMIN=1`: as `--admin`. */
const ADMIN_ENV = 'SHEETREST_ADMIN';

const RUNTIME = 'Bun' in globalThis ? 'bun' : 'Deno' in globalThis ? 'deno' : 'node';

const USAGE = `Usage:
  sheetrest                            serve the bundled demo workbook as connection "demo"
  sheetrest BOOK.xlsx|.xlsm|.ods|.csv  serve one file, as a connection named after it
  sheetrest --config sheetrest.json    serve a configuration (see docs/configuration.md)

Options:
  --port N            port to listen on (default $PORT or 8080)
  --host H            address to bind (default 127.0.0.1)
  --state-dir DIR     where quota counts and journals live (default .sheetrest/ beside the config or file)
  --read-only         single-file mode: refuse writes
  --hide-hidden-tabs  single-file mode: do not serve tabs the workbook hides
  --log-level L       debug, info, warn, error or silent (default info)
  --admin             turn on the admin API and the dashboard; with no token set, one is made
                      into the state folder (admin-token, mode 0600) and its path printed
  --help              show this text

Environment:
  SHEETREST_ADMIN_TOKEN  turns on the admin API at /_admin with this token (docs/admin-api.md)
  SHEETREST_ADMIN=1      as --admin
  PORT                   as --port`;

/** A second stop signal within this window is the echo of the first (see `stop` below). */
const REPEAT_WINDOW_MS = 3000;

const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DEMO_WORKBOOK = join(PACKAGE_ROOT, 'fixtures', 'demo.xlsx');

async function main(argv: readonly string[]): Promise<number> {
  let args;
  try {
    args = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        config: { type: 'string' },
        port: { type: 'string' },
        host: { type: 'string' },
        'state-dir': { type: 'string' },
        'read-only': { type: 'boolean' },
        'hide-hidden-tabs': { type: 'boolean' },
        'log-level': { type: 'string' },
        admin: { type: 'boolean' },
        help: { type: 'boolean' },
      },
    });
  } catch (error) {
    console.error(`sheetrest: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = args;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.length > 1 || (positionals.length === 1 && values.config !== undefined)) {
    console.error(`sheetrest: give one workbook or --config, not both\n\n${USAGE}`);
    return 2;
  }
  const port = values.port ?? process.env.PORT;
  const overrides = {
    ...(port === undefined ? {} : { port: /^\d+$/.test(port) ? Number(port) : port }),
    ...(values.host === undefined ? {} : { host: values.host }),
    ...(values['log-level'] === undefined ? {} : { log: { level: values['log-level'] } }),
  };

  const demo = values.config === undefined && positionals.length === 0;
  const configOf = async (env: NodeJS.ProcessEnv): Promise<Config> => {
    if (values.config !== undefined) {
      if (values['read-only']) throw new ConfigError('options', ['--read-only applies to single-file mode; set "readOnly" in the config file']);
      if (values['hide-hidden-tabs']) throw new ConfigError('options', ['--hide-hidden-tabs applies to single-file mode; set "hiddenTabs": "hide" in the config file']);
      const loaded = await loadConfig(values.config, { env });
      return withOverrides(loaded, overrides, values['state-dir']);
    }
    const workbook = positionals[0] ?? (await demoCopy());
    return configForFile(workbook, {
      ...overrides,
      ...(demo ? { id: 'demo' } : {}),
      // The demo keeps its state beside its copy, in the .sheetrest/ folder it lives in.
      ...(values['state-dir'] === undefined ? (demo ? { stateDir: resolve('.sheetrest') } : {}) : { stateDir: values['state-dir'] }),
      ...(values['read-only'] ? { readOnly: true } : {}),
      ...(values['hide-hidden-tabs'] ? { hiddenTabs: 'hide' } : {}),
    } as Parameters<typeof configForFile>[1], { env });
  };
  // --admin (or SHEETREST_ADMIN=1) with no token set: one made into the state folder, or the one made at an earlier start.
  const wantsAdmin = values.admin === true || process.env[ADMIN_ENV] === '1';
  let config: Config;
  let tokenFile: AdminTokenFile | undefined;
  try {
    config = await configOf(process.env);
    if (wantsAdmin && config.admin === undefined) {
      await mkdir(config.stateDir, { recursive: true });
      tokenFile = await adminTokenFile(config.stateDir);
      config = await configOf({ ...process.env, [ADMIN_TOKEN_ENV]: tokenFile.token });
    }
  } catch (error) {
    console.error(`sheetrest: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }

  const { listen } = await LISTENERS[RUNTIME]();
  let running;
  try {
    running = await start(config, { listen });
  } catch (error) {
    if (isPortInUse(error)) {
      const where = `${config.host ?? '127.0.0.1'}:${config.port ?? 8080}`;
      console.error(`sheetrest: the port ${config.port ?? 8080} is already in use (${where}): another sheetrest, or another program, listens there. Stop it, or choose another port with --port N (or $PORT, or "port" in the config file).`);
      return 1;
    }
    console.error(`sheetrest: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  // Memory a busy spell took is given back once the server goes quiet (idle-trim.ts).
  const trim = new IdleTrim().start();
  const first = running.connections[0];
  console.log(`sheetrest listening on ${running.url} (${RUNTIME} ${process.versions[RUNTIME as 'node'] ?? ''})`.trimEnd());
  for (const connection of running.connections) console.log(`  /sheets/${connection.id}  ${connection.source.description}`);
  if (first !== undefined) {
    const key = first.keys.length > 0 ? ` -H 'X-Api-Key: YOUR_KEY'` : '';
    console.log(`Try:\n  curl${key} '${running.url}/sheets/${first.id}?_limit=3'`);
  }
  if (running.admin) {
    // Before the admin line, which tests and scripts wait for.
    console.log(`Dashboard: ${running.url}/ (open it in a browser and paste the admin token; docs/dashboard.md)`);
    console.log(`Admin API: ${running.url}/_admin (send Authorization: Bearer <admin token>; docs/admin-api.md)`);
    // The path, never the token: logs and terminals are often kept and shared.
    if (tokenFile !== undefined) {
      console.log(`Admin token: in ${tokenFile.path} (${tokenFile.made ? 'made now' : 'made at an earlier start'}; mode 0600). In the shell you curl from: export ${ADMIN_TOKEN_ENV}="$(cat ${shellQuote(tokenFile.path)})"`);
    }
  }
  else if (demo) console.log(`Admin API off: start with --admin (a token is made into the state folder) or ${ADMIN_TOKEN_ENV}=<a secret of ${ADMIN_TOKEN_MIN_LENGTH}+ characters> to manage connections and keys at /_admin and in the dashboard at / (docs/admin-api.md)`);

  // Every way out flushes what it can: an orderly stop through close(), anything else (a forced
  // stop, an uncaught error) through this hook, which writes the quota counts synchronously and
  // releases the state folder. Journals need nothing: every acknowledged write is fsynced.
  process.on('exit', () => {
    try {
      running.exitNow();
    } catch (error) {
      console.error(`sheetrest: could not save quota counts on exit: ${String(error)}`);
    }
  });
  const crash = (error: unknown) => {
    console.error(`sheetrest: unexpected error, exiting: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  };
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);

  await new Promise<void>((resolveStop) => {
    let stoppingSince: number | undefined;
    const stop = (signal: string) => {
      if (stoppingSince !== undefined) {
        // `npm start`, and anything else that signals a whole process group, delivers the same
        // stop twice (npm forwards it to its child): a repeat this soon is that echo, not a user.
        if (performance.now() - stoppingSince < REPEAT_WINDOW_MS) {
          console.error(`sheetrest: ${signal} again within ${REPEAT_WINDOW_MS / 1000} s: ignored, still finishing; send it again later to exit without waiting`);
          return;
        }
        console.error(`sheetrest: ${signal} again, exiting without waiting (quota counts are saved; journaled writes are replayed at the next start)`);
        process.exit(1);
      }
      stoppingSince = performance.now();
      trim.stop();
      console.error(`sheetrest: ${signal}: finishing the requests in flight`);
      running.close().then(resolveStop, (error: unknown) => {
        console.error(`sheetrest: shutting down failed: ${String(error)}`);
        process.exit(1);
      });
    };
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
  });
  return 0;
}

/**
 * Whether listening failed because the address is taken, as each runtime says it: Node's
 * `EADDRINUSE`, Deno's `AddrInUse` ("Address already in use (os error 98)"), Bun's "Is port N in use?".
 */
function isPortInUse(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, name, message } = error as { code?: unknown; name?: unknown; message?: unknown };
  return code === 'EADDRINUSE' || name === 'AddrInUse' || (typeof message === 'string' && /address already in use|is port \d+ in use/i.test(message));
}

/** `/srv/my books/x` -> `'/srv/my books/x'`: a path as a POSIX shell reads it back. */
function shellQuote(path: string): string {
  return /^[\w./-]+$/.test(path) ? path : `'${path.replaceAll("'", "'\\''")}'`;
}

/** The demo is served from a copy in .sheetrest/, so trying writes never changes the bundled file. */
async function demoCopy(): Promise<string> {
  const copy = resolve('.sheetrest', 'demo', 'demo.xlsx');
  const exists = await stat(copy).then(() => true, () => false);
  if (!exists) {
    await mkdir(dirname(copy), { recursive: true });
    await copyFile(DEMO_WORKBOOK, copy);
  }
  return copy;
}

function withOverrides(config: Config, overrides: { port?: number | string; host?: string; log?: { level: string } }, stateDir: string | undefined): Config {
  if (overrides.port !== undefined && (typeof overrides.port !== 'number' || overrides.port > 65535)) {
    throw new ConfigError('options', [`--port: expected a whole number from 0 to 65535, got ${JSON.stringify(overrides.port)}`]);
  }
  const level = overrides.log?.level;
  if (level !== undefined && !['debug', 'info', 'warn', 'error', 'silent'].includes(level)) {
    throw new ConfigError('options', [`--log-level: expected debug, info, warn, error or silent, got ${JSON.stringify(level)}`]);
  }
  return {
    ...config,
    ...(overrides.port === undefined ? {} : { port: overrides.port }),
    ...(overrides.host === undefined ? {} : { host: overrides.host }),
    ...(level === undefined ? {} : { log: { level: level as 'info' } }),
    ...(stateDir === undefined ? {} : { stateDir: resolve(stateDir) }),
  } as Config;
}

// An explicit exit rather than letting the event loop drain: while a draining process tears down
// its signal handlers, a late echo of the stop signal (see REPEAT_WINDOW_MS) would kill it.
process.exit(await main(process.argv.slice(2)));
