// The per-connection OpenAPI document (lib/openapi.ts): valid OpenAPI 3.1 for the demo workbook
// and for one with awkward names, and true to the engine: each tab's schema accepts what a read
// of that tab answers, each tab path reaches its tab, and every error code is in the catalogue.
// Issue 25: every new parameter (`_select`, `_or`, `_case`, the operators), the `Link` header and
// the aggregate path per tab are described, and the document lints clean with Redocly's
// `recommended` rules. Then GET /sheets/demo/openapi.json through the app: keyed, counted, HEAD,
// OPTIONS, 405.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { handle } from '../../lib/engine.ts';
import { ERRORS } from '../../lib/errors.ts';
import { FORMATS } from '../../lib/format.ts';
import { buildOpenApi, isOpenApiPath, type JsonObject, type OpenApiConnection } from '../../lib/openapi.ts';
import { AGGREGATE_FUNCTIONS } from '../../lib/openapi/components.ts';
import { componentKeys, pathSegment } from '../../lib/openapi/names.ts';
import { OPERATOR_TEXT } from '../../lib/openapi/paths.ts';
import { OPERATORS } from '../../lib/query.ts';
import { tableOf } from '../../lib/table.ts';
import type { SheetRow, Tab, Workbook } from '../../lib/workbook.ts';
import { createApp } from '../../server/http/app.ts';
import type { Connection } from '../../server/connections.ts';
import { digestKey } from '../../server/auth.ts';
import { createLogger } from '../../server/log.ts';
import { openQuotaStore } from '../../server/quota/quota.ts';
import { decodeWorkbook } from '../../server/sources/file/codec.ts';
import { memorySource } from '../../server/sources/memory.ts';
import { loadSheetJs } from '../../server/sources/file/xlsx/sheetjs.ts';

// Decoding an .xlsx or .ods here, as the server does once it has opened one, needs SheetJS loaded.
await loadSheetJs();

const row = (...cells: (string | number | boolean | null)[]): SheetRow => ({ text: cells.map((cell) => (cell === null ? '' : String(cell))), value: cells });

/** Several tabs whose names and headers are everything people type: unicode, spaces, `/`, `~`, empty and repeated headers, keywords. */
function awkward(): Workbook {
  const headers = ['Full name', 'Âge', 'a/b', 'x~y', '', 'Full name', '__proto__', '$ref', '_id', 'tabs', 'openapi.json', ' padded ', '名前', '😀', '  '];
  return {
    tabs: [
      { name: 'Staff', rows: [row(...headers), row('Ann', 30, 'x', 'y', 'hidden', 'dup', 'p', 'r', 1, 't', 'o', 'pad', '名', '😀', 'z'), row('Bob', 41, null, null, null, null, null, null, 2, null, null, null, null, null, null)] },
      { name: 'Ventes 2024/Q1', rows: [row('Région', 'Total €'), row('Nord', 12.5)] },
      { name: 'ventes 2024 Q1', rows: [row('Région', 'Total'), row('Sud', true)] },
      { name: '日本', rows: [row('名前'), row('太郎')] },
      { name: '한국', rows: [row('이름'), row('민수')] },
      { name: 'Empty', rows: [] },
      { name: 'Secret', rows: [row('Code'), row('42')], visibility: 'hidden' },
      { name: 'openapi.json', rows: [row('x'), row('1')] },
    ],
  };
}

async function demo(): Promise<Workbook> {
  return decodeWorkbook(new Uint8Array(await readFile(new URL('../../fixtures/demo.xlsx', import.meta.url))), 'xlsx', 'demo').workbook;
}

async function assertValid(document: JsonObject): Promise<void> {
  const result = await new Validator().validate(document);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2)?.slice(0, 2000));
}

/** Compiles `#/components/schemas/{name}` of the document, its references resolved within it. */
function schemaChecker(document: JsonObject): (name: string, value: unknown) => void {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema({ ...document, $id: 'https://sheetrest.invalid/openapi.json' });
  return (name, value) => {
    const validate = ajv.getSchema(`https://sheetrest.invalid/openapi.json#/components/schemas/${name}`);
    assert.ok(validate !== undefined, `no schema ${name}`);
    assert.equal(validate(value), true, `${name}: ${JSON.stringify(validate.errors)} for ${JSON.stringify(value).slice(0, 300)}`);
  };
}

