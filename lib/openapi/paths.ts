// The path items of one tab, under `/sheets/demo` (the first tab) or `/sheets/demo/tabs/Staff`:
// rows, `/{position}` (`/3`, `/3:10`, `/3:`), `/search`, `/query`, `/aggregate` and
// `/{column}/{value}`, with their methods. Writes are left out for a connection that cannot write.
import { READ_PARAMETERS, ref, type JsonObject } from './components.ts';
import { aggregate, options, read, write, type OperationContext } from './operations.ts';

export interface TabPaths extends OperationContext {
  /** `/sheets/demo` or `/sheets/demo/tabs/Staff` (percent-encoded). */
  readonly base: string;
  readonly tabName: string;
  readonly columns: readonly string[];
  readonly writable: boolean;
  /** The first tab's unprefixed paths cannot filter a column named `tabs`: `/tabs/x` names a tab. */
  readonly unprefixed: boolean;
}

const pathParameter = (name: string, description: string, schema: JsonObject): JsonObject => ({ name, in: 'path', required: true, description, schema });
const ROW_INDEX = { type: 'integer', minimum: 0 };
/**
 * `/3` (one row), `/3:10` and `/3:` (slices) as one path: a URL template matcher takes
 * `{index}` to match `3:10` too, so separate `/{index}` and `/{start}:{end}` paths would be
 * ambiguous (docs/decisions.md, "25: the OpenAPI document").
 */
const POSITION = { oneOf: [ROW_INDEX, { type: 'string', pattern: '^\\d+:\\d*$' }] };
const POSITION_PARAMETERS = ['raw', 'format', 'sort', 'ifNoneMatch', 'noCache'];

/** Each operator of /query (lib/query.ts `OPERATORS`, with issue 25's), as its description says it. */
export const OPERATOR_TEXT: readonly (readonly [readonly string[], string])[] = [
  [['eq', 'ne'], '`__eq(v)` / `__ne(v)`: the displayed text matches / does not match `v` as a filter does (case-insensitive, `*` any run of characters)'],
  [['lt', 'lte', 'gt', 'gte'], '`__lt`, `__lte`, `__gt`, `__gte`: typed comparisons'],
  [['between'], '`__between(a,b)`: `__gte(a)` and `__lte(b)` together'],
  [['in', 'nin'], '`__in(a,b,c)` / `__nin(a,b,c)`: matches one of / none of the values, each as `__eq` matches (`\\,` is a literal comma)'],
  [['contains', 'startswith', 'endswith'], '`__contains(x)`, `__startswith(x)`, `__endswith(x)`: literal text, case-insensitive (`*` is a star there)'],
  [['empty', 'filled'], '`__empty()` / `__filled()`: the cell is empty / not empty'],
];

const TYPED = 'Typed as a spreadsheet\'s filter: with a number operand, only cells holding a number (or numeric text such as `503.60`) satisfy `__lt`, `__lte`, `__gt`, `__gte` and `__between`; with a date operand, only dates (or ISO date text); text compares only with a text operand; an empty cell never does.';
const GROUPS = '`_or=City=Oslo;Age=__gt(65)` is a group of conditions of which at least one must hold (several `_or` must all hold, as must the other conditions); `_case=sensitive` makes every text comparison case-sensitive.';
const SEARCH = 'Each parameter not starting with `_` is a condition on the column it names: the displayed text matches the pattern, case-insensitively, `*` matching any run of characters. Rows matching every condition are answered; a column given twice must match both. `_or=City=Oslo;Name=jo*` is a group of patterns of which at least one must match (several `_or` must all hold); `_case=sensitive` makes every pattern case-sensitive. A column whose name starts with `_` cannot be searched.';
const CONDITIONS = `Each parameter not starting with \`_\` is a condition on the column it names: \`Column=__op(value)\` or \`Column__op=value\`; \`Column=value\` alone means \`__eq\`. ${OPERATOR_TEXT.map(([, text]) => text).join('; ')}. ${TYPED} Conditions combine with AND; a column given twice makes a range (\`Age=__gte(18)&Age=__lt(65)\`). ${GROUPS} An unknown operator is 400 \`invalid_operator\`.`;
const AGGREGATE = `One answer row per group of \`_group\` (one row without it), holding each aggregate of \`_agg\` over the rows that match the conditions. ${CONDITIONS} \`_sort\`, \`_limit\`, \`_offset\`, \`_format\`, \`_raw\` and \`_select\` apply to the answer rows, whose columns are the group columns then each aggregate named as written (\`sum(Amount)\`).`;

/** `/search` and `/query` take a condition per column; a column starting with `_` cannot be one (those are parameters). */
function conditionParameters(columns: readonly string[], description: string): JsonObject[] {
  // A column given twice makes two conditions (a range on /query): an array, sent exploded (the default).
  const schema = { type: 'array', items: { type: 'string' } };
  return columns.filter((column) => !column.startsWith('_')).map((column) => ({ name: column, in: 'query', description, schema }));
}

