// GET /sheets/demo?_format=split -> {"index": ["0", "4"], "columns": [...], "data": [[...]]}.
// The six answer shapes (pandas orient names), written straight to JSON text. Index labels are
// the rows' data indexes as strings, so a client can PATCH what it read.
import { cellJson, type Table } from './table.ts';

export const FORMATS = ['records', 'dict', 'list', 'series', 'split', 'index'] as const;
export type Format = (typeof FORMATS)[number];

export function isFormat(name: string): name is Format {
  return (FORMATS as readonly string[]).includes(name);
}

/** The rows at `indexes` (data-row indexes, in answer order) as JSON text in `format`. */
export function formatRows(table: Table, indexes: readonly number[], format: Format, raw: boolean): string {
  switch (format) {
    case 'records':
      return recordsJson(table, indexes, raw);
    case 'index':
      return '{' + indexes.map((index) => `"${index}":` + table.rowJson(index, raw)).join(',') + '}';
    case 'dict':
      return columnsJson(table, (position) => '{' + indexes.map((index) => `"${index}":` + cellJson(table.row(index), position, raw)).join(',') + '}');
    case 'list':
    case 'series':
      return columnsJson(table, (position) => '[' + indexes.map((index) => cellJson(table.row(index), position, raw)).join(',') + ']');
    case 'split': {
      const data = indexes.map((index) => {
        const row = table.row(index);
        return '[' + table.columns.map((column) => cellJson(row, column.position, raw)).join(',') + ']';
      });
      return `{"index":[${indexes.map((index) => `"${index}"`).join(',')}],"columns":${JSON.stringify(table.columns.map((column) => column.name))},"data":[${data.join(',')}]}`;
    }
  }
}

export function recordsJson(table: Table, indexes: readonly number[], raw: boolean): string {
  return '[' + indexes.map((index) => table.rowJson(index, raw)).join(',') + ']';
}

function columnsJson(table: Table, columnJson: (position: number) => string): string {
  return '{' + table.columns.map((column) => JSON.stringify(column.name) + ':' + columnJson(column.position)).join(',') + '}';
}
