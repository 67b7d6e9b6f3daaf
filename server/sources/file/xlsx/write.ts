// Folding writes into an .xlsx by editing its package in place: after `POST /sheets/People` the
// new file differs from the old one only in People's worksheet part (and in `xl/styles.xml` when
// a written value needed a number format no existing style had). Every other part keeps its
// compressed bytes; the written sheet keeps every row, cell and setting the writes did not touch.
import type { WritePlan } from '../../../../lib/write-plan.ts';
import { EMPTY_ROW, headerRowIndex, type SheetRow, type Workbook } from '../../../../lib/workbook.ts';
import { folderOf, readPackage, relationships, relsPathOf, type XlsxPackage } from './package.ts';
import { rewriteSheet, type RowSlot } from './sheet.ts';
import { DEFAULT_STYLES_XML, Styles } from './styles.ts';
import { entryText, replacedEntry, writeZip, type ZipEntry } from '../zip.ts';
import { checkWrittenParts, type AlterPart } from '../xml/well-formed.ts';

export interface XlsxFold {
  readonly bytes: Uint8Array;
  readonly pack: XlsxPackage;
}

/**
 * The package with `plans` (applied in order to `decodedRows`, giving `workbook`) written into
 * it. Throws an Error naming what does not add up, or a written part that is not well-formed XML,
 * rather than write a file that would not read. `alterPart` is the tests' seam (fold-runner.ts).
 */
export function foldIntoXlsx(pack: XlsxPackage, workbook: Workbook, decodedRows: ReadonlyMap<string, readonly SheetRow[]>, plans: readonly WritePlan[], date1904: boolean, alterPart?: AlterPart): XlsxFold {
  const byName = new Map(pack.entries.map((entry) => [entry.name, entry]));
  const styles = pack.stylesPart === null ? new Styles(null, () => (anyCellStyled(pack) ? null : DEFAULT_STYLES_XML)) : new Styles(entryText(byName.get(pack.stylesPart)!));
  const written = new Map<string, string>();
  for (const tab of workbook.tabs) {
    const before = decodedRows.get(tab.name);
    const tabPlans = plans.filter((plan) => plan.tab === tab.name);
    if (before === tab.rows && tabPlans.length === 0) continue;
    const sheet = pack.sheets.find((candidate) => candidate.name === tab.name);
    if (sheet === undefined || before === undefined) throw new Error(`the tab "${tab.name}" is not in the file`);
    if (sheet.kind !== 'worksheet') throw new Error(`the tab "${tab.name}" is a ${sheet.kind}, not a worksheet`);
    const slots = slotsOf(before, tabPlans, tab.rows);
    const entry = byName.get(sheet.part)!;
    written.set(sheet.part, rewriteSheet(entryText(entry), slots, before.length, styles, date1904, headerRowIndex(before) + 1));
  }
  const stylesXml = styles.changedXml;
  if (stylesXml !== null && pack.stylesPart !== null) written.set(pack.stylesPart, stylesXml);
  if (alterPart !== undefined) for (const [part, xml] of written) written.set(part, alterPart(part, xml));
  checkWrittenParts(written);
  let entries: ZipEntry[] = pack.entries.map((entry) => (written.has(entry.name) ? replacedEntry(entry, written.get(entry.name)!) : entry));
  // A workbook that had no styles part gets Excel's default one (DEFAULT_STYLES_XML, well-formed by construction).
  if (stylesXml !== null && styles.created) entries = withStylesPart(entries, pack.workbookPart, stylesXml);
  const bytes = writeZip(entries);
  return { bytes, pack: readPackage(bytes) };
}

/**
 * Whether a cell, row or column of any worksheet names a style (`s="1"`, `style="2"`): in a
 * workbook without a styles part, a new one would give those their meaning, so a write that
 * needs a style is written without (a date as its ISO text) instead.
 */
