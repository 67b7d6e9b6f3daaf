// Properties of the engine over generated workbooks and requests (fast-check): it never throws
// and every error is a catalogued code with its status; `_offset`/`_limit` slice the full read;
// PATCH, PUT and DELETE `/sheets/demo/{n}` change exactly what the contract says; and a write's
// plan, applied with `applyPlan`, gives the workbook the engine answered from.
// Uses only `test`, `t.test` and `assert`, so the file runs under Node, Deno and Bun alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { applyPlan, ApiError, ERRORS, handle, parseRequest, tabVersion } from '../../lib/mod.ts';
import type { EngineOptions, EngineRequest, EngineResult, SheetRow, TypedValue, Workbook } from '../../lib/mod.ts';

// Enough runs to find the usual edge cases while the file stays within a few seconds.
const RUNS = 150;
const FUZZ_RUNS = 400;

// ---------------------------------------------------------------------------------------------
// Generated workbooks

type Cell = { readonly text: string; readonly value: TypedValue };

const EMPTY: Cell = { text: '', value: null };
const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** Column and tab names: start with a capital, so never `.`/`..` (URL dot segments), `_x` or `__proto__`. */
const nameArb = fc.stringMatching(/^[A-Z][A-Za-z0-9 ]{0,6}$/);

/** A number as cells and JSON hold it; -0 is left out because a sheet shows it as `0`. */
const numberArb = fc.oneof(
  fc.integer({ min: -1_000_000, max: 1_000_000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e22, max: 1e22 }),
).filter((n) => !Object.is(n, -0));

const cellArb: fc.Arbitrary<Cell> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: fc.constantFrom(...(LETTERS + '0123456789 -.,*é')), minLength: 1, maxLength: 8 }).map((text) => ({ text, value: text })) },
  { weight: 2, arbitrary: numberArb.map((n) => ({ text: String(n), value: n })) },
  { weight: 1, arbitrary: fc.boolean().map((b) => ({ text: b ? 'TRUE' : 'FALSE', value: b })) },
  { weight: 2, arbitrary: fc.constant(EMPTY) },
);

interface GeneratedTab {
  readonly name: string;
  /** Header cells; '' hides the column. */
  readonly header: readonly string[];
  /** Data rows, cells by sheet column; may be shorter than the header. No trailing blank rows. */
  readonly data: readonly (readonly Cell[])[];
}

/** Header: distinct visible names, with now and then an empty cell hiding its column. */
const headerArb = fc
  .tuple(fc.uniqueArray(nameArb, { minLength: 1, maxLength: 5 }), fc.array(fc.nat({ max: 5 }), { maxLength: 2 }))
  .map(([names, hiddenAt]) => {
    const header: string[] = [...names];
    for (const at of hiddenAt) header.splice(Math.min(at, header.length - 1), 0, '');
    return header;
  });

function tabArb(name: string): fc.Arbitrary<GeneratedTab> {
  return headerArb.chain((header) =>
    fc
      .array(fc.array(cellArb, { maxLength: header.length }), { maxLength: 25 })
      .map((rows) => ({ name, header, data: trimTrailingBlankRows(rows, tableWidth(header)) })),
  );
}

const workbookArb = fc
  .uniqueArray(nameArb, { minLength: 1, maxLength: 3 })
  .chain((names) => fc.tuple(...names.map((name) => tabArb(name))))
  .chain((tabs) => fc.record({ tabs: fc.constant(tabs), addressed: fc.nat({ max: tabs.length - 1 }), prefix: fc.boolean() }));

/** Sheet columns up to the last named header: cells right of it are ignored. */
function tableWidth(header: readonly string[]): number {
  let width = 0;
  header.forEach((name, position) => {
    if (name !== '') width = position + 1;
  });
  return width;
}

function isBlank(row: readonly Cell[], width: number): boolean {
  return row.slice(0, width).every((cell) => cell.text === '' && cell.value === null);
}

function trimTrailingBlankRows<T extends readonly Cell[]>(rows: readonly T[], width: number): T[] {
  let end = rows.length;
  while (end > 0 && isBlank(rows[end - 1], width)) end--;
  return rows.slice(0, end);
}

function toWorkbook(tabs: readonly GeneratedTab[]): Workbook {
  return {
    tabs: tabs.map((tab) => ({
      name: tab.name,
      rows: [
        { text: tab.header, value: tab.header.map((name) => (name === '' ? null : name)) },
        ...tab.data.map((row): SheetRow => ({ text: row.map((cell) => cell.text), value: row.map((cell) => cell.value) })),
      ],
    })),
  };
}

