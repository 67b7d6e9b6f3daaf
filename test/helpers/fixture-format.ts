// The golden fixture format (fixtures/README.md) as pure functions: a fixture workbook becomes a
// `Workbook`, a case's request becomes an engine request, and `checkCase` compares an answer
// with the case's expectation. `{"request": {"path": "/sheets/people/0"}}` ->
// `{method: "GET", url: "http://sheetrest.test/sheets/people/0", ...}`. No file or network
// access here, so the engine runner and the HTTP replayer share exactly the same reading.
import type { SheetRow, Tab, TypedValue, Workbook } from '../../lib/workbook.ts';

/** A cell as written in a fixture: see the table in fixtures/README.md. */
export type FixtureCell =
  | string
  | number
  | boolean
  | null
  | { readonly date: string; readonly text?: string }
  | { readonly value: string | number | boolean | null; readonly text: string };

export interface FixtureTab {
  readonly name: string;
  readonly rows: readonly (readonly FixtureCell[])[];
  /** Merged cells as a spreadsheet lists them (`A1:A2`): a merge reaching down marks its first row (`SheetRow.mergedDown`). */
  readonly merges?: readonly string[];
}

export interface FixtureOptions {
  readonly formulas?: boolean;
  readonly maxRows?: number;
  /** `"reject"`: a write naming keys that are not columns is a 400 (default `"ignore"`). */
  readonly unknownColumns?: 'ignore' | 'reject';
  /** Stable row ids, as a connection's `rowId` and `tabs` (docs/configuration.md). */
  readonly rowId?: { readonly column: string; readonly generate: 'uuid7' | 'increment' };
  readonly tabs?: Readonly<Record<string, { readonly rowId?: { readonly column: string; readonly generate: 'uuid7' | 'increment' } | null }>>;
}

const OPTION_KEYS = new Set(['formulas', 'maxRows', 'unknownColumns', 'rowId', 'tabs']);

export interface FixtureRequest {
  readonly method?: string;
  readonly path: string;
  /** A `null` value sends no such header: the way to send a body without a Content-Type. */
  readonly headers?: Readonly<Record<string, string | null>>;
  readonly body?: unknown;
}

export interface FixtureExpect {
  readonly status: number;
  /** Only the headers listed are checked; `null` means the header must be absent. */
  readonly headers?: Readonly<Record<string, string | null>>;
  readonly body?: unknown;
  readonly error?: string;
  readonly messageIncludes?: readonly string[];
}

export interface FixtureCase {
  readonly name?: string;
  readonly request: FixtureRequest;
  readonly expect: FixtureExpect;
}

export interface Fixture {
  readonly description: string;
  readonly connection: string;
  readonly options?: FixtureOptions;
  readonly workbook: { readonly tabs: readonly FixtureTab[] };
  readonly cases: readonly FixtureCase[];
}

export interface EngineRequestInit {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | null;
}

export interface ActualResponse {
  status: number;
  headers: Headers | Record<string, string>;
  bodyText: string;
}

/** The origin every engine request is addressed to; the engine looks only at path and query. */
export const FIXTURE_ORIGIN = 'http://sheetrest.test';

// ---------------------------------------------------------------------------------------------
// Workbook

/** A date-time shows as a spreadsheet shows it, `2024-03-01 09:30:00`, while `_raw` keeps the ISO `T`. */
function displayDate(iso: string): string {
  return iso.replace('T', ' ');
}

function displayValue(value: string | number | boolean | null): string {
  if (value === null) return '';
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  return String(value);
}

/** One fixture cell as the model holds it: the text the spreadsheet displays and the stored value. */
export function fixtureCellToModel(cell: FixtureCell): { text: string; value: TypedValue } {
  if (cell === null || cell === '') return { text: '', value: null };
  if (typeof cell !== 'object') return { text: displayValue(cell), value: cell };
  if ('date' in cell) return { text: cell.text ?? displayDate(cell.date), value: { iso: cell.date } };
  return { text: cell.text, value: cell.value };
}

export function fixtureRowToSheetRow(cells: readonly FixtureCell[]): SheetRow {
  const text: string[] = [];
  const value: TypedValue[] = [];
  for (const cell of cells) {
    const model = fixtureCellToModel(cell);
    text.push(model.text);
    value.push(model.value);
  }
  return { text, value };
}

