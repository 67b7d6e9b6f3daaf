// Validators for HTTP caching: a version of each tab that changes whenever its content does, and
// the strong ETags built from it. A version is a 64-bit hash of the tab's rows (each cell's text
// and typed value), so the same content has the same version whichever way it was reached: loaded
// from a file, replayed from a journal after a restart, or derived by a write. Row hashes are kept
// per chunk of rows (rows.ts) and a tab keeps its hasher's state after each chunk, so a write that
// appends a row hashes that row and redoes the version from its chunk on: a few thousand steps,
// whatever the tab's size.
//
// An ETag names what it validates and the request it answers: `"t<tab version>-<request digest>"`
// for a tab's rows, `"r<row hash>-<digest>"` for one row read by index (it survives writes to
// other rows), `"w<workbook version>-<digest>"` for `/tabs`. `If-Match` on a write compares the
// validator part only, so any read of the tab (or of the row) gives a usable precondition.
import type { WritePlan } from './write-plan.ts';
import { CHUNK_BITS, CHUNK_ROWS, gridRows, headerRowOf, newChunks, sharedChunks, type Chunk } from './rows.ts';
import { isSheetDate, type SheetRow, type Tab, type Workbook } from './workbook.ts';

/** A validator's kind: the rows of a tab, one row, or the list of tabs. */
export type ValidatorKind = 't' | 'r' | 'w';

/**
 * A tab's version hashes its name, then each row's two lanes in order; kept so that a write
 * redoes only what follows its first changed chunk: `states` holds the hasher's two lanes after
 * each chunk (chunk c at 2c and 2c + 1), the first `known` of them worked out.
 */
interface TabHashes {
  readonly states: Int32Array;
  known: number;
  version?: string;
}

const tabHashes = new WeakMap<Tab, TabHashes>();
/** Two 32-bit lanes per row of a chunk (its row i at 2i and 2i + 1), kept with the chunk. */
const chunkHashes = new WeakMap<Chunk, Int32Array>();
const workbookVersions = new WeakMap<Workbook, string>();

/** The tab's content version: 16 hex digits. Computed once per tab object. */
export function tabVersion(tab: Tab): string {
  const hashes = hashesOf(tab);
  if (hashes.version === undefined) {
    const hasher = new Hasher();
    const { chunks } = gridRows(tab);
    const states = hashes.states;
    if (hashes.known === 0) hasher.text(tab.name);
    else {
      hasher.h1 = states[hashes.known * 2 - 2];
      hasher.h2 = states[hashes.known * 2 - 1];
    }
    for (let c = hashes.known; c < chunks.length; c++) {
      hasher.pairs(rowHashesOf(chunks[c]));
      states[c * 2] = hasher.h1;
      states[c * 2 + 1] = hasher.h2;
    }
    hashes.known = chunks.length;
    hashes.version = hasher.digest();
  }
  return hashes.version;
}

/** The version of data row `gridRow` (0-based in the tab's rows): its cells' hash. */
export function rowVersion(tab: Tab, gridRow: number): string {
  const rows = gridRows(tab);
  const hasher = new Hasher();
  if (gridRow >= 0 && gridRow < rows.length) {
    const lanes = rowHashesOf(rows.chunks[gridRow >>> CHUNK_BITS]);
    const at = (gridRow & (CHUNK_ROWS - 1)) * 2;
    hasher.pair(lanes[at], lanes[at + 1]);
  }
  return hasher.digest();
}

/** The version of the workbook's list of tabs: their names, visibility and contents. */
export function workbookVersion(workbook: Workbook): string {
  let version = workbookVersions.get(workbook);
  if (version === undefined) {
    const hasher = new Hasher();
    for (const tab of workbook.tabs) {
      hasher.text(tab.name);
      hasher.text(tab.visibility ?? '');
      hasher.text(tabVersion(tab));
    }
    version = hasher.digest();
    workbookVersions.set(workbook, version);
  }
  return version;
}

/**
 * `next` is `tab` with `plan` applied (`applyPlanToTab`): when `tab`'s version was worked out,
 * the next tab keeps its hasher's states up to the first chunk the plan changed, and each new
 * chunk takes the row hashes of the rows it shares with the tab before (the same objects), so
 * only the rows the plan wrote are hashed cell by cell.
 */
