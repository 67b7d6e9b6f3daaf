// Which tabs an outside edit changed: the file source's new version against the one it served,
// `{People: 3 rows} -> {People: 4 rows}` -> `[{tab: "People", rowCount: 4}]`, for the change
// feed's `tab.changed` (Source.watchOutsideChanges). Rows are compared by their displayed text.
import { tableOf } from '../../lib/table.ts';
import type { Tab, Workbook } from '../../lib/workbook.ts';
import type { TabChange } from './source.ts';

/**
 * The tabs whose rows differ between two versions of a workbook, with their data rows after:
 * what an outside edit changed. A tab added outside counts as changed; a tab removed is left out
 * (it has no rows to count, and a read of it answers tab_not_found).
 */
export function changedTabs(before: Workbook, after: Workbook): TabChange[] {
  const changed: TabChange[] = [];
  for (const tab of after.tabs) {
    const old = before.tabs.find((candidate) => candidate.name === tab.name);
    if (old !== undefined && (old === tab || sameRows(old, tab))) continue;
    changed.push({ tab: tab.name, rowCount: tableOf(tab).rowCount });
  }
  return changed;
}

function sameRows(a: Tab, b: Tab): boolean {
  if (a.rows === b.rows) return true;
  const length = Math.max(lastFilled(a), lastFilled(b));
  for (let index = 0; index < length; index++) {
    const [x, y] = [a.rows.at(index), b.rows.at(index)];
    if (x === y) continue;
    const width = Math.max(x?.text.length ?? 0, y?.text.length ?? 0);
    for (let column = 0; column < width; column++) if ((x?.text[column] ?? '') !== (y?.text[column] ?? '')) return false;
  }
  return true;
}

/** One past the last row holding any text: trailing empty rows are no change. */
function lastFilled(tab: Tab): number {
  let last = tab.rows.length;
  while (last > 0 && !(tab.rows.at(last - 1)?.text.some((text) => text !== '') ?? false)) last--;
  return last;
}

/** One listener list per source: what `watchOutsideChanges` hands out. */
export class OutsideChangeListeners {
  readonly #listeners = new Set<(changes: readonly TabChange[]) => void>();

  add(listener: (changes: readonly TabChange[]) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  get wanted(): boolean {
    return this.#listeners.size > 0;
  }

  tell(changes: readonly TabChange[]): void {
    if (changes.length === 0) return;
    for (const listener of this.#listeners) listener(changes);
  }
}
