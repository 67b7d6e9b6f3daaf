// Folding writes into an .xlsx without decoding the workbook: after `POST /sheets/People` on a
// 100k-row file, People's worksheet part is read twice as a stream (sheet-stream.ts) and written
// once, deflated as it goes; rows no write touched are copied as text, never parsed into cells.
// The first read surveys it: which rows exist, and the XML of the few rows the fold must know as
// SheetJS reads them (the header row and those above it, the rows the writes replace or take the
// place of, and the last row, which fixes the tab's length when no `<dimension>` does). Those
// rows alone, in a package otherwise the file's own, are decoded by SheetJS: the model rows the
// writes were planned on, exactly as a full decode gives them, at the cost of a few rows (in the
// fold's worker, the main thread decodes them: `DecodeKept`). The second read writes the new part
// (xlsx/sheet.ts builds each written row as `rewriteSheet` does), deflated into pieces that go
// into the new package as they are, beside the other parts' bytes copied from the old file.
// Where a shortcut's assumption does not hold (rows out of order, no header among the first
// rows), `foldXlsxStreaming` answers null and the fold decodes the whole file as before (fold.ts).
import { applyKeepingCells } from '../rebase.ts';
import type { WritePlan } from '../../../../lib/write-plan.ts';
import { EMPTY_ROW, headerRowIndex, type SheetRow, type Workbook } from '../../../../lib/workbook.ts';
import { packageOf, type PackageSheet, type XlsxPackage } from './package.ts';
import { bookUsesDate1904, readBook, sparseRowsOfTab } from './read-cells.ts';
import { loadSheetJs } from './sheetjs.ts';
import { buildRow, dropOrphans, hasSharedFormula, parseColumnStyles, renumberRow, setDimension, sharedMasters, styleAbove, type XmlRow } from './sheet.ts';
import { attribute } from '../xml/attributes.ts';
import { checkWrittenParts } from '../xml/well-formed.ts';
import { readSheet, PartWriter, type RawRow } from './sheet-stream.ts';
import { RowShift } from './ranges.ts';
import { formatsFrom, knownFormats, Styles, type FormatFacts, type KnownFormats } from './styles.ts';
import { slotsOf } from './write.ts';
import { FORMAT_LIMITS, LOAD_LIMITS } from '../limits.ts';
import { entryText, packedEntry, readZip, replacedEntry, writeZip, type SpoolFile, type ZipEntry } from '../zip.ts';

/** Rows kept from the top of a sheet to find its header row in; a sheet whose header lies lower is folded the old way. */
const HEADER_SEARCH_ROWS = 1_000;
/** Rows with a value kept from the top: the header is the first whose text is not blank, almost always the first. */
const HEADER_SEARCH_VALUE_ROWS = 16;
/** Past this many rows to decode (a journal of thousands of scattered writes), the whole file is decoded instead. */
const MAX_DECODED_ROWS = 20_000;

/**
 * Called between unpacked pieces of the sheet (every PIECES_PER_COLLECT) and between the fold's
 * steps, where the garbage of the pieces before is all there is to free. The fold's worker on Bun
 * collects it there (fold-worker.ts): JavaScriptCore let it pile up for tens of megabytes.
 */
export type Collect = () => void;

/** 8 pieces: 512 KiB of XML between collections (more often made the fold slower, less often its peak higher; docs/benchmarks.md). */
const PIECES_PER_COLLECT = 8;

/**
 * The few rows of one tab SheetJS reads from a package cut down to them (`decodeRows`): by
 * default here (`decodeKeptRows`); the fold's worker asks the main thread, where SheetJS is
 * loaded already, so that the worker does not load it (fold-worker.ts: about 7 MB on Bun).
 */
export type DecodeKept = (pack: Uint8Array, tab: string, stylesXml: string, rowNumbers: readonly number[]) => Promise<KeptRows | null>;

