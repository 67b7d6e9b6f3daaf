// The engine end to end: one request against an in-memory workbook -> status, headers and JSON
// body, plus the write plan and the next workbook for a write. No I/O: the server, every source
// and anyone embedding sheetrest get the same answers from here.
import { aggregateTable, unknownAnswerColumn } from './aggregate/answer.ts';
import { applyPlan } from './apply-plan.ts';
import type { WritePlan } from './write-plan.ts';
import { apiError, isApiError, type ApiError } from './errors.ts';
import { formatRows } from './format.ts';
import { sheetHeaders, JSON_CONTENT_TYPE } from './headers.ts';
import { allowedMethods, parseRequest, type EngineOptions, type EngineRequest, type ParsedRequest, type ReadParameters, type Target } from './parse-request.ts';
import { planWrite, rowNotFound } from './plan-write.ts';
import { ifMatchRefusal, matchesAny, notModified, readTag, tabsTag, writeTag } from './preconditions.ts';
import { pageLinks } from './link.ts';
import { isWholeTable, selectedColumns, selectRows } from './select.ts';
import { DEFAULT_TEXT_INDEX_BYTES } from './column-text.ts';
import { builtTable, tableOf, type Table } from './table.ts';
import { headerBlock, type Tab, type Workbook } from './workbook.ts';

export interface EngineResult {
  readonly status: number;
  readonly headers: Record<string, string>;
  /** JSON text; '' when there is none (HEAD, OPTIONS). */
  readonly body: string;
  /** The body as UTF-8 when the engine built it as bytes (row reads): a server sends it as is. */
  readonly bytes?: Uint8Array;
  /** What a write changes; null for reads and for writes that change nothing. */
  readonly plan: WritePlan | null;
  /** The workbook after the write; the same object when nothing was written. */
  readonly workbook: Workbook;
}

/** Parses and answers one request. Never throws. */
export function handle(workbook: Workbook, request: EngineRequest, options: EngineOptions = {}): EngineResult {
  const parsed = parseRequest(request, options);
  if (isApiError(parsed)) return errorResult(parsed, workbook, {});
  return execute(workbook, parsed, options);
}

/** Answers a request parsed earlier (the server parses first to check keys and quota). */
export function execute(workbook: Workbook, request: ParsedRequest, options: EngineOptions = {}): EngineResult {
  if (request.action === 'options') {
    return { status: 204, headers: { Allow: allowedMethods(request.target).join(', ') }, body: '', plan: null, workbook };
  }
  const served = servedWorkbook(workbook, options);
  if (request.target.kind === 'tabs') {
    const tag = tabsTag(served, request, options);
    if (notModified(request, tag) || matchesAny(request)) return notModifiedResult({ ETag: tag }, workbook);
    const tabs = served.tabs.map(tabListing);
    return answer(request, 200, { 'Content-Type': JSON_CONTENT_TYPE, ETag: tag }, JSON.stringify(tabs), null, workbook);
  }
  const tab = findTab(served, request.tab);
  if (isApiError(tab)) return errorResult(tab, workbook, {});
  const table = tableOf(tab);
  table.textIndexRoom = () => textIndexRoom(workbook, options);
  if (request.action === 'read') return read(workbook, tab, table, request, options);

  const refused = ifMatchRefusal(tab, table, request);
  if (refused !== null) return errorResult(refused, workbook, sheetHeaders(table));
  const planned = planWrite(tab, table, request, { formulas: options.formulas ?? false, unknownColumns: options.unknownColumns, rowId: options.rowId, tabs: options.tabs });
  if (isApiError(planned)) return errorResult(planned, workbook, sheetHeaders(table));
  const next = planned.plan === null ? workbook : applyPlan(workbook, planned.plan);
  const nextTab = planned.plan === null ? tab : (findTab(next, tab.name) as Tab);
  const after = tableOf(nextTab);
  const headers = { 'Content-Type': JSON_CONTENT_TYPE, ...sheetHeaders(after), ...planned.headers, ETag: writeTag(nextTab, after, request, options) };
  return answer(request, planned.status, headers, planned.body, planned.plan, next);
}

/**
 * The workbook as the caller sees it: a connection that hides hidden tabs, and a key limited to
 * some tabs, answer as if the workbook had only the others.
 */
export function servedWorkbook(workbook: Workbook, options: EngineOptions): Workbook {
  const { hiddenTabs, visibleTabs: tabs } = options;
  if (hiddenTabs !== 'hide' && tabs === undefined) return workbook;
  return { tabs: workbook.tabs.filter((tab) => (hiddenTabs !== 'hide' || tab.visibility === undefined) && (tabs === undefined || tabs.includes(tab.name))) };
}

/**
 * One entry of `GET /tabs`: the contract's name, rows and columns, then `visibility` (`visible`,
 * `hidden`, `veryHidden`) and `headerRow`, the sheet row (1-based) the columns are named in:
 * 1, or lower when the tab starts with empty rows; null when no row names a column (the tab
 * holds no text), so a tab answering 0 rows says why. Under headers merged over rows 1-2 it is
 * still 1, though data starts at row 3 (`headerBlock`).
 */
function tabListing(tab: Tab): { name: string; rows: number; columns: number; visibility: string; headerRow: number | null } {
  const table = tableOf(tab);
  const headerRow = table.columns.length === 0 ? null : headerBlock(tab.rows).first + 1;
  return { name: tab.name, rows: table.rowCount, columns: table.columns.length, visibility: tab.visibility ?? 'visible', headerRow };
}

