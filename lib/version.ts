// Validators for HTTP caching: a version of each tab that changes whenever its content does, and
// the strong ETags built from it. A version is a 64-bit hash of the tab's rows (each cell's text
// and typed value), so the same content has the same version whichever way it was reached: loaded
// from a file, replayed from a journal after a restart, or derived by a write. A write derives the
// next tab's row hashes from the last tab's, hashing only the rows it changed, so keeping versions
// costs a pass over the row hashes per write, not over the cells.
//
// An ETag names what it validates and the request it answers: `"t<tab version>-<request digest>"`
// for a tab's rows, `"r<row hash>-<digest>"` for one row read by index (it survives writes to
// other rows), `"w<workbook version>-<digest>"` for `/tabs`. `If-Match` on a write compares the
// validator part only, so any read of the tab (or of the row) gives a usable precondition.
import type { WritePlan } from './write-plan.ts';
import { headerRowIndex, isSheetDate, type SheetRow, type Tab, type Workbook } from './workbook.ts';

/** A validator's kind: the rows of a tab, one row, or the list of tabs. */
export type ValidatorKind = 't' | 'r' | 'w';

interface TabHashes {
  /** Two 32-bit lanes per row of the tab (grid row p at 2p and 2p + 1). */
  readonly rows: Int32Array;
  version?: string;
}

const tabHashes = new WeakMap<Tab, TabHashes>();
const workbookVersions = new WeakMap<Workbook, string>();

/** The tab's content version: 16 hex digits. Computed once per tab object. */
export function tabVersion(tab: Tab): string {
  const hashes = hashesOf(tab);
  if (hashes.version === undefined) {
    const hasher = new Hasher();
    hasher.text(tab.name);
    const rows = hashes.rows;
    for (let index = 0; index < rows.length; index += 2) hasher.pair(rows[index], rows[index + 1]);
    hashes.version = hasher.digest();
  }
  return hashes.version;
}

/** The version of data row `gridRow` (0-based in the tab's rows): its cells' hash. */
export function rowVersion(tab: Tab, gridRow: number): string {
  const rows = hashesOf(tab).rows;
  const hasher = new Hasher();
  if (gridRow * 2 < rows.length) hasher.pair(rows[gridRow * 2], rows[gridRow * 2 + 1]);
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
 * `next` is `tab` with `plan` applied (`applyPlanToTab`): when `tab`'s rows were hashed, the next
 * tab's are derived, rehashing only rows that are not the very same objects as before.
 */
export function deriveVersion(tab: Tab, next: Tab, plan: WritePlan): void {
  const parent = tabHashes.get(tab);
  if (parent === undefined || tabHashes.has(next)) return;
  const firstDataRow = headerRowIndex(tab.rows) + 1;
  const removed = new Set(plan.removed.map((index) => firstDataRow + index));
  const rows = new Int32Array(next.rows.length * 2);
  let position = 0;
  for (let old = 0; old < tab.rows.length && position < next.rows.length; old++) {
    if (removed.has(old)) continue;
    // Identity, not the plan, decides what is rehashed: a row the plan replaced (or an appended
    // row that took an empty row's place) is a new object, so a hash is never carried over wrongly.
    if (next.rows[position] === tab.rows[old]) {
      rows[position * 2] = parent.rows[old * 2];
      rows[position * 2 + 1] = parent.rows[old * 2 + 1];
    } else {
      hashRowInto(next.rows[position], rows, position);
    }
    position++;
  }
  for (; position < next.rows.length; position++) hashRowInto(next.rows[position], rows, position);
  tabHashes.set(next, { rows });
}

/** An ETag: `"<kind><version>-<digest of the request key>"`. */
export function etag(kind: ValidatorKind, version: string, requestKey: string): string {
  const hasher = new Hasher();
  hasher.text(requestKey);
  return `"${kind}${version}-${hasher.digest()}"`;
}

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
    const rows = new Int32Array(tab.rows.length * 2);
    for (let position = 0; position < tab.rows.length; position++) hashRowInto(tab.rows[position], rows, position);
    hashes = { rows };
    tabHashes.set(tab, hashes);
  }
  return hashes;
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
