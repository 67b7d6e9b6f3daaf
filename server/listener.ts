// What each runtime's entry provides: serve `app.fetch` on a host and port until closed.
import type { App } from './app.ts';

export interface ListenOptions {
  readonly host: string;
  readonly port: number;
}

export interface Listener {
  /** The address actually bound (port 0 picks a free port). */
  readonly port: number;
  /** Stops accepting connections and waits for the requests in flight. */
  close(): Promise<void>;
}

export type Listen = (app: App, options: ListenOptions) => Promise<Listener>;
