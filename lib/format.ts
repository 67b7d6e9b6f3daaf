// GET /sheets/demo?_format=split -> {"index": ["0", "4"], "columns": [...], "data": [[...]]}.
// The six answer shapes (pandas orient names), written straight to JSON text. Index labels are
// the rows' data indexes as strings, so a client can PATCH what it read.
import { cellJson, objectJson, type Column, type Table } from './table.ts';

export const FORMATS = ['records', 'dict', 'list', 'series', 'split', 'index'] as const;
export type Format = (typeof FORMATS)[number];

export function isFormat(name: string): name is Format {
  return (FORMATS as readonly string[]).includes(name);
}

/**
 * The rows at `indexes` (data-row indexes, in answer order) as JSON in `format`: text, or for
 * `records`, the default, UTF-8 bytes assembled from each row's kept bytes. `columns`, when
 * not the table's own (`_select=Name,Age`), are written straight from the cells: the kept
 * bytes hold whole rows.
 */
export function formatRows(table: Table, indexes: readonly number[], format: Format, raw: boolean, columns: readonly Column[] = table.columns): string | Uint8Array {
  const whole = columns === table.columns;
  switch (format) {
    case 'records':
      return whole ? recordsBytes(table, indexes, raw) : selectedRecords(table, indexes, columns, raw);
    case 'index':
      return '{' + indexes.map((index) => `"${index}":` + (whole ? table.rowJson(index, raw) : objectJson(columns, table.row(index), raw))).join(',') + '}';
    case 'dict':
      return columnsJson(columns, (position) => '{' + indexes.map((index) => `"${index}":` + cellJson(table.row(index), position, raw)).join(',') + '}');
    case 'list':
    case 'series':
      return columnsJson(columns, (position) => '[' + indexes.map((index) => cellJson(table.row(index), position, raw)).join(',') + ']');
    case 'split': {
      const data = indexes.map((index) => {
        const row = table.row(index);
        return '[' + columns.map((column) => cellJson(row, column.position, raw)).join(',') + ']';
      });
      return `{"index":[${indexes.map((index) => `"${index}"`).join(',')}],"columns":${JSON.stringify(columns.map((column) => column.name))},"data":[${data.join(',')}]}`;
    }
  }
}

/** `[{"Name":"Ann","City":"Lisbon"},...]`: the chosen cells of each row, each key written once per answer. */
function selectedRecords(table: Table, indexes: readonly number[], columns: readonly Column[], raw: boolean): string {
  const keys = columns.map((column, i) => (i === 0 ? '{' : ',') + JSON.stringify(column.name) + ':');
  const positions = columns.map((column) => column.position);
  let json = '[';
  for (let k = 0; k < indexes.length; k++) {
    const row = table.row(indexes[k]);
    if (k > 0) json += ',';
    for (let c = 0; c < keys.length; c++) json += keys[c] + cellJson(row, positions[c], raw);
    json += '}';
  }
  return json + ']';
}

const OPEN_BRACKET = 0x5b;
const COMMA = 0x2c;
const CLOSE_BRACKET = 0x5d;

/** `[row,row,...]` copied once from each row's kept UTF-8, with no string built or encoded. */
export function recordsBytes(table: Table, indexes: readonly number[], raw: boolean): Uint8Array {
  // A read of many rows looks each up twice in the table's list by row index (length, then
  // copy) rather than listing the 250k rows of `*ann*` on 1M rows in an array of their own.
  const byIndex = table.rowsBytesByIndex(indexes, raw);
  const rows = byIndex === null ? table.rowsBytes(indexes, raw) : null;
  const at = (i: number): Uint8Array => (rows === null ? byIndex![indexes[i]]! : rows[i]);
  let length = 2 + Math.max(indexes.length - 1, 0);
  for (let i = 0; i < indexes.length; i++) length += at(i).byteLength;
  const bytes = new Uint8Array(length);
  bytes[0] = OPEN_BRACKET;
  let offset = 1;
  for (let i = 0; i < indexes.length; i++) {
    if (i > 0) bytes[offset++] = COMMA;
    const row = at(i);
    bytes.set(row, offset);
    offset += row.byteLength;
  }
  bytes[offset] = CLOSE_BRACKET;
  return bytes;
}

function columnsJson(columns: readonly Column[], columnJson: (position: number) => string): string {
  return '{' + columns.map((column) => JSON.stringify(column.name) + ':' + columnJson(column.position)).join(',') + '}';
}
