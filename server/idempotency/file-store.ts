// The Idempotency-Keys of one connection: `POST /sheets/demo` with `Idempotency-Key: order-17`
// leaves a receipt here (the request's fingerprint and the answer given), so that a retry within
// 24 h gets the same answer instead of a second row. Kept in memory and in the state folder,
// `<stateDir>/<connection>.idempotency`, one checksummed line per receipt:
//
//   3f0c9a1e5b7d2c44 {"key":"order-17","fingerprint":"<sha-256>","at":1763940000000,"status":201,...}
//
// Lines are appended and fdatasynced, several receipts per fsync under load (GroupCommit); a
// later line for a key replaces an earlier one. The file is rewritten (temp + fsync + rename)
// with only the live receipts at start and whenever dead lines (expired, dropped, replaced)
// outnumber the live ones, so it does not grow for ever. A damaged line (a crash mid-append)
// loses only itself: every line checks on its own.
//
// The file source's journal carries each write's receipt in the write's own line and hands it
// here (ReceiptSink): `journaled` once the journal holds it, `keep` before the journal forgets it.
import { open, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Receipt, ReceiptSink } from '../sources/source.ts';
import { appendAndSync, errorCode, fsyncDirectory, isMissing, replaceFileDurably } from '../durable/disk.ts';
import { GroupCommit, Serial } from '../durable/group-commit.ts';
import { parseReceipts, receiptLine } from './receipt-lines.ts';

const encoder = new TextEncoder();

/** How long a key is remembered after its first use. */
export const KEY_TTL_MS = 24 * 60 * 60 * 1000;

/** The defaults of `limits.idempotencyKeys` and `limits.idempotencyBytes`, per connection. */
export const DEFAULT_MAX_KEYS = 100_000;
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

export interface KeyStoreOptions {
  /** The file, or null to keep keys in memory only (in-process tests, embedding). */
  readonly path: string | null;
  readonly maxKeys?: number;
  /** Receipts' bytes (their lines) held at most; write answers can be large. */
  readonly maxBytes?: number;
  readonly ttlMs?: number;
  readonly now?: () => number;
  readonly log?: (message: string) => void;
}

interface Held {
  readonly receipt: Receipt;
  readonly line: string;
  /** The line's UTF-8 length, counted against maxBytes. */
  readonly bytes: number;
  /** Whether the file holds this receipt (else only the journal does, or nothing yet). */
  inFile: boolean;
}

/** Dead lines tolerated before a rewrite, on top of as many as there are live ones. */
const REWRITE_SLACK = 1024;
/** How often (at most) a full store is logged. */
const FULL_LOG_EVERY_MS = 60 * 60 * 1000;

export class KeyStore implements ReceiptSink {
  readonly path: string | null;
  readonly #maxKeys: number;
  readonly #maxBytes: number;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #log: (message: string) => void;
  /** In insertion order, which is first-use order: the oldest key is the first. */
  readonly #held = new Map<string, Held>();
  #bytes = 0;
  /** Lines in the file that no live receipt needs. */
  #deadLines = 0;
  /** Bytes of the file known good: a failed append is cut back to this. */
  #fileBytes = 0;
  #fileExists = false;
  #lastFullLog = -Infinity;
  readonly #locks = new Map<string, Promise<void>>();
  readonly #io = new Serial();
  readonly #appends: GroupCommit<Held>;

