// One JSON line per request (method, path, status, duration, connection) and for server events.
// Never a key, a body or a query string: the path is logged without its parameters.
export const LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type Level = (typeof LEVELS)[number];

export interface Logger {
  /** Whether lines at this level are written, so a caller can skip building them. */
  enabled(level: Exclude<Level, 'silent'>): boolean;
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export function createLogger(level: Level, write: (line: string) => void = (line) => console.error(line)): Logger {
  const threshold = LEVELS.indexOf(level);
  const at = (name: Exclude<Level, 'silent'>) => (message: string, fields: Record<string, unknown> = {}) => {
    if (LEVELS.indexOf(name) < threshold) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: name, message, ...fields }));
  };
  return { enabled: (name) => LEVELS.indexOf(name) >= threshold, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export const silentLogger: Logger = createLogger('silent');
