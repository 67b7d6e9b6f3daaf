// Cells given to `createSpreadsheet` -> stored cells: `"007"` stays text (like RAW), `7` is a
// number in General format, `{ date: '2024-01-15' }` a DATE serial (45306) shown as 2024-01-15,
// `{ formula: '=A2*2', value: 14 }` a formula with that cached result.
import { DATE_FORMAT, DATE_TIME_FORMAT, parseIsoDate } from './dates.ts';
import type { Cell, ExtendedValue, NumberFormat } from './store.ts';

export type NumberFormatType = 'NUMBER' | 'CURRENCY' | 'PERCENT' | 'DATE' | 'DATE_TIME' | 'TIME' | 'TEXT';

export type EmulatorCell =
  | null
  | string
  | number
  | boolean
  | { date: string }
  | { value: number | string | boolean; format?: { type: NumberFormatType; pattern?: string } }
  | { formula: string; value: number | string | boolean };

/** The en_US pattern Sheets applies when a format type is set without a pattern. */
const DEFAULT_PATTERNS: Readonly<Record<NumberFormatType, string>> = {
  NUMBER: '#,##0.00',
  CURRENCY: '"$"#,##0.00',
  PERCENT: '0.00%',
  DATE: 'yyyy-mm-dd',
  DATE_TIME: 'yyyy-mm-dd hh:mm:ss',
  TIME: 'h:mm:ss am/pm',
  TEXT: '@',
};

export function seedCell(input: EmulatorCell): Cell | undefined {
  if (input === null || input === '') return undefined;
  if (typeof input !== 'object') return { entered: scalar(input) };
  if ('date' in input) {
    const parsed = parseIsoDate(input.date);
    if (parsed === undefined) throw new TypeError(`Not a yyyy-mm-dd[ hh:mm[:ss]] date: ${input.date}`);
    return { entered: { numberValue: parsed.serial }, format: parsed.hasTime ? DATE_TIME_FORMAT : DATE_FORMAT };
  }
  if ('formula' in input) {
    if (!input.formula.startsWith('=')) throw new TypeError(`A formula starts with "=": ${input.formula}`);
    return { entered: { formulaValue: input.formula }, cached: scalar(input.value) };
  }
  const format: NumberFormat | undefined = input.format === undefined ? undefined : { type: input.format.type, pattern: input.format.pattern ?? DEFAULT_PATTERNS[input.format.type] };
  return format === undefined ? { entered: scalar(input.value) } : { entered: scalar(input.value), format };
}

function scalar(value: number | string | boolean): ExtendedValue {
  if (typeof value === 'number') return { numberValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  return { stringValue: value };
}
