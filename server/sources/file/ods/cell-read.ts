// One .ods cell's content as sheetrest reads it: `<text:p>two<text:s/></text:p>` shows
// `two ` and `office:date-value="2024-03-01T09:30:00.120"` is `{ iso: '2024-03-01T09:30:00.12' }`.
import type { TypedValue } from '../../../../lib/workbook.ts';
import { serialToIso } from '../dates.ts';
import { attributesOf, decodeXml, repeatOf, TAG, type StyleKinds } from './xml.ts';

/**
 * The paragraphs directly inside a cell, as ODF 1.2's white-space rules read them (part 1,
 * 6.1.2): a run of literal white space (spaces, tabs, line feeds) is one space, and none at a
 * paragraph's start; at its end it stays (`<text:p>trailing </text:p>` is `trailing `, as
 * LibreOffice writes and shows a trailing space). `<text:s text:c="3"/>` (3 spaces), tabs,
 * line breaks and character references (`&#13;`) are kept as written and fold nothing next to
 * them (`two<text:s/> ` is `two` and 2 spaces). Comments (`office:annotation`) and drawings in
 * the cell are not its text.
 */
export function readCellText(xml: string, cellName: string, paragraphs: string[]): void {
  let depth = 1;
  let paragraph: { out: string; spaceOpen: boolean } | null = null;
  let paragraphDepth = 0;
  let skipDepth = 0;
  let last = TAG.lastIndex;
  let match: RegExpExecArray | null;
  while ((match = TAG.exec(xml)) !== null) {
    if (paragraph !== null && skipDepth === 0) addText(paragraph, xml.slice(last, match.index));
    last = TAG.lastIndex;
    const [, closing, qname, attributeText, selfClosing] = match;
    if (qname === undefined) continue;
    if (closing === '/') {
      depth--;
      if (depth === 0) {
        if (qname !== cellName) throw new Error(`content.xml closes ${qname} inside a ${cellName}`);
        return;
      }
      if (skipDepth > 0 && depth < skipDepth) skipDepth = 0;
      if (paragraph !== null && depth < paragraphDepth) {
        paragraphs.push(paragraph.out);
        paragraph = null;
      }
      continue;
    }
    const opensParagraph = depth === 1 && (qname === 'text:p' || qname === 'text:h');
    if (selfClosing !== '/') depth++;
    if (opensParagraph) {
      paragraph = { out: '', spaceOpen: true };
      paragraphDepth = depth;
      if (selfClosing === '/') {
        paragraphs.push('');
        paragraph = null;
      }
      continue;
    }
    if (paragraph === null || skipDepth > 0) continue;
    if (qname === 'office:annotation' || qname.startsWith('draw:') || qname === 'text:note') {
      if (selfClosing !== '/') skipDepth = depth;
    } else if (qname === 'text:s') {
      paragraph.out += ' '.repeat(Math.min(repeatOf(attributesOf(attributeText)['text:c']), 65_536));
      paragraph.spaceOpen = false;
    } else if (qname === 'text:tab') {
      paragraph.out += '\t';
      paragraph.spaceOpen = false;
    } else if (qname === 'text:line-break') {
      paragraph.out += '\n';
      paragraph.spaceOpen = false;
    }
  }
  throw new Error('content.xml ends inside a table cell');
}

/** Literal white space collapses; characters written as references (`&#32;`, `&#13;`) stay. */
function addText(paragraph: { out: string; spaceOpen: boolean }, raw: string): void {
  if (raw === '') return;
  for (const part of raw.split(/(&#(?:x[0-9a-fA-F]+|[0-9]+);)/)) {
    if (part === '') continue;
    if (part.startsWith('&#')) {
      paragraph.out += decodeXml(part);
      paragraph.spaceOpen = false;
      continue;
    }
    let text = decodeXml(part.replace(/[ \t\r\n]+/g, ' '));
    if (paragraph.spaceOpen && text.startsWith(' ')) text = text.slice(1);
    if (text === '') continue;
    paragraph.out += text;
    paragraph.spaceOpen = text.endsWith(' ') && /[ \t\r\n]$/.test(part);
  }
}

export function cellValue(attributes: Record<string, string>, shown: string, style: string | null, kinds: StyleKinds): TypedValue {
  const type = attributes['office:value-type'];
  if (attributes['calcext:value-type'] === 'error') return shown === '' ? null : shown;
  switch (type) {
    case 'float':
    case 'percentage':
    case 'currency': {
      const number = Number(attributes['office:value']);
      if (!Number.isFinite(number)) return shown === '' ? null : shown;
      // Files written by SheetJS (sheetrest before 0.2) keep dates as serials with a date style.
      const kind = style === null ? undefined : kinds.cellKinds.get(style);
      if (type === 'float' && kind === 'date') return { iso: serialToIso(number, false) };
      if (type === 'float' && kind === 'time' && number >= 0 && number < 1) return { iso: serialToIso(number, false, true) };
      return number;
    }
    case 'boolean':
      return attributes['office:boolean-value'] === 'true' || attributes['office:boolean-value'] === '1';
    case 'date':
    case 'time': {
      const iso = type === 'date' ? isoOfDateValue(attributes['office:date-value'] ?? '') : isoOfTimeValue(attributes['office:time-value'] ?? '');
      return iso !== null ? { iso } : shown === '' ? null : shown;
    }
    default: {
      const text = attributes['office:string-value'] === undefined ? shown : decodeControls(attributes['office:string-value']);
      return text === '' ? null : text;
    }
  }
}

/** `2024-03-01T09:30:00.250` -> `2024-03-01T09:30:00.25`; midnight is the bare date, as serials give it. */
export function isoOfDateValue(value: string): string | null {
  const match = /^(-?\d{4,})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}):(\d{2})(\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?$/.exec(value);
  if (match === null || match[1].startsWith('-') || match[1].length > 4) return null;
  const [, year, month, day, hours, minutes, seconds, fraction] = match;
  const date = `${year}-${month}-${day}`;
  const fractionText = (fraction ?? '').replace(/\.?0+$/, '');
  if (hours === undefined || (hours === '00' && minutes === '00' && seconds === '00' && fractionText === '')) return date;
  return `${date}T${hours}:${minutes}:${seconds}${fractionText}`;
}

/** `PT09H30M00S` -> `09:30:00`; a duration of a day or more stays its ODF text (`PT255H10M10S`). */
export function isoOfTimeValue(value: string): string | null {
  const match = /^PT(\d+)H(\d+)M(\d+)(\.\d+)?S$/.exec(value);
  if (match === null) return null;
  const [, hours, minutes, seconds, fraction] = match;
  if (Number(hours) >= 24) return null;
  return `${hours.padStart(2, '0').slice(-2)}:${minutes.padStart(2, '0')}:${seconds.padStart(2, '0')}${(fraction ?? '').replace(/\.?0+$/, '')}`;
}

/** The text of a cell with a value but no paragraph (programs other than LibreOffice write such). */
export function shownValue(value: TypedValue): string {
  if (value === null) return '';
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'object') return value.iso.replace('T', ' ');
  return String(value);
}

/**
 * Control characters XML cannot hold, as SheetJS (and sheetrest) write them: `_x0001_`. Tab, line
 * feed and carriage return have XML of their own, so `_x000D_` is just text.
 */
export function decodeControls(text: string): string {
  if (!text.includes('_x')) return text;
  return text.replace(/_x(000[0-8bBcCeEfF]|001[0-9a-fA-F]|[fF]{3}[eEfF])_/g, (_whole, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}