/** What `decodeKeptRows` found: the rows that hold something, by index, of a tab `length` rows long (every other row empty). */
export interface KeptRows {
  readonly sheetNames: readonly string[];
  readonly date1904: boolean;
  readonly length: number;
  readonly rows: readonly (readonly [number, SheetRow])[];
  /** SSF's answers about the styles part's number formats, for the rows the fold writes (styles.ts). */
  readonly formats: KnownFormats;
}

export interface StreamingFoldOptions {
  readonly collect?: Collect;
  readonly decode?: DecodeKept;
  /** Where the written sheets' deflated bytes wait for the package to be written (else in memory). */
  readonly spool?: SpoolFile;
}

/**
 * The package of `entries` (readZip's, or a ZipFile's read by offset) with `plans` folded in: its
 * entries, the written sheets' packed in pieces and every other part's as it was (zip.ts
 * `zipPieces` writes them out); null when this file needs the full decode (fold.ts).
 */
export async function foldXlsxStreaming(package_: Uint8Array | readonly ZipEntry[], plans: readonly WritePlan[], options: StreamingFoldOptions = {}): Promise<ZipEntry[] | null> {
  const { collect, decode = decodeKeptRows, spool } = options;
  let pack: XlsxPackage;
  try {
    pack = packageOf(package_ instanceof Uint8Array ? readZip(package_) : package_);
  } catch {
    return null; // the full decode says why this package cannot be written
  }
  if (pack.entries.some((entry) => entry.size > LOAD_LIMITS.partBytes)) return null;
  // A workbook without a styles part (issue 24, part 11): the full decode adds one when a write
  // needs a date style (write.ts, withStylesPart); such a file is small and rare.
  if (pack.stylesPart === null) return null;
  const byName = new Map(pack.entries.map((entry) => [entry.name, entry]));
  const stylesXml = entryText(byName.get(pack.stylesPart)!);
  // Made once the first sheet's rows are decoded, with what SheetJS said of the formats (styles.ts).
  let styles: Styles | undefined;
  const written = pack.sheets.filter((sheet) => plans.some((plan) => plan.tab === sheet.name));
  const unknown = plans.find((plan) => !pack.sheets.some((sheet) => sheet.name === plan.tab));
  if (unknown !== undefined) throw new Error(`the tab "${unknown.tab}" is not in the file`);
  const replaced = new Map<string, ZipEntry>();
  for (const sheet of written) {
    if (sheet.kind !== 'worksheet') throw new Error(`the tab "${sheet.name}" is a ${sheet.kind}, not a worksheet`);
    const tabPlans = plans.filter((plan) => plan.tab === sheet.name);
    const survey = await surveySheet(byName.get(sheet.part)!, tabPlans, everyPieces(collect));
    if (survey === null) return null;
    const decoded = await decodeRows(pack, sheet, survey, (cut, rowNumbers) => decode(cut, sheet.name, stylesXml, rowNumbers));
    if (decoded === null) return null;
    styles ??= new Styles(stylesXml, null, decoded.formats);
    collect?.();
    const entry = await rewriteSheetStreaming(byName.get(sheet.part)!, survey, decoded, tabPlans, styles, stylesXml, collect, spool);
    if (entry === null) return null;
    replaced.set(sheet.part, entry);
  }
  const changedStyles = styles?.changedXml ?? null;
  if (changedStyles !== null && pack.stylesPart !== null) replaced.set(pack.stylesPart, replacedEntry(byName.get(pack.stylesPart)!, changedStyles));
  // The rows' slots are garbage now, before the new package is written.
  collect?.();
  return pack.entries.map((entry) => replaced.get(entry.name) ?? entry);
}

/**
 * The most XML the main thread decodes for the fold's worker: 256 KiB, a few milliseconds of
 * SheetJS (the benchmark files' cut packages hold 12-35 KB). A package whose other parts are
 * bigger (an Excel file's shared strings: megabytes for 100k rows) is decoded in the worker.
 */
const MAIN_THREAD_DECODE_BYTES = 256 * 1024;

