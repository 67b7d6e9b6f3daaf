// sheetrest's engine, for embedding: answer HTTP-shaped requests against an in-memory workbook.
//   const result = handle(workbook, { method: 'GET', url: '/sheets/demo/Name/ann*' });
//   result.status, result.headers, result.body (JSON text); for writes result.plan and result.workbook.
export { handle, execute, findTab, type EngineResult } from './engine.ts';
export { parseRequest, allowedMethods, OPERATIONS, type EngineRequest, type EngineOptions, type ParsedRequest, type Operation, type Target, type Action } from './parse-request.ts';
export { applyPlan, applyPlanToTab, dataRowToSheetRow, gridRowOf } from './apply-plan.ts';
export { isEmptyPlan, type WritePlan, type ReplacedRow } from './write-plan.ts';
export { ERRORS, ApiError, apiError, isApiError, isErrorCode, type ErrorCode } from './errors.ts';
export { FORMATS, type Format } from './format.ts';
export { OPERATORS, type Operator } from './query.ts';
export { AGGREGATE_FUNCTIONS, type AggregateFunction, type AggregateCall } from './aggregate/parse.ts';
export { coerceText, coerceWritten, displayText, parseIsoDate, parseCanonicalNumber } from './coerce.ts';
export { tableOf, Table, type Column } from './table.ts';
export { gridRows, Rows, CHUNK_ROWS } from './rows.ts';
export { compileMatcher, fold } from './match.ts';
export { sheetDate, isSheetDate, createInterner, headerBlock, headerRowIndex, EMPTY_ROW, type Interner, type Workbook, type Tab, type TabVisibility, type SheetRow, type SheetDate, type TypedValue } from './workbook.ts';
export { tabVersion, rowVersion, workbookVersion, entityTags, noneMatchHits, validatorOf } from './version.ts';
export { buildOpenApi, isOpenApiPath, OPENAPI_VERSION, type OpenApiConnection, type QuotaPeriod } from './openapi.ts';
