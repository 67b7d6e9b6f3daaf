// spreadsheets.get and spreadsheets.batchUpdate:
// `GET /v4/spreadsheets/{id}?ranges=Sheet1!A1:C3&includeGridData=true` -> Spreadsheet with
// sheets[].data[].rowData[].values[] CellData; `POST /v4/spreadsheets/{id}:batchUpdate
// {"requests": [{"deleteDimension": {"range": {"sheetId": 0, "dimension": "ROWS", "startIndex": 3, "endIndex": 4}}}]}`.
// Like Google's JSON, fields holding their default (sheetId 0, index 0, startRow 0) are left out.
import type { GridBox } from './a1.ts';
import { badRequest } from './errors.ts';
import { insertRows } from './grid-io.ts';
import { boolParam } from './options.ts';
import { SheetReader } from './render.ts';
import { clampToGrid, getCell, newSheet, resolveRange, usedExtent, type Sheet, type Spreadsheet } from './store.ts';
import type { Call } from './values-api.ts';

export function getSpreadsheet(call: Call, withGridData: boolean): unknown {
  const { spreadsheet } = call;
  const ranges = call.query.getAll('ranges').map((range) => resolveRange(spreadsheet, range));
  const sheets = [...spreadsheet.sheets].sort((a, b) => a.index - b.index).filter((sheet) => ranges.length === 0 || ranges.some((range) => range.sheet === sheet));
  return {
    spreadsheetId: spreadsheet.spreadsheetId,
    properties: { title: spreadsheet.title, locale: 'en_US', autoRecalc: 'ON_CHANGE', timeZone: 'Etc/GMT' },
    sheets: sheets.map((sheet) => {
      const properties = sheetProperties(sheet);
      if (!withGridData) return { properties };
      const boxes = ranges.filter((range) => range.sheet === sheet).map((range) => clampToGrid(range));
      const whole = { startRow: 0, endRow: sheet.rowCount, startColumn: 0, endColumn: sheet.columnCount };
      return { properties, data: (boxes.length === 0 ? [whole] : boxes).map((box) => gridData(sheet, box)) };
    }),
    spreadsheetUrl: `https://docs.google.com/spreadsheets/d/${spreadsheet.spreadsheetId}/edit`,
  };
}

/** includeGridData is ignored when a field mask is set, as documented: the mask decides. */
export function wantsGridData(query: URLSearchParams): boolean {
  return query.has('fields') || boolParam(query.get('includeGridData'));
}

export function sheetProperties(sheet: Sheet): Record<string, unknown> {
  return omitZero({ sheetId: sheet.sheetId, title: sheet.title, index: sheet.index, sheetType: 'GRID', gridProperties: { rowCount: sheet.rowCount, columnCount: sheet.columnCount } });
}

function omitZero(object: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== 0));
}

function gridData(sheet: Sheet, box: GridBox): Record<string, unknown> {
  const reader = new SheetReader(sheet);
  const used = usedExtent(sheet);
  const rowData: { values?: Record<string, unknown>[] }[] = [];
  for (let r = box.startRow; r < Math.min(box.endRow, used.rows); r++) {
    const values: Record<string, unknown>[] = [];
    for (let c = box.startColumn; c < Math.min(box.endColumn, used.columns); c++) {
      const cell = getCell(sheet, r, c);
      if (cell === undefined) {
        values.push({});
        continue;
      }
      const format = cell.format === undefined ? {} : { numberFormat: cell.format };
      values.push({
        userEnteredValue: cell.entered,
        effectiveValue: reader.effective(r, c),
        formattedValue: reader.formatted(r, c),
        ...(cell.format === undefined ? {} : { userEnteredFormat: format, effectiveFormat: format }),
      });
    }
    // Trailing empty cells and rows are left out, as in Google's answers.
    while (values.length > 0 && Object.keys(values[values.length - 1]).length === 0) values.pop();
    rowData.push(values.length === 0 ? {} : { values });
  }
  while (rowData.length > 0 && rowData[rowData.length - 1].values === undefined) rowData.pop();
  return { ...omitZero({ startRow: box.startRow, startColumn: box.startColumn }), ...(rowData.length === 0 ? {} : { rowData }) };
}

/** Applies every request to `spreadsheet` (a draft the caller discards on error: all or nothing). */
export function batchUpdate(call: Call): unknown {
  const requests = call.body.requests;
  if (!Array.isArray(requests)) throw badRequest("Invalid value at 'requests': expected a list of Request");
  const replies = requests.map((request: unknown, i: number) => {
    const entries = typeof request === 'object' && request !== null ? Object.entries(request) : [];
    if (entries.length !== 1) throw badRequest(`Invalid requests[${i}]: exactly one kind of request must be set`);
    const [kind, payload] = entries[0];
    const apply = REQUESTS[kind];
    if (apply === undefined) throw badRequest(`Invalid JSON payload received. Unknown name "${kind}" at 'requests[${i}]': the emulator supports ${Object.keys(REQUESTS).join(', ')}.`);
    return apply(call.spreadsheet, (payload ?? {}) as Record<string, unknown>, `Invalid requests[${i}].${kind}`);
  });
  return { spreadsheetId: call.spreadsheet.spreadsheetId, replies };
}