/** Whether the worker hands the cut package `pack` to the main thread to decode (fold-worker.ts). */
export function decodedOnTheMainThread(pack: Uint8Array): boolean {
  return readZip(pack).reduce((sum, entry) => sum + entry.size, 0) <= MAIN_THREAD_DECODE_BYTES;
}

/**
 * SheetJS's reading of the tab `tab` in the cut-down package `pack` (loaded in this thread if it
 * was not), and what it says of the number formats of `stylesXml`; null when it does not read.
 */
export async function decodeKeptRows(pack: Uint8Array, tab: string, stylesXml: string, rowNumbers: readonly number[]): Promise<KeptRows | null> {
  await loadSheetJs();
  let book: ReturnType<typeof readBook>;
  try {
    book = readBook(pack);
  } catch {
    return null; // the full decode reads the file itself, and says what is wrong with it
  }
  // The rows tabsOfBook would give, without a pass over the 100,001 a sheet's range may span:
  // the package holds no other rows.
  const found = sparseRowsOfTab(book, tab, rowNumbers.map((number) => number - 1));
  if (found === undefined) return null;
  return { sheetNames: book.SheetNames, date1904: bookUsesDate1904(book), length: found.length, rows: [...found.rows], formats: knownFormats(stylesXml) };
}

/** What the first read of a worksheet part found. */
interface Survey {
  head: string;
  tail: string;
  /** Which rows exist, and which hold a cell. */
  readonly rows: RowFlags;
  /** The XML of the rows to decode, by number. */
  readonly kept: Map<number, RawRow>;
  /** Every row up to this number is in `kept`. */
  keptThrough: number;
  /** The first row holding a value: the header row, unless its values are all blank. */
  firstValueRow: number | null;
  /** Where each shared formula's text is: `si` -> row number. */
  readonly masters: Map<string, number>;
  lastRow: RawRow | null;
}

/** The first read; null when the sheet's rows are not in ascending order or too many rows would be decoded. */
async function surveySheet(entry: ZipEntry, plans: readonly WritePlan[], pieceDone?: () => void): Promise<Survey | null> {
  const survey: Survey = { head: '', tail: '', rows: new RowFlags(), kept: new Map(), keptThrough: 0, firstValueRow: null, masters: new Map(), lastRow: null };
  let inOrder = true;
  let valueRows = 0;
  let prefixOpen = true;
  let wanted: ReadonlySet<number> = new Set();
  await readSheet(entry, {
    head: (text) => (survey.head = text),
    tail: (text) => (survey.tail = text),
    row: (row) => {
      // Out of order, or past the last row a sheet can have (a hostile r="999999999"): the full decode's to judge.
      if ((survey.lastRow !== null && row.number <= survey.lastRow.number) || !(row.number >= 1 && row.number <= FORMAT_LIMITS.xlsx!.rows)) inOrder = false;
      survey.lastRow = row;
      const hasCell = /<(?:\w+:)?c\b/.test(row.inner);
      if (inOrder) survey.rows.add(row.number, hasCell);
      const hasValue = hasCell && /<(?:\w+:)?(?:v|is)\b/.test(row.inner);
      if (hasValue && survey.firstValueRow === null) {
        survey.firstValueRow = row.number;
        // Rows are numbered from the header row: the ones the writes name are known from here on.
        wanted = rowsNamed(plans, row.number);
      }
      if (prefixOpen && (row.number > HEADER_SEARCH_ROWS || valueRows >= HEADER_SEARCH_VALUE_ROWS)) prefixOpen = false;
      if (prefixOpen) {
        survey.kept.set(row.number, row);
        survey.keptThrough = row.number;
        if (hasValue) valueRows++;
      } else if (wanted.has(row.number)) {
        survey.kept.set(row.number, row);
      }
      if (hasSharedFormula(row.inner)) for (const si of sharedMasters(row.inner)) survey.masters.set(si, row.number);
    },
    pieceDone,
  });
  if (!inOrder || survey.kept.size > MAX_DECODED_ROWS) return null;
  if (prefixOpen) survey.keptThrough = Infinity;
  return survey;
}

