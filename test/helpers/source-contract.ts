// The contract every source passes (file, memory, Google): read tabs and cells, write through
// `write()` with hand-made plans and read the result back, in arrival order, one failing write
// not spoiling the others, and a read-only source refusing with write_error. Call it from a
// source's own test: `await runSourceContract(t, { name: 'file xlsx', open })`.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { applyPlan } from '../../lib/apply-plan.ts';
import type { WritePlan } from '../../lib/write-plan.ts';
import { isApiError } from '../../lib/errors.ts';
import { tableOf } from '../../lib/table.ts';
import type { SheetRow, TypedValue, Workbook } from '../../lib/workbook.ts';
import type { Planned, Source } from '../../server/sources/source.ts';

/** A cell as typed into the store: text, a number, a boolean, or empty. */
export type FixtureCell = string | number | boolean | null;

export interface ContractFixture {
  readonly tabs: readonly { readonly name: string; readonly rows: readonly (readonly FixtureCell[])[] }[];
}

export interface OpenedSource {
  readonly source: Source;
  /** Opens a second source on the same store (the first one closed), to check what persisted. */
  reopen(): Promise<Source>;
  /** Removes the store. */
  cleanup(): Promise<void>;
}

export interface SourceUnderTest {
  readonly name: string;
  /** Opens a source on a fresh store holding `fixture`; `readOnly` asks for one that refuses writes. */
  open(fixture: ContractFixture, options: { readonly readOnly: boolean }): Promise<OpenedSource>;
  /** The store holds one tab only (CSV): the fixture's first tab, under a name of the store's choosing. */
  readonly singleTab?: boolean;
}

export const CONTRACT_FIXTURE: ContractFixture = {
  tabs: [
    {
      name: 'People',
      rows: [
        ['Name', 'Age', 'City'],
        ['Ann', 30, 'Oslo'],
        ['Bob', 41, 'Rome'],
        ['Cy', 25, 'Lima'],
      ],
    },
    { name: 'Notes', rows: [['Key', 'Value'], ['a', true]] },
  ],
};

/** A row as a source reads it back after writing it: numbers as JavaScript writes them. */
export function row(...cells: FixtureCell[]): SheetRow {
  return { text: cells.map(displayed), value: cells.map((cell) => (cell === '' ? null : cell)) };
}

function displayed(cell: FixtureCell): string {
  if (cell === null) return '';
  if (typeof cell === 'boolean') return cell ? 'TRUE' : 'FALSE';
  return String(cell);
}

function firstTab(workbook: Workbook) {
  const tab = workbook.tabs[0];
  assert.ok(tab !== undefined, 'the workbook has a tab');
  return tab;
}

/** Plans appending `rows` after the last data row of the first tab. */
/** What a write callback answers, as the engine does: the plan and the workbook with it applied. */
export function planned<T>(workbook: Workbook, plan: WritePlan | null, result: T): Planned<T> {
  return { plan, workbook: plan === null ? workbook : applyPlan(workbook, plan), result };
}

export function appendPlan(workbook: Workbook, rows: readonly SheetRow[]): WritePlan {
  const tab = firstTab(workbook);
  return { tab: tab.name, replaced: [], removed: [], appended: { start: tableOf(tab).rowCount, rows } };
}

export function replacePlan(workbook: Workbook, index: number, next: SheetRow, columns: readonly number[]): WritePlan {
  return { tab: firstTab(workbook).name, replaced: [{ index, row: next, columns }], removed: [], appended: null };
}

export function removePlan(workbook: Workbook, indexes: readonly number[]): WritePlan {
  return { tab: firstTab(workbook).name, replaced: [], removed: indexes, appended: null };
}

/** The data rows of the first tab as [text, value] pairs of the first `width` columns. */
export function dataOf(workbook: Workbook, width = 3): [string[], TypedValue[]][] {
  const tab = firstTab(workbook);
  const table = tableOf(tab);
  return Array.from({ length: table.rowCount }, (_, index) => {
    const sheetRow = table.row(index);
    return [
      Array.from({ length: width }, (_, c) => sheetRow.text[c] ?? ''),
      Array.from({ length: width }, (_, c) => sheetRow.value[c] ?? null),
    ];
  });
}

function names(workbook: Workbook): string[][] {
  return dataOf(workbook).map(([text]) => text);
}

