// The schemas of one tab, from its visible columns as the engine names them (lib/table.ts):
// `Staff.Row` (what a read answers: every column, as displayed text), `Staff.RawRow` (`_raw=1`),
// `Staff.SelectedRow` (with `_select`: some columns), `Staff.Rows` (a read's answer in any `_format`),
// `Staff.Column` (one of its column names) and `Staff.Write` (a body to POST, PATCH or PUT), and the
// parameters that name its columns, `Staff.select` and `Staff.group`. `Staff` is the tab's
// component key (names.ts); `title` keeps the tab's real name.
import { headers, READ_HEADERS, ref, rowsInEveryFormat, UPSERT_HEADERS, WRITE_HEADERS, type JsonObject } from './components.ts';
import { exactPattern, isKeywordLike, record } from './names.ts';

const CELL = ref('schemas', 'CellValue');
const TEXT: JsonObject = { type: 'string' };

/**
 * An object with one property per column, each of schema `value`. Columns named like a keyword
 * (`$ref`) go to patternProperties (names.ts); `closed` forbids other keys.
 */
function objectOf(columns: readonly string[], value: (column: string) => JsonObject, options: { required: boolean; closed: boolean }): JsonObject {
  const plain = columns.filter((column) => !isKeywordLike(column));
  const keywordLike = columns.filter(isKeywordLike);
  const schema: JsonObject = { type: 'object', properties: record(plain.map((column) => [column, value(column)])) };
  if (keywordLike.length > 0) schema.patternProperties = record(keywordLike.map((column) => [exactPattern(column), value(column)]));
  if (options.required && columns.length > 0) schema.required = [...columns];
  if (options.closed) schema.additionalProperties = false;
  return schema;
}

export interface TabSchemaInput {
  readonly name: string;
  readonly key: string;
  readonly columns: readonly string[];
}

export function tabSchemas(tab: TabSchemaInput): Record<string, JsonObject> {
  const { name, key, columns } = tab;
  const row = ref('schemas', `${key}.Row`);
  const rawRow = ref('schemas', `${key}.RawRow`);
  const eitherRow = { anyOf: [row, rawRow, ref('schemas', `${key}.SelectedRow`)] };
  // dict and list key their values by column: a column is one of the tab's names.
  const column = ref('schemas', `${key}.Column`);
  return {
    [`${key}.Column`]: {
      title: `Columns of ${name}`,
      description: 'A visible column of the tab, as its header names it (exact, case-sensitive).',
      ...(columns.length > 0 ? { type: 'string', enum: [...columns] } : { not: {} }),
    },
    [`${key}.Row`]: {
      title: name,
      description: `A row of the tab ${JSON.stringify(name)}: each visible column's displayed text ("" when empty).`,
      ...objectOf(columns, () => TEXT, { required: true, closed: true }),
    },
    [`${key}.RawRow`]: {
      title: `${name} (_raw=1)`,
      description: `A row of the tab ${JSON.stringify(name)} with \`_raw=1\`: numbers, booleans, ISO 8601 dates and null for empty cells.`,
      ...objectOf(columns, () => CELL, { required: true, closed: true }),
    },
    [`${key}.SelectedRow`]: {
      title: `${name} (_select)`,
      description: `A row of the tab ${JSON.stringify(name)} with \`_select\`: the chosen columns only, in the order given, as text (typed with \`_raw=1\`).`,
      ...objectOf(columns, () => CELL, { required: false, closed: true }),
    },
    [`${key}.Rows`]: {
      title: `Rows of ${name}`,
      description: 'A read\'s answer, in the shape `_format` asks for (records by default).',
      anyOf: rowsInEveryFormat(eitherRow, CELL, column),
    },
    [`${key}.Write`]: {
      title: `${name} (write)`,
      description: 'Column names to values; a value is read as if typed (canonical numbers, TRUE/FALSE, ISO dates), null empties the cell. Keys that are not columns are ignored and named in `Sheetrest-Ignored-Columns` (or, on a connection with `"unknownColumns": "reject"`, refused: 400 `unknown_column`).',
      ...objectOf(columns, () => CELL, { required: false, closed: false }),
      additionalProperties: CELL,
    },
  };
}

/**
 * `_select=Name,Age` and `_group=City`: comma-separated columns of the tab (`explode: false`),
 * so a client offers its column names and a generator types them.
 */
export function tabParameters(key: string): Record<string, JsonObject> {
  const columns = (name: string, description: string): JsonObject => ({
    name,
    in: 'query',
    required: false,
    description,
    style: 'form',
    explode: false,
    schema: { type: 'array', items: ref('schemas', `${key}.Column`), minItems: 1 },
  });
  return {
    [`${key}.select`]: columns('_select', 'Only these columns, in this order, in every `_format`; conditions and `_sort` may still use the others. An unknown column is 400 `unknown_column`.'),
    [`${key}.group`]: columns('_group', 'One answer row per distinct combination of these columns\' displayed values (case-insensitive unless `_case=sensitive`); without it, one row over every matching row.'),
  };
}

/** The success responses of one tab: `Staff.Rows` (a read), `Staff.Created`, `Staff.Written`, `Staff.Removed`. */
export function tabResponses(key: string): Record<string, JsonObject> {
  const json = (schema: JsonObject) => ({ 'application/json': { schema } });
  const rows = { type: 'array', items: ref('schemas', `${key}.Row`) };
  return {
    [`${key}.Rows`]: { description: 'The rows.', headers: headers(...READ_HEADERS), content: json(ref('schemas', `${key}.Rows`)) },
    [`${key}.Created`]: {
      description: 'Appended: the written row (for an object) or rows (for an array), as strings; with `_upsert`, the rows after the write, in body order, some of them updated.',
      headers: headers(...UPSERT_HEADERS),
      content: json({ anyOf: [ref('schemas', `${key}.Row`), rows] }),
    },
    [`${key}.Upserted`]: {
      description: 'An upsert that appended nothing: the rows after the write (an object for an object), in body order.',
      headers: headers(...UPSERT_HEADERS),
      content: json({ anyOf: [ref('schemas', `${key}.Row`), rows] }),
    },
    [`${key}.Batch`]: {
      description: 'A batch update: one array per item, the rows it chose as they are after the whole batch.',
      headers: headers(...WRITE_HEADERS),
      content: json({ type: 'array', items: rows }),
    },
    [`${key}.Written`]: { description: 'The rows after the write (`[]` when nothing matched).', headers: headers(...WRITE_HEADERS), content: json(rows) },
    [`${key}.Removed`]: { description: 'The removed rows as they were (`[]` when nothing matched).', headers: headers(...WRITE_HEADERS), content: json(rows) },
  };
}