/**
 * Redocly's `recommended` rules (docs/decisions.md, "25: the OpenAPI document lints clean"), with
 * one turned off and one spared where the document is right and the rule cannot know it:
 * - `info-license` off: the document describes a connection's spreadsheet, whose licence the
 *   server does not know; a made-up one would be worse than none.
 * - `no-required-schema-properties-undefined` only where it flags a `$`-named column that a
 *   `patternProperties` pattern of the same schema defines (names.ts: tools take a `$ref` key in
 *   `properties` for a reference); the rule reads `properties` only.
 */
const lintConfig = createConfig({ extends: ['recommended'], rules: { 'info-license': 'off' } });

async function lintProblems(document: JsonObject): Promise<string[]> {
  const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config: await lintConfig });
  return problems
    .filter((problem) => !(problem.ruleId === 'no-required-schema-properties-undefined' && definedByPattern(document, problem.location[0]?.pointer ?? '')))
    .map((problem) => `${problem.ruleId} (${problem.severity}) at ${problem.location[0]?.pointer}: ${problem.message}`);
}

/** Whether `#/components/schemas/{name}/required/{i}` names a property one of the schema's own patterns matches. */
function definedByPattern(document: JsonObject, pointer: string): boolean {
  const found = /^#\/components\/schemas\/([^/]+)\/required\/(\d+)$/.exec(pointer);
  if (found === null) return false;
  const schema = schemas(document)[found[1]] as { required: string[]; patternProperties?: Record<string, unknown> };
  const name = schema.required[Number(found[2])];
  return Object.keys(schema.patternProperties ?? {}).some((pattern) => new RegExp(pattern, 'u').test(name));
}

const ref = (where: string): JsonObject => ({ $ref: `#/components/${where}` });

/** A value with its `$ref`s (within the document) followed. */
function deref<T = JsonObject>(document: JsonObject, value: unknown): T {
  let current = value as JsonObject;
  while (typeof current === 'object' && current !== null && typeof current.$ref === 'string') {
    const parts = current.$ref.slice(2).split('/').map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
    current = parts.reduce<JsonObject>((node, part) => node[part] as JsonObject, document);
  }
  return current as T;
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  explode?: boolean;
  schema: JsonObject;
}

/** An operation's parameters by name: the path item's, then its own over them (OpenAPI's rule). */
function parametersOf(document: JsonObject, path: string, method: string): Map<string, Parameter> {
  const item = paths(document)[path];
  const all = [...((item.parameters ?? []) as unknown as unknown[]), ...((item[method].parameters ?? []) as unknown as unknown[])].map((parameter) => deref<Parameter>(document, parameter));
  return new Map(all.map((parameter) => [parameter.name, parameter]));
}

const schemas = (document: JsonObject) => (document.components as { schemas: Record<string, JsonObject> }).schemas;
const paths = (document: JsonObject) => document.paths as Record<string, Record<string, JsonObject>>;
const METHODS = ['get', 'head', 'post', 'patch', 'put', 'delete', 'options'];

function operations(document: JsonObject): JsonObject[] {
  return Object.values(paths(document)).flatMap((item) => METHODS.filter((method) => method in item).map((method) => item[method]));
}

/** The tab a Row schema describes, from its title; its column names from `required`. */
function tabKeys(document: JsonObject): Map<string, string> {
  const keys = new Map<string, string>();
  for (const [name, schema] of Object.entries(schemas(document))) if (name.endsWith('.Row')) keys.set(String(schema.title), name.slice(0, -'.Row'.length));
  return keys;
}