export function tabPaths(tab: TabPaths): Record<string, JsonObject> {
  const { base, tabName, columns, writable } = tab;
  const quoted = JSON.stringify(tabName);
  const both = (id: string, summary: string, parameters: readonly (string | JsonObject)[]) => ({
    get: read(id, summary, tab, parameters, false),
    head: read(id, summary, tab, parameters, true),
  });
  /** A path of GET and HEAD only: its parameters are the path item's, written once. */
  const readOnlyPath = (id: string, summary: string, parameters: readonly (string | JsonObject)[], description?: string) => {
    const { get, head } = both(id, summary, []);
    const described = description === undefined ? {} : { description };
    return {
      parameters: parameters.map((parameter) => (typeof parameter === 'string' ? ref('parameters', parameter) : parameter)),
      get: { ...get, ...described },
      head: { ...head, ...described },
    };
  };
  const filterColumns = tab.unprefixed ? columns.filter((column) => column !== 'tabs') : columns;
  const paths: Record<string, JsonObject> = {};

  const select = `${tab.key}.select`;
  const reads = [...READ_PARAMETERS, select];
  paths[base] = { ...both('listRows', `Rows of ${quoted}`, reads), options: options('Rows', tab) };
  if (writable) {
    paths[base].post = write('append', 'Rows', `Append rows to ${quoted} (or, with _upsert, update or append them)`, tab);
    paths[base].patch = write('batch', 'Rows', `Batch update of ${quoted}: [{"where": ..., "set": ...}, ...]`, tab);
  }

  const position = pathParameter('position', 'A data row, zero-based (`3`; 0 is the row below the header row; past the last row: 404 `row_not_found`), or a slice: `3:10` is rows 3 up to 10 (exclusive; a start past the end is 400), `3:` rows 3 to the end.', POSITION);
  const oneRow = [pathParameter('position', 'The data row, zero-based (a slice takes no write: 405).', ROW_INDEX)];
  paths[`${base}/{position}`] = {
    parameters: [position],
    ...both('getRows', `One row (\`/3\`, a one-row answer) or a slice (\`/3:10\`, \`/3:\`) of ${quoted}`, [...POSITION_PARAMETERS, select]),
    ...(writable && {
      patch: write('patch', 'Row', `Set columns of one row of ${quoted}`, tab, oneRow),
      put: write('put', 'Row', `Replace one row of ${quoted}`, tab, oneRow),
      delete: write('delete', 'Row', `Delete one row of ${quoted}; rows below move up`, tab, oneRow),
    }),
  };
  const search = conditionParameters(columns, 'A pattern: `*` matches any run of characters.');
  paths[`${base}/search`] = readOnlyPath('search', `Search ${quoted}`, [...reads, 'or', 'case', ...search], SEARCH);
  const comparison = 'A condition, `__gte(18)`, `__in(Oslo,Lima)`, `__empty()`; a bare value means `__eq`.';
  paths[`${base}/query`] = readOnlyPath('query', `Query ${quoted} with comparisons`, [...reads, 'or', 'case', ...conditionParameters(columns, comparison)], CONDITIONS);
  paths[`${base}/aggregate`] = {
    parameters: [
      'aggregate', `${tab.key}.group`, 'or', 'case', 'aggregateSort', 'limit', 'offset', 'raw', 'format', 'aggregateSelect', 'ifNoneMatch', 'noCache',
      ...conditionParameters(columns, comparison),
    ].map((parameter) => (typeof parameter === 'string' ? ref('parameters', parameter) : parameter)),
    get: aggregate(`Aggregates of ${quoted}, per group`, tab, AGGREGATE),
  };

  const columnSchema: JsonObject = filterColumns.length > 0 ? { type: 'string', enum: [...filterColumns] } : { type: 'string' };
  const columnNote = tab.unprefixed && filterColumns.length < columns.length ? ' A column named `tabs` is filtered only under `/tabs/{Tab}/` or through `/search`.' : '';
  paths[`${base}/{column}/{value}`] = {
    parameters: [
      pathParameter('column', `The column to match (exact, case-sensitive; percent-encode \`/\`). Unknown: 400 \`unknown_column\`.${columnNote}`, columnSchema),
      pathParameter('value', 'The displayed text to match, case-insensitively; `*` matches any run of characters (`Jo*`, `*son`).', { type: 'string' }),
    ],
    ...both('listMatching', `Rows of ${quoted} whose column matches the value`, reads),
    ...(writable && {
      patch: write('patch', 'Matching', `Set columns of every matching row of ${quoted}`, tab),
      put: write('put', 'Matching', `Replace every matching row of ${quoted}`, tab),
      delete: write('delete', 'Matching', `Delete every matching row of ${quoted}`, tab),
    }),
  };
  return paths;
}
