// A document without the components nothing refers to: a read-only connection's document has no
// writes, so no `Staff.Write`, no `If-Match` and no 412; `#/components/responses/Error405` is
// behind every operation's `default` and named by none. Generated parts then stay whole (every
// tab gets its schemas, the catalogue every status) and the document still lints clean
// (`no-unused-components`). Security schemes are named by `security`, never by `$ref`: kept.
import type { JsonObject } from './components.ts';

const PREFIX = '#/components/';

export function withoutUnusedComponents(document: JsonObject): JsonObject {
  const components = document.components as Record<string, Record<string, unknown>>;
  const used = new Set<string>();
  const pending: unknown[] = [Object.fromEntries(Object.entries(document).filter(([name]) => name !== 'components'))];
  while (pending.length > 0) {
    const value = pending.pop();
    if (Array.isArray(value)) {
      pending.push(...value);
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    for (const [name, inner] of Object.entries(value)) {
      if (name === '$ref' && typeof inner === 'string' && inner.startsWith(PREFIX) && !used.has(inner)) {
        used.add(inner);
        // `#/components/schemas/Staff.Row`: a component key holds no `/` (names.ts).
        const [kind, key] = inner.slice(PREFIX.length).split('/');
        pending.push(components[kind]?.[key]);
      } else {
        pending.push(inner);
      }
    }
  }
  const kept: Record<string, unknown> = {};
  for (const [kind, group] of Object.entries(components)) {
    if (kind === 'securitySchemes') {
      kept[kind] = group;
      continue;
    }
    const entries = Object.entries(group).filter(([key]) => used.has(`${PREFIX}${kind}/${key}`));
    if (entries.length > 0) kept[kind] = Object.fromEntries(entries);
  }
  return { ...document, components: kept };
}
