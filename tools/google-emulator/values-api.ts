// The spreadsheets.values methods: get, batchGet, update, batchUpdate, append and clear, e.g.
// `POST /v4/spreadsheets/{id}/values/Sheet1!A1:append?valueInputOption=USER_ENTERED&insertDataOption=INSERT_ROWS`
// -> {"spreadsheetId", "tableRange": "Sheet1!A1:C5", "updates": {"updatedRange": "Sheet1!A6:C6", ...}}.
import { formatA1 } from './a1.ts';
import { badRequest } from './errors.ts';
import { checkValues, findTable, inputRows, insertRows, readValues, writeRows, type UpdateValuesResponse } from './grid-io.ts';
import { boolParam, DIMENSIONS, enumParam, INSERT_DATA_OPTIONS, inputOption, readOptions, type ReadOptions } from './options.ts';
import { resolveRange, setCell, type ResolvedRange, type Spreadsheet } from './store.ts';

/** One parsed API call: the spreadsheet it names, its query and its JSON body. */
export interface Call {
  readonly spreadsheet: Spreadsheet;
  readonly query: URLSearchParams;
  readonly body: Record<string, unknown>;
}

const fromQuery = (call: Call) => (name: string) => call.query.get(name) ?? undefined;

export function getValues(call: Call, range: string): unknown {
  return readValues(resolveRange(call.spreadsheet, range), readOptions(fromQuery(call)));
}

export function batchGetValues(call: Call): unknown {
  const options = readOptions(fromQuery(call));
  const ranges = call.query.getAll('ranges');
  const valueRanges = ranges.map((range) => readValues(resolveRange(call.spreadsheet, range), options));
  return valueRanges.length === 0 ? { spreadsheetId: call.spreadsheet.spreadsheetId } : { spreadsheetId: call.spreadsheet.spreadsheetId, valueRanges };
}

export function updateValues(call: Call, range: string): unknown {
  const resolved = resolveRange(call.spreadsheet, range);
  checkBodyRange(call, resolved, call.body.range);
  const option = inputOption(call.query.get('valueInputOption'));
  const rows = bodyRows(call.body);
  const result = writeRows(call.spreadsheet.spreadsheetId, resolved, rows, option, resolved.bounded);
  return withData(call, result, boolParam(call.query.get('includeValuesInResponse')), readOptions(fromQuery(call), 'response'));
}

export function batchUpdateValues(call: Call): unknown {
  const { body } = call;
  const option = inputOption(body.valueInputOption);
  const responseOptions = readOptions((name) => body[name], 'response');
  const include = boolParam(body.includeValuesInResponse);
  if (!Array.isArray(body.data)) throw badRequest("Invalid value at 'data': expected a list of ValueRange");
  const responses = body.data.map((item: unknown, i: number) => {
    if (typeof item !== 'object' || item === null || typeof (item as { range?: unknown }).range !== 'string') throw badRequest(`Invalid data[${i}]: a ValueRange with a range is required`);
    const valueRange = item as Record<string, unknown>;
    const resolved = resolveRange(call.spreadsheet, valueRange.range as string);
    const result = writeRows(call.spreadsheet.spreadsheetId, resolved, bodyRows(valueRange, `data[${i}].values`), option, resolved.bounded);
    return { sheet: resolved.sheet.title, response: withData(call, result, include, responseOptions) };
  });
  const total = (key: 'updatedRows' | 'updatedColumns' | 'updatedCells') => responses.reduce((sum, { response }) => sum + response[key], 0);
  return {
    spreadsheetId: call.spreadsheet.spreadsheetId,
    totalUpdatedRows: total('updatedRows'),
    totalUpdatedColumns: total('updatedColumns'),
    totalUpdatedCells: total('updatedCells'),
    totalUpdatedSheets: new Set(responses.map(({ sheet }) => sheet)).size,
    responses: responses.map(({ response }) => response),
  };
}

/**
 * values.append: finds the table in the range (see findTable), writes after its last row starting
 * at its first column, or at the range's top-left when the range holds no data. OVERWRITE writes
 * over whatever is there (growing the grid past its end); INSERT_ROWS first inserts rows.
 */
export function appendValues(call: Call, range: string): unknown {
  const resolved = resolveRange(call.spreadsheet, range);
  checkBodyRange(call, resolved, call.body.range);
  const option = inputOption(call.query.get('valueInputOption'));
  const insert = enumParam(call.query.get('insertDataOption') ?? undefined, 'insertDataOption', INSERT_DATA_OPTIONS, 'OVERWRITE');
  const rows = bodyRows(call.body);
  const { sheet, box } = resolved;
  const table = findTable(sheet, box);
  const start = table === undefined ? { row: box.startRow, column: box.startColumn } : { row: table.endRow, column: table.startColumn };
  if (insert === 'INSERT_ROWS' && rows.length > 0) insertRows(sheet, start.row, rows.length);
  const target: ResolvedRange = { sheet, bounded: false, box: { startRow: start.row, endRow: start.row + rows.length, startColumn: start.column, endColumn: start.column + 1 } };
  const updates = writeRows(call.spreadsheet.spreadsheetId, target, rows, option, false);
  const response = { spreadsheetId: call.spreadsheet.spreadsheetId, ...(table === undefined ? {} : { tableRange: formatA1(sheet.title, table) }) };
  return { ...response, updates: withData(call, updates, boolParam(call.query.get('includeValuesInResponse')), readOptions(fromQuery(call), 'response')) };
}

export function clearValues(call: Call, range: string): unknown {
  const resolved = resolveRange(call.spreadsheet, range);
  const { sheet, box } = resolved;
  for (let r = box.startRow; r < Math.min(box.endRow, sheet.rows.length); r++) {
    for (let c = box.startColumn; c < Math.min(box.endColumn, sheet.rows[r]?.length ?? 0); c++) setCell(sheet, r, c, undefined);
  }
  return { spreadsheetId: call.spreadsheet.spreadsheetId, clearedRange: formatA1(sheet.title, { ...box, endRow: Math.min(box.endRow, sheet.rowCount), endColumn: Math.min(box.endColumn, sheet.columnCount) }) };
}

function bodyRows(body: Record<string, unknown>, where = 'values') {
  const majorDimension = enumParam(body.majorDimension, 'majorDimension', DIMENSIONS, 'ROWS');
  return inputRows(checkValues(body.values, where), majorDimension);
}

/** A body `range`, when sent, must name the same range as the URL. */
function checkBodyRange(call: Call, resolved: ResolvedRange, bodyRange: unknown): void {
  if (bodyRange === undefined || bodyRange === null) return;
  const other = typeof bodyRange === 'string' ? resolveRange(call.spreadsheet, bodyRange) : undefined;
  const same = other !== undefined && other.sheet === resolved.sheet && JSON.stringify(other.box) === JSON.stringify(resolved.box);
  if (!same) throw badRequest(`Requested range and body range do not match: ${String(bodyRange)}`);
}

function withData(call: Call, result: UpdateValuesResponse, include: boolean, options: ReadOptions): UpdateValuesResponse {
  if (!include) return result;
  const updatedData = readValues(resolveRange(call.spreadsheet, result.updatedRange), { ...options, majorDimension: 'ROWS' });
  return { ...result, updatedData };
}
