// What the HTTP layer takes and gives, as types only: a request as the handler reads it (a Web
// Request is one; so is the lighter object server/runtime/node.ts builds from node:http's), the
// app a listener serves (`await app.fetch(new Request('http://x/sheets/demo'))`), and the admin
// API's handler. Kept apart from app.ts so the listeners, the admin API and the pipeline's own
// stages can name them without importing the pipeline.
import type { ApiError } from '../../lib/errors.ts';
import type { Answer } from './respond.ts';

/**
 * What the handler reads of a request: a Web Request is one, and so is the lighter object the
 * Node listener builds straight from node:http's request.
 */
export interface IncomingRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: { get(name: string): string | null };
  readonly body: ReadableStream<Uint8Array> | null;
  /** The client's address as the socket has it (server/http/client-address.ts); in-process requests may leave it out. */
  readonly remoteAddress?: string;
}

export interface App {
  /** The Web-standard handler. */
  fetch(request: Request): Promise<Response>;
  /**
   * The same answer as plain parts, for a listener that makes the Response itself or writes the
   * parts to the socket (Node): the answer itself when nothing had to be waited for (a kept read
   * answer of a source that had nothing to look at first), else a promise of it.
   */
  answer(request: IncomingRequest): Answer | Promise<Answer>;
  /** Gives up every body still arriving (408), so the requests waiting on them end: the shutdown deadline. */
  abortBodies(): void;
}

/**
 * The admin API (server/admin/): answers `/_admin/...`, reading a body only through `readBody`
 * (capped like any body, or at `maxBytes`: an upload's own cap, admin.uploadBytes).
 */
export type AdminHandler = (request: IncomingRequest, readBody: (maxBytes?: number) => Promise<Uint8Array | ApiError>) => Promise<Answer>;