/**
 * Sheet rows (1-based) the writes may replace or take the place of, when data starts below
 * `headerRow`: a data row index moves down by as many rows as earlier writes removed, so each
 * index stands for a range of rows.
 */
function rowsNamed(plans: readonly WritePlan[], headerRow: number): Set<number> {
  const removed = plans.reduce((sum, plan) => sum + plan.removed.length, 0);
  const rows = new Set<number>();
  const add = (index: number): void => {
    for (let row = headerRow + 1 + index; row <= headerRow + 1 + index + removed && rows.size <= MAX_DECODED_ROWS; row++) rows.add(row);
  };
  for (const plan of plans) {
    for (const { index } of plan.replaced) add(index);
    if (plan.appended !== null) for (let offset = 0; offset < plan.appended.rows.length; offset++) add(plan.appended.start + offset);
  }
  return rows;
}

interface Decoded {
  /** The tab's rows as a full decode gives them, where kept; every other row stands empty. */
  readonly rows: readonly SheetRow[];
  readonly date1904: boolean;
  readonly formats: FormatFacts;
}

/** SheetJS's reading of the kept rows, in the package with every other worksheet emptied; null when the header row is not among them. */
async function decodeRows(pack: XlsxPackage, sheet: PackageSheet, survey: Survey, decode: (cut: Uint8Array, rowNumbers: readonly number[]) => Promise<KeptRows | null>): Promise<Decoded | null> {
  const rows = [...survey.kept.values()];
  if (survey.lastRow !== null && !survey.kept.has(survey.lastRow.number)) rows.push(survey.lastRow);
  rows.sort((a, b) => a.number - b.number);
  // SheetJS puts a row where parseInt of its `r` says, which the rows SheetJS is asked for
  // (decodeKeptRows) take it to be: an `r` of `1e3` or `3.5` is the full decode's to judge.
  if (rows.some((row) => !Number.isInteger(row.number) || parseInt(attribute(/^<[^>]*>/.exec(row.xml)![0], 'r') ?? String(row.number), 10) !== row.number)) return null;
  const prefix = /<(\w+:)?worksheet\b/.exec(survey.head)?.[1] ?? '';
  // Each row keeps its number: the rows between them are gone.
  const body = rows.map((row) => (/^<[^>]*\sr\s*=/.test(row.xml) ? row.xml : row.xml.replace(/^<((?:\w+:)?row)\b/, `<$1 r="${row.number}"`))).join('');
  const xml = `${survey.head}<${prefix}sheetData>${body}</${prefix}sheetData>${survey.tail}`;
  const EMPTY_SHEET = '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData/></worksheet>';
  const entries = pack.entries.map((entry) => {
    if (entry.name === sheet.part) return replacedEntry(entry, xml, 0);
    const other = pack.sheets.find((candidate) => candidate.part === entry.name && candidate.kind === 'worksheet');
    return other === undefined ? entry : replacedEntry(entry, EMPTY_SHEET, 0);
  });
  const kept = await decode(writeZip(entries), rows.map((row) => row.number));
  if (kept === null) return null;
  const names = pack.sheets.map((candidate) => candidate.name);
  if (names.length !== kept.sheetNames.length || names.some((name, index) => name !== kept.sheetNames[index])) return null;
  // The rows without cells are the one shared empty row, as a full decode gives them (read-cells.ts).
  const tabRows: SheetRow[] = new Array<SheetRow>(kept.length).fill(EMPTY_ROW);
  for (const [index, row] of kept.rows) tabRows[index] = row;
  const header = headerRowIndex(tabRows);
  const headerFound = tabRows[header]?.text.some((text) => text.trim() !== '') ?? false;
  // Unless every row was kept, the header row must be among the rows kept from the top, and be
  // the row the wanted rows were counted from.
  if (survey.keptThrough !== Infinity && (!headerFound || header + 1 > survey.keptThrough || header + 1 !== survey.firstValueRow)) return null;
  return { rows: tabRows, date1904: kept.date1904, formats: formatsFrom(kept.formats) };
}

