// The building blocks of sheetrest.json's schemas (schema.ts, and each source type's in
// server/sources/<type>/descriptor.ts): valibot schemas whose every message says what was
// expected and what came, `wholeNumber(0)` on "10k" -> `expected a whole number >= 0, got "10k"`,
// and strict objects that name a field they do not know (`readonly` -> `did you mean "readOnly"?`).
import * as v from 'valibot';
import type { BaseIssue } from 'valibot';

/**
 * Every field name sheetrest.json knows, to suggest `readOnly` for `readonly` wherever it was
 * misplaced. schema.ts adds the server's own and each source type's (the `fieldNames` of its
 * descriptor, server/sources/registry.ts) when it loads, before anything is checked.
 */
const knownFields = new Set<string>();

export function addKnownFields(names: readonly string[]): void {
  for (const name of names) knownFields.add(name);
}

// ---- messages ----------------------------------------------------------------------------

function describeType(input: unknown): string {
  if (input === undefined) return 'nothing';
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'an array';
  if (typeof input === 'object') return 'an object';
  if (typeof input === 'string') return input === '' ? 'an empty string' : `a string of ${input.length} characters`;
  return `a ${typeof input}`;
}

export function describeValue(issue: BaseIssue<unknown>, secret = false): string {
  const input = issue.input;
  if (secret) return describeType(input);
  // JSON reads 1e309 as Infinity, which JSON.stringify would show as null.
  if (typeof input === 'number' && !Number.isFinite(input)) return 'a number too large to hold (1e309 or more)';
  if (typeof input === 'string' || typeof input === 'number' || typeof input === 'boolean' || input === null) {
    const shown = JSON.stringify(input);
    return shown.length > 60 ? `${shown.slice(0, 57)}..."` : shown;
  }
  return describeType(input);
}

/**
 * A message saying what was expected and what came instead: `expected a whole number >= 0, got
 * "10k"`. For a secret field it says only what kind of value came (`got a string of 7
 * characters`): the message is built before valibot knows the field's path, so the schema
 * has to say so itself.
 */
export function expected(what: string, secret = false): (issue: BaseIssue<unknown>) => string {
  return (issue) => `expected ${what}, got ${describeValue(issue, secret)}`;
}

function suggestField(name: string): string {
  const folded = name.toLowerCase().replace(/[-_]/g, '');
  const match = [...knownFields].find((known) => known.toLowerCase() === folded);
  return match === undefined ? '' : ` (did you mean "${match}"?)`;
}

/** An object's own issues: not an object, a required field missing, or a field it does not know. */
function objectMessage(what: string, fields: string): (issue: BaseIssue<unknown>) => string {
  return (issue) => {
    // valibot reports all three as a `strict_object` issue and tells them apart by `expected`:
    // `never` for a field it does not know, the field's quoted name for a missing one.
    if (issue.expected === 'never') {
      return `unknown field${suggestField(String(issue.input))}; expected one of ${fields}`;
    }
    if (issue.input === undefined && issue.expected?.startsWith('"')) return 'is required';
    return `expected ${what}, got ${describeValue(issue)}`;
  };
}

// ---- building blocks -----------------------------------------------------------------------

export function text(what = 'a non-empty string', secret = false) {
  return v.pipe(v.string(expected(what, secret)), v.nonEmpty(expected(what, secret)));
}

/** One rule, so that a number breaking several (1e309: not whole, too large) is told once. */
export function wholeNumber(min: number, max = Number.MAX_SAFE_INTEGER, what = max === Number.MAX_SAFE_INTEGER ? `a whole number >= ${min}` : `a whole number from ${min} to ${max}`) {
  return v.pipe(v.number(expected(what)), v.check((input) => Number.isInteger(input) && input >= min && input <= max, expected(what)));
}

export function flag() {
  return v.boolean(expected('true or false'));
}

/** An object with exactly these fields; a variant of `source` needs it bare. */
export function strictBare<const TEntries extends v.ObjectEntries>(what: string, entries: TEntries) {
  const fields = Object.keys(entries).map((key) => `"${key}"`).join(', ');
  return v.strictObject(entries, objectMessage(what, fields));
}

// valibot's object schemas take an array as an object whose fields are all missing, so
// `"limits": []` would quietly mean the defaults; refuse anything but a plain object first.
export function strict<const TEntries extends v.ObjectEntries>(what: string, entries: TEntries) {
  const isObject = (input: unknown): boolean => typeof input === 'object' && input !== null && !Array.isArray(input);
  return v.pipe(v.custom<Record<string, unknown>>(isObject, expected(what)), strictBare(what, entries));
}

/** At most one of `fields` is set (a Google source's credentials). */
export function atMostOne<TInput extends Record<string, unknown>>(fields: readonly (keyof TInput & string)[]) {
  const names = fields.map((field) => `"${field}"`).join(', ');
  return v.check(
    (input: TInput) => fields.filter((field) => input[field] !== undefined).length <= 1,
    (issue: v.CheckIssue<TInput>) => {
      const given = fields.filter((field) => issue.input[field] !== undefined);
      return `expected at most one of ${names}, got ${given.map((f) => `"${f}"`).join(' and ')}`;
    },
  );
}

/** Exactly one of `fields` is set (a key is `key`, `sha256` or `env`). */
export function exactlyOne<TInput extends Record<string, unknown>>(fields: readonly (keyof TInput & string)[]) {
  const names = fields.map((field) => `"${field}"`);
  const list = `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
  return v.check(
    (input: TInput) => fields.filter((field) => input[field] !== undefined).length === 1,
    (issue: v.CheckIssue<TInput>) => {
      const given = fields.filter((field) => issue.input[field] !== undefined);
      return given.length === 0 ? `expected one of ${list}` : `expected only one of ${list}, got ${given.map((f) => `"${f}"`).join(' and ')}`;
    },
  );
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const envName = v.pipe(v.string(expected('an environment variable name')), v.regex(ENV_NAME, expected('an environment variable name (letters, digits, _)')));

/** A secret written in the file, or `{ "env": "NAME" }` to read it from the environment at start-up. */
export const secret = v.union(
  [text('a non-empty string', true), strict('an object', { env: envName })],
  expected('a non-empty string or { "env": "VARIABLE_NAME" }', true),
);

export const absoluteUrl = v.pipe(v.string(expected('a URL')), v.url(expected('an absolute URL such as "https://sheets.googleapis.com"')));

export type ParsedSecret = v.InferOutput<typeof secret>;
