// POST /sheets/demo with {"Name": "Ann"} -> one row to append. Reads a write body by its content
// type (JSON, text/plain JSON, urlencoded and multipart forms) into rows of plain values.
import { apiError, isApiError, type ApiError } from './errors.ts';
import { jsonProblem } from './json-error.ts';

export type Scalar = string | number | boolean | null;
/** One row of a write body: column name to value, `__proto__` and friends as plain keys. */
export type RowInput = ReadonlyMap<string, Scalar>;

export interface WriteBody {
  readonly rows: readonly RowInput[];
  /** A single object was sent (answered with one row, not an array). */
  readonly single: boolean;
}

export type BodyKind = 'rows' | 'object';

export interface BodyLimits {
  readonly maxRows: number;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Half of a surrogate pair standing alone (`"\ud800"` in JSON): no UTF-8 file, journal line or
 * spreadsheet can hold it, so it would come back as U+FFFD after the next save. With the `u`
 * flag a pair is one code point and matches nothing; only a lone half is `\p{Cs}`.
 */
const LONE_SURROGATE = /\p{Cs}/u;

/** 400 for text that is not valid Unicode; `what` names the field, shown escaped by JSON.stringify. */
function notUnicode(what: string): ApiError {
  return apiError('invalid_body', `${what} holds text that is not valid Unicode (half of a surrogate pair, such as \\ud800, alone); send whole characters.`);
}

/**
 * `kind` is what the action takes: `rows` (POST: an object or an array of objects, or a form)
 * or `object` (PATCH and PUT: exactly one object).
 */
export function parseBody(contentType: string | null, body: string | Uint8Array | null | undefined, kind: BodyKind, limits: BodyLimits): WriteBody | ApiError {
  let text: string;
  try {
    text = typeof body === 'string' ? body : body == null ? '' : decoder.decode(body);
  } catch {
    return apiError('invalid_body', 'The body is not valid UTF-8 text.');
  }
  if (text.trim() === '') return apiError('invalid_body', expectation(kind) + ' The body is empty.');
  const mediaType = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (isJsonType(mediaType)) return jsonBody(text, kind, limits);
  if (mediaType === 'application/x-www-form-urlencoded' || mediaType === 'multipart/form-data') {
    // `curl -d '{"Name":"Ann"}'` labels JSON as a form; read it as the JSON it is.
    if (mediaType === 'application/x-www-form-urlencoded' && /^\s*[[{]/.test(text)) return jsonBody(text, kind, limits);
    if (kind !== 'rows') return apiError('unsupported_media_type', 'PATCH and PUT take a JSON body; send it as application/json.');
    const row = mediaType === 'multipart/form-data' ? multipartRow(text, contentType ?? '') : urlencodedRow(text);
    return isApiError(row) ? row : { rows: [row], single: true };
  }
  const given = mediaType === '' ? 'no Content-Type' : `Content-Type ${mediaType}`;
  return apiError('unsupported_media_type', `Send the body as application/json (or text/plain JSON, or a form on POST), not with ${given}.`);
}

function isJsonType(mediaType: string): boolean {
  return mediaType === 'application/json' || mediaType === 'text/plain' || /^application\/[\w.-]+\+json$/.test(mediaType);
}

function expectation(kind: BodyKind): string {
  return kind === 'rows' ? 'Expected a JSON object (one row) or an array of objects.' : 'Expected one JSON object of columns.';
}

/**
 * A body that must be JSON (a batch update's items): decoded, its media type checked (a form
 * label on JSON text is read as the JSON it is), parsed. `expected` says what to send.
 */
export function parseJsonBody(contentType: string | null, body: string | Uint8Array | null | undefined, expected: string): unknown | ApiError {
  let text: string;
  try {
    text = typeof body === 'string' ? body : body == null ? '' : decoder.decode(body);
  } catch {
    return apiError('invalid_body', 'The body is not valid UTF-8 text.');
  }
  if (text.trim() === '') return apiError('invalid_body', `${expected} The body is empty.`);
  const mediaType = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (!isJsonType(mediaType) && !(mediaType === 'application/x-www-form-urlencoded' && /^\s*[[{]/.test(text))) {
    const given = mediaType === '' ? 'no Content-Type' : `Content-Type ${mediaType}`;
    return apiError('unsupported_media_type', `Send the body as application/json (or text/plain JSON), not with ${given}.`);
  }
  return readJson(text);
}

function readJson(text: string): unknown | ApiError {
  try {
    return JSON.parse(text);
  } catch {
    // Never JSON.parse's own message: it may quote the body, and the body may hold secrets.
    const found = jsonProblem(text);
    if (found === null) return apiError('invalid_body', 'The body is JSON nested too deeply to read; a write body is an object of columns or an array of such objects.');
    return apiError('invalid_json', `The body is not valid JSON: ${found.problem} at line ${found.line}, column ${found.column}.`);
  }
}

function jsonBody(text: string, kind: BodyKind, limits: BodyLimits): WriteBody | ApiError {
  const json = readJson(text);
  if (isApiError(json)) return json;
  if (Array.isArray(json)) {
    if (kind === 'object') return apiError('invalid_body', `${expectation(kind)} Got an array.`);
    if (json.length > limits.maxRows) {
      return apiError('payload_too_large', `At most ${limits.maxRows} rows can be written in one request; got ${json.length}.`);
    }
    const rows: RowInput[] = [];
    for (let i = 0; i < json.length; i++) {
      const row = rowOf(json[i], `Element ${i}`);
      if (isApiError(row)) return row;
      rows.push(row);
    }
    return { rows, single: false };
  }
  const row = rowOf(json, 'The body');
  return isApiError(row) ? row : { rows: [row], single: true };
}

/** One row object of a body; `where` names it in errors (`Element 3`, `items[3].set`). */
export function rowOf(json: unknown, where: string): RowInput | ApiError {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return apiError('invalid_body', `${where} must be an object of columns, got ${describe(json)}.`);
  }
  const row = new Map<string, Scalar>();
  for (const [key, value] of Object.entries(json)) {
    if (LONE_SURROGATE.test(key)) return notUnicode(`${where}: the column name ${JSON.stringify(key)}`);
    if (typeof value === 'string' && LONE_SURROGATE.test(value)) return notUnicode(`${where}: the value of ${JSON.stringify(key)}`);
    if (value !== null && typeof value === 'object') {
      return apiError('invalid_body', `${where}: the value of "${key}" is ${describe(value)}; a cell takes a string, number, boolean or null.`);
    }
    // JSON.parse reads 1e309 as Infinity, which no sheet cell, journal line or file can hold.
    if (typeof value === 'number' && !Number.isFinite(value)) {
      return apiError('invalid_body', `${where}: the value of "${key}" is a number out of range (JSON reads it as infinite); a number cell holds at most about ±1.8e308.`);
    }
    row.set(key, value as Scalar);
  }
  return row;
}

function describe(json: unknown): string {
  if (json === null) return 'null';
  if (Array.isArray(json)) return 'an array';
  return typeof json === 'object' ? 'an object' : `a ${typeof json}`;
}

function urlencodedRow(text: string): RowInput | ApiError {
  const row = new Map<string, Scalar>();
  // URLSearchParams would turn a lone surrogate into U+FFFD without a word: looked for first.
  if (LONE_SURROGATE.test(text)) {
    for (const pair of text.split('&')) {
      const equals = pair.indexOf('=');
      const bad = equals === -1 ? formFieldNotUnicode(pair, '') : formFieldNotUnicode(pair.slice(0, equals), pair.slice(equals + 1));
      if (bad !== null) return bad;
    }
  }
  for (const [key, value] of new URLSearchParams(text)) {
    if (row.has(key)) return apiError('invalid_body', `The form field "${key}" is given more than once; a cell takes one value.`);
    row.set(key, value);
  }
  return row;
}

function multipartRow(text: string, contentType: string): RowInput | ApiError {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  if (boundary === null) return apiError('invalid_body', 'The multipart/form-data Content-Type names no boundary.');
  const delimiter = '--' + (boundary[1] ?? boundary[2]);
  const row = new Map<string, Scalar>();
  const parts = text.split(delimiter);
  // parts[0] is the preamble; the part after the closing delimiter starts with "--".
  for (const part of parts.slice(1)) {
    if (part.startsWith('--')) break;
    const headerEnd = part.indexOf('\r\n\r\n');
    if (headerEnd === -1) return apiError('invalid_body', 'A multipart/form-data part has no header.');
    const headers = part.slice(0, headerEnd);
    const name = /content-disposition:[^\r\n]*;\s*name="([^"]*)"/i.exec(headers);
    if (name === null) return apiError('invalid_body', 'A multipart/form-data part has no field name.');
    if (/;\s*filename\*?=/i.test(headers)) return apiError('invalid_body', `The form field "${name[1]}" is a file; a cell takes text.`);
    if (row.has(name[1])) return apiError('invalid_body', `The form field "${name[1]}" is given more than once; a cell takes one value.`);
    const value = part.slice(headerEnd + 4).replace(/\r\n$/, '');
    const bad = formFieldNotUnicode(name[1], value);
    if (bad !== null) return bad;
    row.set(name[1], value);
  }
  return row;
}

/**
 * A form read from bytes cannot hold a lone surrogate (the UTF-8 check and URLSearchParams's
 * decoding rule it out), but a body handed to the engine as a string can.
 */
function formFieldNotUnicode(name: string, value: string): ApiError | null {
  if (LONE_SURROGATE.test(name)) return notUnicode(`The form field name ${JSON.stringify(name)}`);
  if (LONE_SURROGATE.test(value)) return notUnicode(`The form field ${JSON.stringify(name)}`);
  return null;
}