/** The second read, writing the new part; null when a written row's XML was not kept. */
async function rewriteSheetStreaming(entry: ZipEntry, survey: Survey, decoded: Decoded, plans: readonly WritePlan[], styles: Styles, stylesXml: string | null, collect?: Collect, spool?: SpoolFile): Promise<ZipEntry | null> {
  const before = decoded.rows;
  const name = plans[0].tab;
  const workbook: Workbook = { tabs: [{ name, rows: before }] };
  const after = plans.reduce(applyKeepingCells, workbook).tabs[0].rows;
  const slots = slotsOf(before, plans, after);
  const oldRowCount = before.length;
  // Origins ascend with the rows (a DELETE closes up, an append goes below): one read in order finds them all.
  let lastOrigin = 0;
  for (const slot of slots) {
    if (slot.origin === null) continue;
    if (slot.origin <= lastOrigin) return null;
    lastOrigin = slot.origin;
    if (slot.written && survey.rows.exists(slot.origin) && !survey.kept.has(slot.origin)) return null;
  }
  const shift = RowShift.of(slots, oldRowCount);
  const prefix = /<(\w+:)?worksheet\b/.exec(survey.head)?.[1] ?? '';
  const columnStyles = parseColumnStyles(survey.head);
  const xmlRow = (row: RawRow | undefined): XmlRow | undefined => (row === undefined ? undefined : { number: row.number, start: /^<[^>]*>/.exec(row.xml)![0], inner: row.inner, xml: row.xml });

  // The head comes first but its `<dimension>` covers the rows written: built once beforehand
  // (with styles of their own, so the real ones gain nothing unused), they tell where cells end.
  const dryStyles = new Styles(stylesXml, null, decoded.formats);
  const copied = new Set<number>();
  if (survey.masters.size > 0) for (const slot of slots) if (!slot.written && slot.origin !== null) copied.add(slot.origin);
  const pastTheData = Math.max(slots.length, oldRowCount);
  // The shared formulas whose text stays in the sheet: rows copied, and the written rows' kept cells (below).
  const masters = new Set<string>();
  for (const [si, row] of survey.masters) if (copied.has(row) || row > pastTheData) masters.add(si);
  let lastRow = 0;
  let lastColumn = 0;
  for (let index = 0; index < slots.length; index++) {
    const slot = slots[index];
    if (!slot.written) {
      if (slot.origin !== null && survey.rows.holdsCells(slot.origin)) lastRow = index + 1;
      continue;
    }
    const built = buildRow(slot, xmlRow(slot.origin === null ? undefined : survey.kept.get(slot.origin)), index + 1, prefix, shift, () => null, dryStyles, decoded.date1904);
    if (built === null) continue;
    for (const si of sharedMasters(built.inner)) masters.add(si);
    if (built.cells !== undefined && built.cells.length > 0) lastRow = index + 1;
    for (const cell of built.cells ?? []) lastColumn = Math.max(lastColumn, cell.column);
  }
  for (let number = pastTheData + 1; number <= survey.rows.last; number++) if (survey.rows.holdsCells(number)) lastRow = number;

  collect?.();
  const writer = new PartWriter(spool);
  const piecesRead = everyPieces(collect);
  /** The rows this fold built or renumbered (checked as they go out), as against rows copied as they were. */
  const made = new WeakSet<XmlRow>();
  // Written cells take no style from the header block's rows (sheet.ts, styleAbove).
  const headerRows = headerRowIndex(decoded.rows) + 1;
  // A written row takes its cells' style from the nearest styled cell above, within 1,000 rows
  // (sheet.ts): the rows written are held that long before a written one, and no longer.
  const writtenAt = slots.flatMap((slot, index) => (slot.written ? [index + 1] : []));
  let nextWritten = 0;
  let recent: XmlRow[] = [];
  const put = (row: RawRow | XmlRow, position: number): void => {
    while (nextWritten < writtenAt.length && writtenAt[nextWritten] <= position) nextWritten++;
    if (nextWritten < writtenAt.length && writtenAt[nextWritten] - position <= 1_000) {
      recent.push('start' in row ? row : xmlRow(row)!);
      if (recent.length >= 2_000) recent = recent.slice(-1_000);
    } else if (recent.length > 0) {
      recent = [];
    }
    const xml = hasSharedFormula(row.xml) ? dropOrphans(row.xml, masters) : row.xml;
    // What this fold made (a written row, a row renumbered, a formula dropped) is checked as it
    // goes out; a row copied as the file had it is the file's own bytes.
    if (xml !== row.xml || ('start' in row && made.has(row))) checkWrittenParts(new Map([[entry.name, xml]]));
    writer.write(xml);
  };
  let next = 0;
  /** Writes the slots up to the one standing in old row `number`, which is `current` (Infinity: all that are left). */
  const writeSlotsThrough = (number: number, current?: RawRow): void => {
    for (; next < slots.length; next++) {
      const slot = slots[next];
      if (slot.origin !== null && slot.origin > number) break;
      // An origin below `number` has no row in the sheet: it would have come by already.
      const origin = slot.origin === number ? current : undefined;
      const position = next + 1;
      if (!slot.written) {
        if (origin === undefined) continue;
        if (origin.number === position) put(origin, position);
        else {
          const renumbered = renumberRow(xmlRow(origin)!, position, shift);
          made.add(renumbered);
          put(renumbered, position);
        }
        continue;
      }
      const built = buildRow(slot, xmlRow(origin), position, prefix, shift, (column) => styleAbove(recent, column, headerRows) ?? columnStyles(column), styles, decoded.date1904);
      if (built !== null) {
        made.add(built);
        put(built, position);
      }
    }
  };
  let headOut = '';
  try {
    await readSheet(entry, {
      head: (text) => {
        headOut = `${setDimension(text, lastRow, lastColumn)}<${prefix}sheetData>`;
        writer.write(headOut);
      },
      row: (row) => {
        if (row.number > pastTheData) {
          // Rows past the data (formatting only, as a template has) keep their numbers.
          writeSlotsThrough(Infinity);
          put(row, row.number);
          return;
        }
        writeSlotsThrough(row.number, row);
      },
      tail: (text) => {
        writeSlotsThrough(Infinity);
        const tailOut = `</${prefix}sheetData>${shift.removesRows ? shift.shiftRanges(text) : text}`;
        // The part's frame (its head and tail, which the fold rewrote), as one document around no rows.
        checkWrittenParts(new Map([[entry.name, headOut + tailOut]]));
        writer.write(tailOut);
      },
      pieceDone: () => {
        piecesRead?.();
        return writer.flush();
      },
    });
  } catch (error) {
    writer.abandon();
    throw error;
  }
  return packedEntry(entry, await writer.finish());
}

/** `collect` every PIECES_PER_COLLECT calls (undefined without one). */
function everyPieces(collect: Collect | undefined): (() => void) | undefined {
  if (collect === undefined) return undefined;
  let pieces = 0;
  return () => {
    if (++pieces % PIECES_PER_COLLECT === 0) collect();
  };
}

/** A byte per row number (a million rows: 1 MB, where two sets of numbers took tens). */
class RowFlags {
  #flags = new Uint8Array(1024);
  /** The highest row number seen. */
  last = 0;

  add(number: number, holdsCells: boolean): void {
    if (number >= this.#flags.length) {
      const grown = new Uint8Array(Math.max(number + 1, this.#flags.length * 2));
      grown.set(this.#flags);
      this.#flags = grown;
    }
    this.#flags[number] = holdsCells ? EXISTS | HOLDS_CELLS : EXISTS;
    this.last = Math.max(this.last, number);
  }

  exists(number: number): boolean {
    return ((this.#flags[number] ?? 0) & EXISTS) !== 0;
  }

  holdsCells(number: number): boolean {
    return ((this.#flags[number] ?? 0) & HOLDS_CELLS) !== 0;
  }
}

const EXISTS = 1;
const HOLDS_CELLS = 2;