type RequestHandler = (spreadsheet: Spreadsheet, payload: Record<string, unknown>, where: string) => Record<string, unknown>;

const REQUESTS: Readonly<Record<string, RequestHandler>> = {
  deleteDimension: (spreadsheet, payload, where) => {
    const { sheet, dimension, start, end } = dimensionRange(spreadsheet, payload, where);
    const size = dimension === 'ROWS' ? sheet.rowCount : sheet.columnCount;
    if (end > size) throw badRequest(`${where}: endIndex ${end} is past the end of the sheet (${size} ${dimension.toLowerCase()})`);
    if (end - start === size) throw badRequest(`${where}: You can't delete all the ${dimension.toLowerCase()} on the sheet.`);
    // Rows (or cells) below the deleted span shift up; formulas are not rewritten.
    if (dimension === 'ROWS') {
      sheet.rows.splice(start, end - start);
      sheet.rowCount -= end - start;
    } else {
      for (const row of sheet.rows) row?.splice(start, end - start);
      sheet.columnCount -= end - start;
    }
    return {};
  },
  insertDimension: (spreadsheet, payload, where) => {
    const { sheet, dimension, start, end } = dimensionRange(spreadsheet, payload, where);
    if (dimension === 'ROWS') {
      insertRows(sheet, start, end - start);
    } else {
      for (const row of sheet.rows) if (row !== undefined && start < row.length) row.splice(start, 0, ...new Array<undefined>(end - start));
      sheet.columnCount += end - start;
    }
    return {};
  },
  addSheet: (spreadsheet, payload, where) => {
    const properties = (payload.properties ?? {}) as { title?: unknown; sheetId?: unknown; index?: unknown };
    const title = typeof properties.title === 'string' ? properties.title : `Sheet${spreadsheet.sheets.length + 1}`;
    if (spreadsheet.sheets.some((sheet) => sheet.title.toLowerCase() === title.toLowerCase())) {
      throw badRequest(`${where}: A sheet with the name "${title}" already exists. Please enter another name.`);
    }
    const sheetId = typeof properties.sheetId === 'number' ? properties.sheetId : nextSheetId(spreadsheet);
    if (spreadsheet.sheets.some((sheet) => sheet.sheetId === sheetId)) throw badRequest(`${where}: A sheet with id ${sheetId} already exists.`);
    const index = typeof properties.index === 'number' ? Math.min(properties.index, spreadsheet.sheets.length) : spreadsheet.sheets.length;
    for (const sheet of spreadsheet.sheets) if (sheet.index >= index) sheet.index++;
    const sheet = newSheet(sheetId, title, index);
    spreadsheet.sheets.push(sheet);
    return { addSheet: { properties: sheetProperties(sheet) } };
  },
  deleteSheet: (spreadsheet, payload, where) => {
    const sheet = sheetById(spreadsheet, payload.sheetId, where);
    if (spreadsheet.sheets.length === 1) throw badRequest(`${where}: You can't remove all the sheets in a document.`);
    spreadsheet.sheets = spreadsheet.sheets.filter((other) => other !== sheet);
    for (const other of spreadsheet.sheets) if (other.index > sheet.index) other.index--;
    return {};
  },
};

function dimensionRange(spreadsheet: Spreadsheet, payload: Record<string, unknown>, where: string) {
  const range = (payload.range ?? {}) as { sheetId?: unknown; dimension?: unknown; startIndex?: unknown; endIndex?: unknown };
  const sheet = sheetById(spreadsheet, range.sheetId, where);
  if (range.dimension !== 'ROWS' && range.dimension !== 'COLUMNS') throw badRequest(`${where}: range.dimension must be ROWS or COLUMNS`);
  // proto3 defaults: an absent startIndex (or sheetId) is 0.
  const start = range.startIndex ?? 0;
  const end = range.endIndex ?? 0;
  if (!Number.isInteger(start) || !Number.isInteger(end) || (start as number) < 0 || (end as number) <= (start as number)) {
    throw badRequest(`${where}: Invalid dimension range: startIndex (${String(start)}) must be less than endIndex (${String(end)})`);
  }
  return { sheet, dimension: range.dimension, start: start as number, end: end as number };
}

function sheetById(spreadsheet: Spreadsheet, id: unknown, where: string): Sheet {
  const sheetId = id ?? 0;
  const sheet = spreadsheet.sheets.find((candidate) => candidate.sheetId === sheetId);
  if (sheet === undefined) throw badRequest(`${where}: No grid with id: ${String(sheetId)}`);
  return sheet;
}

export function nextSheetId(spreadsheet: Spreadsheet): number {
  // The first sheet of a new spreadsheet is 0, as in Google; later ones get large ids like Google's.
  if (spreadsheet.sheets.length === 0) return 0;
  return Math.max(...spreadsheet.sheets.map((sheet) => sheet.sheetId), 1_000_000_000) + 7919;
}
