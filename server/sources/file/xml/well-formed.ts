// Whether a part a fold wrote is XML that parses, checked before the file is replaced:
// `<row r="2" r='2'>` (a duplicate attribute) -> `duplicate attribute "r" in <row> at line 2,
// column 18`. A checker of well-formedness only, not a parser: tags balanced and nested, one
// root, attribute values quoted with no `<` in them, each attribute once per tag, entity and
// character references that resolve, no character XML forbids. It runs over the written parts
// alone (a fold's one or two), scanning with indexOf and char codes: for its cost on a 100k-row
// sheet see docs/benchmarks.md ("Well-formedness check").

const LT = 60;
const GT = 62;
const AMP = 38;
const SLASH = 47;
const BANG = 33;
const QUESTION = 63;
const EQUALS = 61;
const QUOTE = 34;
const APOSTROPHE = 39;

const PREDEFINED_ENTITIES = new Set(['amp', 'lt', 'gt', 'quot', 'apos']);

/** Null when `xml` is well-formed, else what is wrong and where (line and column, 1-based). */
export function wellFormedProblem(xml: string): string | null {
  return scan(xml);
}

/**
 * Changes a written part's XML before it is checked: the tests' seam, to show that a fold
 * writing broken XML fails and leaves the file as it was (fold-runner.ts, FoldOptions).
 */
export type AlterPart = (part: string, xml: string) => string;

/**
 * Throws an Error naming the first part of `parts` (part name -> XML) that is not well-formed,
 * and why: the fold fails, the journal keeps the writes and the file is not replaced.
 */
export function checkWrittenParts(parts: ReadonlyMap<string, string>): void {
  for (const [part, xml] of parts) {
    const problem = wellFormedProblem(xml);
    if (problem !== null) throw new Error(`the fold would have written ${part} as XML that does not parse (${problem}), so the file was left as it was`);
  }
}

/**
 * The scan, one function over local variables (a class with private fields and a method per tag
 * took six times as long: 5 million tags in a 100k-row sheet). Names are compared as offsets into
 * the text and sliced only to say what is wrong.
 */