/** What every document must hold, whatever the workbook. */
async function checkDocument(t: { test: (name: string, fn: (t: { diagnostic: (message: string) => void }) => void | Promise<void>) => Promise<unknown> }, workbook: Workbook, connection: OpenApiConnection, served: readonly Tab[]): Promise<JsonObject> {
  const document = buildOpenApi(workbook, connection);
  const check = schemaChecker(document);
  const keys = tabKeys(document);
  const base = `/sheets/${encodeURIComponent(connection.id)}`;

  await t.test('is valid OpenAPI 3.1', () => assertValid(document));
  await t.test('component names are valid and tab keys unique ignoring case', () => {
    const components = document.components as Record<string, Record<string, unknown>>;
    for (const group of Object.values(components)) for (const name of Object.keys(group)) assert.match(name, /^[a-zA-Z0-9._-]+$/);
    const lower = [...keys.values()].map((key) => key.toLowerCase());
    assert.equal(new Set(lower).size, lower.length);
  });
  await t.test('a schema per served tab, its columns as properties, in order', () => {
    assert.deepEqual([...keys.keys()], served.map((tab) => tab.name));
    const listed = (document['x-sheetrest'] as { tabs: { name: string; key: string; columns: string[] }[] }).tabs;
    assert.deepEqual(listed.map((tab) => [tab.name, tab.key, tab.columns]), served.map((tab) => [tab.name, keys.get(tab.name), tableOf(tab).columns.map((column) => column.name)]));
    for (const tab of served) {
      const columns = tableOf(tab).columns.map((column) => column.name);
      const schema = schemas(document)[`${keys.get(tab.name)}.Row`];
      assert.deepEqual(schema.required ?? [], columns);
      const named = [...Object.keys(schema.properties as object), ...Object.keys((schema.patternProperties ?? {}) as object)];
      assert.deepEqual(new Set(named).size, columns.length);
      assert.equal(schema.additionalProperties, false);
    }
  });
  await t.test('each tab\'s schemas accept what the engine answers, in every format', () => {
    for (const tab of served) {
      const key = keys.get(tab.name) as string;
      const path = `${base}/tabs/${pathSegment(tab.name)}`;
      assert.ok(path in paths(document), path);
      for (const format of FORMATS) {
        for (const raw of [false, true]) {
          const answer = handle(workbook, { method: 'GET', url: `${path}?_format=${format}&_raw=${raw}` }, { hiddenTabs: connection.hiddenTabs });
          assert.equal(answer.status, 200, `${path}: ${answer.body}`);
          const body = JSON.parse(answer.body);
          check(`${key}.Rows`, body);
          if (format === 'records') for (const record of body) check(raw ? `${key}.RawRow` : `${key}.Row`, record);
        }
      }
    }
  });
  await t.test('issue 25: the schemas accept what the engine answers with `_select`, and for aggregates', (t) => {
    let aggregates = 0;
    for (const tab of served) {
      const key = keys.get(tab.name) as string;
      const path = `${base}/tabs/${pathSegment(tab.name)}`;
      const columns = tableOf(tab).columns.map((column) => column.name);
      const two = columns.slice(0, 2).reverse().map(encodeURIComponent).join(',');
      const group = columns.length > 0 ? `&_group=${encodeURIComponent(columns[0])}&_agg=count(),count(${encodeURIComponent(columns[0])})` : '&_agg=count()';
      for (const format of FORMATS) {
        for (const raw of [false, true]) {
          if (two !== '') {
            const selected = handle(workbook, { method: 'GET', url: `${path}?_select=${two}&_format=${format}&_raw=${raw}` }, { hiddenTabs: connection.hiddenTabs });
            assert.equal(selected.status, 200, `${path}: ${selected.body}`);
            check(`${key}.Rows`, JSON.parse(selected.body));
          }
          const answer = handle(workbook, { method: 'GET', url: `${path}/aggregate?_format=${format}&_raw=${raw}${group}` }, { hiddenTabs: connection.hiddenTabs });
          assert.equal(answer.status, 200, `${path}/aggregate: ${answer.body}`);
          check('AggregateRows', JSON.parse(answer.body));
          aggregates++;
        }
      }
    }
    assert.ok(aggregates > 0, 'every tab answered an aggregate in every format');
  });
  await t.test('every error code is in the Error schema; each status\'s response, where one is named, holds its codes', () => {
    const error = schemas(document).Error as { properties: { error: { enum: string[] } }; 'x-status': object };
    assert.deepEqual(error.properties.error.enum, Object.keys(ERRORS));
    assert.deepEqual(error['x-status'], ERRORS);
    // Responses no operation names are left out (a read-only connection has no 412); those present are whole.
    const responses = (document.components as { responses: Record<string, { content: { 'application/json': { schema: { allOf: JsonObject[] } } } }> }).responses;
    const named = Object.keys(responses).filter((name) => /^Error\d+$/.test(name));
    assert.ok(named.includes('Error400') && named.includes('Error404'), named.join(', '));
    for (const name of named) {
      const codes = (responses[name].content['application/json'].schema.allOf[1] as { properties: { error: { enum: string[] } } }).properties.error.enum;
      assert.deepEqual(codes, Object.entries(ERRORS).filter(([, status]) => `Error${status}` === name).map(([code]) => code), name);
    }
  });
  await t.test('operationIds are unique and every path template has its parameter', () => {
    const ids = operations(document).map((operation) => operation.operationId);
    assert.equal(new Set(ids).size, ids.length);
    for (const [path, item] of Object.entries(paths(document))) {
      for (const name of path.match(/\{[^}]+\}/g) ?? []) {
        const declared = [item, ...METHODS.filter((method) => method in item).map((method) => item[method])].map((holder) => ((holder.parameters ?? []) as JsonObject[]).some((parameter) => parameter.in === 'path' && parameter.name === name.slice(1, -1)));
        assert.ok(declared[0] || declared.slice(1).every(Boolean), `${path} declares ${name}`);
      }
    }
  });
  await t.test('the read parameters and the headers are documented; the writes\' only on a writable connection', () => {
    const parameters = (document.components as { parameters: Record<string, JsonObject> }).parameters;
    const names = Object.values(parameters).map((parameter) => parameter.name);
    for (const name of ['_limit', '_offset', '_raw', '_format', '_sort', '_or', '_case', 'If-None-Match']) assert.ok(names.includes(name), name);
    if (served.some((tab) => tableOf(tab).columns.length > 0)) assert.ok(names.includes('_select'));
    const headers = Object.keys((document.components as { headers: object }).headers);
    for (const header of ['X-Sheet-Rows', 'X-Sheet-Columns', 'X-Total-Count', 'Link', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Plan', 'X-RateLimit-Reset', 'Retry-After', 'ETag', 'Last-Modified', 'Cache-Control']) {
      assert.ok(headers.includes(header), header);
    }
    assert.equal(headers.includes('Idempotent-Replayed'), connection.writable);
    for (const header of ['If-Match', 'Idempotency-Key']) assert.equal(names.includes(header), connection.writable, header);
  });
  await t.test('lints clean: Redocly\'s recommended rules report nothing', async () => {
    assert.deepEqual(await lintProblems(document), []);
  });
  await t.test('issue 25: `_select` (the tab\'s columns) on every read; `_or` and `_case` where conditions are; `Link` on reads', () => {
    for (const tab of served) {
      const key = keys.get(tab.name) as string;
      const columns = tableOf(tab).columns.map((column) => column.name);
      const tabPath = `${base}/tabs/${pathSegment(tab.name)}`;
      const column = deref(document, ref(`schemas/${key}.Column`));
      assert.deepEqual(column.enum ?? [], columns);
      for (const suffix of ['', '/{position}', '/search', '/query', '/{column}/{value}']) {
        const select = parametersOf(document, tabPath + suffix, 'get').get('_select');
        assert.ok(select !== undefined, `${tabPath}${suffix} takes _select`);
        assert.equal(select.explode, false);
        assert.deepEqual(select.schema, { type: 'array', items: ref(`schemas/${key}.Column`), minItems: 1 });
        const ok = deref<{ headers: Record<string, unknown> }>(document, (paths(document)[tabPath + suffix].get.responses as JsonObject)[200]);
        assert.ok('Link' in ok.headers, `${tabPath}${suffix}: Link`);
      }
      for (const suffix of ['/search', '/query', '/aggregate']) {
        const parameters = parametersOf(document, tabPath + suffix, 'get');
        assert.deepEqual(parameters.get('_or')?.schema, { type: 'array', items: { type: 'string', minLength: 1 } }, `${suffix} _or`);
        assert.notEqual(parameters.get('_or')?.explode, false, 'one _or parameter per group');
        assert.deepEqual(parameters.get('_case')?.schema, { type: 'string', enum: ['sensitive'] });
      }
    }
    assert.ok('Link' in deref<{ headers: object }>(document, ref('responses/Head')).headers);
  });
  await t.test('issue 25: `/{position}` takes a row or a slice to read, a row only to write', () => {
    const ajv = new Ajv2020({ strict: false });
    for (const tab of served) {
      const path = `${base}/tabs/${pathSegment(tab.name)}/{position}`;
      const read = ajv.compile(parametersOf(document, path, 'get').get('position')?.schema as object);
      assert.deepEqual([3, '3:10', '3:', 'x', '3:x', -1].map((value) => read(value)), [true, true, true, false, false, false]);
      if (!connection.writable) continue;
      for (const method of ['patch', 'put', 'delete']) {
        assert.deepEqual(parametersOf(document, path, method).get('position')?.schema, { type: 'integer', minimum: 0 }, method);
      }
    }
  });
  await t.test('issue 25: an aggregate path per tab, GET only: `_agg`, `_group` (the tab\'s columns), the conditions, the read parameters', () => {
    const first = served[0];
    if (first !== undefined) assert.ok(`${base}/aggregate` in paths(document), 'the first tab\'s, unprefixed');
    for (const tab of served) {
      const key = keys.get(tab.name) as string;
      const path = `${base}/tabs/${pathSegment(tab.name)}/aggregate`;
      const item = paths(document)[path];
      assert.deepEqual(METHODS.filter((method) => method in item), ['get'], path);
      const parameters = parametersOf(document, path, 'get');
      const agg = parameters.get('_agg');
      assert.equal(agg?.required, true);
      for (const [name] of AGGREGATE_FUNCTIONS) assert.ok(agg?.description?.includes(`\`${name}\``), name);
      assert.deepEqual(['count()', 'count(Col)', 'count_distinct(Col)', 'sum(Col)', 'avg(Col)', 'min(Col)', 'max(Col)'], AGGREGATE_FUNCTIONS.map(([name]) => name));
      assert.equal(parameters.get('_group')?.explode, false);
      assert.deepEqual(parameters.get('_group')?.schema, { type: 'array', items: ref(`schemas/${key}.Column`), minItems: 1 });
      for (const name of ['_sort', '_limit', '_offset', '_format', '_raw', '_select']) assert.ok(parameters.has(name), name);
      assert.equal(parameters.get('_select')?.explode, false);
      const conditions = tableOf(tab).columns.map((column) => column.name).filter((column) => !column.startsWith('_'));
      for (const column of conditions) assert.equal(parameters.get(column)?.in, 'query', column);
      const ok = deref<{ content: { 'application/json': { schema: JsonObject } } }>(document, (item.get.responses as JsonObject)[200]);
      assert.deepEqual(ok.content['application/json'].schema, ref('schemas/AggregateRows'));
    }
  });
  await t.test('security: X-Api-Key only on a keyed connection', () => {
    const schemes = (document.components as { securitySchemes?: Record<string, JsonObject> }).securitySchemes;
    const answers401 = operations(document).some((operation) => '401' in (operation.responses as object));
    if (connection.keyed) {
      assert.deepEqual(schemes, { apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: schemes?.apiKey.description } });
      assert.deepEqual(document.security, [{ apiKey: [] }]);
      assert.deepEqual(paths(document)['/healthz'].get.security, []);
      assert.equal(answers401, true);
    } else {
      // An empty requirement says outright that no credentials are needed.
      assert.equal(schemes, undefined);
      assert.deepEqual(document.security, [{}]);
      assert.equal(answers401, false);
    }
  });
  await t.test(connection.writable ? 'writes are documented' : 'a read-only connection has no writes', () => {
    const writes = operations(document).filter((operation) => /^(appendRows|patch|put|delete)/.test(String(operation.operationId)));
    assert.equal(writes.length > 0, connection.writable);
  });
  return document;
}

