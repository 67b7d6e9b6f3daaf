// The headers the engine owns: X-Sheet-Rows and X-Sheet-Columns describe the addressed tab
// (after the write, for a write). The server adds the quota and CORS headers.
import type { Table } from './table.ts';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export function sheetHeaders(table: Table): Record<string, string> {
  return { 'X-Sheet-Rows': String(table.rowCount), 'X-Sheet-Columns': String(table.columns.length) };
}