export function deriveVersion(tab: Tab, next: Tab, plan: WritePlan): void {
  const parent = tabHashes.get(tab);
  if (parent === undefined || tabHashes.has(next)) return;
  const before = gridRows(tab);
  const after = gridRows(next);
  const same = Math.min(parent.known, sharedChunks(before, after));
  const states = new Int32Array(after.chunks.length * 2);
  states.set(parent.states.subarray(0, same * 2));
  tabHashes.set(next, { states, known: same });
  const firstDataRow = headerRowOf(before) + 1;
  // The chunk the last carried row came from, and its hashes: rows come in runs from one chunk.
  let fromChunk: Chunk | undefined;
  let fromLanes: Int32Array | undefined;
  for (const { chunk, origins } of newChunks(before, after, plan.removed.map((index) => firstDataRow + index))) {
    if (chunkHashes.has(chunk)) continue;
    const lanes = new Int32Array(chunk.length * 2);
    for (let index = 0; index < chunk.length; index++) {
      // Identity, not the plan, decides what is rehashed: a row the plan replaced (or an appended
      // row that took an empty row's place) is a new object, so a hash is never carried over wrongly.
      const old = origins[index];
      if (old !== -1 && before.chunks[old >>> CHUNK_BITS] !== fromChunk) {
        fromChunk = before.chunks[old >>> CHUNK_BITS];
        fromLanes = chunkHashes.get(fromChunk);
      }
      const from = old === -1 ? undefined : fromLanes;
      if (from !== undefined) {
        const at = (old & (CHUNK_ROWS - 1)) * 2;
        lanes[index * 2] = from[at];
        lanes[index * 2 + 1] = from[at + 1];
      } else hashRowInto(chunk[index], lanes, index);
    }
    chunkHashes.set(chunk, lanes);
  }
}

/** An ETag: `"<kind><version>-<digest of the request key>"`. */
export function etag(kind: ValidatorKind, version: string, requestKey: string): string {
  let digest = keyDigests.get(requestKey);
  if (digest === undefined) {
    const hasher = new Hasher();
    hasher.text(requestKey);
    digest = hasher.digest();
    if (requestKey.length <= KEY_DIGEST_MAX_LENGTH) {
      if (keyDigests.size >= KEY_DIGESTS) keyDigests.clear();
      keyDigests.set(requestKey, digest);
    }
  }
  return `"${kind}${version}-${digest}"`;
}

/**
 * The digests of the request keys seen lately: a server answers the same few reads over and
 * over, and a key is hashed a character at a time. Started over when full, so it stays small.
 */
const keyDigests = new Map<string, string>();
const KEY_DIGESTS = 1024;
/** Longer keys (a read with many long conditions) are hashed every time: the kept ones stay under 512 KB. */
const KEY_DIGEST_MAX_LENGTH = 512;

/** The validator an ETag of ours carries (`t…`, `r…`, `w…`), or null for any other tag. */
export function validatorOf(tag: string): { kind: ValidatorKind; version: string } | null {
  const match = /^"([trw])([0-9a-f]{16})-[0-9a-f]{16}"$/.exec(tag);
  return match === null ? null : { kind: match[1] as ValidatorKind, version: match[2] };
}

/**
 * The entity tags of an `If-None-Match` or `If-Match` header: `*`, or the list of tags
 * (`"a", W/"b"`). A value that is neither yields no tags, so it matches nothing.
 */
export function entityTags(header: string): '*' | string[] {
  if (header.trim() === '*') return '*';
  const tags: string[] = [];
  const pattern = /\s*(W\/)?("[^"]*")\s*(?:,|$)/gy;
  let match: RegExpExecArray | null;
  let end = 0;
  while (end < header.length && (match = pattern.exec(header)) !== null) {
    tags.push((match[1] ?? '') + match[2]);
    end = pattern.lastIndex;
  }
  return end === header.length || header.slice(end).trim() === '' ? tags : [];
}

/** `If-None-Match` against our ETag: weak comparison (RFC 9110 13.1.2), `*` matches any answer. */
export function noneMatchHits(header: string, tag: string): boolean {
  const tags = entityTags(header);
  return tags === '*' || tags.some((candidate) => (candidate.startsWith('W/') ? candidate.slice(2) : candidate) === tag);
}

// ---- hashing ----------------------------------------------------------------------------------

const float = new Float64Array(1);
const floatWords = new Int32Array(float.buffer);

/** Markers mixed between values, above any UTF-16 code unit, so no two sequences run together. */
const END_TEXT = 0x10000;
const NULL_VALUE = 0x10001;
const SAME_AS_TEXT = 0x10002;
const NUMBER_VALUE = 0x10003;
const TRUE_VALUE = 0x10004;
const FALSE_VALUE = 0x10005;
const DATE_VALUE = 0x10006;
const TEXT_VALUE = 0x10007;

/** Two multiplicative 32-bit lanes with a final avalanche: 64 bits, fast in every engine, not cryptographic. */
class Hasher {
  h1 = 0x9e3779b9 | 0;
  h2 = 0x85ebca6b | 0;

  word(value: number): void {
    this.h1 = Math.imul(this.h1 ^ value, 0x9e3779b1);
    this.h2 = Math.imul(this.h2 ^ value, 0x5bd1e995);
    this.h2 ^= this.h1 >>> 15;
  }

  pair(first: number, second: number): void {
    this.h1 = Math.imul(this.h1 ^ first, 0x9e3779b1);
    this.h2 = Math.imul(this.h2 ^ second, 0x5bd1e995);
    this.h1 ^= this.h2 >>> 13;
    this.h2 ^= this.h1 >>> 17;
  }