test('the demo workbook', async (t) => {
  const workbook = await demo();
  await t.test('keyed, writable', async (t) => {
    const document = await checkDocument(t, workbook, { id: 'demo', keyed: true, writable: true }, workbook.tabs);
    await t.test('the first tab\'s paths are unprefixed', () => {
      const expected = ['', '/{position}', '/search', '/query', '/aggregate', '/{column}/{value}', '/tabs', '/openapi.json'];
      for (const rest of expected) assert.ok(`/sheets/demo${rest}` in paths(document), rest);
      assert.ok('/sheets/demo/tabs/Sales%202024/{column}/{value}' in paths(document));
      const columns = paths(document)['/sheets/demo/{column}/{value}'].parameters as unknown as { name: string; schema: { enum: string[] } }[];
      assert.deepEqual(columns[0].schema.enum, ['Name', 'Age', 'City', 'Joined', 'Active', 'Score', 'Notes']);
    });
  });
  await t.test('open, read-only', async (t) => {
    await checkDocument(t, workbook, { id: 'demo', keyed: false, writable: false }, workbook.tabs);
  });
  await t.test('keyed, writable, on a plan with a rate limit (429 and the RateLimit headers)', async (t) => {
    const document = await checkDocument(t, workbook, { id: 'demo', keyed: true, writable: true, rateLimit: { requests: 60, perSeconds: 10 } }, workbook.tabs);
    const headers = (document.components as Record<string, Record<string, unknown>>).headers;
    assert.ok('RateLimit' in headers && 'RateLimit-Policy' in headers, 'the RateLimit headers are described');
  });
});

