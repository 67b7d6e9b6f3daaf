// Group commit: the writes queued for one spreadsheet, planned in arrival order, cut into
// segments that each go to Google as ONE request. Forty queued POSTs to `People` are one
// segment, one `values.append` of all their rows; PATCHes in a row are one `values.batchUpdate`
// (a row two of them set is sent once, as the later plan left it); DELETEs in a row are one
// atomic `spreadsheets.batchUpdate` of their deleteDimension requests, each plan's bottom-up, in
// order (each plan's indexes are the rows after the plans before it, as Google applies them).
// On a tab read in the batch, writes of mixed kinds are one `spreadsheets.batchUpdate` of cell
// and row requests (encode-cells.ts). A segment stays under Google's recommended 2 MB payload
// and a bounded number of writes.
import { gridRows, headerRowOf as headerRowOfRows } from '../../../lib/rows.ts';
import type { Tab } from '../../../lib/workbook.ts';
import type { WritePlan } from '../../../lib/write-plan.ts';
import { appendedValues, deleteRequests, replacedRanges, sheetRowOf, type DeleteDimensionRequest, type UserEnteredValue, type ValueRange } from './encode-plan.ts';

/**
 * What one request can carry: appends to one tab, cell updates, row deletions, or writes of any
 * kinds (a plan of several kinds too) as `spreadsheets.batchUpdate` cell and row requests
 * (`cells`, encode-cells.ts), which place rows by position: only on a tab read in this batch.
 */
export type SegmentKind = 'append' | 'values' | 'delete' | 'cells';

/** A write's plan with the tab it was planned against (its header row places the rows). */
export interface PlannedStep {
  readonly plan: WritePlan;
  /** The tab as the plan saw it; undefined when the workbook did not list it. */
  readonly before: Tab | undefined;
}

/**
 * Google's Sheets API "recommends a 2 MB maximum payload" per request (Usage limits); the
 * estimate below counts the JSON of the values, a little under what goes on the wire.
 */
export const MAX_SEGMENT_BYTES = 1_800_000;
/** Writes per request, so one refused value costs at most log2 of it in requests to find. */
export const MAX_SEGMENT_WRITES = 500;

export function kindOf(plan: WritePlan): SegmentKind {
  const appends = plan.appended !== null && plan.appended.rows.length > 0;
  const parts = [plan.replaced.length > 0, plan.removed.length > 0, appends].filter(Boolean).length;
  // Several kinds in one plan (an upsert's updates and appends) go as cell requests; such a plan is never append-only, so its tab was read.
  if (parts !== 1) return 'cells';
  return appends ? 'append' : plan.removed.length > 0 ? 'delete' : 'values';
}

/**
 * How many of `steps` (from the first) one request carries, and as what: steps on the first's
 * tab, at most `maxWrites` and about `maxBytes` of values, always at least one; of the same kind,
 * or (`mixable`: the tab was read in this batch, so rows can be placed by position) of any kinds,
 * then as one `cells` request.
 */
export function segmentOf(steps: readonly PlannedStep[], maxWrites: number, mixable: boolean, maxBytes = MAX_SEGMENT_BYTES): { length: number; kind: SegmentKind } {
  const first = steps[0];
  if (first === undefined) return { length: 0, kind: 'cells' };
  const kind = kindOf(first.plan);
  let bytes = 0;
  let length = 0;
  let mixed = false;
  for (const step of steps) {
    if (length >= maxWrites || step.plan.tab !== first.plan.tab) break;
    const same = kindOf(step.plan) === kind;
    if (!same && !mixable) break;
    bytes += estimateBytes(step.plan);
    if (length > 0 && bytes > maxBytes) break;
    mixed ||= !same;
    length++;
  }
  return { length, kind: mixed ? 'cells' : kind };
}

function estimateBytes(plan: WritePlan): number {
  let bytes = 64;
  for (const row of plan.appended?.rows ?? []) bytes += rowBytes(row.text) + 8;
  for (const { row, columns } of plan.replaced) bytes += rowBytes(row.text) + 48 + columns.length * 4;
  return bytes + plan.removed.length * 96;
}

function rowBytes(texts: readonly string[]): number {
  let bytes = 2;
  for (const text of texts) bytes += text.length * 2 + 4;
  return bytes;
}

export function headerRowOf(step: PlannedStep): number {
  // Through the tab's chunks: a tab a write made would otherwise build its rows array (lib/rows.ts).
  return step.before === undefined ? 0 : headerRowOfRows(gridRows(step.before));
}

/** Appends to one tab: every row in order, placed from the first step's start (`'People'!A62`). */
export function appendRequest(steps: readonly PlannedStep[], quote: (name: string) => string): { range: string; expectedRow: number; values: UserEnteredValue[][] } {
  const first = steps[0];
  const appended = first.plan.appended!;
  const expectedRow = sheetRowOf(appended.start, headerRowOf(first));
  const values = steps.flatMap((step) => appendedValues(step.plan.appended!.rows));
  return { range: `${quote(first.plan.tab)}!A${expectedRow}`, expectedRow, values };
}

/**
 * Cell updates: one range per row touched, as the last plan touching it left the row, spanning
 * every column any plan set there (no range overlaps another, so their order does not matter).
 */
export function valuesRequest(steps: readonly PlannedStep[]): ValueRange[] {
  const rows = new Map<string, { tab: string; headerRow: number; index: number; row: WritePlan['replaced'][number]['row']; columns: Set<number> }>();
  for (const step of steps) {
    for (const replaced of step.plan.replaced) {
      const key = `${step.plan.tab}\u0000${replaced.index}`;
      const kept = rows.get(key);
      if (kept === undefined) rows.set(key, { tab: step.plan.tab, headerRow: headerRowOf(step), index: replaced.index, row: replaced.row, columns: new Set(replaced.columns) });
      else {
        kept.row = replaced.row;
        for (const column of replaced.columns) kept.columns.add(column);
      }
    }
  }
  return [...rows.values()].flatMap(({ tab, headerRow, index, row, columns }) => replacedRanges(tab, [{ index, row, columns: [...columns].sort((a, b) => a - b) }], headerRow));
}

/** Row deletions: each plan's requests bottom-up, the plans in order. */
export function deleteRequest(steps: readonly PlannedStep[], sheetIds: ReadonlyMap<string, number>): DeleteDimensionRequest[] | null {
  const requests: DeleteDimensionRequest[] = [];
  for (const step of steps) {
    const sheetId = sheetIds.get(step.plan.tab);
    if (sheetId === undefined) return null;
    requests.push(...deleteRequests(sheetId, step.plan.removed, headerRowOf(step)));
  }
  return requests;
}
