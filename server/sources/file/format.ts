// Which of the three file formats a path holds, by its extension: `book.xlsm` -> 'xlsx',
// `people.csv` -> 'csv', `notes.txt` -> null. Its own module because codec.ts imports limits.ts, which
// needs the type too: taking it from codec.ts closed an import cycle.
export type FileFormat = 'xlsx' | 'ods' | 'csv';

/** `.xlsm` (a macro-enabled .xlsx) is read and written as .xlsx; its macros are kept, never run. */
export function formatOfPath(path: string): FileFormat | null {
  const match = /\.(xlsx|xlsm|ods|csv)$/i.exec(path);
  if (match === null) return null;
  const extension = match[1].toLowerCase();
  return extension === 'xlsm' ? 'xlsx' : (extension as FileFormat);
}
