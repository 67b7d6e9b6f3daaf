// How upstream HTTP leaves this process, per runtime: the one place runtimes differ for the
// Google source. Node gets undici's fetch on a keep-alive Agent (a burst of reads and writes to
// sheets.googleapis.com reuses a few TLS connections instead of opening one per request); Bun
// pools connections in its built-in fetch already. Deno's built-in fetch sends a POST again by
// itself when the connection is cut before the answer (a batch Google applied would be appended
// twice, and sheetrest never sees the failure it must read back after: docs/google-source.md,
// "Lost answers"), so Deno's requests to the Sheets and Drive APIs go through undici too. Its
// sign-ins stay on the built-in fetch: a token request sent twice only mints a second token, and
// under Deno undici's error answers from the token endpoint lost the detail that names the
// setting to fix (test/sources/google/sign-in.test.ts).
import type { Agent } from 'undici';

export type Runtime = 'node' | 'deno' | 'bun';

export interface Transport {
  readonly runtime: Runtime;
  /** The fetch the Google client library calls (gaxios' `fetchImplementation`). */
  readonly fetch: typeof fetch;
  /** The fetch of sign-ins (OAuth token requests). */
  readonly signInFetch: typeof fetch;
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
  deno: async () => ({ ...(await nodeTransport()), runtime: 'deno', signInFetch: builtIn('deno').fetch }),
  bun: async () => builtIn('bun'),
};

export function openTransport(runtime: Runtime = currentRuntime()): Promise<Transport> {
  return TRANSPORTS[runtime]();
}

function builtIn(runtime: Runtime): Transport {
  const fetch: typeof globalThis.fetch = (input, init) => globalThis.fetch(input, init);
  return { runtime, fetch, signInFetch: fetch, close: async () => undefined };
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
    signInFetch: pooled as typeof fetch,
    close: () => agent.close(),
  };
}
