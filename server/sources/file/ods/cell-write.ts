// The XML of a cell a write sets: 42 under a `0.0` cell becomes
// `<table:table-cell table:style-name="ce2" office:value-type="float" office:value="42"><text:p>42</text:p></table:table-cell>`;
// dates as `office:date-value`, text as paragraphs with the spaces ODF would fold written out.
import type { TypedValue } from '../../../../lib/workbook.ts';
import { isoIsTimeOnly } from '../dates.ts';
import { cellAttributes, type CellRun } from './read.ts';
import { escapeXml, type StyleKinds } from './xml.ts';

/**
 * The cell above, as a model for a new cell: not when its style shows dates and the new value
 * is a number or text (a float under a date style reads back as a date, as SheetJS wrote dates).
 */
export function lendable(aboveCell: CellInfo | undefined, value: TypedValue, kinds: StyleKinds): CellInfo | undefined {
  if (aboveCell === undefined || aboveCell.style === null) return aboveCell;
  const kind = kinds.cellKinds.get(aboveCell.style);
  if (kind !== undefined && (typeof value !== 'object' || value === null)) return { style: null, type: null, currency: null };
  return aboveCell;
}

/** Attributes a cleared or rewritten cell keeps: its look, its merge, its validation. */
const KEPT_ATTRIBUTES = ['table:style-name', 'table:number-columns-spanned', 'table:number-rows-spanned', 'table:content-validation-name'];

export function elementOf(cell: CellRun | undefined): string {
  return cell !== undefined && cell.xml.startsWith('<table:covered-table-cell') ? 'table:covered-table-cell' : 'table:table-cell';
}

export function keptAttributes(cell: CellRun): string {
  const attributes = cellAttributes(cell);
  return KEPT_ATTRIBUTES.filter((name) => attributes[name] !== undefined).map((name) => ` ${name}="${escapeXml(attributes[name])}"`).join('');
}

export function emptyCell(cell: CellRun, count: number): string {
  return `<${elementOf(cell)}${keptAttributes(cell)}${count > 1 ? ` table:number-columns-repeated="${count}"` : ''}/>`;
}

export type CellInfo = { style: string | null; type: string | null; currency: string | null };

export function buildCell(text: string, value: TypedValue, formula: string | undefined, previous: CellRun | undefined, aboveCell: CellInfo | undefined): { xml: string; info: CellInfo } {
  const element = elementOf(previous);
  const style = previous?.style ?? aboveCell?.style ?? null;
  let kept = previous === undefined ? '' : keptAttributes(previous);
  if (previous === undefined && style !== null) kept = ` table:style-name="${escapeXml(style)}"`;
  if ((formula === undefined || formula === '') && value === null && text === '') {
    return { xml: `<${element}${kept}/>`, info: { style, type: null, currency: null } };
  }
  let typed: string;
  let type: string;
  let currency: string | null = null;
  if (formula !== undefined && formula !== '') {
    // No computed value (sheetrest does not calculate): the spreadsheet program computes it.
    type = 'string';
    typed = ` table:formula="${escapeXml('of:=' + odfFormula(formula))}" office:value-type="string"`;
    text = '';
  } else if (typeof value === 'number') {
    const model = (previous === undefined ? undefined : cellAttributes(previous)['office:value-type']) ?? aboveCell?.type ?? null;
    type = model === 'percentage' || model === 'currency' ? model : 'float';
    currency = type === 'currency' ? ((previous === undefined ? undefined : cellAttributes(previous)['office:currency']) ?? aboveCell?.currency ?? null) : null;
    typed = ` office:value-type="${type}"${currency === null ? '' : ` office:currency="${escapeXml(currency)}"`} office:value="${String(value)}"`;
  } else if (typeof value === 'boolean') {
    type = 'boolean';
    typed = ` office:value-type="boolean" office:boolean-value="${value}"`;
  } else if (typeof value === 'object' && value !== null) {
    if (isoIsTimeOnly(value.iso)) {
      type = 'time';
      const [hours, minutes, seconds] = value.iso.split(':');
      typed = ` office:value-type="time" office:time-value="PT${hours}H${minutes}M${seconds ?? '00'}S"`;
    } else {
      type = 'date';
      typed = ` office:value-type="date" office:date-value="${escapeXml(value.iso)}"`;
    }
  } else {
    type = 'string';
    typed = ' office:value-type="string"';
  }
  return { xml: `<${element}${kept}${typed}>${paragraphs(text)}</${element}>`, info: { style, type, currency } };
}

/**
 * Text as `<text:p>` paragraphs, one per line: spaces that ODF would fold (leading, runs) as
 * `<text:s/>`, and trailing ones too (ODF 1.1 readers drop a literal one), tabs as
 * `<text:tab/>`, `\r` as `&#13;`; control characters XML cannot hold as `_xHHHH_`, as SheetJS
 * writes them.
 */
export function paragraphs(text: string): string {
  return text.split('\n').map((line) => {
    const escaped = escapeXml(line.replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]/g, (c) => `_x${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}_`))
      .replace(/\t/g, '<text:tab/>')
      .replace(/ +/g, (spaces: string, offset: number, whole: string) => {
        const edge = offset === 0 || offset + spaces.length === whole.length;
        if (edge) return spacesElement(spaces.length);
        return spaces.length === 1 ? ' ' : ' ' + spacesElement(spaces.length - 1);
      });
    return escaped === '' ? '<text:p/>' : `<text:p>${escaped}</text:p>`;
  }).join('');
}

function spacesElement(count: number): string {
  return count === 1 ? '<text:s/>' : `<text:s text:c="${count}"/>`;
}

/**
 * `=SUM(A1:B2,Other!C3)` -> `SUM([.A1:.B2];[Other.C3])`: OpenFormula puts references in brackets
 * and separates arguments with `;`. Text in quotes is left as it is.
 */
export function odfFormula(formula: string): string {
  return formula.replace(/^=/, '').split(/("(?:[^"]|"")*")/).map((part, n) => {
    if (n % 2 === 1) return part;
    return part.replace(REFERENCE, (_whole, sheet: string | undefined, first: string, last: string | undefined) => {
      const prefix = sheet === undefined ? '' : sheet.slice(0, -1);
      return `[${prefix}.${first}${last === undefined ? '' : `:.${last}`}]`;
    }).replace(/,/g, ';');
  }).join('');
}

const REFERENCE = /(?<![\w.$'\]])((?:'[^']+'|[A-Za-z_][\w.]*)!)?(\$?[A-Za-z]{1,3}\$?\d+)(?::(\$?[A-Za-z]{1,3}\$?\d+))?(?![\w(!])/g;
