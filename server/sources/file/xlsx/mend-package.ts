// What SheetJS's .xlsx reader gets wrong, mended in the package's XML before it reads it (the
// bytes on disk are never changed): `<si><t>ARREST BOOKINGS for </t><r><t>01/30/17</t></r></si>`
// reads whole instead of "ARREST BOOKINGS for ", `&#128105;` reads as 👩 instead of U+F469, and
// a cell in built-in format 14 shows `10/20/2016` instead of `10/20/16` (and in 39
// `1,234,567.89 `). Also what is no readable package at all: a workbook encrypted with a
// password says so.
import { Buffer } from 'node:buffer';
import { sheetJs } from './sheetjs.ts';

/** What SheetJS's bundled CFB library reads a zip into (untyped in @e965/xlsx): the parts we touch. */
export interface ZipContainer {
  readonly FileIndex: { content?: Uint8Array }[];
  readonly FullPaths: string[];
}

/** The OLE compound file signature: legacy .xls files, and .xlsx/.xlsm files saved with a password. */
const OLE_SIGNATURE = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
const ZIP_SIGNATURE = [0x50, 0x4b, 0x03, 0x04];

export const ENCRYPTED = 'the file is encrypted with a password; sheetrest cannot read encrypted workbooks: save a copy without the password and serve that';

/**
 * Why bytes are not the zip an .xlsx or .ods file is, or null when they are one. SheetJS reads
 * almost anything (plain text becomes a sheet), so this is checked first. Excel encrypts a
 * workbook saved with a password into an OLE compound file holding `EncryptionInfo` and
 * `EncryptedPackage` streams ([MS-OFFCRYPTO]); SheetJS would only say "unsupported file".
 */
export function notAPackage(bytes: Uint8Array, format: string): string | null {
  if (startsWith(bytes, ZIP_SIGNATURE)) return null;
  if (!startsWith(bytes, OLE_SIGNATURE)) return `the file is not a zip-packaged .${format} workbook`;
  try {
    const container = sheetJs().CFB.read(bytes, { type: 'array' });
    if (sheetJs().CFB.find(container, 'EncryptionInfo') !== null || sheetJs().CFB.find(container, 'EncryptedPackage') !== null) return ENCRYPTED;
  } catch {
    // A damaged compound file is not a workbook either.
  }
  return `the file is an OLE compound file (such as a legacy .xls workbook), not a zip-packaged .${format} workbook`;
}

function startsWith(bytes: Uint8Array, signature: readonly number[]): boolean {
  return signature.every((byte, i) => bytes[i] === byte);
}

/** Whether an .xlsx package's workbook is macro-enabled (an .xlsm file), to be written back as one. */
export function isMacroEnabled(zip: ZipContainer): boolean {
  const types: { content?: Uint8Array } | null = sheetJs().CFB.find(zip, '/[Content_Types].xml');
  return types?.content !== undefined && Buffer.from(types.content).includes('macroEnabled.main+xml');
}

/** Mends every XML part of an .xlsx package in place, before SheetJS parses it. */
export function mendXlsxPackage(zip: ZipContainer): void {
  withoutMissingParts(zip);
  zip.FileIndex.forEach((entry, index) => {
    const path = zip.FullPaths[index] ?? '';
    if (entry.content === undefined || !/\.xml$/i.test(path)) return;
    const bytes = Buffer.from(entry.content.buffer, entry.content.byteOffset, entry.content.byteLength);
    // Most parts need nothing: look at the bytes before making a string of a large part.
    // Runs matter in shared strings and in inline strings (`<is>`, rare outside generated files).
    const mayHoldStrings = /(?:^|\/)sharedStrings\.xml$/i.test(path) || bytes.indexOf('is>') !== -1;
    const hasRuns = mayHoldStrings && RUN_STARTS.some((start) => bytes.indexOf(start) !== -1);
    const isStyles = /(?:^|\/)styles\.xml$/i.test(path);
    if (!hasRuns && !isStyles && bytes.indexOf('&#') === -1) return;
    // UTF-8 never uses ASCII bytes inside a multi-byte character: latin1 keeps every byte as it is.
    const before = bytes.toString('latin1');
    let text = astralCharacters(before);
    if (hasRuns) text = wholeRichText(text);
    if (isStyles) text = declareBuiltInFormats(text);
    if (text !== before) entry.content = Buffer.from(text, 'latin1');
  });
}

/**
 * `[Content_Types].xml` without the overrides that name a part the package lacks. A workbook
 * whose content types list `/xl/styles.xml` with no such part (openpyxl and LibreOffice open
 * it, with default styles) stopped SheetJS with "Cannot find file xl/styles.xml in zip"; without
 * the override it reads the workbook with default styles (General), as it does a package that
 * never listed one.
 */