test('a workbook with awkward names', async (t) => {
  const workbook = awkward();
  const visible = workbook.tabs.filter((tab) => tab.visibility === undefined);
  await t.test('hidden tabs served', async (t) => {
    await checkDocument(t, workbook, { id: 'my books/2024', keyed: true, writable: true }, workbook.tabs);
  });
  await t.test('read-only, keyed, hidden tabs hidden', async (t) => {
    await checkDocument(t, workbook, { id: 'ro', keyed: true, writable: false, hiddenTabs: 'hide' }, visible);
  });
  await t.test('hidden tabs hidden', async (t) => {
    const document = await checkDocument(t, workbook, { id: 'x', keyed: false, writable: true, hiddenTabs: 'hide' }, visible);
    const staff = tabKeys(document).get('Staff') as string;
    await t.test('the engine\'s columns: empty and repeated headers hidden, the rest as typed', () => {
      assert.deepEqual(schemas(document)[`${staff}.Row`].required, ['Full name', 'Âge', 'a/b', 'x~y', '__proto__', '$ref', '_id', 'tabs', 'openapi.json', ' padded ', '名前', '😀']);
      const properties = schemas(document)[`${staff}.Row`].properties as object;
      assert.ok(Object.hasOwn(properties, '__proto__'), '__proto__ is an own property');
      assert.deepEqual(Object.keys(schemas(document)[`${staff}.Row`].patternProperties as object), ['^\\$ref$']);
    });
    await t.test('search conditions leave out `_` columns; the unprefixed filter leaves out `tabs`', () => {
      // The path item's parameters: the shared ones by reference, then a condition per column.
      const search = paths(document)['/sheets/x/search'].parameters as unknown as { name?: string }[];
      const conditions = search.flatMap((parameter) => (parameter.name === undefined ? [] : [parameter.name]));
      assert.deepEqual(conditions, ['Full name', 'Âge', 'a/b', 'x~y', '$ref', 'tabs', 'openapi.json', ' padded ', '名前', '😀']);
      const enumOf = (path: string) => (paths(document)[path].parameters as unknown as { schema: { enum: string[] } }[])[0].schema.enum;
      assert.equal(enumOf('/sheets/x/{column}/{value}').includes('tabs'), false);
      assert.equal(enumOf('/sheets/x/tabs/Staff/{column}/{value}').includes('tabs'), true);
    });
    await t.test('tab keys: sanitized, unique ignoring case', () => {
      assert.deepEqual([...tabKeys(document).values()], ['Staff', 'Ventes_2024_Q1', 'ventes_2024_Q1_2', 'Tab', 'Tab_2', 'Empty', 'openapi_json']);
    });
  });
});

