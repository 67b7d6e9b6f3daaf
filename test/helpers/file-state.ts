// One workbook file's settings and state (server/sources/file/state.ts), for the tests that run
// a job of the file source on its own (freshness, writes, folding, recovery) without FileSource
// around it: `await fileParts('Name\r\nAnn\r\n')` is People.csv in a temp folder, decoded.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { applyPlan } from '../../lib/apply-plan.ts';
import type { WritePlan } from '../../lib/write-plan.ts';
import type { Workbook } from '../../lib/workbook.ts';
import { fileIdentity, fingerprint } from '../../server/durable/disk.ts';
import type { Planned } from '../../server/sources/source.ts';
import { csvTabName, decodeWorkbook } from '../../server/sources/file/codec.ts';
import { formatOfPath } from '../../server/sources/file/format.ts';
import type { JournalEntry } from '../../server/sources/file/journal.ts';
import { rowsOnly } from '../../server/sources/file/model.ts';
import { FileState, type FileSourceConfig } from '../../server/sources/file/state.ts';
import { loadSheetJs } from '../../server/sources/file/xlsx/sheetjs.ts';
import { recordingLog, tempFolder } from './file-source.ts';

export interface FileParts {
  readonly path: string;
  readonly config: FileSourceConfig;
  readonly state: FileState;
  /** What the jobs logged. */
  readonly messages: string[];
  cleanup(): Promise<void>;
}

/** `content` as `People.csv` (or the bytes as `name`) in a temp folder, its state folder beside it. */
export async function fileParts(content: string | Uint8Array, settings: Partial<FileSourceConfig> = {}, name = 'People.csv'): Promise<FileParts> {
  const folder = await tempFolder();
  const path = join(folder.dir, name);
  await writeFile(path, content);
  const format = formatOfPath(path);
  if (format === null) throw new Error(`${name}: not a workbook file name`);
  if (format !== 'csv') await loadSheetJs();
  const bytes = await readFile(path);
  const tabName = csvTabName(path);
  const decoded = decodeWorkbook(bytes, format, tabName);
  const { log, messages } = recordingLog();
  const config: FileSourceConfig = {
    path,
    stateDir: join(folder.dir, 'state'),
    journalPath: join(folder.dir, 'state', `${name}.test.journal`),
    tabName,
    notWritable: null,
    foldAfterMs: Number.POSITIVE_INFINITY,
    foldAfterEntries: 5000,
    log,
    format,
    cannotWrite: decoded.cannotWrite,
    readOnlyTabs: decoded.readOnlyTabs,
    csvStyle: decoded.csvStyle,
    identity: (await fileIdentity(path)) ?? '',
    fingerprint: fingerprint(bytes),
    ...settings,
  };
  await mkdir(config.stateDir, { recursive: true });
  return { path, config, state: new FileState(config, rowsOnly(decoded.workbook, format)), messages, cleanup: folder.cleanup };
}

/** The first tab's data rows, as their first cell's text. */
export function names(workbook: Workbook): string[] {
  return (workbook.tabs[0]?.rows ?? []).slice(1).map((row) => row.text[0] ?? '');
}

/** A journal entry appending one row holding `name` after `dataRows` data rows. */
export function appendEntry(name: string, dataRows: number, tab = 'People'): JournalEntry {
  return { plan: { tab, replaced: [], removed: [], appended: { start: dataRows, rows: [{ text: [name], value: [name] }] } }, expected: { dataRows, rows: [] } };
}

/** What the engine answers for a POST of one row holding `name`: the plan, and the workbook with it applied. */
export function plannedAppend(name: string): (workbook: Workbook) => Planned<string> {
  return (workbook) => {
    const tab = workbook.tabs[0];
    const plan: WritePlan = appendEntry(name, tab.rows.length - 1, tab.name).plan;
    return { plan, workbook: applyPlan(workbook, plan), result: name };
  };
}
