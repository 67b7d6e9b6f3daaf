// Requests and connections for the pipeline stages' own tests (test/http/<stage>.test.ts): a
// request as the handler reads it, with exactly the headers given (a Web Request would add or
// refuse some, such as Host, differently on each runtime), and a connection over a memory source.
import type { Workbook } from '../../lib/workbook.ts';
import type { Connection } from '../../server/connections.ts';
import type { IncomingRequest } from '../../server/http/request.ts';
import { memorySource } from '../../server/sources/memory.ts';

/** `incoming('GET', 'http://x/sheets/demo', { origin: 'https://a.example' })`; header names in lower case. */
export function incoming(method: string, url: string, headers: Record<string, string> = {}, body: string | null = null): IncomingRequest {
  return {
    method,
    url,
    headers: { get: (name: string) => headers[name.toLowerCase()] ?? null },
    body: body === null ? null : new Response(body).body,
  };
}

export function people(): Workbook {
  const row = (...cells: (string | number)[]) => ({ text: cells.map(String), value: cells });
  return { tabs: [{ name: 'People', rows: [row('Name', 'Age'), row('Ann', 30), row('Bob', 41)] }] };
}

/** A connection `demo` over `people()`, open unless given keys. */
export function connectionOf(extra: Partial<Connection> = {}): Connection {
  return { id: 'demo', source: memorySource(people()), keys: [], readOnly: false, engine: {}, ...extra };
}
