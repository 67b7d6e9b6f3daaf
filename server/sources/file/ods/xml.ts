// The little XML an .ods file needs, by hand: a tag scanner that keeps every byte's position
// (so untouched XML can be copied as it is), attributes, escapes, and which cell styles show
// dates (`<style:style style:name="ce1" style:data-style-name="N37">` with N37 a date style).

/**
 * One tag per match: 1 `/` when closing, 2 the qualified name, 3 the attributes, 4 `/` when
 * self-closing. Comments, CDATA, processing instructions and DOCTYPE match with no name.
 * Attribute values may hold `>`, so they are matched whole.
 */
export const TAG = /<(?:(\/)?([\w.-]+(?::[\w.-]+)?)((?:\s+[\w.:-]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/)?>|!--[\s\S]*?-->|!\[CDATA\[[\s\S]*?\]\]>|\?[\s\S]*?\?>|!DOCTYPE[^>]*>)/g;

const ATTRIBUTE = /([\w.:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

export function attributesOf(text: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  if (text === undefined || text === '') return attributes;
  for (const match of text.matchAll(ATTRIBUTE)) attributes[match[1]] = decodeXml(match[2] ?? match[3] ?? '');
  return attributes;
}

const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

export function decodeXml(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(?:#x([0-9a-fA-F]+)|#([0-9]+)|(lt|gt|amp|quot|apos));/g, (whole, hex?: string, decimal?: string, name?: string) => {
    if (name !== undefined) return NAMED[name];
    const code = hex !== undefined ? Number.parseInt(hex, 16) : Number(decimal);
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

/** Text for an attribute value or element content; `\r` as a reference so parsers keep it. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"\r]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&#13;'));
}

export interface StyleKinds {
  /** Cell style name -> what its number format shows, when a date or a time. */
  readonly cellKinds: ReadonlyMap<string, 'date' | 'time'>;
  /**
   * Table styles that hide their table: `<style:table-properties table:display="false"/>`, as
   * LibreOffice writes a hidden sheet, in the style itself or the style it inherits from.
   */
  readonly hiddenTables: ReadonlySet<string>;
}

const NUMBER_STYLE = /<number:(date|time)-style\b((?:\s+[\w.:-]+\s*=\s*(?:"[^"]*"|'[^']*'))*)/g;
const STYLE = /<style:style\b((?:\s+[\w.:-]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>/g;
const TABLE_PROPERTIES = /<style:table-properties\b((?:\s+[\w.:-]+\s*=\s*(?:"[^"]*"|'[^']*'))*)/;

/** Styles from content.xml's automatic styles and styles.xml's common ones. */
export function styleKinds(contentXml: string, stylesXml: string): StyleKinds {
  const numberKinds = new Map<string, 'date' | 'time'>();
  const cellStyles = new Map<string, { data: string | null; parent: string | null }>();
  // content.xml's automatic styles come second, so a name defined in both files means its own.
  const tableStyles = new Map<string, { display: string | null; parent: string | null }>();
  for (const xml of [stylesXml, contentXml]) {
    for (const match of xml.matchAll(NUMBER_STYLE)) {
      const name = attributesOf(match[2])['style:name'];
      if (name !== undefined) numberKinds.set(name, match[1] as 'date' | 'time');
    }
    for (const match of xml.matchAll(STYLE)) {
      const attributes = attributesOf(match[1]);
      const name = attributes['style:name'];
      if (name === undefined) continue;
      if (attributes['style:family'] === 'table-cell') {
        cellStyles.set(name, { data: attributes['style:data-style-name'] ?? null, parent: attributes['style:parent-style-name'] ?? null });
      } else if (attributes['style:family'] === 'table') {
        const start = (match.index ?? 0) + match[0].length;
        const body = match[2] === '/' ? '' : xml.slice(start, xml.indexOf('</style:style>', start));
        const properties = TABLE_PROPERTIES.exec(body);
        const display = properties === null ? undefined : attributesOf(properties[1])['table:display'];
        tableStyles.set(name, { display: display ?? null, parent: attributes['style:parent-style-name'] ?? null });
      }
    }
  }
  const cellKinds = new Map<string, 'date' | 'time'>();
  for (const name of cellStyles.keys()) {
    let style = cellStyles.get(name);
    // A style without a number format of its own shows its parent's.
    for (let hops = 0; style !== undefined && hops < 32; hops++) {
      const kind = style.data === null ? undefined : numberKinds.get(style.data);
      if (kind !== undefined) cellKinds.set(name, kind);
      if (kind !== undefined || style.data !== null || style.parent === null) break;
      style = cellStyles.get(style.parent);
    }
  }
  const hiddenTables = new Set<string>();
  for (const name of tableStyles.keys()) {
    let style = tableStyles.get(name);
    for (let hops = 0; style !== undefined && style.display === null && style.parent !== null && hops < 32; hops++) style = tableStyles.get(style.parent);
    if (style?.display === 'false') hiddenTables.add(name);
  }
  return { cellKinds, hiddenTables };
}

/** A repeat count as declared, at least 1. */
export function repeatOf(text: string | undefined): number {
  const repeat = Number.parseInt(text ?? '1', 10);
  return Number.isFinite(repeat) && repeat >= 1 ? repeat : 1;
}
