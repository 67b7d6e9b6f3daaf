// Folding writes into an .ods file in place: `PATCH /sheets/book/People/2 {"Age": 41}` changes
// that one cell's element in content.xml; every other row and cell keeps its exact XML, every
// other part of the package its exact bytes, and `mimetype` stays the first entry, stored.
// A new cell takes the style of the cell it replaces, else of the cell above it (not the header's).
import { createInterner, headerRowIndex, type SheetRow, type Tab, type Workbook } from '../../../../lib/workbook.ts';
import { LOAD_LIMITS } from '../limits.ts';
import { cellAttributes, cellRunOf, markRow, readOdsContent, readRowXml, resizedRun, rowRuns, type CellRun, type OdsContent, type OdsTable, type RowRun } from './read.ts';
import { buildCell, emptyCell, lendable, type CellInfo } from './cell-write.ts';
import { escapeXml, type StyleKinds } from './xml.ts';
import { attribute, withAttribute } from '../xml/attributes.ts';
import { checkWrittenParts, type AlterPart } from '../xml/well-formed.ts';
import { sourceCells } from '../write-cells.ts';
import { readZip, replacedEntry, unpackEntry, writeZip, type ZipEntry } from '../zip.ts';

export interface OdsPackage {
  readonly entries: readonly ZipEntry[];
  readonly content: OdsContent;
  readonly stylesXml: string;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Throws an Error saying what is wrong (a LoadLimitError past LOAD_LIMITS). */
export function decodeOds(bytes: Uint8Array): { tabs: Tab[]; hidden: boolean[]; ods: OdsPackage } {
  const entries = readZip(bytes);
  // Checked at open, not at the first fold, so no write is acknowledged that could not reach the file.
  const unreadable = entries.find((entry) => entry.method !== 0 && entry.method !== 8);
  if (unreadable !== undefined) throw new Error(`its part ${unreadable.name} uses zip compression method ${unreadable.method}`);
  const part = (name: string) => entries.find((entry) => entry.name === name);
  const contentEntry = part('content.xml');
  if (contentEntry === undefined) throw new Error('the package has no content.xml');
  // A password-protected .ods keeps its manifest readable and says how each part is encrypted.
  const manifest = part('META-INF/manifest.xml');
  if (manifest !== undefined && utf8.decode(unpackEntry(manifest, LOAD_LIMITS.partBytes)).includes('encryption-data')) {
    throw new Error('the file is encrypted (password-protected); save it without a password to serve it');
  }
  const stylesEntry = part('styles.xml');
  const stylesXml = stylesEntry === undefined ? '' : utf8.decode(unpackEntry(stylesEntry, LOAD_LIMITS.partBytes));
  const { content, tabs } = readOdsContent(utf8.decode(unpackEntry(contentEntry, LOAD_LIMITS.partBytes)), stylesXml);
  if (tabs.length === 0) throw new Error('the workbook has no sheets');
  return { tabs, hidden: content.tables.map((table) => table.hidden), ods: { entries, content, stylesXml } };
}

/**
 * The package with `workbook` folded in. Tabs still holding their decoded rows are copied as
 * they are. Afterwards `workbook`'s rows stand for the new file's XML, so the next fold again
 * changes only what the next writes touch. Throws when content.xml would not be well-formed
 * (`alterPart`: the tests' seam, fold-runner.ts).
 */
export function encodeOds(workbook: Workbook, decodedRows: ReadonlyMap<string, readonly SheetRow[]>, ods: OdsPackage, alterPart?: AlterPart): { bytes: Uint8Array; ods: OdsPackage } {
  const { content } = ods;
  const unknown = workbook.tabs.find((tab) => !content.tables.some((table) => table.name === tab.name));
  if (unknown !== undefined) throw new Error(`the tab "${unknown.name}" is not in the file`);
  let xml = '';
  let at = 0;
  const tables: OdsTable[] = [];
  for (const table of content.tables) {
    const tab = workbook.tabs.find((candidate) => candidate.name === table.name);
    xml += content.xml.slice(at, table.start);
    const start = xml.length;
    const untouched = tab === undefined || decodedRows.get(tab.name) === tab.rows;
    const pieces = untouched ? table.pieces : writeTable(table, tab.rows, decodedRows.get(tab.name) ?? [], content.kinds);
    xml += untouched ? content.xml.slice(table.start, table.end) : pieces.map((piece) => (typeof piece === 'string' ? piece : piece.xml)).join('');
    tables.push({ ...table, start, end: xml.length, pieces });
    at = table.end;
  }
  xml += content.xml.slice(at);
  if (alterPart !== undefined) xml = alterPart('content.xml', xml);
  // Only content.xml is written; a fold that would break it fails and the file stays as it was.
  checkWrittenParts(new Map([['content.xml', xml]]));
  const entries = packageEntries(ods.entries, new TextEncoder().encode(xml));
  return { bytes: writeZip(entries), ods: { entries, content: { xml, tables, kinds: content.kinds }, stylesXml: ods.stylesXml } };
}

/** mimetype first and stored (ODF 1.2 part 3, 3.3); content.xml replaced; the rest as they were. */
function packageEntries(entries: readonly ZipEntry[], content: Uint8Array): ZipEntry[] {
  const out: ZipEntry[] = [];
  const mimetype = entries.find((entry) => entry.name === 'mimetype');
  if (mimetype !== undefined) {
    out.push(mimetype.method === 0 ? mimetype : replacedEntry(mimetype, unpackEntry(mimetype, 1024), 0));
  }
  for (const entry of entries) {
    if (entry.name === 'mimetype') continue;
    out.push(entry.name === 'content.xml' ? replacedEntry(entry, content) : entry);
  }
  return out;
}

/** Where the last written row left off: what a new row below it borrows. */
interface Above {
  rowStyle: string | null;
  /** Cell at a column of the row above (null above the first data row: a header's bold is not data's). */
  cell: ((column: number) => CellInfo | undefined) | null;
}

/**
 * The table's pieces with `rows` written in: original row elements as they were (resized where
 * rows of a repeated element were removed or rewritten), written rows as new elements. Every row
 * is pointed at the element that now stands for it.
 */
function writeTable(table: OdsTable, rows: readonly SheetRow[], decoded: readonly SheetRow[], kinds: StyleKinds): (string | RowRun)[] {
  const runs = new Set(table.pieces.filter((piece): piece is RowRun => typeof piece !== 'string'));
  const materialized = new Set(decoded.map((row) => rowRuns.get(row)));
  const anchored = new Map<RowRun | null, RowRun[]>();
  const interner = createInterner();
  let anchor: RowRun | null = null;
  let written = 0;
  const above: Above = { rowStyle: null, cell: null };
  // The header block's last row (lib/workbook.ts): its cells, merged or bold, lend nothing to data.
  const lastHeader = headerRowIndex(rows);
  const emit = (run: RowRun) => {
    const list = anchored.get(anchor) ?? [];
    list.push(run);
    anchored.set(anchor, list);
  };
  for (let n = 0; n < rows.length; ) {
    const run = rowRuns.get(rows[n]);
    if (run !== undefined && runs.has(run)) {
      let repeat = 1;
      while (n + repeat < rows.length && rowRuns.get(rows[n + repeat]) === run) repeat++;
      anchor = run;
      const kept = repeatRun(run, repeat);
      if (kept !== run) for (let k = n; k < n + repeat; k++) markRow(rows[k], kept, interner);
      emit(kept);
      above.rowStyle = attribute(run.startTag, 'table:style-name');
      above.cell = n + repeat - 1 <= lastHeader ? null : cellLookup(run);
      written += repeat;
      n += repeat;
      continue;
    }
    const { xml, cells } = writeRow(rows[n], runs, above, kinds);
    const newRun = readRowXml(xml, kinds);
    markRow(rows[n], newRun, interner);
    emit(newRun);
    above.cell = n <= lastHeader ? null : (column) => cells[column];
    written++;
    n++;
  }
  // Rows after the last one with content (LibreOffice pads to 1,048,576) are kept, less any
  // that would push the tab past the grid's last row.
  const tail = table.pieces.filter((piece): piece is RowRun => typeof piece !== 'string' && !materialized.has(piece));
  let excess = written + tail.reduce((sum, run) => sum + run.count, 0) - LOAD_LIMITS.rows;
  const tailCounts = new Map(tail.map((run) => [run, run.count]));
  for (const run of tail.toReversed()) {
    if (excess <= 0) break;
    const cut = Math.min(excess, run.count);
    tailCounts.set(run, run.count - cut);
    excess -= cut;
  }
  const out: (string | RowRun)[] = [];
  let leadingDone = false;
  for (const piece of table.pieces) {
    if (typeof piece === 'string') {
      out.push(piece);
      continue;
    }
    if (!leadingDone) {
      out.push(...(anchored.get(null) ?? []));
      leadingDone = true;
    }
    if (!materialized.has(piece)) {
      const count = tailCounts.get(piece) ?? piece.count;
      if (count > 0) out.push(repeatRun(piece, count));
    }
    out.push(...(anchored.get(piece) ?? []));
  }
  // A table that had no rows at all: its new rows go before its closing tag.
  if (!leadingDone) {
    const last = out.pop() as string;
    const close = last.lastIndexOf('</table:table>');
    out.push(last.slice(0, close), ...(anchored.get(null) ?? []), last.slice(close));
  }
  return out;
}

/** The run itself when it stands for `count` rows, else a resized copy. */
function repeatRun(run: RowRun, count: number): RowRun {
  if (count === run.count) return run;
  return resizedRun(run, withAttribute(run.startTag, 'table:number-rows-repeated', count === 1 ? null : String(count)), count);
}

function repeatCell(cell: CellRun, count: number): string {
  if (count === cell.count) return cell.xml;
  const startTag = /^<[\w.:-]+(?:\s+[\w.:-]+\s*=\s*(?:"[^"]*"|'[^']*'))*\s*\/?>/.exec(cell.xml)?.[0] ?? cell.xml;
  return withAttribute(startTag, 'table:number-columns-repeated', count === 1 ? null : String(count)) + cell.xml.slice(startTag.length);
}

/** The cell element covering `column` in a row run, with how many of its columns lie from there on. */
function cellAt(run: RowRun, column: number): { cell: CellRun; left: number } | undefined {
  let start = 0;
  for (const cell of run.cells) {
    if (column < start + cell.count) return { cell, left: start + cell.count - column };
    start += cell.count;
  }
  return undefined;
}

function cellLookup(run: RowRun): NonNullable<Above['cell']> {
  return (column) => {
    const cell = cellAt(run, column)?.cell;
    return cell === undefined ? undefined : { style: cell.style, type: cellAttributes(cell)['office:value-type'] ?? null, currency: cellAttributes(cell)['office:currency'] ?? null };
  };
}

/** A row a write replaced or added: its kept cells as they were, the rest built from the values. */
function writeRow(row: SheetRow, runs: ReadonlySet<RowRun>, above: Above, kinds: StyleKinds): { xml: string; cells: (CellInfo | undefined)[] } {
  const cells = sourceCells.get(row) ?? [];
  const kept = (column: number): CellRun | undefined => {
    const object = cells[column];
    const run = object === undefined ? undefined : cellRunOf(object);
    return run !== undefined && runs.has(run.row) ? run : undefined;
  };
  let origin: RowRun | undefined;
  for (let column = 0; column < cells.length && origin === undefined; column++) origin = kept(column)?.row;
  const startTag = origin !== undefined
    ? withAttribute(origin.startTag, 'table:number-rows-repeated', null).replace(/\s*\/>$/, '>')
    : above.rowStyle === null ? '<table:table-row>' : `<table:table-row table:style-name="${escapeXml(above.rowStyle)}">`;
  const width = Math.max(row.text.length, row.value.length, row.formula?.length ?? 0);
  const written: (CellInfo | undefined)[] = [];
  let xml = startTag;
  for (let column = 0; column < width; ) {
    const run = kept(column);
    if (run !== undefined) {
      let repeat = 1;
      while (column + repeat < width && kept(column + repeat) === run) repeat++;
      xml += repeatCell(run, repeat);
      for (let n = 0; n < repeat; n++) written.push({ style: run.style, type: cellAttributes(run)['office:value-type'] ?? null, currency: cellAttributes(run)['office:currency'] ?? null });
      column += repeat;
      continue;
    }
    const previous = origin === undefined ? undefined : cellAt(origin, column)?.cell;
    const built = buildCell(row.text[column] ?? '', row.value[column] ?? null, row.formula?.[column], previous, lendable(above.cell?.(column), row.value[column] ?? null, kinds));
    xml += built.xml;
    written.push(built.info);
    column++;
  }
  // Past the last value: what the row held there, emptied where the write cleared it.
  for (let column = width; origin !== undefined; ) {
    const found = cellAt(origin, column);
    if (found === undefined) break;
    const { cell, left } = found;
    xml += cell.text === '' && cell.value === null ? repeatCell(cell, left) : emptyCell(cell, left);
    column += left;
  }
  return { xml: xml + '</table:table-row>', cells: written };
}
