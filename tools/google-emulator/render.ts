// How a stored cell reads back: its effective value (a formula's result), its formatted value
// (the number format applied with SheetJS's SSF, in the en_US locale) and the value a
// `GET .../values/A1:C3?valueRenderOption=UNFORMATTED_VALUE&dateTimeRenderOption=FORMATTED_STRING`
// returns for it.
import * as XLSX from '@e965/xlsx';
import { DATE_TYPES } from './dates.ts';
import { evaluateFormula, isError, type Scalar } from './formula.ts';
import { getCell, type Cell, type ExtendedValue, type Sheet } from './store.ts';

export const VALUE_RENDER_OPTIONS = ['FORMATTED_VALUE', 'UNFORMATTED_VALUE', 'FORMULA'] as const;
export const DATE_TIME_RENDER_OPTIONS = ['SERIAL_NUMBER', 'FORMATTED_STRING'] as const;
export type ValueRenderOption = (typeof VALUE_RENDER_OPTIONS)[number];
export type DateTimeRenderOption = (typeof DATE_TIME_RENDER_OPTIONS)[number];

/** Formatted text of each error type, as the cell shows it. */
const ERROR_TEXT: Readonly<Record<string, string>> = {
  ERROR: '#ERROR!',
  NULL_VALUE: '#NULL!',
  DIV_BY_ZERO: '#DIV/0!',
  VALUE: '#VALUE!',
  REF: '#REF!',
  NAME: '#NAME?',
  NUM: '#NUM!',
  N_A: '#N/A',
  LOADING: 'Loading...',
};

/** Reads cells of one sheet, evaluating formulas once per read and catching circular references. */
export class SheetReader {
  private readonly sheet: Sheet;
  private readonly results = new Map<string, Scalar>();
  private readonly visiting = new Set<string>();

  constructor(sheet: Sheet) {
    this.sheet = sheet;
  }

  effective(row: number, column: number): ExtendedValue | undefined {
    const cell = getCell(this.sheet, row, column);
    if (cell === undefined) return undefined;
    if (cell.entered.formulaValue === undefined) return cell.entered;
    if (cell.cached !== undefined) return cell.cached;
    return toExtended(this.evaluate(row, column, cell.entered.formulaValue));
  }

  private evaluate(row: number, column: number, formula: string): Scalar {
    const key = `${row},${column}`;
    if (this.results.has(key)) return this.results.get(key);
    if (this.visiting.has(key)) return { type: 'REF', message: 'Circular dependency detected. To resolve with iterative calculation, see File > Settings.' };
    this.visiting.add(key);
    const result = evaluateFormula(formula, (r, c) => toScalar(this.effective(r, c)));
    this.visiting.delete(key);
    this.results.set(key, result);
    return result;
  }

  formatted(row: number, column: number): string | undefined {
    const cell = getCell(this.sheet, row, column);
    const value = this.effective(row, column);
    return cell === undefined || value === undefined ? undefined : formatValue(value, cell);
  }

  /** The JSON value `values.get` puts in the grid for this cell ("" when empty). */
  render(row: number, column: number, valueOption: ValueRenderOption, dateOption: DateTimeRenderOption): string | number | boolean {
    const cell = getCell(this.sheet, row, column);
    if (cell === undefined) return '';
    if (valueOption === 'FORMATTED_VALUE') return this.formatted(row, column) ?? '';
    if (valueOption === 'FORMULA' && cell.entered.formulaValue !== undefined) return cell.entered.formulaValue;
    const value = this.effective(row, column) ?? {};
    if (value.numberValue !== undefined) {
      // FORMATTED_STRING renders dates and times by their format; other numbers stay numbers.
      const isDate = cell.format !== undefined && DATE_TYPES.has(cell.format.type);
      return isDate && dateOption === 'FORMATTED_STRING' ? formatValue(value, cell) : value.numberValue;
    }
    if (value.boolValue !== undefined) return value.boolValue;
    if (value.stringValue !== undefined) return value.stringValue;
    return formatValue(value, cell);
  }
}

export function formatValue(value: ExtendedValue, cell: Cell): string {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue ? 'TRUE' : 'FALSE';
  if (value.errorValue !== undefined) return ERROR_TEXT[value.errorValue.type] ?? '#ERROR!';
  if (value.numberValue === undefined) return '';
  const pattern = cell.format?.pattern ?? 'General';
  return String(XLSX.SSF.format(pattern, value.numberValue));
}

function toScalar(value: ExtendedValue | undefined): Scalar {
  if (value === undefined) return undefined;
  return value.numberValue ?? value.stringValue ?? value.boolValue ?? value.errorValue ?? undefined;
}

function toExtended(value: Scalar): ExtendedValue {
  if (value === undefined) return { stringValue: '' };
  if (isError(value)) return { errorValue: { type: value.type, message: value.message } };
  if (typeof value === 'number') return Number.isFinite(value) ? { numberValue: value } : { errorValue: { type: 'NUM', message: 'The result is not a finite number.' } };
  if (typeof value === 'boolean') return { boolValue: value };
  return { stringValue: value };
}