/** The visible columns: named header cells, first of equal names (generated names are distinct). */
function visibleColumns(header: readonly string[]): { name: string; position: number }[] {
  return header.flatMap((name, position) => (name === '' ? [] : [{ name, position }]));
}

/** What GET answers for these rows by default: records of displayed strings. */
function recordsOf(header: readonly string[], rows: readonly (readonly Cell[])[]): Record<string, string>[] {
  const columns = visibleColumns(header);
  return rows.map((row) => Object.fromEntries(columns.map(({ name, position }) => [name, row[position]?.text ?? ''])));
}

// ---------------------------------------------------------------------------------------------
// Requests

interface Address {
  readonly workbook: Workbook;
  readonly tab: GeneratedTab;
  /** `/sheets/demo` or `/sheets/demo/tabs/{Tab}`. */
  readonly base: string;
}

function addressOf(generated: { tabs: readonly GeneratedTab[]; addressed: number; prefix: boolean }): Address {
  const tab = generated.tabs[generated.addressed];
  // Without the prefix the first tab is addressed, so the prefix is needed for any other tab.
  const prefixed = generated.prefix || generated.addressed > 0;
  const base = '/sheets/demo' + (prefixed ? `/tabs/${encodeURIComponent(tab.name)}` : '');
  return { workbook: toWorkbook(generated.tabs), tab, base };
}

function send(workbook: Workbook, method: string, url: string, body?: unknown, options?: EngineOptions): EngineResult {
  const request: EngineRequest =
    body === undefined
      ? { method, url: 'http://x' + url }
      : { method, url: 'http://x' + url, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
  return handle(workbook, request, options);
}

function getJson(workbook: Workbook, url: string): { result: EngineResult; json: unknown } {
  const result = send(workbook, 'GET', url);
  assert.equal(result.status, 200, `GET ${url} answered ${result.status}: ${result.body}`);
  return { result, json: JSON.parse(result.body) };
}

function getAll(workbook: Workbook, base: string, query = ''): Record<string, string>[] {
  return getJson(workbook, base + query).json as Record<string, string>[];
}

/** A value a person would write whose displayed text is predictable: never coerced into something else. */
const writtenArb: fc.Arbitrary<string | number | boolean | null> = fc.oneof(
  fc.stringMatching(/^[A-Za-z][A-Za-z ]{0,7}$/).filter((text) => !/^(true|false)$/i.test(text)),
  numberArb,
  fc.boolean(),
  fc.constant(null),
);

function displayed(value: string | number | boolean | null): string {
  if (value === null) return '';
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  return String(value);
}

/** A write body naming a non-empty subset of the visible columns, plus now and then an unknown key. */
function bodyArb(header: readonly string[]): fc.Arbitrary<Record<string, string | number | boolean | null>> {
  const names = visibleColumns(header).map(({ name }) => name);
  return fc
    .tuple(fc.subarray(names, { minLength: 1 }), fc.array(writtenArb, { minLength: names.length, maxLength: names.length }), fc.option(writtenArb))
    .map(([chosen, values, extra]) => {
      const body: Record<string, string | number | boolean | null> = {};
      chosen.forEach((name, i) => (body[name] = values[i]));
      // Lower-case keys are never columns (generated names start with a capital): ignored.
      if (extra !== null) body['not a column'] = extra;
      return body;
    });
}

function asCell(value: string | number | boolean | null): Cell {
  return value === null ? EMPTY : { text: displayed(value), value };
}

// ---------------------------------------------------------------------------------------------
// Arbitrary requests for the never-throws property

const segmentArb = fc.oneof(
  fc.constantFrom('sheets', 'demo', 'tabs', 'search', 'query', '', '.', '..', '%', '%2F', '%2e%2E', '%E0%A4%A', '%ZZ', '%00', '0', '1', '00', '1:3', '3:1', '5:', ':', '99999999999999999999', '9007199254740993:', '*', 'a*b'),
  nameArb,
  nameArb.map(encodeURIComponent),
  fc.string({ maxLength: 6 }),
  fc.string({ unit: 'grapheme', maxLength: 6 }).map(encodeURIComponent),
  fc.string({ unit: 'binary', maxLength: 6 }),
);

/** A path of a known shape on names the workbook has (or nearly has), or now and then junk. */
function pathArb(tabNames: readonly string[], columnNames: readonly string[]): fc.Arbitrary<string> {
  const name = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...columnNames) }, { weight: 1, arbitrary: segmentArb });
  const prefix = fc.oneof(
    { weight: 3, arbitrary: fc.constant('/sheets/demo') },
    { weight: 2, arbitrary: fc.constantFrom(...tabNames).map((tab) => `/sheets/demo/tabs/${encodeURIComponent(tab)}`) },
    { weight: 1, arbitrary: segmentArb.map((tab) => `/sheets/demo/tabs/${tab}`) },
    { weight: 1, arbitrary: segmentArb.map((id) => `/sheets/${id}`) },
  );
  const rest = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('', '/', '/search', '/query', '/tabs', '/0', '/1', '/3', '/0:2', '/1:', '/2:1', '/99999999999999999999') },
    { weight: 2, arbitrary: fc.tuple(fc.nat({ max: 30 }), fc.option(fc.nat({ max: 30 }))).map(([a, b]) => `/${a}:${b ?? ''}`) },
    { weight: 4, arbitrary: fc.tuple(name, fc.oneof(parameterValueArb.map(encodeURIComponent), segmentArb)).map(([column, value]) => `/${encodeURIComponent(column)}/${value}`) },
    { weight: 1, arbitrary: fc.array(segmentArb, { minLength: 1, maxLength: 3 }).map((segments) => '/' + segments.join('/')) },
  );
  return fc.oneof(
    { weight: 8, arbitrary: fc.tuple(prefix, rest).map(([start, end]) => start + end) },
    { weight: 1, arbitrary: fc.array(segmentArb, { maxLength: 5 }).map((segments) => '/' + segments.join('/')) },
  );
}

