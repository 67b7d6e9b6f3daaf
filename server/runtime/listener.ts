// What each runtime's entry provides: serve `app.fetch` on a host and port until closed.
import type { App } from '../http/request.ts';

export interface ListenOptions {
  readonly host: string;
  readonly port: number;
  /** How long the request line and headers may take to arrive (Node enforces it; Bun closes idle connections). */
  readonly headersTimeoutMs?: number;
  /** How long a body may take (the app answers 408 at this deadline; the listener's own limits sit above it). */
  readonly bodyTimeoutMs?: number;
}

export interface Listener {
  /** The address actually bound (port 0 picks a free port). */
  readonly port: number;
  /** Stops accepting connections, closes idle ones and waits for the requests in flight. */
  close(): Promise<void>;
  /** Closes every connection now, mid-request or not: the shutdown deadline has passed. */
  closeAll(): void;
}

export type Listen = (app: App, options: ListenOptions) => Promise<Listener>;