function read(workbook: Workbook, tab: Tab, table: Table, request: ParsedRequest, options: EngineOptions): EngineResult {
  const { target, read: parameters } = request;
  if (target.kind === 'index' && target.index >= table.rowCount) {
    return errorResult(rowNotFound(table, target.index), workbook, sheetHeaders(table));
  }
  // A matching If-None-Match skips the rows altogether: the tag names this request on this content.
  const tag = readTag(tab, table, request, options);
  if (notModified(request, tag)) return notModifiedResult({ ETag: tag, ...sheetHeaders(table) }, workbook);
  const headers: Record<string, string> = { 'Content-Type': JSON_CONTENT_TYPE, ...sheetHeaders(table), 'X-Total-Count': '', ETag: tag };
  // An aggregate's answer rows are a table of their own (aggregate/answer.ts), read as a tab's rows are.
  const rows = target.kind === 'aggregate' ? aggregateTable(table, target) : table;
  if (isApiError(rows)) return errorResult(rows, workbook, sheetHeaders(table));
  const rowsTarget: Target = target.kind === 'aggregate' ? { kind: 'rows' } : target;
  const unknown = target.kind === 'aggregate' ? unknownAnswerColumn(rows, [...(parameters.select ?? []), ...parameters.sort.map((key) => key.column)]) : null;
  if (unknown !== null) return errorResult(unknown, workbook, sheetHeaders(table));
  const columns = selectedColumns(rows, parameters.select);
  if (isApiError(columns)) return errorResult(columns, workbook, sheetHeaders(table));
  const { format, raw } = parameters;
  const whole = isWholeTable(rowsTarget) && parameters.sort.length === 0 && parameters.offset === 0 && (parameters.limit ?? Infinity) >= rows.rowCount;
  if (whole && columns === rows.columns) {
    // The whole tab is the most common read: its answer, encoded, is kept with the table until a write.
    setTotal(headers, parameters, rows.rowCount);
    if (matchesAny(request)) return notModifiedResult({ ETag: tag, ...sheetHeaders(table) }, workbook);
    if (request.head) return answer(request, 200, headers, '', null, workbook);
    const kept = rows.remember(`${format}:${raw}`, () => formatRows(rows, allRows(rows), format, raw));
    return answer(request, 200, headers, kept, null, workbook);
  }
  const selection = selectRows(rows, rowsTarget, parameters);
  if (isApiError(selection)) return errorResult(selection, workbook, sheetHeaders(table));
  setTotal(headers, parameters, selection.total);
  if (matchesAny(request)) return notModifiedResult({ ETag: tag, ...sheetHeaders(table) }, workbook);
  // HEAD answers GET's headers; the rows need not be formatted at all.
  if (request.head) return answer(request, 200, headers, '', null, workbook);
  return answer(request, 200, headers, formatRows(rows, selection.indexes, format, raw, columns), null, workbook);
}

/** X-Total-Count, and with `_limit` the `Link` header of the pages (lib/link.ts). */
function setTotal(headers: Record<string, string>, parameters: ReadParameters, total: number): void {
  headers['X-Total-Count'] = String(total);
  if (parameters.pageQuery === null || parameters.limit === null) return;
  const links = pageLinks(parameters.pageQuery, parameters.offset, parameters.limit, total);
  if (links !== null) headers.Link = links;
}

/** What the `*text*` indexes may still grow by: the option's total less what the workbook's tabs hold. */
function textIndexRoom(workbook: Workbook, options: EngineOptions): number {
  let used = 0;
  for (const tab of workbook.tabs) used += builtTable(tab)?.textIndexBytes() ?? 0;
  return (options.textIndexBytes ?? DEFAULT_TEXT_INDEX_BYTES) - used;
}

function allRows(table: Table): number[] {
  const indexes = new Array<number>(table.rowCount);
  for (let index = 0; index < table.rowCount; index++) indexes[index] = index;
  return indexes;
}

const decoder = new TextDecoder();

function answer(request: ParsedRequest, status: number, headers: Record<string, string>, content: string | Uint8Array, plan: WritePlan | null, workbook: Workbook): EngineResult {
  if (request.head) return { status, headers, body: '', plan, workbook };
  if (typeof content === 'string') return { status, headers, body: content, plan, workbook };
  // Rows answered as bytes are sent as they are; the text is made only if someone asks for it.
  let text: string | undefined;
  return {
    status,
    headers,
    bytes: content,
    get body() {
      return (text ??= decoder.decode(content));
    },
    plan,
    workbook,
  };
}

/** The tab a request addresses: `/tabs/{Tab}` (case-sensitive), or the first tab. */
export function findTab(workbook: Workbook, name: string | null): Tab | ApiError {
  const tab = name === null ? workbook.tabs[0] : workbook.tabs.find((candidate) => candidate.name === name);
  if (tab !== undefined) return tab;
  const names = workbook.tabs.map((candidate) => JSON.stringify(candidate.name)).join(', ');
  const existing = names === '' ? 'the spreadsheet has no tabs' : `its tabs are ${names} (names are case-sensitive)`;
  return apiError('tab_not_found', name === null ? `There is no tab to read: ${existing}.` : `There is no tab "${name}": ${existing}.`);
}

/** 304: no body; the validator and the tab's headers, as the 200 would have had them. */
function notModifiedResult(headers: Record<string, string>, workbook: Workbook): EngineResult {
  return { status: 304, headers, body: '', plan: null, workbook };
}

export function errorResult(error: ApiError, workbook: Workbook, headers: Record<string, string>): EngineResult {
  return {
    status: error.status,
    headers: { 'Content-Type': JSON_CONTENT_TYPE, ...headers, ...error.headers },
    body: JSON.stringify(error),
    plan: null,
    workbook,
  };
}
