// The cell styles of an .xlsx (`xl/styles.xml`), as far as a write needs them: which number
// format each style shows, and a style like another but for its number format. A date written
// into a column styled `"$"#,##0.00` gets that style's font, fill and border with a date format:
// an `<xf>` appended after the existing ones (their indexes, and so every cell, unchanged).
import { sheetJs } from './sheetjs.ts';
import { DATE_FORMAT, DATE_TIME_FORMAT, formatIsTimeOnly, TIME_FORMAT } from '../dates.ts';
import { isDateFormat } from './read-cells.ts';
import { attribute, escapeAttribute, startTags, withAttribute } from '../xml/attributes.ts';

/** What a number format shows: a date (with or without a time), a bare time of day, or a number. */
export type FormatKind = 'date' | 'time' | 'number';

/**
 * The styles part a workbook without one gets when a write needs a style (a date): what Excel
 * writes for a new workbook, one font, the two fills every styles part starts with, one border,
 * and style 0 (General), so that cells without a style show as before.
 */
export const DEFAULT_STYLES_XML =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">' +
  '<fonts count="1"><font><sz val="11"/><name val="Calibri"/><family val="2"/></font></fonts>' +
  '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>' +
  '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>' +
  '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>' +
  '<cellXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/></cellXfs>' +
  '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>';

/**
 * What SheetJS's SSF says of number formats, as far as styles need it: the code of a built-in
 * format (`14` -> `m/d/yy`), and whether a code shows a date. `SHEETJS_FORMATS` asks SheetJS; a
 * fold's worker, which does not load it, is given the answers for one styles part (`knownFormats`).
 */
export interface FormatFacts {
  codeOf(numFmtId: number): string;
  isDate(code: string): boolean;
}

export const SHEETJS_FORMATS: FormatFacts = {
  codeOf: (numFmtId) => String(sheetJs().SSF.get_table()[numFmtId] ?? 'General'),
  isDate: isDateFormat,
};

/** The answers a `Styles` of `xml` can ask for, as data a thread can hand another. */
export interface KnownFormats {
  readonly codes: readonly (readonly [number, string])[];
  readonly dates: readonly (readonly [string, boolean])[];
}

/**
 * SSF's answers for every format `xml` names (each `numFmtId`, each `formatCode`) and every one
 * a write may add (General and the date and time formats sheet.ts writes), asked here once.
 */
