// Partial responses (the `fields` system parameter): keeps only the named parts of an answer.
// `fields=spreadsheetId,sheets(properties(sheetId,title),data/rowData/values/formattedValue)`
// -> {"spreadsheetId", "sheets": [{"properties": {...}, "data": [{"rowData": [{"values": [{"formattedValue"}]}]}]}]}.
// Supported: comma lists, `a/b` and `a.b` paths, `a(b,c)` sub-selections, nesting, and `*`. Names that match
// nothing are dropped silently; Google would answer 400 for a name outside the schema.
import { badRequest } from './errors.ts';

/** name -> what to keep inside it (`true`: all of it). */
export type FieldMask = Map<string, FieldMask | true>;

export function parseFieldMask(text: string): FieldMask {
  let position = 0;
  const fail = () => badRequest(`Invalid field selection ${text}`);
  const list = (): FieldMask => {
    const mask: FieldMask = new Map();
    for (;;) {
      merge(mask, path());
      if (text[position] !== ',') return mask;
      position++;
    }
  };
  const path = (): FieldMask => {
    const match = /^\s*([A-Za-z_*][A-Za-z0-9_]*|\*)\s*/.exec(text.slice(position));
    if (match === null) throw fail();
    position += match[0].length;
    const name = match[1];
    if (text[position] === '/' || text[position] === '.') {
      position++;
      return new Map([[name, path()]]);
    }
    if (text[position] === '(') {
      position++;
      const inner = list();
      if (text[position] !== ')') throw fail();
      position++;
      return new Map([[name, inner]]);
    }
    return new Map([[name, true]]);
  };
  const mask = list();
  if (position !== text.length) throw fail();
  return mask;
}

function merge(into: FieldMask, from: FieldMask): void {
  for (const [name, sub] of from) {
    const existing = into.get(name);
    if (existing === true || sub === true) into.set(name, true);
    else if (existing === undefined) into.set(name, sub);
    else merge(existing, sub);
  }
}

export function applyFieldMask(value: unknown, mask: FieldMask): unknown {
  if (Array.isArray(value)) return value.map((item) => applyFieldMask(item, mask));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const sub = mask.get(key) ?? mask.get('*');
    if (sub === undefined) continue;
    out[key] = sub === true ? item : applyFieldMask(item, sub);
  }
  return out;
}
