// Where an .xlsx keeps each tab: `_rels/.rels` -> `xl/workbook.xml` -> its rels, so that tab
// "People" maps to `xl/worksheets/sheet1.xml` and the in-place writer (write.ts) knows which one
// zip part to rewrite. Read at open, so a package sheetrest could not write back is known before
// any write is acknowledged.
import { entryText, readZip, type ZipEntry } from '../zip.ts';
import { attribute, attributeSpans, startTags } from '../xml/attributes.ts';

export type SheetKind = 'worksheet' | 'chartsheet' | 'dialogsheet' | 'macrosheet' | 'unknown';

export interface PackageSheet {
  readonly name: string;
  readonly kind: SheetKind;
  /** The zip part holding the sheet (no leading slash). */
  readonly part: string;
}

export interface XlsxPackage {
  readonly entries: readonly ZipEntry[];
  readonly sheets: readonly PackageSheet[];
  /** The styles part, or null when the workbook has none. */
  readonly stylesPart: string | null;
  /** The workbook part (`xl/workbook.xml`): a styles part sheetrest adds is its relationship (write.ts). */
  readonly workbookPart: string;
}

/** Throws an Error saying why sheetrest cannot rewrite this package. */
export function readPackage(bytes: Uint8Array): XlsxPackage {
  return packageOf(readZip(bytes));
}

/** `readPackage` of a package's entries (read from its file by zip.ts's `ZipFile`, in the fold). */
export function packageOf(entries: readonly ZipEntry[]): XlsxPackage {
  const byName = new Map(entries.map((entry) => [entry.name, entry]));
  const text = (part: string): string => {
    const entry = byName.get(part);
    if (entry === undefined) throw new Error(`its part ${part} is missing`);
    return entryText(entry);
  };
  const rootRels = relationships(text('_rels/.rels'), '');
  const workbookPart = rootRels.find((rel) => rel.type.endsWith('/officeDocument'))?.target;
  if (workbookPart === undefined) throw new Error('it names no workbook part');
  const workbookRels = relationships(text(relsPathOf(workbookPart)), folderOf(workbookPart));
  const sheets: PackageSheet[] = [];
  for (const tag of startTags(text(workbookPart), 'sheet')) {
    const name = attribute(tag, 'name') ?? '';
    // `r:id`, whatever prefix the package gave the relationships namespace.
    const id = attributeSpans(tag).find((span) => /^[^:]+:id$/.test(span.name))?.value;
    const rel = workbookRels.find((candidate) => candidate.id === id);
    if (rel === undefined) throw new Error(`its tab "${name}" has no part`);
    const kind = (/\/(worksheet|chartsheet|dialogsheet|xlMacrosheet)$/.exec(rel.type)?.[1] ?? 'unknown').replace('xlMacrosheet', 'macrosheet') as SheetKind;
    const entry = byName.get(rel.target);
    if (entry === undefined) throw new Error(`its part ${rel.target} is missing`);
    if (kind === 'worksheet' && entry.method !== 0 && entry.method !== 8) throw new Error(`its part ${rel.target} uses zip compression method ${entry.method}`);
    sheets.push({ name, kind, part: rel.target });
  }
  const stylesPart = workbookRels.find((rel) => rel.type.endsWith('/styles'))?.target ?? null;
  return { entries, sheets, stylesPart: stylesPart !== null && byName.has(stylesPart) ? stylesPart : null, workbookPart };
}

export interface Relationship {
  readonly id: string;
  readonly type: string;
  /** The target as a zip part name. */
  readonly target: string;
}

export function relationships(xml: string, folder: string): Relationship[] {
  return startTags(xml, 'Relationship').flatMap((tag) => {
    const target = attribute(tag, 'Target');
    if (target === null || attribute(tag, 'TargetMode') === 'External') return [];
    return [{ id: attribute(tag, 'Id') ?? '', type: attribute(tag, 'Type') ?? '', target: resolvePart(folder, target) }];
  });
}

export function relsPathOf(part: string): string {
  const folder = folderOf(part);
  return `${folder}_rels/${part.slice(folder.length)}.rels`;
}

export function folderOf(part: string): string {
  return part.slice(0, part.lastIndexOf('/') + 1);
}

/** `worksheets/sheet1.xml` seen from `xl/` -> `xl/worksheets/sheet1.xml`; `/xl/x.xml` is absolute. */
function resolvePart(folder: string, target: string): string {
  const segments = (target.startsWith('/') ? target.slice(1) : folder + target).split('/');
  const resolved: string[] = [];
  for (const segment of segments) {
    if (segment === '..') resolved.pop();
    else if (segment !== '.' && segment !== '') resolved.push(segment);
  }
  return resolved.join('/');
}
