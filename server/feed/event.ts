// What the change feed says about a write or an outside edit: `POST /sheets/crm/tabs/Orders`
// with `[{"Item":"pen"}]`, once the source acknowledged it -> one `rows.created` event
// `{"id":"1718000000000-0","type":"rows.created","connection":"crm","tab":"Orders","at":"...",
// "rows":[{"Item":"pen","Qty":""}],"indexes":[7]}`. Made from the engine's WritePlan and the
// workbooks before and after it; the log (event-log.ts) gives it its id.
import type { WritePlan } from '../../lib/write-plan.ts';
import { objectJson, tableOf, type Column } from '../../lib/table.ts';
import type { SheetRow, Tab, Workbook } from '../../lib/workbook.ts';

export const EVENT_TYPES = ['rows.created', 'rows.updated', 'rows.deleted', 'tab.changed'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * An event before the log numbered it. `rows` and `indexes` for the three row events (rows as
 * the API answers them by default: displayed text under the tab's column names); `rowCount` for
 * `tab.changed`, the tab's data rows after the outside edit.
 */
export interface DraftEvent {
  readonly type: EventType;
  readonly connection: string;
  readonly tab: string;
  /** ISO 8601, when the server learnt of the change (a write's acknowledgement, an outside edit noticed). */
  readonly at: string;
  readonly rows?: readonly Record<string, string>[];
  readonly indexes?: readonly number[];
  readonly rowCount?: number;
}

/** An event as the feed hands it out: `id` is `<ms>-<seq>`, ordered per connection. */
export interface FeedEvent extends DraftEvent {
  readonly id: string;
}

/**
 * The events of one acknowledged write: one per kind of change in its plan, in the order
 * deleted, updated, created (a plan holds one kind, except an upsert that both updates and
 * appends: `rows.updated` then `rows.created`, docs/decisions.md). `before` is the workbook the
 * plan was made on, `after` the one it made.
 */
export function writeEvents(connection: string, plan: WritePlan, before: Workbook, after: Workbook, at: Date = new Date()): DraftEvent[] {
  const drafts: DraftEvent[] = [];
  const stamp = at.toISOString();
  const base = { connection, tab: plan.tab, at: stamp };
  if (plan.removed.length > 0) {
    const tab = tabNamed(before, plan.tab);
    if (tab !== undefined) {
      const table = tableOf(tab);
      const rows = plan.removed.filter((index) => index < table.rowCount);
      drafts.push({ type: 'rows.deleted', ...base, rows: rows.map((index) => rowObject(table.columns, table.row(index))), indexes: rows });
    }
  }
  const afterTab = plan.replaced.length > 0 || (plan.appended?.rows.length ?? 0) > 0 ? tabNamed(after, plan.tab) : undefined;
  const columns = afterTab === undefined ? [] : tableOf(afterTab).columns;
  if (plan.replaced.length > 0) {
    drafts.push({ type: 'rows.updated', ...base, rows: plan.replaced.map((replaced) => rowObject(columns, replaced.row)), indexes: plan.replaced.map((replaced) => replaced.index) });
  }
  const appended = plan.appended;
  if (appended !== null && appended.rows.length > 0) {
    drafts.push({ type: 'rows.created', ...base, rows: appended.rows.map((row) => rowObject(columns, row)), indexes: appended.rows.map((_, i) => appended.start + i) });
  }
  return drafts;
}

/** `tab.changed` for a tab edited outside the server, with its data rows now. */
export function tabChangedEvent(connection: string, tab: string, rowCount: number, at: Date = new Date()): DraftEvent {
  return { type: 'tab.changed', connection, tab, at: at.toISOString(), rowCount };
}

/** Each event's JSON, made once for all who send or store it as is (kept while the event is). */
const texts = new WeakMap<object, string>();

/**
 * `{"id":"1718000000000-0","type":"rows.created",...}`: the event's JSON, the same text every
 * time it is asked for (an outbox line, and the body every webhook signs and sends).
 */
export function eventJson(event: object): string {
  let text = texts.get(event);
  if (text === undefined) texts.set(event, (text = JSON.stringify(event)));
  return text;
}

/** `{"Name":"Ann","Age":"31"}`: the row as a default read answers it. */
function rowObject(columns: readonly Column[], row: SheetRow): Record<string, string> {
  return JSON.parse(objectJson(columns, row, false)) as Record<string, string>;
}

function tabNamed(workbook: Workbook, name: string): Tab | undefined {
  return workbook.tabs.find((tab) => tab.name === name);
}