function withoutMissingParts(zip: ZipContainer): void {
  const types: { content?: Uint8Array } | null = sheetJs().CFB.find(zip, '/[Content_Types].xml');
  if (types?.content === undefined) return;
  const before = Buffer.from(types.content.buffer, types.content.byteOffset, types.content.byteLength).toString('latin1');
  const after = before.replace(/<(?:\w+:)?Override\b[^>]*>/g, (tag) => {
    const part = /\sPartName\s*=\s*(?:"([^"]*)"|'([^']*)')/.exec(tag);
    const name = part?.[1] ?? part?.[2];
    return name === undefined || sheetJs().CFB.find(zip, name.startsWith('/') ? name : `/${name}`) !== null ? tag : '';
  });
  if (after !== before) types.content = Buffer.from(after, 'latin1');
}

/** How a rich text run starts, with or without a namespace prefix. */
const RUN_STARTS = ['<r>', '<r ', ':r>', ':r '];

const CHARACTER_REFERENCE = /&#(?:[xX]([0-9a-fA-F]+)|([0-9]+));/g;

/**
 * `&#128105;` as the character's own UTF-8 bytes. SheetJS decodes a character reference with
 * `String.fromCharCode`, which keeps only the low 16 bits of a code point above U+FFFF (👩 came
 * back as U+F469, and a write made that permanent). References below U+10000 decode right and
 * are left as they are.
 */
export function astralCharacters(latin1: string): string {
  if (!latin1.includes('&#')) return latin1;
  return latin1.replace(CHARACTER_REFERENCE, (reference, hex: string | undefined, decimal: string | undefined) => {
    const code = hex === undefined ? Number(decimal) : Number.parseInt(hex, 16);
    if (!(code > 0xffff && code <= 0x10ffff)) return reference;
    return Buffer.from(String.fromCodePoint(code), 'utf8').toString('latin1');
  });
}

/**
 * A shared string (`<si>`) or an inline string (`<is>`) that starts with a plain `<t>` and goes
 * on in rich text runs (`<r>`): SheetJS keeps only the plain text. Wrapped in a run of its own,
 * the whole string is runs, which SheetJS joins. Phonetic runs (`<rPh>`) are not text runs.
 */
const PLAIN_BEFORE_RUNS = /<((?:\w+:)?)(si|is)>(\s*<(?:\w+:)?t(?:\s[^>]*)?>[^<]*<\/(?:\w+:)?t>)(?=\s*<(?:\w+:)?r[\s>])/g;

export function wholeRichText(latin1: string): string {
  return latin1.replace(PLAIN_BEFORE_RUNS, (_whole, prefix: string, element: string, plain: string) => `<${prefix}${element}><${prefix}r>${plain}</${prefix}r>`);
}

/**
 * Built-in number formats a file uses by id without declaring them, as Excel (en-US) shows them.
 * Formats 14 and 22 are "the locale's short date" (and time): SheetJS renders them `m/d/yy`;
 * Excel and LibreOffice show `10/20/2016`. Formats 37 to 40 end their positive section in `_)`
 * (Excel's own codes, as openpyxl's BUILTIN_FORMATS lists them): SheetJS's table has
 * `#,##0.00;(#,##0.00)` for 39, so 1234567.89 showed `1,234,567.89` where Excel shows
 * `1,234,567.89 `, the space as wide as the negative's `)`. Declaring them in the styles part
 * (unless the file declares them itself) makes SheetJS render them so; the cells keep their ids.
 */
const BUILT_IN_FORMATS: readonly [id: number, code: string][] = [
  [14, 'm/d/yyyy'],
  [22, 'm/d/yyyy h:mm'],
  [37, '#,##0_);(#,##0)'],
  [38, '#,##0_);[Red](#,##0)'],
  [39, '#,##0.00_);(#,##0.00)'],
  [40, '#,##0.00_);[Red](#,##0.00)'],
];

export function declareBuiltInFormats(latin1: string): string {
  const sheet = /<((?:\w+:)?)styleSheet\b[^>]*>/.exec(latin1);
  if (sheet === null) return latin1;
  const prefix = sheet[1];
  const declared = BUILT_IN_FORMATS.filter(([id]) => !new RegExp(`<(?:\\w+:)?numFmt\\b[^>]*\\bnumFmtId="${id}"`).test(latin1));
  if (declared.length === 0) return latin1;
  const formats = declared.map(([id, code]) => `<${prefix}numFmt numFmtId="${id}" formatCode="${code}"/>`).join('');
  const list = /<((?:\w+:)?)numFmts\b([^>]*?)(\/?)>/.exec(latin1);
  if (list === null) {
    const at = sheet.index + sheet[0].length;
    return `${latin1.slice(0, at)}<${prefix}numFmts>${formats}</${prefix}numFmts>${latin1.slice(at)}`;
  }
  const at = list.index + list[0].length;
  if (list[3] === '/') return `${latin1.slice(0, list.index)}<${list[1]}numFmts${list[2]}>${formats}</${list[1]}numFmts>${latin1.slice(at)}`;
  return latin1.slice(0, at) + formats + latin1.slice(at);
}