export function buildWorkbook(workbook: Fixture['workbook']): Workbook {
  const tabs: Tab[] = workbook.tabs.map((tab) => ({ name: tab.name, rows: withMerges(tab.rows.map(fixtureRowToSheetRow), tab.merges ?? []) }));
  return { tabs };
}

const MERGE = /^[A-Z]+(\d+):[A-Z]+(\d+)$/;

/** Rows with each merge that reaches down (`A1:A3`) marked on its first row, as the sources mark them. */
function withMerges(rows: SheetRow[], merges: readonly string[]): SheetRow[] {
  for (const merge of merges) {
    const [, first, last] = MERGE.exec(merge)!;
    const index = Number(first) - 1;
    const down = Number(last) - Number(first);
    if (down > 0 && index < rows.length) rows[index] = { ...rows[index], mergedDown: Math.max(down, rows[index].mergedDown ?? 0) };
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Requests

export function caseMethod(fixtureCase: FixtureCase): string {
  return (fixtureCase.request.method ?? 'GET').toUpperCase();
}

/** The sub-test name: the case's own, else `GET /sheets/people/Name/ann`. */
export function caseName(fixtureCase: FixtureCase): string {
  return fixtureCase.name ?? `${caseMethod(fixtureCase)} ${fixtureCase.request.path}`;
}

function hasHeader(headers: Readonly<Record<string, unknown>>, name: string): boolean {
  const wanted = name.toLowerCase();
  return Object.keys(headers).some((key) => key.toLowerCase() === wanted);
}

/**
 * The request a client would send: a non-string body is JSON text, and any body is labelled
 * `application/json` unless the case names a Content-Type (or sets it to null to send none).
 */
export function toEngineRequest(request: FixtureRequest, origin: string = FIXTURE_ORIGIN): EngineRequestInit {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    if (value !== null) headers[name] = value;
  }
  let body: string | null = null;
  if (request.body !== undefined) {
    body = typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
    if (!hasHeader(request.headers ?? {}, 'content-type')) headers['Content-Type'] = 'application/json';
  }
  return { method: (request.method ?? 'GET').toUpperCase(), url: origin + request.path, headers, body };
}

// ---------------------------------------------------------------------------------------------
// Checking answers

function readHeader(headers: Headers | Record<string, string>, name: string): string | null {
  if (typeof Headers !== 'undefined' && headers instanceof Headers) return headers.get(name);
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === wanted) return value;
  }
  return null;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isPattern(value: unknown): value is { $regex: string } {
  return isPlainObject(value) && Object.keys(value).length === 1 && typeof value.$regex === 'string';
}