function scan(xml: string): string | null {
  const length = xml.length;
  let openStart = new Int32Array(64);
  let openLength = new Int32Array(64);
  let depth = 0;
  // Reused for every tag (an array emptied and refilled per tag kept the collector busy).
  let attributeStart = new Int32Array(16);
  let attributeLength = new Int32Array(16);
  let attributes = 0;
  let rootSeen = false;
  // After a DOCTYPE, entities it declares may be used: then any name is taken.
  let anyEntity = false;
  let at = xml.charCodeAt(0) === 0xfeff ? 1 : 0;
  while (at < length) {
    const lt = xml.indexOf('<', at);
    const textEnd = lt === -1 ? length : lt;
    if (depth === 0) {
      for (let k = at; k < textEnd; k++) if (!isSpace(xml.charCodeAt(k))) return located(xml, k, 'text outside the root element');
    } else {
      // Char by char within the text: an indexOf would run on to the next `&` far beyond it.
      for (let k = at; k < textEnd; k++) {
        const char = xml.charCodeAt(k);
        if (char === AMP) {
          const problem = referenceProblem(xml, k, textEnd, anyEntity);
          if (problem !== null) return problem;
        } else if (isForbidden(char)) {
          return forbidden(xml, k);
        } else if (char === GT && k >= at + 2 && xml.charCodeAt(k - 1) === 93 && xml.charCodeAt(k - 2) === 93) {
          return located(xml, k - 2, '"]]>" in text');
        }
      }
    }
    if (lt === -1) break;
    const next = xml.charCodeAt(lt + 1);
    if (next === BANG || next === QUESTION) {
      const end = next === QUESTION ? instructionEnd(xml, lt) : declarationEnd(xml, lt, depth, rootSeen);
      if (typeof end === 'string') return end;
      if (xml.startsWith('<!DOCTYPE', lt)) anyEntity = true;
      at = end;
      continue;
    }
    if (next === SLASH) {
      let k = lt + 2;
      while (k < length && isNameCharacter(xml.charCodeAt(k))) k++;
      const nameLength = k - lt - 2;
      while (k < length && isSpace(xml.charCodeAt(k))) k++;
      if (nameLength === 0 || xml.charCodeAt(k) !== GT) return located(xml, lt, `a malformed end tag </${xml.slice(lt + 2, lt + 2 + nameLength)}`);
      if (depth === 0) return located(xml, lt, `</${xml.slice(lt + 2, lt + 2 + nameLength)}> closes no element`);
      depth--;
      if (openLength[depth] !== nameLength || !sameText(xml, openStart[depth], lt + 2, nameLength)) {
        return located(xml, lt, `</${xml.slice(lt + 2, lt + 2 + nameLength)}> closes <${xml.slice(openStart[depth], openStart[depth] + openLength[depth])}>`);
      }
      at = k + 1;
      continue;
    }
    if (!isNameStart(next)) return located(xml, lt, '"<" that starts no tag (write it as &lt;)');
    if (depth === 0 && rootSeen) return located(xml, lt, 'a second root element');
    let k = lt + 1;
    while (k < length && isNameCharacter(xml.charCodeAt(k))) k++;
    const nameLength = k - lt - 1;
    attributes = 0;
    for (;;) {
      const spaced = k;
      while (k < length && isSpace(xml.charCodeAt(k))) k++;
      const char = xml.charCodeAt(k);
      if (char === GT) {
        if (depth === openStart.length) {
          openStart = grown(openStart);
          openLength = grown(openLength);
        }
        openStart[depth] = lt + 1;
        openLength[depth] = nameLength;
        depth++;
        rootSeen = true;
        at = k + 1;
        break;
      }
      if (char === SLASH) {
        if (xml.charCodeAt(k + 1) !== GT) return located(xml, k, `"/" not followed by ">" in <${xml.slice(lt + 1, lt + 1 + nameLength)}>`);
        rootSeen = true;
        at = k + 2;
        break;
      }
      if (k >= length) return located(xml, lt, `<${xml.slice(lt + 1, lt + 1 + nameLength)}> is cut off`);
      if (k === spaced || !isNameStart(char)) return located(xml, k, `an attribute of <${xml.slice(lt + 1, lt + 1 + nameLength)}> not set off by whitespace, or not a name`);
      const attribute = k;
      while (k < length && isNameCharacter(xml.charCodeAt(k))) k++;
      const attributeNameLength = k - attribute;
      while (k < length && isSpace(xml.charCodeAt(k))) k++;
      if (xml.charCodeAt(k) !== EQUALS) return located(xml, attribute, `attribute "${xml.slice(attribute, attribute + attributeNameLength)}" of <${xml.slice(lt + 1, lt + 1 + nameLength)}> has no value`);
      k++;
      while (k < length && isSpace(xml.charCodeAt(k))) k++;
      const quote = xml.charCodeAt(k);
      if (quote !== QUOTE && quote !== APOSTROPHE) return located(xml, k, `the value of "${xml.slice(attribute, attribute + attributeNameLength)}" in <${xml.slice(lt + 1, lt + 1 + nameLength)}> is not quoted`);
      const close = xml.indexOf(quote === QUOTE ? '"' : "'", k + 1);
      if (close === -1) return located(xml, k, `the value of "${xml.slice(attribute, attribute + attributeNameLength)}" in <${xml.slice(lt + 1, lt + 1 + nameLength)}> is never closed`);
      for (let inside = k + 1; inside < close; inside++) {
        const valueChar = xml.charCodeAt(inside);
        if (valueChar === LT) return located(xml, inside, `"<" in the value of "${xml.slice(attribute, attribute + attributeNameLength)}" in <${xml.slice(lt + 1, lt + 1 + nameLength)}>`);
        if (isForbidden(valueChar)) return forbidden(xml, inside);
        if (valueChar === AMP) {
          const problem = referenceProblem(xml, inside, close, anyEntity);
          if (problem !== null) return problem;
        }
      }
      // Few tags have more than a handful of attributes: a list is quicker than a set.
      for (let other = 0; other < attributes; other++) {
        if (attributeLength[other] === attributeNameLength && sameText(xml, attributeStart[other], attribute, attributeNameLength)) {
          return located(xml, attribute, `duplicate attribute "${xml.slice(attribute, attribute + attributeNameLength)}" in <${xml.slice(lt + 1, lt + 1 + nameLength)}>`);
        }
      }
      if (attributes === attributeStart.length) {
        attributeStart = grown(attributeStart);
        attributeLength = grown(attributeLength);
      }
      attributeStart[attributes] = attribute;
      attributeLength[attributes] = attributeNameLength;
      attributes++;
      k = close + 1;
    }
  }
  if (depth > 0) return located(xml, length, `<${xml.slice(openStart[depth - 1], openStart[depth - 1] + openLength[depth - 1])}> is never closed`);
  if (!rootSeen) return 'it has no root element';
  return null;
}

