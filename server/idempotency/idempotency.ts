// Idempotency-Key on writes: `POST /sheets/demo` with `Idempotency-Key: order-17` runs once; a
// retry with the same key and the same request within 24 h gets the stored answer (plus
// `Idempotent-Replayed: true`) and writes nothing; the same key with another request is 422
// `idempotency_key_reused`. A retry sent while the first try still runs waits for it.
//
// "The same request" is the method (and X-HTTP-Method-Override), the path and query as the URL
// parser gives them, the Content-Type, the If-Match and the body's bytes: their SHA-256 is the
// fingerprint. The host is not part of it: a retry may go through another address.
//
// A key belongs to its caller: the connection (each has its own store) and the API key that
// authenticated the write (`keyCaller`); every caller of an open connection shares one scope.
// Another key holder sending the same Idempotency-Key gets his own write done, never the first
// caller's answer. The store holds `<caller>:<Idempotency-Key>`, the caller named by a hash of
// the key's digest, never by the key or the digest itself.
//
// Only decided answers are kept: 2xx, and 4xx the engine gave for the write (400, 404, 412...);
// a refusal that decided nothing (401, 402, 403, 408, 429, 5xx) is not, so a retry runs again.
//
// The receipt rides along with the write (Planned.receipt): the file source journals it in the
// write's own line, so a crash cannot keep the write and lose the key. Otherwise (nothing to
// write, the Google source) it is saved to the key store before the answer goes out.
import { createHash } from 'node:crypto';
import { apiError } from '../../lib/errors.ts';
import { digestKey } from '../auth.ts';
import { errorAnswer, type Answer } from '../http/respond.ts';
import type { Receipt, Source } from '../sources/source.ts';

const KEY_SYNTAX = /^[\x20-\x7e]{1,255}$/;

/** Answers that decided nothing: not kept, so a retry with the key runs again. */
const UNDECIDED = new Set([401, 402, 403, 408, 429]);

export function isDecided(status: number): boolean {
  return status < 500 && !UNDECIDED.has(status);
}

/** The scope every caller of an open connection (no key needed) shares. */
export const OPEN_CALLER = 'open';

/**
 * The scope of the callers using this API key: 16 hex digits of a hash of the key's digest, so
 * that the store says whose key it is without holding the key or its digest. Never holds `:`,
 * so `<caller>:<key>` cannot be spelled by another caller with another Idempotency-Key.
 */
export function keyCaller(apiKey: string): string {
  return createHash('sha256').update('sheetrest Idempotency-Key scope\n').update(digestKey(apiKey)).digest('hex').slice(0, 16);
}

export interface KeyedRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: { get(name: string): string | null };
}

/**
 * What `idempotent` needs of a key store: the state folder's (KeyStore) or, with several
 * instances, Redis's (server/idempotency/redis-store.ts). `get` is answered within `exclusive`.
 */
export interface KeyStoreLike {
  /** Where receipts are kept, for messages. */
  readonly path: string | null;
  now(): number;
  get(key: string): Receipt | undefined;
  exclusive<T>(key: string, section: () => Promise<T>): Promise<T>;
  save(receipt: Receipt): Promise<void>;
  close(): Promise<void>;
}

/**
 * Runs `write` once per Idempotency-Key of this caller (none: every time). `write` gets the
 * source to write through: `source` itself, or a view of it whose writes carry the key's receipt.
 */
export async function idempotent(
  store: KeyStoreLike,
  source: Source,
  request: KeyedRequest,
  body: Uint8Array | null,
  /** The caller's scope (OPEN_CALLER or keyCaller), asked only when the write sends a key. */
  caller: () => string,
  write: (source: Source) => Promise<Answer>,
  log: (message: string) => void = () => undefined,
): Promise<Answer> {
  const sent = request.headers.get('idempotency-key');
  if (sent === null) return write(source);
  if (!KEY_SYNTAX.test(sent)) {
    return errorAnswer(apiError('invalid_parameter', 'The Idempotency-Key header must be 1 to 255 printable ASCII characters.'));
  }
  // Receipts stored before keys were scoped hold the bare key: they match nothing now.
  const key = `${caller()}:${sent}`;
  const print = requestFingerprint(request, body);
  return store.exclusive(key, async () => {
    const stored = store.get(key);
    if (stored !== undefined) {
      if (stored.fingerprint !== print) {
        return errorAnswer(apiError('idempotency_key_reused', 'This Idempotency-Key was already used with another request (method, path, query, Content-Type, If-Match or body); use a new key for a new request.'));
      }
      return { status: stored.status, headers: { ...stored.headers, 'Idempotent-Replayed': 'true' }, body: stored.body };
    }
    const at = store.now();
    const answer = await write(withReceipt(source, { key, fingerprint: print, at }));
    if (!isDecided(answer.status)) return answer;
    const receipt: Receipt = { key, fingerprint: print, at, status: answer.status, headers: answer.headers, body: bodyText(answer.body) };
    // The journal already holds it (with its write) unless the answer changed since it was planned.
    const journaled = store.get(key);
    if (journaled === undefined || !sameAnswer(journaled, receipt)) {
      await store.save(receipt).catch((error: unknown) => {
        // The write is done: answer it. The store keeps the key in memory (the state folder's until
        // a restart; Redis's until Redis takes it, the key marked as running there meanwhile).
        log(`sheetrest: could not save Idempotency-Key receipt to ${store.path}: ${String(error)}`);
      });
    }
    return answer;
  });
}

/** SHA-256 of what makes two requests the same request (see the top of this file). */
export function requestFingerprint(request: KeyedRequest, body: Uint8Array | null): string {
  const url = new URL(request.url);
  const override = request.headers.get('x-http-method-override') ?? '';
  const type = request.headers.get('content-type') ?? '';
  // Another precondition is another request: a 412 kept for one If-Match is no answer for the next.
  const ifMatch = request.headers.get('if-match') ?? '';
  const hash = createHash('sha256').update(`${request.method}\n${override.trim().toUpperCase()}\n${url.pathname}${url.search}\n${type.trim()}\n${ifMatch.trim()}\n`);
  if (body !== null) hash.update(body);
  return hash.digest('hex');
}

/**
 * `source` with every plan carrying the key's receipt: the answer as the engine planned it
 * (`status`, `headers`, `body` of the plan's result). Everything else goes to the source itself.
 */
function withReceipt(source: Source, base: Pick<Receipt, 'key' | 'fingerprint' | 'at'>): Source {
  const write: Source['write'] = (plan, options) =>
    source.write((workbook) => {
      const planned = plan(workbook);
      const answer = answerOf(planned.result);
      return answer === null ? planned : { ...planned, receipt: { ...base, ...answer } };
    }, options);
  return new Proxy(source, {
    get(target, property) {
      if (property === 'write') return write;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function answerOf(result: unknown): Pick<Receipt, 'status' | 'headers' | 'body'> | null {
  if (typeof result !== 'object' || result === null) return null;
  const { status, headers, body } = result as Record<string, unknown>;
  if (typeof status !== 'number' || typeof headers !== 'object' || headers === null || typeof body !== 'string') return null;
  return { status, headers: headers as Record<string, string>, body };
}

function sameAnswer(a: Receipt, b: Receipt): boolean {
  if (a.status !== b.status || a.body !== b.body || a.fingerprint !== b.fingerprint) return false;
  const names = Object.keys(a.headers);
  return names.length === Object.keys(b.headers).length && names.every((name) => a.headers[name] === b.headers[name]);
}

const decoder = new TextDecoder();

function bodyText(body: string | Uint8Array): string {
  return typeof body === 'string' ? body : decoder.decode(body);
}