const parameterKeyArb = fc.oneof(
  fc.constantFrom('_limit', '_offset', '_raw', '_format', '_sort', '_', '_x', 'Name', 'Name__gt', 'Name__between', 'A__eq', '__proto__', 'constructor'),
  nameArb,
  nameArb.map((name) => name + '__' + 'gte'),
  fc.string({ maxLength: 5 }),
);

const parameterValueArb = fc.oneof(
  fc.constantFrom('0', '1', '-1', '1.5', '', 'true', 'false', 'yes', 'records', 'dict', 'list', 'series', 'split', 'index', 'RECORDS', ',', 'A,,B', '-', '__gt(5)', '__lt(2024-03-01)', '__gt(5', '__gt5', '__between(1)', '__ne(*a*)', '*', '**', 'a*b*c', '1e3', '007'),
  nameArb,
  nameArb.map((name) => '-' + name),
  fc.string({ maxLength: 6 }),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
);

function queryArb(columnNames: readonly string[]): fc.Arbitrary<string> {
  const key = fc.oneof({ weight: 2, arbitrary: parameterKeyArb }, { weight: 2, arbitrary: fc.constantFrom(...columnNames) }, { weight: 1, arbitrary: fc.constantFrom(...columnNames).map((name) => name + '__gt') });
  const value = fc.oneof({ weight: 3, arbitrary: parameterValueArb }, { weight: 1, arbitrary: fc.constantFrom(...columnNames) });
  return fc.oneof(
    { weight: 6, arbitrary: fc.array(fc.tuple(key, value), { maxLength: 4 }).map((pairs) => (pairs.length === 0 ? '' : '?' + pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&'))) },
    { weight: 1, arbitrary: fc.string({ maxLength: 12 }).map((raw) => '?' + raw) },
  );
}

const scalarArb = fc.oneof(fc.string({ maxLength: 5 }), fc.double(), fc.boolean(), fc.constant(null), fc.constantFrom('42', '007', 'TRUE', '2024-03-01', '2024-03-01T09:30:00', '=1+1', '-0'));

function rowObjectArb(columnNames: readonly string[]) {
  return fc.dictionary(fc.oneof(fc.constantFrom(...columnNames), nameArb, fc.constantFrom('__proto__', 'constructor', 'toString'), fc.string({ maxLength: 4 })), fc.oneof({ weight: 4, arbitrary: scalarArb }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) }), { maxKeys: 4 });
}

function bodyOfAnyKindArb(columnNames: readonly string[]): fc.Arbitrary<string | Uint8Array | null | undefined> {
  return fc.oneof(
    fc.constant(undefined),
    fc.constant(null),
    fc.string({ maxLength: 20 }),
    fc.json({ maxDepth: 3 }),
    { weight: 4, arbitrary: rowObjectArb(columnNames).map((row) => JSON.stringify(row)) },
    fc.array(fc.oneof({ weight: 5, arbitrary: rowObjectArb(columnNames) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) }), { maxLength: 8 }).map((rows) => JSON.stringify(rows)),
    fc.constantFrom('Name=Ann&Age=30', 'Name=Ann&Name=Bob', '{"Name": "Ann"}', '--X\r\nContent-Disposition: form-data; name="Name"\r\n\r\nAnn\r\n--X--\r\n', '\uFEFF{}', '[]', '{}', 'null', '  '),
    fc.uint8Array({ maxLength: 12 }),
    fc.string({ maxLength: 12 }).map((text) => new TextEncoder().encode(text)),
  );
}

const contentTypeArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant('application/json') },
  fc.constantFrom('application/json', 'application/json; charset=utf-8', 'TEXT/PLAIN', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=X', 'multipart/form-data', 'application/merge-patch+json', 'application/xml', 'text/html', ''),
  fc.string({ maxLength: 12 }),
);

const headersArb = fc
  .record(
    { 'content-type': contentTypeArb, 'x-http-method-override': fc.oneof(fc.constantFrom('PATCH', 'patch', ' Patch ', 'DELETE', ''), fc.string({ maxLength: 5 })) },
    { requiredKeys: [] },
  )
  .map((headers) => headers as HeadersInit);

/** A workbook and a request on its names, of any method, path, query, headers and body. */
const fuzzCaseArb = workbookArb.chain((generated) => {
  const tabNames = generated.tabs.map((tab) => tab.name);
  const columnNames = generated.tabs.flatMap((tab) => visibleColumns(tab.header).map(({ name }) => name));
  const request: fc.Arbitrary<EngineRequest> = fc.record({
    method: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS') },
      { weight: 1, arbitrary: fc.constantFrom('TRACE', 'CONNECT', 'get', 'Patch', '') },
      { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
    ),
    url: fc.oneof(
      { weight: 8, arbitrary: fc.tuple(pathArb(tabNames, columnNames), queryArb(columnNames)).map(([path, query]) => 'http://x' + path + query) },
      { weight: 1, arbitrary: fc.tuple(pathArb(tabNames, columnNames), queryArb(columnNames)).map(([path, query]) => path + query) },
      { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
    ),
    headers: headersArb,
    body: bodyOfAnyKindArb(columnNames),
  });
  return fc.tuple(fc.constant(generated), request);
});

// ---------------------------------------------------------------------------------------------
// Write cases

/** A workbook whose addressed tab has data rows, one of its row indexes, and a body for that tab. */
const rowWriteArb = workbookArb
  .filter((generated) => generated.tabs[generated.addressed].data.length > 0)
  .chain((generated) => {
    const tab = generated.tabs[generated.addressed];
    return fc.record({ generated: fc.constant(generated), index: fc.nat({ max: tab.data.length - 1 }), body: bodyArb(tab.header) });
  });

interface WriteTarget {
  /** `/{n}` or `/{Column}/{Value}`. */
  readonly path: string;
  /** The row index of `/{n}`, null for a match. */
  readonly index: number | null;
}

/** `/{n}` (now and then past the end) or `/{Column}/{Value}` with a value the tab holds (or not). */
function targetArb(tab: GeneratedTab): fc.Arbitrary<WriteTarget> {
  const columns = visibleColumns(tab.header);
  const values = tab.data.flatMap((row) => columns.map(({ position }) => row[position]?.text ?? ''));
  // `*` is a wildcard and `.`/`..` are URL dot segments: leave those values out.
  const matchable = values.filter((value) => value !== '' && !value.includes('*') && value !== '.' && value !== '..');
  const valueArb = matchable.length === 0 ? fc.constant('no such value') : fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...matchable) }, { weight: 1, arbitrary: fc.constant('no such value') });
  return fc.oneof(
    fc.nat({ max: tab.data.length }).map((index) => ({ path: `/${index}`, index })),
    fc.tuple(fc.constantFrom(...columns), valueArb).map(([column, value]) => ({ path: `/${encodeURIComponent(column.name)}/${encodeURIComponent(value)}`, index: null })),
  );
}