function anyCellStyled(pack: XlsxPackage): boolean {
  const byName = new Map(pack.entries.map((entry) => [entry.name, entry]));
  return pack.sheets.some((sheet) => {
    const entry = byName.get(sheet.part);
    return entry !== undefined && /\ss(?:tyle)?\s*=\s*["']0*[1-9]/.test(entryText(entry));
  });
}

const STYLES_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml';

/**
 * `entries` with a styles part added (a workbook that had none, and a write that needed a date
 * style): at the target the workbook's relationships already name for it, else `styles.xml`
 * beside the workbook part, which gets the relationship; `[Content_Types].xml` gets its type.
 */
function withStylesPart(entries: readonly ZipEntry[], workbookPart: string, xml: string): ZipEntry[] {
  const relsPath = relsPathOf(workbookPart);
  const byName = new Map(entries.map((entry) => [entry.name, entry]));
  let relsXml = entryText(byName.get(relsPath)!);
  const rels = relationships(relsXml, folderOf(workbookPart));
  let part = rels.find((rel) => rel.type.endsWith('/styles'))?.target;
  if (part === undefined) {
    part = `${folderOf(workbookPart)}styles.xml`;
    // The namespace of the workbook's own relationship types (transitional or strict).
    const base = (rels.find((rel) => rel.type.endsWith('/worksheet'))?.type ?? 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet').replace(/\/worksheet$/, '');
    let id = 'rIdStyles';
    while (rels.some((rel) => rel.id === id)) id += '1';
    relsXml = relsXml.replace(/<\/((?:\w+:)?)Relationships>\s*$/, (close, prefix: string) => `<${prefix}Relationship Id="${id}" Type="${base}/styles" Target="styles.xml"/>${close}`);
  }
  const out = entries.map((entry) => (entry.name === relsPath ? replacedEntry(entry, relsXml) : entry));
  const typesAt = out.findIndex((entry) => entry.name === '[Content_Types].xml');
  if (typesAt >= 0) {
    const types = entryText(out[typesAt]);
    const listed = new RegExp(`PartName\\s*=\\s*["']/${part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}["']`, 'i').test(types);
    if (!listed) out[typesAt] = replacedEntry(out[typesAt], types.replace(/<\/((?:\w+:)?)Types>\s*$/, (close, prefix: string) => `<${prefix}Override PartName="/${part}" ContentType="${STYLES_TYPE}"/>${close}`));
  }
  const existing = out.findIndex((entry) => entry.name === part);
  if (existing >= 0) out[existing] = replacedEntry(out[existing], xml);
  else out.push(replacedEntry({ name: part }, xml));
  return out;
}

/** A RowSlot while the plans are replayed: its `row` is set once they all are. */
interface Slot {
  origin: number | null;
  originRow: SheetRow | null;
  written: boolean;
  setColumns: ReadonlySet<number>;
  row: SheetRow;
}

/**
 * Where each final row comes from, found by replaying the plans as `applyPlanToTab` applies them:
 * replaced rows, then removed ones, then appended ones (which take the place of rows past the
 * data, keeping what those held right of the headers).
 */
export function slotsOf(before: readonly SheetRow[], plans: readonly WritePlan[], after: readonly SheetRow[]): RowSlot[] {
  let slots: Slot[] = before.map((row, index) => ({ origin: index + 1, originRow: row, written: false, setColumns: NO_COLUMNS, row: EMPTY_ROW }));
  // Data rows start below the header row, which empty rows may push down (lib/apply-plan.ts).
  const firstDataRow = headerRowIndex(before) + 1;
  for (const plan of plans) {
    for (const { index, columns } of plan.replaced) {
      const slot = slots[firstDataRow + index];
      if (slot === undefined) throw new Error(`a write replaces row ${firstDataRow + index + 1} of "${plan.tab}", which it does not have`);
      slots[firstDataRow + index] = { ...slot, written: true, setColumns: new Set([...slot.setColumns, ...columns]) };
    }
    if (plan.removed.length > 0) {
      const removed = new Set(plan.removed.map((index) => firstDataRow + index));
      slots = slots.filter((_slot, position) => !removed.has(position));
    }
    if (plan.appended !== null) {
      let position = firstDataRow + plan.appended.start;
      // Past the old rows a slot stands in the sheet row of its own number (formatting only).
      while (slots.length < position) slots.push(pastTheData(slots.length, before.length));
      for (const row of plan.appended.rows) {
        const here = position < slots.length ? slots[position] : pastTheData(position, before.length);
        const width = Math.max(row.text.length, row.value.length, row.formula?.length ?? 0);
        slots[position] = { ...here, written: true, setColumns: new Set(Array.from({ length: width }, (_unused, column) => column)) };
        position++;
      }
    }
  }
  if (slots.length !== after.length) throw new Error(`replaying the writes gives ${slots.length} rows, not ${after.length}`);
  // Each slot object stands in one place only (a write replaces it with a copy), so it takes its
  // row in place: a copy of each of a 100k-row tab's slots took about 7 MB more (on Bun, 14).
  slots.forEach((slot, index) => (slot.row = after[index]));
  return slots;
}

function pastTheData(position: number, oldRowCount: number): Slot {
  const number = position + 1;
  return { origin: number > oldRowCount ? number : null, originRow: number > oldRowCount ? EMPTY_ROW : null, written: false, setColumns: NO_COLUMNS, row: EMPTY_ROW };
}

/** The columns of a row no write set: one set shared by them all (a write makes a new one), as a 100k-row tab has as many slots. */
const NO_COLUMNS: ReadonlySet<number> = new Set<number>();
