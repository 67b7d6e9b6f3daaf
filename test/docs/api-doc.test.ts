// docs/api.md names what the server answers, read from the code rather than from a list here:
// `| 404 | \`row_not_found\` | ... |` for every code of lib/errors.ts, a row of the paths table
// for every route of the router (server/) and every path shape of the engine with each of its
// methods, and every read parameter, `_format`, `/query` operator and CORS-exposed header. A new
// code, route or parameter without its place in docs/api.md fails here.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { ERRORS, isApiError } from '../../lib/errors.ts';
import { FORMATS } from '../../lib/format.ts';
import { buildOpenApi, type JsonObject } from '../../lib/openapi.ts';
import { allowedMethods, parseRequest } from '../../lib/parse-request.ts';
import { OPERATORS } from '../../lib/query.ts';
import type { Workbook } from '../../lib/workbook.ts';
import { EXPOSED_HEADERS } from '../../server/http/cors.ts';

const ROOT = new URL('../../', import.meta.url);
const doc = await readFile(new URL('docs/api.md', ROOT), 'utf8');

/** The doc's table rows as trimmed cells: `| a | b \| c |` -> ['a', 'b | c']. */
const rows: string[][] = doc
  .split('\n')
  .filter((line) => line.startsWith('|') && !/^\|[-| ]+\|$/.test(line))
  .map((line) => line.slice(1, -1).split(/(?<!\\)\|/).map((cell) => cell.trim().replaceAll('\\|', '|')));

/** The row of the paths table whose first cell is the path (`/sheets/{id}/{index}`). */
function pathRow(path: string): string[] | undefined {
  return rows.find((cells) => cells[0] === '`' + path + '`');
}

test('every error code of lib/errors.ts has a row with its status, what causes it and an example', () => {
  const codes = Object.entries(ERRORS);
  assert.ok(codes.length > 20, 'the catalogue was read');
  for (const [code, status] of codes) {
    const row = rows.find((cells) => cells[1] === '`' + code + '`');
    assert.ok(row !== undefined, `docs/api.md has no row for the error code ${code}`);
    assert.equal(row[0], String(status), `docs/api.md gives ${code} the status ${row[0]}; lib/errors.ts says ${status}`);
    assert.ok(row[2].length > 0, `docs/api.md does not say when ${code} is answered`);
    assert.match(row[3], /curl/, `docs/api.md has no curl example for ${code}`);
  }
});