export function knownFormats(xml: string, facts: FormatFacts = SHEETJS_FORMATS): KnownFormats {
  // Read as Styles reads them (`Number` of the attribute: a damaged one is NaN, a Map key like any other).
  const ids = new Set([0, ...[...xml.matchAll(/\bnumFmtId\s*=\s*(?:"([^"]*)"|'([^']*)')/g)].map((match) => Number(match[1] ?? match[2]))]);
  const codes = [...ids].map((id) => [id, facts.codeOf(id)] as const);
  const custom = startTags(xml, 'numFmt').map((tag) => attribute(tag, 'formatCode') ?? 'General');
  const all = new Set([...codes.map(([, code]) => code), ...custom, 'General', DATE_FORMAT, DATE_TIME_FORMAT, TIME_FORMAT]);
  return { codes, dates: [...all].map((code) => [code, facts.isDate(code)] as const) };
}

/** `knownFormats`'s answers as facts; a question it has no answer to is a bug of ours. */
export function formatsFrom(known: KnownFormats): FormatFacts {
  const codes = new Map(known.codes);
  const dates = new Map(known.dates);
  const unknown = (what: string): never => {
    throw new Error(`the number format ${what} was not looked up before the fold`);
  };
  return { codeOf: (numFmtId) => codes.get(numFmtId) ?? unknown(String(numFmtId)), isDate: (code) => dates.get(code) ?? unknown(JSON.stringify(code)) };
}

export class Styles {
  #xml = '';
  #changed = false;
  #xfs: string[] = [];
  readonly #formats = new Map<number, string>();
  /** For a workbook without a styles part: the one to start when a write needs a style, or null to write without. */
  #whenMissing: (() => string | null) | null;
  #created = false;
  readonly #facts: FormatFacts;

  constructor(xml: string | null, whenMissing: (() => string | null) | null = null, facts: FormatFacts = SHEETJS_FORMATS) {
    this.#facts = facts;
    this.#load(xml ?? '');
    this.#whenMissing = xml === null ? whenMissing : null;
  }

  #load(xml: string): void {
    this.#xml = xml;
    const cellXfs = /<(\w+:)?cellXfs\b[^>]*>([\s\S]*?)<\/\1?cellXfs>/.exec(this.#xml)?.[2] ?? '';
    this.#xfs = cellXfs.match(/<(?:\w+:)?xf\b[^>]*?(?:\/>|>[\s\S]*?<\/(?:\w+:)?xf>)/g) ?? [];
    for (const tag of startTags(this.#xml, 'numFmt')) {
      this.#formats.set(Number(attribute(tag, 'numFmtId')), attribute(tag, 'formatCode') ?? 'General');
    }
  }

  /** The styles part's new text when a write added a style, else null. */
  get changedXml(): string | null {
    return this.#changed ? this.#xml : null;
  }

  /** Whether the styles part is new: the workbook had none, and a write needed a style. */
  get created(): boolean {
    return this.#created;
  }

  kindOf(style: number): FormatKind {
    const code = this.#formatCode(this.#numFmtOf(style));
    if (code === 'General' || !this.#facts.isDate(code)) return 'number';
    return formatIsTimeOnly(code) ? 'time' : 'date';
  }

  /**
   * `style` when it shows `kind`, else a style like it showing `formatCode` (found among the
   * existing ones, or appended). Null when the workbook has no styles to extend.
   */
  withKind(style: number, kind: FormatKind, formatCode: string): number | null {
    if (this.kindOf(style) === kind) return style;
    const numFmtId = this.#numFmtIdFor(formatCode);
    if (numFmtId === null) return null;
    const base = this.#xfs[style] ?? this.#xfs[0];
    if (base === undefined) return null;
    let xf = setAttribute(base, 'numFmtId', String(numFmtId));
    xf = setAttribute(xf, 'applyNumberFormat', '1');
    const existing = this.#xfs.indexOf(xf);
    if (existing >= 0) return existing;
    this.#xfs.push(xf);
    this.#xml = this.#xml.replace(/(<(\w+:)?cellXfs\b[^>]*>)([\s\S]*?)(<\/\2?cellXfs>)/, (_all, open: string, _prefix, inner: string, close: string) => `${setAttribute(open, 'count', String(this.#xfs.length))}${inner}${xf}${close}`);
    this.#changed = true;
    return this.#xfs.length - 1;
  }

  #numFmtOf(style: number): number {
    const xf = this.#xfs[style];
    return xf === undefined ? 0 : Number(attribute(xf.slice(0, xf.indexOf('>') + 1), 'numFmtId') ?? 0);
  }

  #formatCode(numFmtId: number): string {
    return this.#formats.get(numFmtId) ?? this.#facts.codeOf(numFmtId);
  }

  #numFmtIdFor(formatCode: string): number | null {
    if (formatCode === 'General') return 0;
    for (const [id, code] of this.#formats) if (code === formatCode) return id;
    if (!/<(\w+:)?styleSheet\b/.test(this.#xml) && !this.#start()) return null;
    // Custom formats are numbered from 164; the built-in ones below.
    const id = Math.max(163, ...this.#formats.keys()) + 1;
    const prefix = /<(\w+:)?styleSheet\b/.exec(this.#xml)?.[1] ?? '';
    const tag = `<${prefix}numFmt numFmtId="${id}" formatCode="${escapeAttribute(formatCode)}"/>`;
    this.#formats.set(id, formatCode);
    if (/<(\w+:)?numFmts\b[^>]*\/>/.test(this.#xml)) {
      this.#xml = this.#xml.replace(/<(\w+:)?numFmts\b[^>]*\/>/, `<${prefix}numFmts count="1">${tag}</${prefix}numFmts>`);
    } else if (/<(\w+:)?numFmts\b/.test(this.#xml)) {
      this.#xml = this.#xml.replace(/(<(\w+:)?numFmts\b[^>]*>)([\s\S]*?)(<\/\2?numFmts>)/, (_all, open: string, _p, inner: string, close: string) => {
        const count = (inner.match(/<(?:\w+:)?numFmt\b/g) ?? []).length + 1;
        return `${setAttribute(open, 'count', String(count))}${inner}${tag}${close}`;
      });
    } else {
      // numFmts is the first child of styleSheet.
      this.#xml = this.#xml.replace(/<(\w+:)?styleSheet\b[^>]*>/, (open) => `${open}<${prefix}numFmts count="1">${tag}</${prefix}numFmts>`);
    }
    this.#changed = true;
    return id;
  }

  /** Starts the styles part of a workbook that has none, once, when allowed: whether there is one now. */
  #start(): boolean {
    const xml = this.#whenMissing?.() ?? null;
    this.#whenMissing = null;
    if (xml === null) return false;
    this.#load(xml);
    this.#created = true;
    this.#changed = true;
    return true;
  }
}

/** Sets an attribute in an element's start tag (up to its first `>`), in either quote, adding it last when absent. */
function setAttribute(element: string, name: string, value: string): string {
  const end = element.indexOf('>') + 1;
  return withAttribute(element.slice(0, end), name, value, 'last') + element.slice(end);
}
