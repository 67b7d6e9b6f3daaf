// The source types' registry (server/sources/registry.ts): each descriptor's lists agree with
// its schema, so a new type's misspelt field gets a suggestion, its secrets are masked in the
// admin API, and its dashboard form asks only for fields the schema takes:
//   fileSourceType.fieldNames ['type', 'path'] = the keys of its schema, nested ones included.
// What each list does is tested where it is used (test/config, test/admin, test/dashboard).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dashboardForms, SOURCE_TYPES, sourceTypeOf } from '../../server/sources/registry.ts';

/** Every key of a valibot schema's objects, nested ones too (through optional, pipe, union and array). */
function keysOf(schema: unknown): string[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const node = schema as { entries?: Record<string, unknown>; wrapped?: unknown; options?: unknown[]; item?: unknown; pipe?: unknown[] };
  const keys: string[] = [];
  for (const [key, inner] of Object.entries(node.entries ?? {})) keys.push(key, ...keysOf(inner));
  // A pipe's first item is the schema itself, whose entries are already counted.
  keys.push(...keysOf(node.wrapped), ...(node.options ?? []).flatMap(keysOf), ...keysOf(node.item), ...(node.pipe ?? []).slice(1).flatMap(keysOf));
  return keys;
}

test('each source type is listed once, under its own name', () => {
  const names = SOURCE_TYPES.map((type) => type.type);
  assert.deepEqual([...new Set(names)], names);
  for (const type of SOURCE_TYPES) assert.equal(sourceTypeOf({ type: type.type } as never), type);
});

for (const type of SOURCE_TYPES) {
  test(`${type.type}: fieldNames are its schema's keys, secretFields among them`, () => {
    assert.deepEqual([...new Set(type.fieldNames)].sort(), [...new Set(keysOf(type.schema))].sort());
    const names: readonly string[] = type.fieldNames;
    for (const field of type.secretFields) assert.ok(names.includes(field), field);
  });
}

test('a dashboard form asks only for fields its type takes', () => {
  const forms = dashboardForms();
  assert.deepEqual(forms.map((form) => form.type), ['file']);
  for (const form of forms) {
    const names: readonly string[] = SOURCE_TYPES.find((each) => each.type === form.type)?.fieldNames ?? [];
    for (const field of form.fields) assert.ok(names.includes(field.name), `${form.type}.${field.name}`);
  }
});
