// Builds .xlsx packages from XML written by hand, for reads that depend on exactly how another
// program wrote the file (a plain `<t>` before rich text runs, `&#128105;`, format id 14, a
// hidden tab): `xlsxOf({ sheets: [{ name: 'S', rows: '<row r="1">...</row>' }] })` -> bytes.
import * as XLSX from '@e965/xlsx';

export interface XmlSheet {
  readonly name: string;
  /** The `<sheetData>` content: `<row r="1"><c r="A1" t="s"><v>0</v></c></row>`. */
  readonly rows: string;
  readonly state?: 'hidden' | 'veryHidden';
}

export interface XmlWorkbook {
  readonly sheets: readonly XmlSheet[];
  /** The `<si>` entries of the shared strings part, or none. */
  readonly sharedStrings?: readonly string[];
  /** The `<cellXfs>` entries' number format ids (style 0 first); default just General. */
  readonly cellFormats?: readonly number[];
  /** `<numFmt>` elements of the styles part. */
  readonly numFmts?: string;
  /** Write the workbook as macro-enabled, with a (dummy) VBA project part. */
  readonly macros?: boolean;
}

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG_REL = 'http://schemas.openxmlformats.org/package/2006/relationships';
const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';

/** The VBA project's bytes in a test package: only kept and compared, never run. */
export const VBA_BYTES = new TextEncoder().encode('not really a VBA project');

export function xlsxOf(book: XmlWorkbook): Uint8Array {
  const parts: Record<string, string | Uint8Array> = {};
  const mainType = book.macros ? 'application/vnd.ms-excel.sheet.macroEnabled.main+xml' : 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml';
  const overrides = [
    `<Override PartName="/xl/workbook.xml" ContentType="${mainType}"/>`,
    '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>',
    ...book.sheets.map((_, i) => `<Override PartName="/xl/worksheets/sheet${i + 1}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`),
  ];
  const rels = book.sheets.map((_, i) => `<Relationship Id="rId${i + 1}" Type="${REL}/worksheet" Target="worksheets/sheet${i + 1}.xml"/>`);
  rels.push(`<Relationship Id="rIdStyles" Type="${REL}/styles" Target="styles.xml"/>`);
  if (book.sharedStrings !== undefined) {
    overrides.push('<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>');
    rels.push(`<Relationship Id="rIdStrings" Type="${REL}/sharedStrings" Target="sharedStrings.xml"/>`);
    const count = book.sharedStrings.length;
    parts['xl/sharedStrings.xml'] = `${XML}<sst xmlns="${MAIN}" count="${count}" uniqueCount="${count}">${book.sharedStrings.map((si) => `<si>${si}</si>`).join('')}</sst>`;
  }
  if (book.macros) {
    rels.push(`<Relationship Id="rIdVba" Type="http://schemas.microsoft.com/office/2006/relationships/vbaProject" Target="vbaProject.bin"/>`);
    parts['xl/vbaProject.bin'] = VBA_BYTES;
  }
  const vbaDefault = book.macros ? '<Default Extension="bin" ContentType="application/vnd.ms-office.vbaProject"/>' : '';
  parts['[Content_Types].xml'] = `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>${vbaDefault}${overrides.join('')}</Types>`;
  parts['_rels/.rels'] = `${XML}<Relationships xmlns="${PKG_REL}"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`;
  const sheets = book.sheets.map((sheet, i) => `<sheet name="${sheet.name}" sheetId="${i + 1}"${sheet.state === undefined ? '' : ` state="${sheet.state}"`} r:id="rId${i + 1}"/>`);
  parts['xl/workbook.xml'] = `${XML}<workbook xmlns="${MAIN}" xmlns:r="${REL}"><sheets>${sheets.join('')}</sheets></workbook>`;
  parts['xl/_rels/workbook.xml.rels'] = `${XML}<Relationships xmlns="${PKG_REL}">${rels.join('')}</Relationships>`;
  const formats = book.cellFormats ?? [0];
  const xfs = formats.map((id) => `<xf numFmtId="${id}" fontId="0" fillId="0" borderId="0"${id === 0 ? '' : ' applyNumberFormat="1"'}/>`).join('');
  const numFmts = book.numFmts === undefined ? '' : `<numFmts>${book.numFmts}</numFmts>`;
  parts['xl/styles.xml'] =
    `${XML}<styleSheet xmlns="${MAIN}">${numFmts}<fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts>` +
    '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>' +
    '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>' +
    '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>' +
    `<cellXfs count="${formats.length}">${xfs}</cellXfs></styleSheet>`;
  book.sheets.forEach((sheet, i) => {
    parts[`xl/worksheets/sheet${i + 1}.xml`] = `${XML}<worksheet xmlns="${MAIN}" xmlns:r="${REL}"><sheetData>${sheet.rows}</sheetData></worksheet>`;
  });
  return zipOf(parts);
}

/** A zip of the given parts, in the given order. */
export function zipOf(parts: Record<string, string | Uint8Array>): Uint8Array {
  const CFB = XLSX.CFB;
  const zip = CFB.utils.cfb_new();
  for (const [path, content] of Object.entries(parts)) {
    CFB.utils.cfb_add(zip, path, typeof content === 'string' ? new TextEncoder().encode(content) : content);
  }
  return new Uint8Array(CFB.write(zip, { fileType: 'zip', type: 'array' }) as ArrayBuffer);
}

/** The parts of a zip package, by path. */
export function partsOf(bytes: Uint8Array): Map<string, Uint8Array> {
  const zip = XLSX.CFB.read(bytes, { type: 'array' });
  const parts = new Map<string, Uint8Array>();
  zip.FileIndex.forEach((entry: { type: number; content?: Uint8Array }, index: number) => {
    // SheetJS's CFB adds a placeholder entry (`\u0001Sh33tJ5`) that is no part of the package.
    if (entry.type === 2 && entry.content !== undefined && !String(zip.FullPaths[index]).includes('\u0001')) parts.set(String(zip.FullPaths[index]).replace(/^[^/]*\//, ''), new Uint8Array(entry.content));
  });
  return parts;
}
