// ValueInputOption: how a value in a write is stored. RAW keeps it as sent; USER_ENTERED parses
// strings as if typed into the Sheets UI in the en_US locale:
// `PUT .../values/A1?valueInputOption=USER_ENTERED {"values": [["007", "'007", "12%", "2024-01-15", "=A2*2"]]}`
// -> 7, "007", 0.12 (PERCENT), 45306 (DATE), a formula.
import { DATE_FORMAT, DATE_TIME_FORMAT, parseIsoDate } from './dates.ts';
import type { Cell, NumberFormat } from './store.ts';

export const VALUE_INPUT_OPTIONS = ['RAW', 'USER_ENTERED'] as const;
export type ValueInputOption = (typeof VALUE_INPUT_OPTIONS)[number];

export type InputValue = string | number | boolean;

const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)$/;
const SCIENTIFIC = /^[+-]?(?:\d+\.?\d*|\.\d+)[eE][+-]?\d+$/;
const GROUPED = /^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?$/;
const PERCENT = /^([+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d*)?)\s*%$/;
const CURRENCY = /^(-?)\$\s*((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?)$/;
const US_DATE = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/;

/**
 * The cell a written value makes, or undefined when it clears the cell (""). `previous` is the
 * cell being overwritten: the values API leaves formatting alone, so its number format stays
 * unless parsing the input sets one (a date, a percentage...).
 */
export function cellFromInput(value: InputValue, option: ValueInputOption, previous?: Cell): Cell | undefined {
  if (value === '') return undefined;
  const parsed = option === 'RAW' || typeof value !== 'string' ? rawCell(value) : parseTyped(value);
  const format = parsed.format ?? previous?.format;
  return format === undefined ? { entered: parsed.entered } : { entered: parsed.entered, format };
}

function rawCell(value: InputValue): Cell {
  if (typeof value === 'number') return { entered: { numberValue: value } };
  if (typeof value === 'boolean') return { entered: { boolValue: value } };
  return { entered: { stringValue: value } };
}

/** What Sheets makes of text typed into a cell. */
export function parseTyped(input: string): Cell {
  // A leading apostrophe forces text, and is not part of the value.
  if (input.startsWith("'")) return { entered: { stringValue: input.slice(1) } };
  if (input.startsWith('=') && input.length > 1) return { entered: { formulaValue: input } };
  const text = input.trim();
  const upper = text.toUpperCase();
  if (upper === 'TRUE' || upper === 'FALSE') return { entered: { boolValue: upper === 'TRUE' } };
  if (NUMBER.test(text)) return { entered: { numberValue: Number(text) } };
  if (SCIENTIFIC.test(text)) return number(Number(text), { type: 'SCIENTIFIC', pattern: '0.00E+00' });
  if (GROUPED.test(text)) return number(Number(text.replaceAll(',', '')), { type: 'NUMBER', pattern: decimals(text) ? '#,##0.00' : '#,##0' });
  const percent = PERCENT.exec(text);
  if (percent !== null && /\d/.test(percent[1])) {
    return number(Number(percent[1].replaceAll(',', '')) / 100, { type: 'PERCENT', pattern: decimals(percent[1]) ? '0.00%' : '0%' });
  }
  const currency = CURRENCY.exec(text);
  if (currency !== null) {
    const amount = Number(currency[2].replaceAll(',', '')) * (currency[1] === '-' ? -1 : 1);
    return number(amount, { type: 'CURRENCY', pattern: decimals(currency[2]) ? '"$"#,##0.00' : '"$"#,##0' });
  }
  const date = parseIsoDate(text);
  if (date !== undefined) return number(date.serial, date.hasTime ? DATE_TIME_FORMAT : DATE_FORMAT);
  const us = US_DATE.exec(text);
  if (us !== null) {
    const iso = parseIsoDate(`${us[3]}-${us[1]}-${us[2]}`);
    if (iso !== undefined) return number(iso.serial, { type: 'DATE', pattern: 'M/d/yyyy' });
  }
  return { entered: { stringValue: input } };
}

function number(value: number, format: NumberFormat): Cell {
  return { entered: { numberValue: value }, format };
}

function decimals(text: string): boolean {
  return /\.\d/.test(text);
}
