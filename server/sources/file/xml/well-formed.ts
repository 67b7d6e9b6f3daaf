// Whether a part a fold wrote is XML that parses, checked before the file is replaced:
// `<row r="2" r='2'>` (a duplicate attribute) -> `duplicate attribute "r" in <row> at line 2,
// column 18`. A checker of well-formedness only, not a parser: tags balanced and nested, one
// root, attribute values quoted with no `<` in them, each attribute once per tag, entity and
// character references that resolve, no character XML forbids. It runs over the written parts
// alone (a fold's one or two), scanning with indexOf and char codes: for its cost on a 100k-row
// sheet see docs/benchmarks.md ("Well-formedness check").

const GT = 62;
const SLASH = 47;
const BANG = 33;
const QUESTION = 63;
const EQUALS = 61;
const QUOTE = 34;
const APOSTROPHE = 39;

/** Characters XML 1.0 does not allow, even escaped as text (the writers spell them `_x0001_`). */
const FORBIDDEN_CHARACTER = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/;
const PREDEFINED_ENTITIES = new Set(['amp', 'lt', 'gt', 'quot', 'apos']);

/** Null when `xml` is well-formed, else what is wrong and where (line and column, 1-based). */
export function wellFormedProblem(xml: string): string | null {
  const forbidden = FORBIDDEN_CHARACTER.exec(xml);
  if (forbidden !== null) return located(xml, forbidden.index, `character U+${forbidden[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}, which XML does not allow`);
  return new Checker(xml).run();
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

class Checker {
  readonly #xml: string;
  readonly #open: string[] = [];
  #rootSeen = false;
  /** Inside a DOCTYPE other entities may be declared: then any name is taken. */
  #anyEntity = false;

  constructor(xml: string) {
    this.#xml = xml;
  }

  run(): string | null {
    const xml = this.#xml;
    let at = xml.charCodeAt(0) === 0xfeff ? 1 : 0;
    while (at < xml.length) {
      const lt = xml.indexOf('<', at);
      const textEnd = lt === -1 ? xml.length : lt;
      if (textEnd > at) {
        const problem = this.#text(at, textEnd);
        if (problem !== null) return problem;
      }
      if (lt === -1) break;
      const next = xml.charCodeAt(lt + 1);
      const end = next === BANG ? this.#declaration(lt) : next === QUESTION ? this.#instruction(lt) : next === SLASH ? this.#endTag(lt) : this.#startTag(lt);
      if (typeof end === 'string') return end;
      at = end;
    }
    if (this.#open.length > 0) return located(xml, xml.length, `<${this.#open[this.#open.length - 1]}> is never closed`);
    if (!this.#rootSeen) return 'it has no root element';
    return null;
  }

  /** Text between tags: whitespace only outside the root; references that resolve, and no `]]>`, inside it. */
  #text(start: number, end: number): string | null {
    const xml = this.#xml;
    if (this.#open.length === 0) {
      for (let at = start; at < end; at++) if (!isSpace(xml.charCodeAt(at))) return located(xml, at, 'text outside the root element');
      return null;
    }
    for (let amp = xml.indexOf('&', start); amp !== -1 && amp < end; amp = xml.indexOf('&', amp + 1)) {
      const problem = this.#reference(amp, end);
      if (problem !== null) return problem;
    }
    const cdataEnd = xml.indexOf(']]>', start);
    if (cdataEnd !== -1 && cdataEnd < end) return located(xml, cdataEnd, '"]]>" in text');
    return null;
  }

  /** `&amp;`, `&#38;` or `&#x26;` at `amp`, ending before `end`. */
  #reference(amp: number, end: number): string | null {
    const xml = this.#xml;
    const semicolon = xml.indexOf(';', amp);
    if (semicolon === -1 || semicolon >= end || semicolon - amp > 64) return located(xml, amp, '"&" that starts no reference (write it as &amp;)');
    const body = xml.slice(amp + 1, semicolon);
    if (body.startsWith('#')) {
      const code = /^#x[0-9a-fA-F]+$/.test(body) ? Number.parseInt(body.slice(2), 16) : /^#[0-9]+$/.test(body) ? Number(body.slice(1)) : Number.NaN;
      if (!isXmlCharacter(code)) return located(xml, amp, `character reference &${body}; to no character XML allows`);
      return null;
    }
    if (PREDEFINED_ENTITIES.has(body) || (this.#anyEntity && /^[A-Za-z_][\w.-]*$/.test(body))) return null;
    return located(xml, amp, `unknown entity &${body};`);
  }

  /** A comment, CDATA section or DOCTYPE at `lt`; returns where it ends or what is wrong. */
  #declaration(lt: number): number | string {
    const xml = this.#xml;
    if (xml.startsWith('<!--', lt)) {
      const end = xml.indexOf('-->', lt + 4);
      return end === -1 ? located(xml, lt, 'a comment that is never closed') : end + 3;
    }
    if (xml.startsWith('<![CDATA[', lt)) {
      if (this.#open.length === 0) return located(xml, lt, 'a CDATA section outside the root element');
      const end = xml.indexOf(']]>', lt + 9);
      return end === -1 ? located(xml, lt, 'a CDATA section that is never closed') : end + 3;
    }
    if (xml.startsWith('<!DOCTYPE', lt) && !this.#rootSeen && this.#open.length === 0) {
      this.#anyEntity = true;
      let depth = 0;
      for (let at = lt + 9; at < xml.length; at++) {
        const char = xml.charCodeAt(at);
        if (char === 91) depth++;
        else if (char === 93) depth--;
        else if (char === GT && depth <= 0) return at + 1;
      }
      return located(xml, lt, 'a DOCTYPE that is never closed');
    }
    return located(xml, lt, '"<!" that starts no comment, CDATA section or DOCTYPE');
  }

  #instruction(lt: number): number | string {
    const end = this.#xml.indexOf('?>', lt + 2);
    return end === -1 ? located(this.#xml, lt, 'a processing instruction that is never closed') : end + 2;
  }

  #endTag(lt: number): number | string {
    const xml = this.#xml;
    let at = lt + 2;
    while (at < xml.length && isNameCharacter(xml.charCodeAt(at))) at++;
    const name = xml.slice(lt + 2, at);
    while (at < xml.length && isSpace(xml.charCodeAt(at))) at++;
    if (name === '' || xml.charCodeAt(at) !== GT) return located(xml, lt, `a malformed end tag </${name}`);
    const open = this.#open.pop();
    if (open !== name) return located(xml, lt, open === undefined ? `</${name}> closes no element` : `</${name}> closes <${open}>`);
    return at + 1;
  }

  #startTag(lt: number): number | string {
    const xml = this.#xml;
    if (!isNameStart(xml.charCodeAt(lt + 1))) return located(xml, lt, '"<" that starts no tag (write it as &lt;)');
    if (this.#open.length === 0 && this.#rootSeen) return located(xml, lt, 'a second root element');
    let at = lt + 1;
    while (at < xml.length && isNameCharacter(xml.charCodeAt(at))) at++;
    const name = xml.slice(lt + 1, at);
    // Few tags have more than a handful of attributes: a list is quicker than a set.
    const names: string[] = [];
    for (;;) {
      const spaced = at;
      while (at < xml.length && isSpace(xml.charCodeAt(at))) at++;
      const char = xml.charCodeAt(at);
      if (char === GT) {
        this.#open.push(name);
        this.#rootSeen = true;
        return at + 1;
      }
      if (char === SLASH) {
        if (xml.charCodeAt(at + 1) !== GT) return located(xml, at, `"/" not followed by ">" in <${name}>`);
        this.#rootSeen = true;
        return at + 2;
      }
      if (at >= xml.length) return located(xml, lt, `<${name}> is cut off`);
      if (at === spaced || !isNameStart(char)) return located(xml, at, `an attribute of <${name}> not set off by whitespace, or not a name`);
      const nameStart = at;
      while (at < xml.length && isNameCharacter(xml.charCodeAt(at))) at++;
      const attribute = xml.slice(nameStart, at);
      while (at < xml.length && isSpace(xml.charCodeAt(at))) at++;
      if (xml.charCodeAt(at) !== EQUALS) return located(xml, nameStart, `attribute "${attribute}" of <${name}> has no value`);
      at++;
      while (at < xml.length && isSpace(xml.charCodeAt(at))) at++;
      const quote = xml.charCodeAt(at);
      if (quote !== QUOTE && quote !== APOSTROPHE) return located(xml, at, `the value of "${attribute}" in <${name}> is not quoted`);
      const close = xml.indexOf(quote === QUOTE ? '"' : "'", at + 1);
      if (close === -1) return located(xml, at, `the value of "${attribute}" in <${name}> is never closed`);
      const lessThan = xml.indexOf('<', at + 1);
      if (lessThan !== -1 && lessThan < close) return located(xml, lessThan, `"<" in the value of "${attribute}" in <${name}>`);
      for (let amp = xml.indexOf('&', at + 1); amp !== -1 && amp < close; amp = xml.indexOf('&', amp + 1)) {
        const problem = this.#reference(amp, close);
        if (problem !== null) return problem;
      }
      if (names.includes(attribute)) return located(xml, nameStart, `duplicate attribute "${attribute}" in <${name}>`);
      names.push(attribute);
      at = close + 1;
    }
  }
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