test('every route of the router (server/) has a row in the paths table', async () => {
  const routes: { method: string; pattern: string }[] = [];
  for (const file of await readdir(new URL('server/', ROOT), { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.ts')) continue;
    const source = await readFile(new URL(`server/${file.split('\\').join('/')}`, ROOT), 'utf8');
    for (const match of source.matchAll(/\brouter\.(get|all|post|put|patch|delete)\(\s*'([^']+)'/g)) routes.push({ method: match[1], pattern: match[2] });
  }
  const patterns = routes.map((route) => route.pattern);
  assert.ok(patterns.includes('/healthz') && patterns.includes('/sheets/:id/*'), `the router's routes were found: ${patterns.join(', ')}`);
  for (const { method, pattern } of routes) {
    if (pattern === '*') continue; // the fallback: 404 not_found, in the errors table
    // `/sheets/:id/*` -> `/sheets/{id}`; `/_admin/*` -> a row under `/_admin/`.
    const path = pattern.replace(/:(\w+)/g, '{$1}').replace(/\/\*$/, '');
    const row = rows.find((cells) => {
      const cell = cells[0].replaceAll('`', '');
      return cell === path || (path !== '/' && cell.startsWith(path + '/'));
    });
    assert.ok(row !== undefined, `docs/api.md's paths table has no row for ${pattern}`);
    if (method !== 'all') assert.ok(row[1].includes('`' + method.toUpperCase() + '`'), `docs/api.md does not give ${pattern} the method ${method.toUpperCase()}`);
  }
});

test('every path shape of the engine has a row with each of its methods', () => {
  // The OpenAPI document lists the shapes (lib/openapi.ts); the parser says which methods each takes.
  const workbook: Workbook = { tabs: [{ name: 'People', rows: [{ text: ['Name'], value: ['Name'] }, { text: ['Ann'], value: ['Ann'] }] }] };
  const paths = buildOpenApi(workbook, { id: 'demo', keyed: false, writable: true }).paths as JsonObject;
  const shapes = Object.keys(paths).filter((path) => !path.startsWith('/sheets/demo/tabs/'));
  assert.ok(shapes.length >= 9, `the document's paths were read: ${shapes.join(', ')}`);
  // The document's one `/{position}` path is the contract's `/{index}`, `/{start}:{end}` and
  // `/{start}:` (lib/openapi/paths.ts); its writes narrow `position` to an index.
  const POSITIONS = [['{index}', '0'], ['{start}:{end}', '0:1'], ['{start}:', '0:']];
  for (const shape of shapes) {
    const operations = Object.entries(paths[shape] as Record<string, JsonObject>).filter(([key]) => /^[a-z]+$/.test(key) && key !== 'parameters');
    const expanded = shape.includes('{position}') ? POSITIONS.map(([name, value]) => [shape.replace('{position}', name), shape.replace('{position}', value)]) : [[shape, shape]];
    for (const [documentedShape, example] of expanded) {
      const template = documentedShape.replace('/sheets/demo', '/sheets/{id}');
      const slice = documentedShape.includes(':');
      const narrowed = (operation: JsonObject) => ((operation.parameters ?? []) as unknown as JsonObject[]).some((parameter) => parameter.name === 'position' && (parameter.schema as JsonObject)?.type === 'integer');
      const documented = operations.filter(([, operation]) => !(slice && narrowed(operation))).map(([key]) => key.toUpperCase());
      const url = example.replace('{column}', 'Name').replace('{value}', 'Ann');
      const parsed = parseRequest({ method: 'GET', url });
      // A shape the engine parses takes its methods and OPTIONS (answered 204 with Allow) on top.
      const methods = new Set(isApiError(parsed) ? documented : [...documented, ...allowedMethods(parsed.target), 'OPTIONS']);
      const row = pathRow(template);
      assert.ok(row !== undefined, `docs/api.md's paths table has no row for ${template}`);
      for (const method of methods) assert.ok(row[1].includes('`' + method + '`'), `docs/api.md does not give ${template} the method ${method}`);
    }
  }
  assert.ok(doc.includes('`/sheets/{id}/tabs/{Tab}`'), 'docs/api.md says that every path takes the /tabs/{Tab} prefix');
});

test('every read parameter of lib/parse-request.ts has a row, and every _format and /query operator is named', async () => {
  const source = await readFile(new URL('lib/parse-request.ts', ROOT), 'utf8');
  const reserved = /const RESERVED = \[([^\]]*)\]/.exec(source);
  assert.ok(reserved !== null, 'lib/parse-request.ts lists its read parameters in RESERVED');
  const names = [...reserved[1].matchAll(/'([^']+)'/g)].map((match) => match[1]);
  assert.ok(names.length >= 5, `the read parameters were read: ${names.join(', ')}`);
  for (const name of names) assert.ok(pathRow(name) !== undefined, `docs/api.md's parameters table has no row for ${name}`);
  for (const format of FORMATS) assert.ok(pathRow(format) !== undefined, `docs/api.md's formats table has no row for ${format}`);
  for (const operator of OPERATORS) assert.ok(doc.includes('`__' + operator + '`'), `docs/api.md does not name the operator __${operator}`);
});

test('every header CORS exposes to scripts is described', () => {
  const headers = EXPOSED_HEADERS.split(', ');
  assert.ok(headers.length > 5);
  for (const header of headers) {
    assert.ok(rows.some((cells) => cells[0].includes('`' + header + '`')), `docs/api.md's headers tables have no row for ${header}`);
  }
});
