// How upstream HTTP leaves this process, per runtime: the one place runtimes differ for the
// Google source. Node gets undici's fetch on a keep-alive Agent (a burst of reads and writes to
// sheets.googleapis.com reuses a few TLS connections instead of opening one per request);
// Deno and Bun pool connections in their built-in fetch already.
import type { Agent } from 'undici';

export type Runtime = 'node' | 'deno' | 'bun';

export interface Transport {
  readonly runtime: Runtime;
  /** The fetch the Google client library calls (gaxios' `fetchImplementation`). */
  readonly fetch: typeof fetch;
  /** Closes pooled connections; the transport is not used afterwards. */
  close(): Promise<void>;
}

export function currentRuntime(): Runtime {
  return 'Bun' in globalThis ? 'bun' : 'Deno' in globalThis ? 'deno' : 'node';
}

/** Keep-alive pool settings for Node: enough sockets for a burst, idle ones closed after a while. */
const NODE_POOL = { connections: 16, keepAliveTimeout: 30_000, keepAliveMaxTimeout: 120_000 } as const;

const TRANSPORTS: Record<Runtime, () => Promise<Transport>> = {
  node: nodeTransport,
  deno: async () => builtIn('deno'),
  bun: async () => builtIn('bun'),
};

export function openTransport(runtime: Runtime = currentRuntime()): Promise<Transport> {
  return TRANSPORTS[runtime]();
}

function builtIn(runtime: Runtime): Transport {
  return { runtime, fetch: (input, init) => globalThis.fetch(input, init), close: async () => undefined };
}

async function nodeTransport(): Promise<Transport> {
  const undici = await import('undici');
  const agent: Agent = new undici.Agent(NODE_POOL);
  // undici's fetch takes the same arguments as the global one plus `dispatcher`; its types are
  // its own copies of the DOM ones, hence the casts at this one boundary.
  const pooled = (input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> =>
    undici.fetch(input as never, { ...(init as object), dispatcher: agent } as never) as unknown as Promise<Response>;
  return {
    runtime: 'node',
    fetch: pooled as typeof fetch,
    close: () => agent.close(),
  };
}