  /** `pair` of each two lanes of `lanes` in turn (a chunk's row hashes), with the state in locals. */
  pairs(lanes: Int32Array): void {
    let h1 = this.h1;
    let h2 = this.h2;
    for (let index = 0; index < lanes.length; index += 2) {
      h1 = Math.imul(h1 ^ lanes[index], 0x9e3779b1);
      h2 = Math.imul(h2 ^ lanes[index + 1], 0x5bd1e995);
      h1 ^= h2 >>> 13;
      h2 ^= h1 >>> 17;
    }
    this.h1 = h1;
    this.h2 = h2;
  }

  text(text: string): void {
    for (let index = 0; index < text.length; index++) this.word(text.charCodeAt(index));
    this.word(END_TEXT);
  }

  /** The two lanes, avalanched (murmur3's finaliser on each, each folded into the other). */
  lanes(): [number, number] {
    let h1 = this.h1 ^ (this.h2 >>> 16);
    let h2 = this.h2 ^ (this.h1 >>> 16);
    h1 = Math.imul(h1 ^ (h1 >>> 16), 0x85ebca6b);
    h1 = Math.imul(h1 ^ (h1 >>> 13), 0xc2b2ae35);
    h1 ^= h1 >>> 16;
    h2 = Math.imul(h2 ^ (h2 >>> 16), 0x85ebca6b);
    h2 = Math.imul(h2 ^ (h2 >>> 13), 0xc2b2ae35);
    h2 ^= h2 >>> 16;
    return [h1, h2 ^ Math.imul(h1, 0x27d4eb2f)];
  }

  digest(): string {
    const [h1, h2] = this.lanes();
    return hex(h1) + hex(h2);
  }
}

function hex(word: number): string {
  return (word >>> 0).toString(16).padStart(8, '0');
}

function hashesOf(tab: Tab): TabHashes {
  let hashes = tabHashes.get(tab);
  if (hashes === undefined) {
    hashes = { states: new Int32Array(gridRows(tab).chunks.length * 2), known: 0 };
    tabHashes.set(tab, hashes);
  }
  return hashes;
}

/** The row hashes of a chunk, worked out once per chunk (versions of a tab share chunks). */
function rowHashesOf(chunk: Chunk): Int32Array {
  let lanes = chunkHashes.get(chunk);
  if (lanes === undefined) {
    lanes = new Int32Array(chunk.length * 2);
    for (let index = 0; index < chunk.length; index++) hashRowInto(chunk[index], lanes, index);
    chunkHashes.set(chunk, lanes);
  }
  return lanes;
}

/**
 * A row's two 32-bit lanes, written into `into` at `position`. The hottest loop of a first
 * version (every character of every cell of the tab), so it keeps its state in locals: each lane
 * is an xor-multiply hash of every UTF-16 unit with its own odd multiplier (FNV-1a's shape), the
 * lanes mixed into each other after each value, and the markers keep values from running together.
 */
function hashRowInto(row: SheetRow, into: Int32Array, position: number): void {
  let h1 = 0x9e3779b9 | 0;
  let h2 = 0x85ebca6b | 0;
  const cells = Math.max(row.text.length, row.value.length);
  for (let column = 0; column < cells; column++) {
    const text = row.text[column] ?? '';
    for (let index = 0; index < text.length; index++) {
      const unit = text.charCodeAt(index);
      h1 = Math.imul(h1 ^ unit, 0x01000193);
      h2 = Math.imul(h2 ^ unit, 0x5bd1e995);
    }
    const value = row.value[column] ?? null;
    let marker: number;
    if (value === null) marker = NULL_VALUE;
    else if (value === text) marker = SAME_AS_TEXT;
    else if (typeof value === 'number') {
      float[0] = value;
      h1 = Math.imul(h1 ^ floatWords[0], 0x01000193);
      h2 = Math.imul(h2 ^ floatWords[1], 0x5bd1e995);
      marker = NUMBER_VALUE;
    } else if (typeof value === 'boolean') marker = value ? TRUE_VALUE : FALSE_VALUE;
    else {
      const other = isSheetDate(value) ? value.iso : value;
      for (let index = 0; index < other.length; index++) {
        const unit = other.charCodeAt(index);
        h1 = Math.imul(h1 ^ unit, 0x01000193);
        h2 = Math.imul(h2 ^ unit, 0x5bd1e995);
      }
      marker = isSheetDate(value) ? DATE_VALUE : TEXT_VALUE;
    }
    h1 = Math.imul(h1 ^ marker, 0x01000193);
    h2 = Math.imul(h2 ^ marker, 0x5bd1e995);
    h1 ^= h2 >>> 15;
    h2 ^= h1 >>> 13;
  }
  into[position * 2] = h1;
  into[position * 2 + 1] = h2;
}