/** The first difference between two JSON values, as `at $[0].Name: expected "Ann", got "ann"`; null when equal. */
export function jsonDifference(expected: unknown, actual: unknown, at = '$'): string | null {
  // `{"$regex": "^[0-9a-f-]{36}$"}` stands for any string it matches: a value the server makes up (a uuid7 id).
  if (isPattern(expected)) {
    return typeof actual === 'string' && new RegExp(expected.$regex).test(actual) ? null : `at ${at}: expected a string matching /${expected.$regex}/, got ${JSON.stringify(actual)}`;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `at ${at}: expected an array, got ${JSON.stringify(actual)}`;
    if (expected.length !== actual.length) {
      return `at ${at}: expected ${expected.length} items, got ${actual.length}: ${JSON.stringify(actual)}`;
    }
    for (let index = 0; index < expected.length; index++) {
      const difference = jsonDifference(expected[index], actual[index], `${at}[${index}]`);
      if (difference !== null) return difference;
    }
    return null;
  }
  if (isPlainObject(expected)) {
    if (!isPlainObject(actual)) return `at ${at}: expected an object, got ${JSON.stringify(actual)}`;
    // Own keys only: a column named `__proto__` arrives from JSON.parse as an ordinary key.
    const expectedKeys = Object.keys(expected).sort();
    const actualKeys = Object.keys(actual).sort();
    if (JSON.stringify(expectedKeys) !== JSON.stringify(actualKeys)) {
      return `at ${at}: expected keys ${JSON.stringify(expectedKeys)}, got ${JSON.stringify(actualKeys)}`;
    }
    for (const key of expectedKeys) {
      const difference = jsonDifference(expected[key], actual[key], `${at}.${key}`);
      if (difference !== null) return difference;
    }
    return null;
  }
  if (!Object.is(expected, actual)) return `at ${at}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
  return null;
}

/**
 * Every way `actual` misses `expected`; empty when the case passes. `method` lets a HEAD
 * answer be held to having no body.
 */
export function checkCase(expected: FixtureExpect, actual: ActualResponse, method?: string): string[] {
  const problems: string[] = [];
  const bodyShown = actual.bodyText.length > 300 ? `${actual.bodyText.slice(0, 300)}...` : actual.bodyText;
  if (actual.status !== expected.status) {
    problems.push(`status: expected ${expected.status}, got ${actual.status} (body ${bodyShown})`);
  }
  for (const [name, wanted] of Object.entries(expected.headers ?? {})) {
    const got = readHeader(actual.headers, name);
    if (wanted === null && got !== null) problems.push(`header ${name}: expected absent, got ${JSON.stringify(got)}`);
    if (wanted !== null && got !== wanted) problems.push(`header ${name}: expected ${JSON.stringify(wanted)}, got ${JSON.stringify(got)}`);
  }
  if (method?.toUpperCase() === 'HEAD' && actual.bodyText !== '') {
    problems.push(`body: a HEAD answer has no body, got ${bodyShown}`);
  }
  if (expected.body === undefined && expected.error === undefined) return problems;

  let body: unknown;
  try {
    body = JSON.parse(actual.bodyText);
  } catch {
    problems.push(`body: expected JSON, got ${JSON.stringify(bodyShown)}`);
    return problems;
  }
  if (expected.body !== undefined) {
    const difference = jsonDifference(expected.body, body);
    if (difference !== null) problems.push(`body ${difference}`);
  }
  if (expected.error !== undefined) {
    if (!isPlainObject(body)) {
      problems.push(`error body: expected {"error", "message"}, got ${bodyShown}`);
      return problems;
    }
    if (body.error !== expected.error) problems.push(`error: expected ${JSON.stringify(expected.error)}, got ${JSON.stringify(body.error)}`);
    const keys = Object.keys(body).sort().join(',');
    if (keys !== 'error,message') problems.push(`error body: expected exactly the keys error and message, got ${keys}`);
    const message = body.message;
    if (typeof message !== 'string' || message.trim() === '') {
      problems.push(`error message: expected a sentence, got ${JSON.stringify(message)}`);
    } else {
      for (const part of expected.messageIncludes ?? []) {
        if (!message.includes(part)) problems.push(`error message: expected it to name ${JSON.stringify(part)}, got ${JSON.stringify(message)}`);
      }
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Well-formedness, so that a typo in a fixture fails loudly instead of checking nothing

const CASE_KEYS = new Set(['name', 'request', 'expect']);
const REQUEST_KEYS = new Set(['method', 'path', 'headers', 'body']);
const EXPECT_KEYS = new Set(['status', 'headers', 'body', 'error', 'messageIncludes']);
const FILE_KEYS = new Set(['description', 'connection', 'options', 'workbook', 'cases']);

function isFixtureCell(cell: unknown): boolean {
  if (cell === null || ['string', 'number', 'boolean'].includes(typeof cell)) return true;
  if (!isPlainObject(cell)) return false;
  const keys = Object.keys(cell).sort().join(',');
  if (keys === 'date' || keys === 'date,text') {
    return typeof cell.date === 'string' && /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\.\d+)?)?$/.test(cell.date) &&
      (cell.text === undefined || typeof cell.text === 'string');
  }
  return keys === 'text,value' && typeof cell.text === 'string' && (cell.value === null || ['string', 'number', 'boolean'].includes(typeof cell.value));
}

function checkHeaderMap(value: unknown, where: string, problems: string[]): void {
  if (value === undefined) return;
  if (!isPlainObject(value) || Object.values(value).some((v) => v !== null && typeof v !== 'string')) {
    problems.push(`${where}: headers must map names to strings or null`);
  }
}

/** Every way `data` strays from the fixture format; empty when it is a well-formed fixture. */
export function validateFixture(data: unknown): string[] {
  const problems: string[] = [];
  if (!isPlainObject(data)) return ['the file must hold one JSON object'];
  for (const key of Object.keys(data)) if (!FILE_KEYS.has(key)) problems.push(`unknown key ${key}`);
  if (typeof data.description !== 'string' || data.description === '') problems.push('description must be a sentence');
  if (typeof data.connection !== 'string' || !/^[A-Za-z0-9_-]+$/.test(data.connection)) problems.push('connection must be an id');
  if (data.options !== undefined) {
    const options = data.options;
    if (!isPlainObject(options) || Object.keys(options).some((key) => !OPTION_KEYS.has(key))) {
      problems.push(`options may hold only ${[...OPTION_KEYS].join(', ')}`);
    }
  }
  const tabs = isPlainObject(data.workbook) ? data.workbook.tabs : undefined;
  if (!Array.isArray(tabs) || tabs.length === 0) problems.push('workbook.tabs must list at least one tab');
  for (const [index, tab] of (Array.isArray(tabs) ? tabs : []).entries()) {
    if (!isPlainObject(tab) || typeof tab.name !== 'string' || !Array.isArray(tab.rows)) {
      problems.push(`tab ${index}: needs a name and rows`);
      continue;
    }
    if (tab.merges !== undefined && (!Array.isArray(tab.merges) || tab.merges.some((merge) => typeof merge !== 'string' || !MERGE.test(merge)))) {
      problems.push(`tab ${tab.name}: merges must list ranges such as "A1:A2"`);
    }
    for (const [rowIndex, row] of tab.rows.entries()) {
      if (!Array.isArray(row)) problems.push(`tab ${tab.name} row ${rowIndex}: must be a list of cells`);
      else for (const cell of row) if (!isFixtureCell(cell)) problems.push(`tab ${tab.name} row ${rowIndex}: bad cell ${JSON.stringify(cell)}`);
    }
  }
  if (!Array.isArray(data.cases) || data.cases.length === 0) return [...problems, 'cases must list at least one case'];
  for (const [index, fixtureCase] of data.cases.entries()) {
    const where = `case ${index}`;
    if (!isPlainObject(fixtureCase)) {
      problems.push(`${where}: must be an object`);
      continue;
    }
    for (const key of Object.keys(fixtureCase)) if (!CASE_KEYS.has(key)) problems.push(`${where}: unknown key ${key}`);
    const { request, expect } = fixtureCase;
    if (!isPlainObject(request) || typeof request.path !== 'string' || !request.path.startsWith('/sheets/')) {
      problems.push(`${where}: request.path must start with /sheets/`);
    } else {
      for (const key of Object.keys(request)) if (!REQUEST_KEYS.has(key)) problems.push(`${where}: unknown request key ${key}`);
      if (request.method !== undefined && (typeof request.method !== 'string' || !/^[A-Z]+$/.test(request.method))) {
        problems.push(`${where}: method must be upper case`);
      }
      // A client percent-encodes what is not plain ASCII; a raw space or letter would be a typo here.
      if (/[^\x21-\x7e]/.test(request.path)) problems.push(`${where}: path must be percent-encoded ASCII`);
      checkHeaderMap(request.headers, where, problems);
    }
    if (!isPlainObject(expect) || typeof expect.status !== 'number') {
      problems.push(`${where}: expect.status is required`);
      continue;
    }
    for (const key of Object.keys(expect)) if (!EXPECT_KEYS.has(key)) problems.push(`${where}: unknown expect key ${key}`);
    checkHeaderMap(expect.headers, where, problems);
    if (expect.error !== undefined && (typeof expect.error !== 'string' || expect.status < 400)) {
      problems.push(`${where}: error needs a code and an error status`);
    }
    if (expect.error !== undefined && expect.body !== undefined) problems.push(`${where}: give error or body, not both`);
    if (expect.messageIncludes !== undefined && expect.error === undefined) problems.push(`${where}: messageIncludes needs error`);
    if (expect.status >= 400 && expect.error === undefined && isPlainObject(request) && request.method !== 'HEAD') {
      problems.push(`${where}: an error status needs expect.error`);
    }
    if (isPlainObject(request) && request.method === 'HEAD' && expect.body !== undefined) problems.push(`${where}: HEAD has no body`);
  }
  return problems;
}
