// spreadsheets.get and spreadsheets.batchUpdate:
// `GET /v4/spreadsheets/{id}?ranges=Sheet1!A1:C3&includeGridData=true` -> Spreadsheet with
// sheets[].data[].rowData[].values[] CellData; `POST /v4/spreadsheets/{id}:batchUpdate
// {"requests": [{"deleteDimension": {"range": {"sheetId": 0, "dimension": "ROWS", "startIndex": 3, "endIndex": 4}}}]}`.
// Like Google's JSON, fields holding their default (sheetId 0, index 0, startRow 0) are left out.
import type { GridBox } from './a1.ts';
import { badRequest } from './errors.ts';
import { insertRows, MAX_CELL_CHARACTERS } from './grid-io.ts';
import { boolParam } from './options.ts';
import { SheetReader } from './render.ts';
import { clampToGrid, getCell, newSheet, resolveRange, mergesAfterDelete, setCell, usedExtent, type ExtendedValue, type Sheet, type Spreadsheet } from './store.ts';
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
      const merges = sheet.merges.length === 0 ? {} : { merges: sheet.merges.map((merge) => ({ sheetId: sheet.sheetId, ...merge })) };
      if (!withGridData) return { properties, ...merges };
      const boxes = ranges.filter((range) => range.sheet === sheet).map((range) => clampToGrid(range));
      const whole = { startRow: 0, endRow: sheet.rowCount, startColumn: 0, endColumn: sheet.columnCount };
      return { properties, ...merges, data: (boxes.length === 0 ? [whole] : boxes).map((box) => gridData(sheet, box)) };
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
      mergesAfterDelete(sheet, start, end);
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
  // Cells from `start` (sheetId, rowIndex, columnIndex): each RowData's values in order. `fields`
  // says what is written: `userEnteredValue` (an absent value clears the cell), and/or
  // `userEnteredFormat.numberFormat` (an absent format removes it). Past the grid's edge: 400, as Google.
  updateCells: (spreadsheet, payload, where) => {
    const start = (payload.start ?? {}) as { sheetId?: unknown; rowIndex?: unknown; columnIndex?: unknown };
    const sheet = sheetById(spreadsheet, start.sheetId, where);
    const row0 = start.rowIndex ?? 0;
    const column0 = start.columnIndex ?? 0;
    if (!Number.isInteger(row0) || !Number.isInteger(column0) || (row0 as number) < 0 || (column0 as number) < 0) throw badRequest(`${where}: start must hold non-negative rowIndex and columnIndex`);
    const fields = typeof payload.fields === 'string' ? payload.fields.split(',').map((field) => field.trim()) : [];
    const values = fields.includes('userEnteredValue') || fields.includes('*');
    const formats = fields.includes('userEnteredFormat.numberFormat') || fields.includes('userEnteredFormat') || fields.includes('*');
    if (!values && !formats) throw badRequest(`${where}: fields must name userEnteredValue and/or userEnteredFormat.numberFormat (the emulator supports those)`);
    const rows = Array.isArray(payload.rows) ? (payload.rows as { values?: unknown }[]) : [];
    rows.forEach((rowData, i) => {
      const cells = Array.isArray(rowData?.values) ? (rowData.values as Record<string, unknown>[]) : [];
      const r = (row0 as number) + i;
      if (cells.length > 0 && r >= sheet.rowCount) throw badRequest(`${where}: Range (${sheet.title}!${r + 1}) exceeds grid limits. Max rows: ${sheet.rowCount}`);
      cells.forEach((data, j) => {
        const c = (column0 as number) + j;
        if (c >= sheet.columnCount) throw badRequest(`${where}: Range exceeds grid limits. Max columns: ${sheet.columnCount}`);
        const previous = getCell(sheet, r, c);
        const entered = values ? extendedValue((data ?? {}).userEnteredValue, `${where}.rows[${i}].values[${j}]`) : previous?.entered;
        const numberFormat = ((data ?? {}).userEnteredFormat as { numberFormat?: { type?: unknown; pattern?: unknown } } | undefined)?.numberFormat;
        const format = formats ? (numberFormat === undefined ? undefined : { type: String(numberFormat.type ?? 'NUMBER'), ...(typeof numberFormat.pattern === 'string' ? { pattern: numberFormat.pattern } : {}) }) : previous?.format;
        // A format alone on an empty cell is not kept (the emulator's cells hold a value).
        setCell(sheet, r, c, entered === undefined ? undefined : format === undefined ? { entered } : { entered, format });
      });
    });
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

/** An ExtendedValue as sent: exactly one of numberValue, stringValue, boolValue, formulaValue; absent clears. */
function extendedValue(value: unknown, where: string): ExtendedValue | undefined {
  if (value === undefined || value === null) return undefined;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length !== 1) throw badRequest(`${where}.userEnteredValue: exactly one kind of value must be set`);
  const [kind, inner] = entries[0];
  if (kind === 'numberValue' && typeof inner === 'number' && Number.isFinite(inner)) return { numberValue: inner };
  if (kind === 'boolValue' && typeof inner === 'boolean') return { boolValue: inner };
  if ((kind === 'stringValue' || kind === 'formulaValue') && typeof inner === 'string') {
    if (inner.length > MAX_CELL_CHARACTERS) throw badRequest(`Your input contains more than the maximum of ${MAX_CELL_CHARACTERS} characters in a single cell.`);
    return kind === 'stringValue' ? { stringValue: inner } : { formulaValue: inner };
  }
  throw badRequest(`${where}.userEnteredValue: unsupported ${kind}`);
}

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
