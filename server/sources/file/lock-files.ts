// A spreadsheet program's lock file beside the workbook: LibreOffice opening crm.xlsx writes
// `.~lock.crm.xlsx#` beside it, Excel `~$crm.xlsx` (for a longer name, `~$` in place of its first
// two characters). Neither stops sheetrest, but whoever reads the log should know the workbook is
// open elsewhere: one info line each time such a file appears (file-source watching, freshness.ts).
//   lockFileProgram('/srv/crm.xlsx', '.~lock.crm.xlsx#') -> { program: 'LibreOffice (or OpenOffice)', convention: '.~lock.<name>#' }
import { stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { FileLog } from './state.ts';

export interface LockFileKind {
  readonly program: string;
  readonly convention: string;
}

/** Which program's lock file `file` (a name in the workbook's folder) is for the workbook at `path`, or null. */
export function lockFileProgram(path: string, file: string): LockFileKind | null {
  const name = basename(path);
  if (file === `.~lock.${name}#`) return { program: 'LibreOffice (or OpenOffice)', convention: '.~lock.<name>#' };
  if (file === `~$${name}` || (name.length > 2 && file === `~$${name.slice(2)}`)) return { program: 'Microsoft Excel', convention: '~$<name>' };
  return null;
}

/** Tells the log once per appearance of a lock file; a file gone and back is told again. */
export class LockFileNotice {
  readonly #path: string;
  readonly #log: FileLog;
  /** The lock files seen present, by name. */
  readonly #present = new Set<string>();

  constructor(path: string, log: FileLog) {
    this.#path = path;
    this.#log = log;
  }

  /** A file in the workbook's folder changed (the folder watcher): looked at when it is a lock file. */
  async changed(file: string): Promise<void> {
    const kind = lockFileProgram(this.#path, file);
    if (kind === null) return;
    const exists = await stat(join(dirname(this.#path), file)).then(() => true, () => false);
    if (!exists) {
      this.#present.delete(file);
      return;
    }
    if (this.#present.has(file)) return;
    this.#present.add(file);
    this.#log(
      `sheetrest: ${file} appeared beside ${this.#path}: the workbook is open in ${kind.program} (its lock file, named ${kind.convention}). sheetrest goes on serving it, and what that program saves is picked up by the next request`,
      'info',
    );
  }
}