export async function runSourceContract(t: TestContext, subject: SourceUnderTest): Promise<void> {
  const withSource = async (readOnly: boolean, body: (opened: OpenedSource) => Promise<void>): Promise<void> => {
    const opened = await subject.open(CONTRACT_FIXTURE, { readOnly });
    try {
      await body(opened);
    } finally {
      await opened.source.close();
      await opened.cleanup();
    }
  };

  await t.test(`${subject.name}: reads tabs in order with text and typed values`, () =>
    withSource(false, async ({ source }) => {
      const workbook = await source.read();
      assert.equal(workbook.tabs.length, subject.singleTab ? 1 : 2);
      if (!subject.singleTab) assert.deepEqual(workbook.tabs.map((tab) => tab.name), ['People', 'Notes']);
      assert.deepEqual(firstTab(workbook).rows[0].text.slice(0, 3), ['Name', 'Age', 'City']);
      assert.deepEqual(dataOf(workbook), [
        [['Ann', '30', 'Oslo'], ['Ann', 30, 'Oslo']],
        [['Bob', '41', 'Rome'], ['Bob', 41, 'Rome']],
        [['Cy', '25', 'Lima'], ['Cy', 25, 'Lima']],
      ]);
      if (!subject.singleTab) assert.deepEqual(workbook.tabs[1].rows[1].value.slice(0, 2), ['a', true]);
      assert.equal(source.writable, true);
    }));

  await t.test(`${subject.name}: append, replace and remove read back, and persist`, () =>
    withSource(false, async ({ source, reopen }) => {
      const appended = await source.write((workbook) => {
        const plan = appendPlan(workbook, [row('Dee', 52, 'Kyiv')]);
        return planned(workbook, plan, 'appended');
      });
      assert.equal(appended, 'appended');
      assert.deepEqual(names(await source.read()).at(-1), ['Dee', '52', 'Kyiv']);

      await source.write((workbook) => planned(workbook, replacePlan(workbook, 1, row('Bob', 42, 'Rome'), [1]), null));
      assert.deepEqual(dataOf(await source.read())[1], [['Bob', '42', 'Rome'], ['Bob', 42, 'Rome']]);

      await source.write((workbook) => planned(workbook, removePlan(workbook, [0]), null));
      const expected = [['Bob', '42', 'Rome'], ['Cy', '25', 'Lima'], ['Dee', '52', 'Kyiv']];
      assert.deepEqual(names(await source.read()), expected);

      await source.close();
      const again = await reopen();
      try {
        assert.deepEqual(names(await again.read()), expected);
        if (!subject.singleTab) assert.deepEqual((await again.read()).tabs.map((tab) => tab.name), ['People', 'Notes']);
      } finally {
        await again.close();
      }
    }));

  await t.test(`${subject.name}: writes apply one at a time in arrival order, each seeing the last`, () =>
    withSource(false, async ({ source }) => {
      const seen: number[] = [];
      const writes = Array.from({ length: 20 }, (_, n) =>
        source.write((workbook) => {
          seen.push(tableOf(firstTab(workbook)).rowCount);
          return planned(workbook, appendPlan(workbook, [row(`W${n}`, n, 'x')]), n);
        }),
      );
      assert.deepEqual(await Promise.all(writes), Array.from({ length: 20 }, (_, n) => n));
      assert.deepEqual(seen, Array.from({ length: 20 }, (_, n) => 3 + n));
      assert.deepEqual(names(await source.read()).slice(3).map(([name]) => name), Array.from({ length: 20 }, (_, n) => `W${n}`));
    }));

  await t.test(`${subject.name}: a failing write rejects alone and changes nothing`, () =>
    withSource(false, async ({ source }) => {
      const first = source.write((workbook) => planned(workbook, appendPlan(workbook, [row('One', 1, 'a')]), 1));
      // Attach the expectation at once: a rejection left unhandled while we await `first` fails the run.
      const failing = assert.rejects(
        source.write<number>(() => {
          throw new Error('planning failed');
        }),
        /planning failed/,
      );
      const third = source.write((workbook) => planned(workbook, appendPlan(workbook, [row('Three', 3, 'c')]), 3));
      assert.equal(await first, 1);
      await failing;
      assert.equal(await third, 3);
      assert.deepEqual(names(await source.read()).slice(3).map(([name]) => name), ['One', 'Three']);
    }));

  await t.test(`${subject.name}: a write with nothing to write resolves with its result`, () =>
    withSource(false, async ({ source }) => {
      const before = await source.read();
      assert.equal(await source.write((workbook) => planned(workbook, null, 'nothing')), 'nothing');
      assert.deepEqual(dataOf(await source.read()), dataOf(before));
    }));

  await t.test(`${subject.name}: a read-only source refuses writes with write_error and keeps reading`, () =>
    withSource(true, async ({ source, reopen }) => {
      assert.equal(source.writable, false);
      let ran = false;
      const refused = source.write((workbook) => {
        ran = true;
        return planned(workbook, appendPlan(workbook, [row('No', 0, 'no')]), null);
      });
      await assert.rejects(refused, (error: unknown) => isApiError(error) && error.code === 'write_error' && error.status === 403);
      assert.equal(ran, false, 'the plan of a refused write never runs');
      assert.equal(dataOf(await source.read()).length, 3);
      await source.close();
      const again = await reopen();
      try {
        assert.equal(dataOf(await again.read()).length, 3, 'nothing was written');
      } finally {
        await again.close();
      }
    }));
}
