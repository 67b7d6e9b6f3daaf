// SheetJS, loaded only when a workbook that needs it is opened: an .xlsx or .ods file (an .ods
// is read by ods-read.ts, but a zip that is no package is told apart with SheetJS's CFB reader).
// It takes about 12 MB of resident memory on Node, which a server of CSV files never pays.
// Whoever decodes or folds such a file first awaits `loadSheetJs()` (mod.ts, fold-worker.ts);
// the modules that read with it then ask `sheetJs()` synchronously.
import type * as SheetJsModule from '@e965/xlsx';

export type SheetJs = typeof SheetJsModule;

let loaded: SheetJs | undefined;

export async function loadSheetJs(): Promise<SheetJs> {
  loaded ??= await import('@e965/xlsx');
  return loaded;
}

/** SheetJS, once `loadSheetJs()` has been awaited in this thread; a bug of ours before that. */
export function sheetJs(): SheetJs {
  if (loaded === undefined) throw new Error('SheetJS is used before loadSheetJs() was awaited');
  return loaded;
}

/** Whether decoding or folding a file of this format needs SheetJS: every format but CSV. */
export const needsSheetJs = (format: string): boolean => format !== 'csv';