/** A character XML 1.0 does not allow in text or values, even escaped (the writers spell them `_x0001_`). */
function isForbidden(char: number): boolean {
  return (char < 0x20 && char !== 9 && char !== 10 && char !== 13) || char === 0xfffe || char === 0xffff;
}

function forbidden(xml: string, at: number): string {
  return located(xml, at, `character U+${xml.charCodeAt(at).toString(16).toUpperCase().padStart(4, '0')}, which XML does not allow`);
}

function grown(list: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const bigger = new Int32Array(list.length * 2);
  bigger.set(list);
  return bigger;
}

/** `&amp;`, `&#38;` or `&#x26;` at `amp`, ending before `end`. */
function referenceProblem(xml: string, amp: number, end: number, anyEntity: boolean): string | null {
  const semicolon = xml.indexOf(';', amp);
  if (semicolon === -1 || semicolon >= end || semicolon - amp > 64) return located(xml, amp, '"&" that starts no reference (write it as &amp;)');
  const body = xml.slice(amp + 1, semicolon);
  if (body.startsWith('#')) {
    const code = /^#x[0-9a-fA-F]+$/.test(body) ? Number.parseInt(body.slice(2), 16) : /^#[0-9]+$/.test(body) ? Number(body.slice(1)) : Number.NaN;
    if (!isXmlCharacter(code)) return located(xml, amp, `character reference &${body}; to no character XML allows`);
    return null;
  }
  if (PREDEFINED_ENTITIES.has(body) || (anyEntity && /^[A-Za-z_][\w.-]*$/.test(body))) return null;
  return located(xml, amp, `unknown entity &${body};`);
}

/** A comment, CDATA section or DOCTYPE at `lt`: where it ends, or what is wrong. */
function declarationEnd(xml: string, lt: number, depth: number, rootSeen: boolean): number | string {
  if (xml.startsWith('<!--', lt)) {
    const end = xml.indexOf('-->', lt + 4);
    return end === -1 ? located(xml, lt, 'a comment that is never closed') : end + 3;
  }
  if (xml.startsWith('<![CDATA[', lt)) {
    if (depth === 0) return located(xml, lt, 'a CDATA section outside the root element');
    const end = xml.indexOf(']]>', lt + 9);
    return end === -1 ? located(xml, lt, 'a CDATA section that is never closed') : end + 3;
  }
  if (xml.startsWith('<!DOCTYPE', lt) && !rootSeen && depth === 0) {
    let nesting = 0;
    for (let at = lt + 9; at < xml.length; at++) {
      const char = xml.charCodeAt(at);
      if (char === 91) nesting++;
      else if (char === 93) nesting--;
      else if (char === GT && nesting <= 0) return at + 1;
    }
    return located(xml, lt, 'a DOCTYPE that is never closed');
  }
  return located(xml, lt, '"<!" that starts no comment, CDATA section or DOCTYPE');
}

function instructionEnd(xml: string, lt: number): number | string {
  const end = xml.indexOf('?>', lt + 2);
  return end === -1 ? located(xml, lt, 'a processing instruction that is never closed') : end + 2;
}

/** Whether the `length` characters at `a` and at `b` are the same. */
function sameText(xml: string, a: number, b: number, length: number): boolean {
  for (let n = 0; n < length; n++) if (xml.charCodeAt(a + n) !== xml.charCodeAt(b + n)) return false;
  return true;
}

function isSpace(char: number): boolean {
  return char === 32 || char === 10 || char === 9 || char === 13;
}

/** XML's NameStartChar, loosely above ASCII (any letter-like code unit passes). */
function isNameStart(char: number): boolean {
  return (char >= 97 && char <= 122) || (char >= 65 && char <= 90) || char === 95 || char === 58 || (char >= 0xc0 && char !== 0xd7 && char !== 0xf7);
}

function isNameCharacter(char: number): boolean {
  return isNameStart(char) || (char >= 48 && char <= 57) || char === 45 || char === 46 || char === 0xb7;
}

function isXmlCharacter(code: number): boolean {
  return code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0xd7ff) || (code >= 0xe000 && code <= 0xfffd) || (code >= 0x10000 && code <= 0x10ffff);
}

function located(xml: string, at: number, problem: string): string {
  let line = 1;
  let lineStart = 0;
  for (let newline = xml.indexOf('\n'); newline !== -1 && newline < at; newline = xml.indexOf('\n', newline + 1)) {
    line++;
    lineStart = newline + 1;
  }
  return `${problem} at line ${line}, column ${at - lineStart + 1}`;
}