const anyWriteArb = workbookArb.chain((generated) => {
  const tab = generated.tabs[generated.addressed];
  return fc.record({
    generated: fc.constant(generated),
    kind: fc.constantFrom('PATCH', 'PUT', 'DELETE', 'POST', 'POST[]'),
    target: targetArb(tab),
    bodies: fc.array(bodyArb(tab.header), { minLength: 1, maxLength: 4 }),
  });
});

// ---------------------------------------------------------------------------------------------
// Properties

test('properties of the engine', async (t) => {
  await t.test('parseRequest and handle never throw; every error is catalogued with its status', () => {
    fc.assert(
      fc.property(fuzzCaseArb, fc.record({ formulas: fc.boolean(), maxRows: fc.integer({ min: 0, max: 6 }) }), ([generated, request], options) => {
        const workbook = toWorkbook(generated.tabs);
        const parsed = parseRequest(request, options);
        if (parsed instanceof ApiError) {
          assert.ok(Object.hasOwn(ERRORS, parsed.code), `unknown code ${parsed.code}`);
          assert.equal(parsed.status, ERRORS[parsed.code]);
        } else {
          assert.equal(typeof parsed.connection, 'string');
        }
        const result = handle(workbook, request, options);
        assert.ok(Number.isInteger(result.status) && result.status >= 200 && result.status <= 599, `status ${result.status}`);
        for (const [name, value] of Object.entries(result.headers)) assert.equal(typeof value, 'string', `header ${name}`);
        if (result.status >= 400) {
          const body = JSON.parse(result.body) as { error: string; message: string };
          assert.deepEqual(Object.keys(body).sort(), ['error', 'message']);
          assert.ok(Object.hasOwn(ERRORS, body.error), `unknown code ${body.error}`);
          assert.equal(ERRORS[body.error as keyof typeof ERRORS], result.status, `${body.error} with status ${result.status}`);
          assert.ok(typeof body.message === 'string' && body.message.length > 0);
          assert.equal(result.plan, null);
          assert.equal(result.workbook, workbook);
          if (parsed instanceof ApiError) assert.equal(body.error, parsed.code);
        } else if (result.body !== '') {
          JSON.parse(result.body);
        }
      }),
      { numRuns: FUZZ_RUNS },
    );
  });

  await t.test('_offset and _limit slice the full read; X-Total-Count is the total', () => {
    fc.assert(
      fc.property(
        workbookArb,
        fc.nat({ max: 30 }),
        fc.option(fc.nat({ max: 30 })),
        fc.option(fc.tuple(fc.nat(), fc.boolean())),
        (generated, offset, limit, sort) => {
          const { workbook, tab, base } = addressOf(generated);
          const columns = visibleColumns(tab.header);
          const sortParameter = sort === null ? '' : `_sort=${sort[1] ? '-' : ''}${encodeURIComponent(columns[sort[0] % columns.length].name)}`;
          const full = getJson(workbook, `${base}?${sortParameter}`);
          const rows = full.json as unknown[];
          assert.equal(rows.length, tab.data.length);
          if (sort === null) assert.deepEqual(rows, recordsOf(tab.header, tab.data));
          const query = [sortParameter, `_offset=${offset}`, limit === null ? '' : `_limit=${limit}`].filter((part) => part !== '').join('&');
          const page = getJson(workbook, `${base}?${query}`);
          const end = limit === null ? undefined : offset + limit;
          assert.deepEqual(page.json, rows.slice(offset, end));
          assert.equal(page.result.headers['X-Total-Count'], String(rows.length));
          assert.equal(page.result.headers['X-Sheet-Rows'], String(tab.data.length));
        },
      ),
      { numRuns: RUNS },
    );
  });

  await t.test('PATCH /{n} then GET /{n} gives the patched values and leaves other columns as they were', () => {
    fc.assert(
      fc.property(rowWriteArb, ({ generated, index, body }) => {
        const { workbook, tab, base } = addressOf(generated);
        const written = send(workbook, 'PATCH', `${base}/${index}`, body);
        assert.equal(written.status, 200, written.body);
        const expected = expectedAfterWrite(tab, index, body, false);
        assert.deepEqual(JSON.parse(written.body), recordsOf(tab.header, [expected.row]));
        assert.deepEqual(getAll(written.workbook, base), recordsOf(tab.header, expected.data));
        // A PATCH can blank the last row, which then is no data row any more.
        if (index < expected.data.length) {
          assert.deepEqual(getJson(written.workbook, `${base}/${index}`).json, recordsOf(tab.header, [expected.row]));
        }
        assertHiddenCellsKept(workbook, written.workbook, generated.addressed, index);
        assertOtherTabsKept(workbook, written.workbook, generated.addressed);
      }),
      { numRuns: RUNS },
    );
  });

  await t.test('PUT /{n} replaces the row: columns absent from the body become empty', () => {
    fc.assert(
      fc.property(rowWriteArb, ({ generated, index, body }) => {
        const { workbook, tab, base } = addressOf(generated);
        const written = send(workbook, 'PUT', `${base}/${index}`, body);
        assert.equal(written.status, 200, written.body);
        const answered = (JSON.parse(written.body) as Record<string, string>[])[0];
        for (const { name } of visibleColumns(tab.header)) {
          assert.equal(answered[name], Object.hasOwn(body, name) ? displayed(body[name]) : '', `column ${name}`);
        }
        const expected = expectedAfterWrite(tab, index, body, true);
        assert.deepEqual(getAll(written.workbook, base), recordsOf(tab.header, expected.data));
        assert.equal(written.headers['X-Sheet-Rows'], String(expected.data.length));
        assertHiddenCellsKept(workbook, written.workbook, generated.addressed, index);
        assertOtherTabsKept(workbook, written.workbook, generated.addressed);
      }),
      { numRuns: RUNS },
    );
  });

  await t.test('DELETE /{n} answers the removed row and moves the rows below up by one', () => {
    fc.assert(
      fc.property(rowWriteArb, ({ generated, index }) => {
        const { workbook, tab, base } = addressOf(generated);
        const before = getAll(workbook, base);
        const removed = send(workbook, 'DELETE', `${base}/${index}`);
        assert.equal(removed.status, 200, removed.body);
        assert.deepEqual(JSON.parse(removed.body), [before[index]]);
        const remaining = trimTrailingBlankRows(tab.data.filter((_, i) => i !== index), tableWidth(tab.header));
        const after = getAll(removed.workbook, base);
        assert.deepEqual(after, recordsOf(tab.header, remaining));
        // Rows above stay where they were (blank ones left at the end stop being data rows);
        // every row below is one place higher.
        assert.deepEqual(after.slice(0, index), before.slice(0, Math.min(index, after.length)));
        assert.deepEqual(after.slice(index), before.slice(index + 1, index + 1 + after.length - index));
        assert.equal(removed.headers['X-Sheet-Rows'], String(remaining.length));
        assertOtherTabsKept(workbook, removed.workbook, generated.addressed);
      }),
      { numRuns: RUNS },
    );
  });

  await t.test('applyPlan(workbook, result.plan) gives the workbook the write answered from', () => {
    fc.assert(
      fc.property(anyWriteArb, ({ generated, kind, target, bodies }) => {
        const { workbook, tab, base } = addressOf(generated);
        const columns = visibleColumns(tab.header);
        const rows = recordsOf(tab.header, tab.data);
        const result =
          kind === 'POST' ? send(workbook, 'POST', base, bodies[0])
          : kind === 'POST[]' ? send(workbook, 'POST', base, bodies)
          : send(workbook, kind, base + target.path, kind === 'DELETE' ? undefined : bodies[0]);
        if (target.index !== null && target.index >= rows.length && !kind.startsWith('POST')) {
          assert.equal(result.status, 404, result.body);
          return;
        }
        assert.ok(result.status === 200 || result.status === 201, `${kind} answered ${result.status}: ${result.body}`);
        const answered = JSON.parse(result.body) as Record<string, string> | Record<string, string>[];
        if (result.plan === null) {
          // Nothing written: a filter matching nothing, or an empty array posted.
          assert.deepEqual(answered, []);
          assert.equal(result.workbook, workbook);
          return;
        }
        const applied = applyPlan(workbook, result.plan);
        // The original workbook is left as it was.
        assert.deepEqual(getAll(workbook, base), rows);
        for (const other of applied.tabs) {
          const otherBase = `/sheets/demo/tabs/${encodeURIComponent(other.name)}`;
          for (const query of ['', '?_raw=1']) {
            assert.deepEqual(getAll(applied, otherBase, query), getAll(result.workbook, otherBase, query));
          }
        }
        // The rows the write answered are the rows the plan wrote (or, for DELETE, removed).
        const appliedRow = rowsWithBlanks(getAll(applied, base), columns.map(({ name }) => name));
        const plan = result.plan;
        if (kind === 'DELETE') {
          assert.deepEqual(answered, plan.removed.map((index) => rows[index]));
        } else if (kind === 'POST' || kind === 'POST[]') {
          const appended = plan.appended;
          assert.ok(appended !== null);
          assert.equal(appended.start, rows.length);
          const added = appended.rows.map((_, i) => appliedRow(appended.start + i));
          assert.deepEqual(answered, kind === 'POST' ? added[0] : added);
        } else {
          assert.deepEqual(answered, plan.replaced.map(({ index }) => appliedRow(index)));
        }
      }),
      { numRuns: RUNS },
    );
  });
});