  private constructor(options: KeyStoreOptions) {
    this.path = options.path;
    this.#maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS;
    this.#maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.#ttlMs = options.ttlMs ?? KEY_TTL_MS;
    this.#now = options.now ?? Date.now;
    this.#log = options.log ?? (() => undefined);
    this.#appends = new GroupCommit<Held>({
      serial: this.#io,
      commit: (batch) => this.#append(batch),
      afterBatch: () => this.#io.run(() => this.#rewriteIfMostlyDead()),
      onError: () => undefined,
    });
  }

  /** Keys in memory only. */
  static memory(options: Omit<KeyStoreOptions, 'path'> = {}): KeyStore {
    return new KeyStore({ ...options, path: null });
  }

  /** The store saved at `options.path`: live receipts loaded, the file rewritten without dead lines. */
  static async open(options: KeyStoreOptions & { readonly path: string }): Promise<KeyStore> {
    const store = new KeyStore(options);
    await store.#load();
    return store;
  }

  now(): number {
    return this.#now();
  }

  get size(): number {
    return this.#held.size;
  }

  /** The live receipt of `key`, if it was used within the last 24 h (and not dropped). */
  get(key: string): Receipt | undefined {
    const held = this.#held.get(key);
    if (held === undefined) return undefined;
    if (this.#expired(held.receipt)) {
      this.#drop(key, held);
      return undefined;
    }
    return held.receipt;
  }

  /** Runs `section` with no other section on the same key running: a retry waits for the first try. */
  async exclusive<T>(key: string, section: () => Promise<T>): Promise<T> {
    const before = this.#locks.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = before.then(() => mine);
    this.#locks.set(key, tail);
    await before;
    try {
      return await section();
    } finally {
      release();
      if (this.#locks.get(key) === tail) this.#locks.delete(key);
    }
  }

  /** Records a receipt, replacing the key's last one; resolves once the file holds it. */
  async save(receipt: Receipt): Promise<void> {
    const held = this.#insert(receipt);
    if (held !== null) await this.#persist([held]);
  }

  journaled(receipts: readonly Receipt[]): void {
    for (const receipt of receipts) {
      // After a restart the store may already hold the key, with the answer as finally sent.
      if (this.#held.get(receipt.key)?.receipt.fingerprint !== receipt.fingerprint) this.#insert(receipt);
    }
  }

  async keep(receipts: readonly Receipt[]): Promise<void> {
    const pending: Held[] = [];
    for (const receipt of receipts) {
      const held = this.#held.get(receipt.key);
      // A receipt the store already holds wins: it may be the answer as finally sent.
      if (held !== undefined && held.receipt.fingerprint === receipt.fingerprint) {
        if (!held.inFile) pending.push(held);
        continue;
      }
      if (held !== undefined) continue;
      const inserted = this.#insert(receipt);
      if (inserted !== null) pending.push(inserted);
    }
    await this.#persist(pending);
  }

  /** Waits for the appends in flight. */
  async close(): Promise<void> {
    await this.#appends.settled();
  }

  #expired(receipt: Receipt): boolean {
    return this.#now() - receipt.at >= this.#ttlMs;
  }

  /** Holds a receipt in memory (not yet in the file); null when it is already expired. */
  #insert(receipt: Receipt): Held | null {
    if (this.#expired(receipt)) return null;
    const before = this.#held.get(receipt.key);
    if (before !== undefined) this.#drop(receipt.key, before);
    const line = receiptLine(receipt);
    const held: Held = { receipt, line, bytes: encoder.encode(line).byteLength, inFile: false };
    this.#held.set(receipt.key, held);
    this.#bytes += held.bytes;
    this.#trim();
    return this.#held.get(receipt.key) === held ? held : null;
  }

  #drop(key: string, held: Held): void {
    this.#held.delete(key);
    this.#bytes -= held.bytes;
    if (held.inFile) this.#deadLines++;
  }

  /** Drops expired keys from the oldest end, then the oldest live ones while over a limit. */
  #trim(): void {
    let dropped = 0;
    for (const [key, held] of this.#held) {
      const over = this.#held.size > this.#maxKeys || this.#bytes > this.#maxBytes;
      if (!over && !this.#expired(held.receipt)) break;
      if (!this.#expired(held.receipt)) dropped++;
      this.#drop(key, held);
    }
    const now = this.#now();
    if (dropped > 0 && now - this.#lastFullLog >= FULL_LOG_EVERY_MS) {
      this.#lastFullLog = now;
      this.#log(
        `sheetrest: the Idempotency-Keys${this.path === null ? '' : ` in ${this.path}`} reached their limit (${this.#maxKeys} keys or ${this.#maxBytes} bytes); ` +
          'the oldest are dropped before their 24 h, so a retry with one of them would run again (raise limits.idempotencyKeys or limits.idempotencyBytes)',
      );
    }
  }

  async #persist(held: readonly Held[]): Promise<void> {
    if (this.path === null || held.length === 0) return;
    await Promise.all(held.map((item) => this.#appends.add(item)));
  }

  /** One append and one fdatasync for a batch; on failure the file is cut back to its last good length. */
  async #append(batch: readonly Held[]): Promise<void> {
    const path = this.path as string;
    // Receipts replaced or dropped while queued need no line.
    const live = batch.filter((held) => this.#held.get(held.receipt.key) === held && !held.inFile);
    if (live.length === 0) return;
    const text = live.map((held) => held.line).join('');
    const handle = await open(path, 'a', 0o600);
    try {
      await appendAndSync(handle, encoder.encode(text));
    } catch (error) {
      await handle.truncate(this.#fileBytes).catch(() => undefined);
      throw error;
    } finally {
      await handle.close();
    }
    // A new file's name is durable only once its folder is.
    if (!this.#fileExists) await fsyncDirectory(dirname(path));
    this.#fileExists = true;
    this.#fileBytes += encoder.encode(text).byteLength;
    for (const held of live) held.inFile = true;
  }

  async #rewriteIfMostlyDead(): Promise<void> {
    if (this.#deadLines <= this.#held.size + REWRITE_SLACK) return;
    await this.#rewrite().catch((error: unknown) => this.#log(`sheetrest: could not compact ${this.path}: ${errorCode(error) ?? String(error)}`));
  }

  /** Replaces the file with the live receipts only: temp + fsync + rename + fsync of the folder. */
  async #rewrite(): Promise<void> {
    const path = this.path as string;
    const held = [...this.#held.values()];
    const text = held.map((item) => item.line).join('');
    await replaceFileDurably(path, encoder.encode(text), 0o600);
    for (const item of held) item.inFile = true;
    this.#deadLines = 0;
    this.#fileBytes = encoder.encode(text).byteLength;
    this.#fileExists = true;
  }

  async #load(): Promise<void> {
    const path = this.path as string;
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if (isMissing(error)) return;
      throw new Error(`${path}: cannot read the Idempotency-Key store (${errorCode(error) ?? String(error)})`);
    }
    this.#fileExists = true;
    this.#fileBytes = encoder.encode(text).byteLength;
    const { receipts, lines, damaged } = parseReceipts(text);
    for (const receipt of receipts) {
      const held = this.#insert(receipt);
      if (held !== null) held.inFile = true;
    }
    if (damaged > 0) this.#log(`sheetrest: ${path}: ${damaged} damaged line(s) skipped (a write cut short by a crash, never answered)`);
    this.#deadLines = lines - this.#held.size;
    if (this.#deadLines > 0 || damaged > 0) {
      // Failing that, appends go on after the dead lines: a damaged one loses only itself.
      await this.#rewrite().catch((error: unknown) => this.#log(`sheetrest: could not compact ${path}: ${errorCode(error) ?? String(error)}`));
    }
  }
}