test('/query describes every operator of lib/query.ts and of issue 25', () => {
  const described = OPERATOR_TEXT.flatMap(([names]) => names);
  for (const operator of [...OPERATORS, 'in', 'nin', 'between', 'contains', 'startswith', 'endswith', 'empty', 'filled']) assert.ok(described.includes(operator), operator);
  const document = buildOpenApi({ tabs: [{ name: 'People', rows: [row('Name', 'Age')] }] }, { id: 'x', keyed: false, writable: false });
  for (const path of ['/sheets/x/query', '/sheets/x/aggregate']) {
    const description = String(paths(document)[path].get.description);
    for (const operator of described) assert.ok(description.includes(`\`__${operator}`), `${path}: __${operator}`);
  }
});

test('a workbook with no tabs: the connection\'s own paths only', async () => {
  const document = buildOpenApi({ tabs: [] }, { id: 'none', keyed: false, writable: true });
  await assertValid(document);
  assert.deepEqual(Object.keys(paths(document)), ['/sheets/none/tabs', '/sheets/none/openapi.json', '/sheets/none/events', '/healthz']);
});

test('names', async (t) => {
  const cases: [string[], string[]][] = [
    [['People', 'Sales 2024'], ['People', 'Sales_2024']],
    [['a b', 'a_b', 'A-B', 'A b'], ['a_b', 'a_b_2', 'A-B', 'A_b_3']],
    [['日本', '', '__'], ['Tab', 'Tab_2', 'Tab_3']],
    [['Tab', '日本'], ['Tab', 'Tab_2']],
  ];
  for (const [names, expected] of cases) await t.test(JSON.stringify(names), () => assert.deepEqual(componentKeys(names), expected));
  for (const [name, segment] of [['Sales 2024', 'Sales%202024'], ['a/b', 'a%2Fb'], ['.', '%2E'], ['..', '%2E%2E'], ['a.b', 'a.b']]) {
    await t.test(`path segment of ${JSON.stringify(name)}`, () => assert.equal(pathSegment(name), segment));
  }
  const paths: [string, boolean][] = [
    ['/sheets/demo/openapi.json', true],
    ['/sheets/demo/openapi.json/', true],
    ['/sheets/a%20b/openapi%2Ejson', true],
    ['/sheets/demo/tabs/openapi.json', false],
    ['/sheets/demo/openapi.json/x', false],
    ['/sheets//openapi.json', false],
    ['/openapi.json', false],
    ['/sheets/demo/openapi%E0%A4%A.json', false],
  ];
  for (const [path, expected] of paths) await t.test(path, () => assert.equal(isOpenApiPath(path), expected));
});

