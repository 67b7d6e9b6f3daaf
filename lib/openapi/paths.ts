// The path items of one tab, under `/sheets/demo` (the first tab) or `/sheets/demo/tabs/Staff`:
// rows, `/{index}`, `/{start}:{end}`, `/{start}:`, `/search`, `/query` and `/{column}/{value}`,
// with their methods. Writes are left out for a connection that cannot write.
import { READ_PARAMETERS, ref, type JsonObject } from './components.ts';
import { options, read, write, type OperationContext } from './operations.ts';

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
const SLICE_PARAMETERS = ['raw', 'format', 'sort', 'ifNoneMatch', 'noCache'];

const SEARCH = 'Each parameter not starting with `_` is a condition on the column it names: the displayed text matches the pattern, case-insensitively, `*` matching any run of characters. Rows matching every condition are answered; a column given twice must match both. A column whose name starts with `_` cannot be searched.';
const QUERY = 'Each parameter not starting with `_` is a condition on the column it names: `Column=__op(value)` or `Column__op=value`, with `__eq`, `__ne` (match like a filter) or `__lt`, `__lte`, `__gt`, `__gte` (numbers, dates, else text case-insensitively; an empty cell never satisfies them); `Column=value` alone means `__eq`. Conditions combine with AND; a column given twice makes a range (`Age=__gte(18)&Age=__lt(65)`). An unknown operator is 400 `invalid_operator`.';

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

  paths[base] = { ...both('listRows', `Rows of ${quoted}`, READ_PARAMETERS), options: options('Rows', tab) };
  if (writable) {
    paths[base].post = write('append', 'Rows', `Append rows to ${quoted} (or, with _upsert, update or append them)`, tab);
    paths[base].patch = write('batch', 'Rows', `Batch update of ${quoted}: [{"where": ..., "set": ...}, ...]`, tab);
  }

  paths[`${base}/{index}`] = {
    parameters: [pathParameter('index', 'Data row, zero-based: 0 is the row below the header row. Past the last row: 404 `row_not_found`.', ROW_INDEX)],
    ...both('getRow', `One row of ${quoted}, as a one-row answer`, SLICE_PARAMETERS),
    ...(writable && {
      patch: write('patch', 'Row', `Set columns of one row of ${quoted}`, tab),
      put: write('put', 'Row', `Replace one row of ${quoted}`, tab),
      delete: write('delete', 'Row', `Delete one row of ${quoted}; rows below move up`, tab),
    }),
  };
  paths[`${base}/{start}:{end}`] = readOnlyPath('getSlice', `Rows start up to end of ${quoted}`, [
    pathParameter('start', 'First row, zero-based.', ROW_INDEX),
    pathParameter('end', 'Row to stop before (exclusive); start > end is 400.', ROW_INDEX),
    ...SLICE_PARAMETERS,
  ]);
  paths[`${base}/{start}:`] = readOnlyPath('getSliceToEnd', `Rows from start to the end of ${quoted}`, [pathParameter('start', 'First row, zero-based.', ROW_INDEX), ...SLICE_PARAMETERS]);
  const search = conditionParameters(columns, 'A pattern: `*` matches any run of characters.');
  paths[`${base}/search`] = readOnlyPath('search', `Search ${quoted}`, [...READ_PARAMETERS, ...search], SEARCH);
  const query = conditionParameters(columns, 'A comparison, `__gte(18)`; a bare value means `__eq`.');
  paths[`${base}/query`] = readOnlyPath('query', `Query ${quoted} with comparisons`, [...READ_PARAMETERS, ...query], QUERY);

  const columnSchema: JsonObject = filterColumns.length > 0 ? { type: 'string', enum: [...filterColumns] } : { type: 'string' };
  const columnNote = tab.unprefixed && filterColumns.length < columns.length ? ' A column named `tabs` is filtered only under `/tabs/{Tab}/` or through `/search`.' : '';
  paths[`${base}/{column}/{value}`] = {
    parameters: [
      pathParameter('column', `The column to match (exact, case-sensitive; percent-encode \`/\`). Unknown: 400 \`unknown_column\`.${columnNote}`, columnSchema),
      pathParameter('value', 'The displayed text to match, case-insensitively; `*` matches any run of characters (`Jo*`, `*son`).', { type: 'string' }),
    ],
    ...both('listMatching', `Rows of ${quoted} whose column matches the value`, READ_PARAMETERS),
    ...(writable && {
      patch: write('patch', 'Matching', `Set columns of every matching row of ${quoted}`, tab),
      put: write('put', 'Matching', `Replace every matching row of ${quoted}`, tab),
      delete: write('delete', 'Matching', `Delete every matching row of ${quoted}`, tab),
    }),
  };
  return paths;
}
