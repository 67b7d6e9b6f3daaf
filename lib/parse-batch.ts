// PATCH /sheets/crm/tabs/People with
// [{"where": {"Email": "a@x.org"}, "set": {"Age": 31}}, {"where": {"_index": 4}, "set": {"City": "Rome"}}]
// -> two batch items: rows chosen by `/query` conditions or by index, and the columns to set.
// Only the body's shape is checked here; columns, operators and indexes are checked against the
// tab when the batch is planned (plan-batch.ts), each error naming its item (`items[1].where._index`).
import { apiError, isApiError, type ApiError } from './errors.ts';
import { parseJsonBody, rowOf, type RowInput } from './parse-body.ts';

/** A condition as `/query` takes it (parse-request.ts's `Condition`): `Age: "__gt(30)"`. */
export interface WhereCondition {
  readonly key: string;
  readonly value: string;
}

export interface BatchItem {
  /** `{"_index": n}`: that data row (zero-based). */
  readonly index: number | null;
  /** Otherwise `/query` conditions, in the order the item gives them (`Age: ["__gte(18)", "__lt(65)"]` is two). */
  readonly conditions: readonly WhereCondition[];
  readonly set: RowInput;
}

const ITEM_SHAPE = 'an item is {"where": {"_index": n} or {"Column": "condition", ...}, "set": {"Column": value, ...}}';

/** A batch body: a JSON array of items, at most `maxRows` of them (each item counts as one row of the write limit). */
export function parseBatch(contentType: string | null, body: string | Uint8Array | null | undefined, maxRows: number, allow: string): BatchItem[] | ApiError {
  const json = parseJsonBody(contentType, body, 'PATCH on a tab takes a JSON array of {"where": ..., "set": ...} items.');
  if (isApiError(json)) return json;
  if (!Array.isArray(json)) {
    // The contract's "PATCH on the tab with an object" stays the 405 it was; the message says what to send.
    return apiError(
      'method_not_allowed',
      'PATCH on a tab takes an array of {"where": {...}, "set": {...}} items (a batch update); to change one row, PATCH /{n} or /{Column}/{Value} with an object.',
      { Allow: allow },
    );
  }
  if (json.length > maxRows) return apiError('payload_too_large', `At most ${maxRows} items can be written in one batch; got ${json.length}.`);
  const items: BatchItem[] = [];
  for (let i = 0; i < json.length; i++) {
    const item = batchItem(json[i], `items[${i}]`);
    if (isApiError(item)) return item;
    items.push(item);
  }
  return items;
}

function batchItem(json: unknown, at: string): BatchItem | ApiError {
  if (!isObject(json)) return apiError('invalid_body', `${at} is not an object; ${ITEM_SHAPE}.`);
  for (const key of Object.keys(json)) {
    if (key !== 'where' && key !== 'set') return apiError('invalid_body', `${at} has the key ${JSON.stringify(key)}; ${ITEM_SHAPE}.`);
  }
  if (!('where' in json) || !('set' in json)) return apiError('invalid_body', `${at} needs both "where" and "set"; ${ITEM_SHAPE}.`);
  const where = json.where;
  if (!isObject(where)) return apiError('invalid_body', `${at}.where is not an object; ${ITEM_SHAPE}.`);
  const set = rowOf(json.set, `${at}.set`);
  if (isApiError(set)) return set;
  const keys = Object.keys(where);
  if (keys.length === 0) return apiError('invalid_body', `${at}.where is empty; name the rows with {"_index": n} or with conditions (every row would be a guess).`);
  // `_case` only says how conditions compare: alone, it names no rows, as `{}` does not.
  if (keys.every((key) => key === '_case')) return apiError('invalid_body', `${at}.where gives only "_case", which says how conditions compare; name the rows with {"_index": n} or with conditions (every row would be a guess).`);
  if (Object.hasOwn(where, '_index')) {
    if (keys.length > 1) return apiError('invalid_body', `${at}.where gives "_index" with conditions; give one or the other.`);
    const index = where._index;
    const number = typeof index === 'string' && /^\d+$/.test(index) ? Number(index) : index;
    if (typeof number !== 'number' || !Number.isSafeInteger(number) || number < 0) {
      return apiError('invalid_body', `${at}.where._index must be a whole number >= 0 (a data row, zero-based); got ${JSON.stringify(index)}.`);
    }
    return { index: number, conditions: [], set };
  }
  const conditions: WhereCondition[] = [];
  for (const key of keys) {
    const value = where[key];
    for (const one of Array.isArray(value) ? value : [value]) {
      if (typeof one !== 'string' && typeof one !== 'number' && typeof one !== 'boolean') {
        return apiError('invalid_body', `${at}.where.${key} must be a condition as /query takes it ("__gt(30)", "a@x.org"), or a list of them; got ${describe(one)}.`);
      }
      conditions.push({ key, value: String(one) });
    }
    if (Array.isArray(value) && value.length === 0) return apiError('invalid_body', `${at}.where.${key} is an empty list; give at least one condition.`);
  }
  return { index: null, conditions, set };
}

function isObject(json: unknown): json is Record<string, unknown> {
  return typeof json === 'object' && json !== null && !Array.isArray(json);
}

function describe(json: unknown): string {
  if (json === null) return 'null';
  return Array.isArray(json) ? 'a nested list' : typeof json === 'object' ? 'an object' : `a ${typeof json}`;
}
