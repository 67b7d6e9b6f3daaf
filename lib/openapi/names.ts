// Names the OpenAPI document derives from a workbook: `Sales 2024` -> component key `Sales_2024`
// and path segment `Sales%202024`; a column `$ref` -> a pattern, not a property key.
// Tab and column names are whatever people typed (spaces, unicode, `/`, `~`, `__proto__`),
// while component keys must match ^[a-zA-Z0-9._-]+$ and be unique, and some keys mean
// something to every tool that walks a document.

/** Characters a component key may hold; `.` is left out so `${key}.Row` can never collide. */
const KEY_UNSAFE = /[^A-Za-z0-9_-]+/g;

/**
 * One component key per tab name, in order: the name with every run of other characters
 * turned into `_`, then `_2`, `_3`... where two keys would be equal ignoring case (a client
 * generator writes one file per schema, and some file systems ignore case).
 */
export function componentKeys(names: readonly string[]): string[] {
  const taken = new Set<string>();
  return names.map((name) => {
    const base = name.replace(KEY_UNSAFE, '_').replace(/^_+|_+$/g, '') || 'Tab';
    let key = base;
    for (let suffix = 2; taken.has(key.toLowerCase()); suffix++) key = `${base}_${suffix}`;
    taken.add(key.toLowerCase());
    return key;
  });
}

/**
 * A tab name as one path segment. `.` and `..` are spelled out (`%2E`), though URL parsers
 * still read `%2E%2E` as `..`: such a tab cannot be addressed by name (docs/openapi.md).
 */
export function pathSegment(name: string): string {
  const encoded = encodeURIComponent(name);
  return encoded === '.' || encoded === '..' ? encoded.replaceAll('.', '%2E') : encoded;
}

/**
 * Column names that must not become keys of a `properties` object: `$ref`, `$id`, `$anchor`...
 * are plain property names to JSON Schema, but tools that resolve references (the validator,
 * Swagger UI's client) take any `$ref` key for a reference. Such columns are matched with
 * `patternProperties` instead, which means the same thing.
 */
export function isKeywordLike(column: string): boolean {
  return column.startsWith('$');
}

/** A regular expression (ECMA-262, unicode mode) matching exactly `text`. */
export function exactPattern(text: string): string {
  return `^${text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&')}$`;
}

/** `{ [name]: value }` for names that may be `__proto__`: always own data properties. */
export function record<T>(entries: Iterable<readonly [string, T]>): Record<string, T> {
  return Object.fromEntries(entries) as Record<string, T>;
}
