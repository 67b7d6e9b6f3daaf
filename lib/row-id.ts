// `"rowId": {"column": "Id", "generate": "uuid7"}` -> POST /sheets/crm {"Name": "Zed"} appends
// Zed with a fresh Id (`0193a6c2-7f3e-7c1a-9d2b-5e4f3a2b1c0d`); PATCH or PUT may not change it,
// and `/Id/{value}` addresses exactly one row. Which rule holds for a tab, the ids it generates,
// and the checks a write by id must pass.
import { numericText } from './compare.ts';
import { apiError, type ApiError } from './errors.ts';
import { fold } from './match.ts';
import type { Column, Table } from './table.ts';

export const ROW_ID_GENERATORS = ['uuid7', 'increment'] as const;
export type RowIdGenerator = (typeof ROW_ID_GENERATORS)[number];

export interface RowIdRule {
  readonly column: string;
  readonly generate: RowIdGenerator;
}

/** Per-tab settings of a connection (`"tabs": {"Orders": {"rowId": {...}}}`); `rowId: null` turns the connection's off for the tab. */
export interface TabSettings {
  readonly rowId?: RowIdRule | null;
}

export interface RowIdSettings {
  readonly rowId?: RowIdRule;
  readonly tabs?: Readonly<Record<string, TabSettings>>;
}

/** A tab's id column and how new ids are made. */
export interface RowIds {
  readonly column: Column;
  readonly generate: RowIdGenerator;
}

/**
 * The rule for `table`: the tab's own (its column must exist: 409 `conflict` otherwise, nothing
 * written), else the connection's when the tab has that column (tabs without it have no ids).
 */
export function rowIdsOf(table: Table, settings: RowIdSettings): RowIds | null | ApiError {
  const own = settings.tabs !== undefined && Object.hasOwn(settings.tabs, table.name) ? settings.tabs[table.name].rowId : undefined;
  if (own === null) return null;
  if (own !== undefined) {
    const column = table.column(own.column);
    if (column !== undefined) return { column, generate: own.generate };
    const names = table.columns.map((candidate) => JSON.stringify(candidate.name)).join(', ');
    return apiError('conflict', `The tab "${table.name}" is set up with the id column "${own.column}", which it does not have (its columns are ${names || 'none'}); restore the column or change the connection's rowId. Nothing was written.`);
  }
  const shared = settings.rowId;
  if (shared === undefined) return null;
  const column = table.column(shared.column);
  return column === undefined ? null : { column, generate: shared.generate };
}

/**
 * `count` fresh ids for appended rows: uuid7 strings, or numbers counting on from the largest in
 * the column or in `taken` (ids the same body gives its other rows).
 */
export function freshIds(table: Table, ids: RowIds, count: number, taken: readonly string[] = []): (string | number)[] {
  if (ids.generate === 'uuid7') return Array.from({ length: count }, () => uuid7());
  let largest = 0;
  for (const text of taken) largest = Math.max(largest, numericText(text) ?? 0);
  const values = table.values(ids.column);
  for (let index = 0; index < table.rowCount; index++) {
    const value = values[index];
    const number = typeof value === 'number' ? value : typeof value === 'string' ? numericText(value) : null;
    if (number !== null && number > largest) largest = number;
  }
  // `1 + the largest`: ids stay whole even after someone typed 7.5 by hand.
  const first = Math.floor(largest) + 1;
  return Array.from({ length: count }, (_, i) => first + i);
}

/**
 * A write by id (`PATCH /Id/42`) whose rows hold one id twice (an outside edit copied a row):
 * which of them is meant cannot be told, so 409, naming the rows and a way out that works (PATCH
 * may not change an id, so: the spreadsheet, or DELETE by index); null when every id is once.
 */
export function duplicateIds(table: Table, ids: RowIds, targets: readonly number[]): ApiError | null {
  const folded = table.folded(ids.column);
  const seen = new Map<string, number>();
  for (const index of targets) {
    const id = folded[index];
    const first = seen.get(id);
    if (first !== undefined) {
      const shown = table.row(index).text[ids.column.position] ?? '';
      return apiError('conflict', `The id ${JSON.stringify(shown)} is in rows ${first} and ${index} of "${table.name}" (its ${ids.column.name} column should hold each id once). An id never changes through the API, so fix it in the spreadsheet, or DELETE /${first} or /${index} and POST that row again without ${ids.column.name} for a fresh id. Nothing was written.`);
    }
    seen.set(id, index);
  }
  return null;
}

/** Whether a written id text is the row's own (ids compare case-insensitively, as `/Id/{value}` does). */
export function sameId(before: string, after: string): boolean {
  return fold(before) === fold(after);
}

// RFC 9562, 5.7 and 6.2 (method 1): 48 bits of Unix milliseconds, version 7, a 12-bit counter
// (randomly seeded each millisecond) in rand_a so ids made within one millisecond still sort in
// order, the variant, then 62 random bits.
let lastMs = -1;
let counter = 0;

export function uuid7(now: number = Date.now()): string {
  let ms = Math.max(now, lastMs);
  if (ms === lastMs) {
    counter++;
    // The counter ran out within one millisecond: borrow the next one (still sorted, still unique).
    if (counter > 0xfff) {
      ms++;
      counter = randomCounter();
    }
  } else {
    counter = randomCounter();
  }
  lastMs = ms;
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes.subarray(8));
  // 48-bit milliseconds, big-endian; numbers are exact up to 2^53.
  for (let i = 5; i >= 0; i--) {
    bytes[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  bytes[6] = 0x70 | (counter >> 8);
  bytes[7] = counter & 0xff;
  bytes[8] = 0x80 | (bytes[8] & 0x3f);
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A counter start with its top bit clear, leaving room for ids within the same millisecond. */
function randomCounter(): number {
  const [value] = crypto.getRandomValues(new Uint16Array(1));
  return value & 0x7ff;
}
