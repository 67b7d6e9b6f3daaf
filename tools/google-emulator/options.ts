// Query and body parameters, checked the way Google checks them:
// `?valueRenderOption=PRETTY` -> 400 `Invalid value at 'value_render_option' (...), "PRETTY"`.
import { badRequest } from './errors.ts';
import { DATE_TIME_RENDER_OPTIONS, VALUE_RENDER_OPTIONS, type DateTimeRenderOption, type ValueRenderOption } from './render.ts';
import { VALUE_INPUT_OPTIONS, type ValueInputOption } from './user-entered.ts';

export const DIMENSIONS = ['ROWS', 'COLUMNS'] as const;
export type Dimension = (typeof DIMENSIONS)[number];
export const INSERT_DATA_OPTIONS = ['OVERWRITE', 'INSERT_ROWS'] as const;
export type InsertDataOption = (typeof INSERT_DATA_OPTIONS)[number];

/** An enum parameter: its value, the default when absent, 400 when not one of `allowed`. */
export function enumParam<T extends string>(value: unknown, name: string, allowed: readonly T[], fallback: T): T {
  if (value === undefined || value === null || value === '') return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  const snake = name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
  throw badRequest(`Invalid value at '${snake}', "${String(value)}"; expected one of ${allowed.join(', ')}`);
}

export function boolParam(value: unknown): boolean {
  return value === true || value === 'true';
}

export interface ReadOptions {
  readonly valueRenderOption: ValueRenderOption;
  readonly dateTimeRenderOption: DateTimeRenderOption;
  readonly majorDimension: Dimension;
}

export function readOptions(get: (name: string) => unknown, prefix: '' | 'response' = ''): ReadOptions {
  const name = (base: string) => (prefix === '' ? base : `${prefix}${base[0].toUpperCase()}${base.slice(1)}`);
  return {
    valueRenderOption: enumParam(get(name('valueRenderOption')), name('valueRenderOption'), VALUE_RENDER_OPTIONS, 'FORMATTED_VALUE'),
    dateTimeRenderOption: enumParam(get(name('dateTimeRenderOption')), name('dateTimeRenderOption'), DATE_TIME_RENDER_OPTIONS, 'SERIAL_NUMBER'),
    majorDimension: enumParam(get('majorDimension'), 'majorDimension', DIMENSIONS, 'ROWS'),
  };
}

/** valueInputOption is required on every write, as Google requires it. */
export function inputOption(value: unknown): ValueInputOption {
  if (value === undefined || value === null || value === '') throw badRequest("'valueInputOption' is required but not specified");
  return enumParam(value, 'valueInputOption', VALUE_INPUT_OPTIONS, 'RAW');
}
