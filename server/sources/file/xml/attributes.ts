// A start tag's attributes as XML reads them: `<row r='2' spans = "1:3" ht="15">` has r = 2,
// spans = 1:3 and ht = 15, whichever quote a writer chose, with whitespace around `=` and
// entities (`name="A &amp; B"` is `A & B`). The in-place writers (xlsx/, ods/) read and rewrite
// tags through these, so that `<row r='2'>` renumbered is `<row r="3">`, never
// `<row r="3" r='2'>` (a duplicate attribute: not XML).

/** One attribute after the element name; values are matched whole, so a `>` or `r=` inside one is never taken for markup. */
const ATTRIBUTE = /\s+([^\s=<>/"']+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

export interface AttributeSpan {
  /** Where its leading whitespace starts in the tag. */
  readonly start: number;
  /** Just past its closing quote. */
  readonly end: number;
  readonly name: string;
  /** The value with its entities decoded. */
  readonly value: string;
}

/** Every attribute of a start tag (`<c r="A1" s='2'/>`), in order. */
export function attributeSpans(tag: string): AttributeSpan[] {
  const spans: AttributeSpan[] = [];
  // One pattern for every call (a worksheet's rows ask for thousands): nothing runs in between.
  const pattern = ATTRIBUTE;
  pattern.lastIndex = nameEnd(tag);
  for (let match = pattern.exec(tag); match !== null; match = pattern.exec(tag)) {
    spans.push({ start: match.index, end: match.index + match[0].length, name: match[1], value: unescapeXml(match[2] ?? match[3]) });
  }
  return spans;
}

export function findAttribute(tag: string, name: string): AttributeSpan | null {
  // A tag that does not even hold the name is not scanned; one that does, only up to it (every row's `r`).
  if (!tag.includes(name)) return null;
  const pattern = ATTRIBUTE;
  pattern.lastIndex = nameEnd(tag);
  for (let match = pattern.exec(tag); match !== null; match = pattern.exec(tag)) {
    if (match[1] === name) return { start: match.index, end: match.index + match[0].length, name, value: unescapeXml(match[2] ?? match[3]) };
  }
  return null;
}

/** An attribute's decoded value, or null when the tag has none by that name. */
export function attribute(tag: string, name: string): string | null {
  return findAttribute(tag, name)?.value ?? null;
}

/**
 * The tag with `name` set to `value` (escaped here, and always double-quoted): replaced where it
 * stood, else added right after the element name (`first`) or before the tag's end (`last`).
 * A null value removes it.
 */
export function withAttribute(tag: string, name: string, value: string | null, where: 'first' | 'last' = 'first'): string {
  const found = findAttribute(tag, name);
  const written = value === null ? '' : ` ${name}="${escapeAttribute(value)}"`;
  if (found !== null) return tag.slice(0, found.start) + written + tag.slice(found.end);
  if (value === null) return tag;
  if (where === 'first') {
    const at = nameEnd(tag);
    return tag.slice(0, at) + written + tag.slice(at);
  }
  const close = /\s*\/?>$/.exec(tag);
  const at = close === null ? tag.length : close.index;
  return tag.slice(0, at) + written + tag.slice(at);
}

/** Where the element name of `<x:row ...>` ends. */
function nameEnd(tag: string): number {
  const match = /^<\/?[^\s/>]*/.exec(tag);
  return match === null ? 0 : match[0].length;
}

export function escapeAttribute(text: string): string {
  return text.replace(/[&<>"]/g, (char) => (char === '&' ? '&amp;' : char === '<' ? '&lt;' : char === '>' ? '&gt;' : '&quot;'));
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

export function unescapeXml(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(?:#x([0-9a-fA-F]+)|#(\d+)|(amp|lt|gt|quot|apos));/g, (whole, hex?: string, decimal?: string, named?: string) => {
    if (named !== undefined) return NAMED[named];
    const code = hex !== undefined ? Number.parseInt(hex, 16) : Number(decimal);
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

/**
 * Start tags of `localName` under any prefix (`<sheet .../>`, `<x:sheet ...>`), values matched
 * whole so a `>` inside one (`formatCode='[>=100]0'`) does not end the tag.
 */
export function startTags(xml: string, localName: string): string[] {
  return xml.match(new RegExp(`<(?:[\\w.-]+:)?${localName}(?=[\\s/>])(?:[^>"']|"[^"]*"|'[^']*')*>`, 'g')) ?? [];
}