test('a tab version is a function of its content, however the tab was reached', async (t) => {
  await t.test("a write derives the next tab's version; it equals a fresh hash of the same rows", () => {
    fc.assert(
      fc.property(anyWriteArb, ({ generated, kind, target, bodies }) => {
        const { workbook, base } = addressOf(generated);
        const before = workbook.tabs.map((tab) => tabVersion(tab));
        const result =
          kind === 'POST' ? send(workbook, 'POST', base, bodies[0])
          : kind === 'POST[]' ? send(workbook, 'POST', base, bodies)
          : send(workbook, kind, base + target.path, kind === 'DELETE' ? undefined : bodies[0]);
        result.workbook.tabs.forEach((tab, index) => {
          // The same rows as new objects: hashed from scratch, as a reload from the file would.
          const copy = { name: tab.name, rows: tab.rows.map((row) => ({ text: [...row.text], value: [...row.value] })) };
          assert.equal(tabVersion(tab), tabVersion(copy), `tab ${index} after ${kind}`);
          const changed = result.plan !== null && result.plan.tab === tab.name;
          if (!changed) assert.equal(tabVersion(tab), before[index]);
          else if (JSON.stringify(tab.rows) !== JSON.stringify(workbook.tabs[index].rows)) assert.notEqual(tabVersion(tab), before[index]);
        });
      }),
      { numRuns: RUNS },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Helpers of the properties

/** The data rows after PATCH (or PUT, `blankOthers`) of row `index` with `body`, trailing blank rows dropped. */
function expectedAfterWrite(tab: GeneratedTab, index: number, body: Record<string, string | number | boolean | null>, blankOthers: boolean) {
  const width = tableWidth(tab.header);
  const row: Cell[] = Array.from({ length: Math.max(width, tab.data[index].length) }, (_, position) => tab.data[index][position] ?? EMPTY);
  for (const { name, position } of visibleColumns(tab.header)) {
    if (Object.hasOwn(body, name)) row[position] = asCell(body[name]);
    else if (blankOthers) row[position] = EMPTY;
  }
  const data = tab.data.map((old, i) => (i === index ? row : old));
  return { row, data: trimTrailingBlankRows(data, width) };
}

/** Row `index` of a full read, or a row of empty strings where the read ends (trailing blank rows). */
function rowsWithBlanks(rows: readonly Record<string, string>[], names: readonly string[]) {
  return (index: number): Record<string, string> => rows[index] ?? Object.fromEntries(names.map((name) => [name, '']));
}

/** Hidden columns (empty headers) and cells right of the last header survive a PATCH or PUT. */
function assertHiddenCellsKept(before: Workbook, after: Workbook, tabIndex: number, index: number): void {
  const header = before.tabs[tabIndex].rows[0].text;
  const old = before.tabs[tabIndex].rows[index + 1];
  const now = after.tabs[tabIndex].rows[index + 1];
  const length = Math.max(old.text.length, header.length);
  for (let position = 0; position < length; position++) {
    if ((header[position] ?? '') !== '') continue;
    assert.equal(now.text[position] ?? '', old.text[position] ?? '', `hidden column ${position} text`);
    assert.equal(now.value[position] ?? null, old.value[position] ?? null, `hidden column ${position} value`);
  }
}

function assertOtherTabsKept(before: Workbook, after: Workbook, tabIndex: number): void {
  assert.equal(after.tabs.length, before.tabs.length);
  before.tabs.forEach((tab, i) => {
    if (i === tabIndex) return;
    const base = `/sheets/demo/tabs/${encodeURIComponent(tab.name)}`;
    assert.deepEqual(getAll(after, base, '?_raw=1'), getAll(before, base, '?_raw=1'));
  });
}