test('GET /sheets/{id}/openapi.json through the app', async (t) => {
  const stateDir = await mkdtemp(join(tmpdir(), 'sheetrest-openapi-'));
  const quota = await openQuotaStore({ stateDir });
  t.after(async () => {
    await quota.close();
    await rm(stateDir, { recursive: true, force: true });
  });
  const people = (): Workbook => ({ tabs: [{ name: 'People', rows: [row('Name', 'openapi.json'), row('Ann', 'yes'), row('Bob', 'no')] }] });
  const connection = (id: string, extra: Partial<Connection> = {}): Connection => ({ id, source: memorySource(people()), keys: [], readOnly: false, engine: {}, ...extra });
  const app = createApp({
    connections: [
      connection('open'),
      connection('keyed', { keys: [{ digest: digestKey('reader'), scope: 'read' }], plan: { name: 'readers', monthlyRequests: 100, operations: ['read'] } }),
      connection('daily', { plan: { name: 'burst', period: 'day', requests: 50, operations: ['read', 'create', 'update', 'delete'] } }),
    ],
    quota,
    bodyBytes: 1024 * 1024,
    cors: '*',
    log: createLogger('error', () => {}),
  });
  const call = (path: string, init: RequestInit = {}) => app.fetch(new Request(`http://localhost${path}`, init));

  await t.test('an open connection answers the document (it was 404 before)', async () => {
    const response = await call('/sheets/open/openapi.json');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(response.headers.get('cache-control'), 'no-cache');
    const document = await response.json();
    assert.equal(document.openapi, '3.1.0');
    assert.ok('/sheets/open/{column}/{value}' in document.paths);
    await assertValid(document);
  });
  await t.test('a keyed connection: 401 without a key, 200 with a read key, counted as a read', async () => {
    assert.equal((await call('/sheets/keyed/openapi.json')).status, 401);
    const first = await call('/sheets/keyed/openapi.json', { headers: { 'X-Api-Key': 'reader' } });
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('cache-control'), 'private, no-cache');
    const second = await call('/sheets/keyed/openapi.json', { headers: { 'X-Api-Key': 'reader' } });
    assert.equal(Number(second.headers.get('x-ratelimit-remaining')), Number(first.headers.get('x-ratelimit-remaining')) - 1);
    assert.deepEqual((await second.json()).security, [{ apiKey: [] }]);
  });
  await t.test('the quota headers are described by the plan\'s period: a month unless the plan counts by the day or hour', async () => {
    const monthly = (await (await call('/sheets/open/openapi.json')).json()).components.headers;
    const daily = (await (await call('/sheets/daily/openapi.json')).json()).components.headers;
    assert.deepEqual(
      ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'].map((name) => monthly[name].description),
      ['Requests per billing month; left out when the plan has no monthly limit.', 'Requests left this month; left out when the plan has no monthly limit.', 'Unix seconds (UTC) when the month turns; left out when the plan has no monthly limit.'],
    );
    assert.deepEqual(
      ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'].map((name) => daily[name].description),
      ['Requests per billing day; left out when the plan has no daily limit.', 'Requests left this day; left out when the plan has no daily limit.', 'Unix seconds (UTC) when the day turns; left out when the plan has no daily limit.'],
    );
    assert.deepEqual(Object.keys(daily), Object.keys(monthly), 'the same headers, in the same order');
  });
  await t.test('an ETag: If-None-Match with it answers 304', async () => {
    const first = await call('/sheets/open/openapi.json');
    const tag = first.headers.get('etag') ?? '';
    assert.match(tag, /^"w[0-9a-f]{16}-[0-9a-f]{16}"$/);
    await first.body?.cancel();
    const again = await call('/sheets/open/openapi.json', { headers: { 'If-None-Match': tag } });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), '');
    assert.equal(again.headers.get('cache-control'), 'no-cache');
  });
  await t.test('HEAD has the headers and no body; OPTIONS lists GET, HEAD; POST is 405', async () => {
    const head = await call('/sheets/open/openapi.json', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
    assert.ok(Number(head.headers.get('content-length')) > 1000);
    const options = await call('/sheets/open/openapi.json', { method: 'OPTIONS' });
    assert.equal(options.status, 204);
    assert.equal(options.headers.get('allow'), 'GET, HEAD');
    const post = await call('/sheets/open/openapi.json', { method: 'POST', body: '{}', headers: { 'Content-Type': 'application/json' } });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    assert.equal((await post.json()).error, 'method_not_allowed');
  });
  await t.test('a column named openapi.json is still filtered by /{Column}/{Value}', async () => {
    const response = await call('/sheets/open/openapi.json/yes');
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), [{ Name: 'Ann', 'openapi.json': 'yes' }]);
  });
  await t.test('the document follows the live workbook: a new header, a new column', async () => {
    // A source whose spreadsheet someone edits behind the server.
    let current = people();
    const source = { ...memorySource(current), read: async () => current };
    const live = createApp({ connections: [connection('live', { source })], quota, bodyBytes: 1024, cors: '*', log: createLogger('error', () => {}) });
    const columnsOf = async () => {
      const document = await (await live.fetch(new Request('http://localhost/sheets/live/openapi.json'))).json();
      return document.components.schemas['People.Row'].required;
    };
    assert.deepEqual(await columnsOf(), ['Name', 'openapi.json']);
    current = { tabs: [{ name: 'People', rows: [row('Name', 'openapi.json', 'Email'), row('Ann', 'yes', 'a@x')] }] };
    assert.deepEqual(await columnsOf(), ['Name', 'openapi.json', 'Email']);
  });
  await t.test('an unknown connection is still 404', async () => {
    assert.equal((await call('/sheets/nope/openapi.json')).status, 404);
  });
});
