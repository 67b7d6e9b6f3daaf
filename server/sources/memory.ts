// A source held in memory: for tests, and for embedding sheetrest over data you already have.
// Writes apply one at a time in arrival order; "durable" means nothing more than applied.
import { apiError } from '../../lib/errors.ts';
import type { Workbook } from '../../lib/workbook.ts';
import type { Planned, Source } from './source.ts';

export function memorySource(initial: Workbook, options: { writable?: boolean } = {}): Source & { readonly workbook: Workbook } {
  let current = initial;
  let queue: Promise<unknown> = Promise.resolve();
  const writable = options.writable ?? true;
  return {
    description: 'memory',
    writable,
    get workbook() {
      return current;
    },
    async read() {
      return current;
    },
    readNow: () => current,
    write<T>(plan: (workbook: Workbook) => Planned<T>): Promise<T> {
      const next = queue.then(() => {
        if (!writable) throw apiError('write_error', 'This source is read-only.');
        const planned = plan(current);
        current = planned.workbook;
        return planned.result;
      });
      queue = next.catch(() => {});
      return next;
    },
    async close() {
      await queue;
    },
  };
}
