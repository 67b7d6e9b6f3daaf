// The mixed load of `node bench/memory.ts mixed` (issue 20, part 13): mostly reads (all rows,
// pages, exact and `*text*` filters, sorts, /search, /query, formats, one row, /tabs), with
// POSTs, PATCHes and DELETEs between them, from a few connections at once for a fixed time,
// against the demo workbook's People tab on 127.0.0.1. The choices come from a seeded generator,
// so two runs of the same length send the same kinds of request in the same proportions.

/** Requests in flight at once. */
export const MIXED_CONNECTIONS = 8;

const CITIES = ['Lisbon', 'Berlin', 'Paris', 'Seoul', 'Porto', 'Oslo', 'Lima'];

interface Planned {
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
}

export interface MixedLoadResult {
  /** Requests answered, by method and status (`GET 200`). */
  readonly counts: Record<string, number>;
  /** The tab's data rows at the end (X-Sheet-Rows of the last answer that had it). */
  readonly rows: number;
}

/**
 * About 76% reads, 12% POSTs (one row, or two), 8% PATCHes (by index or by a name filter), 4%
 * DELETEs by index: the tab grows by a few rows per 100 requests.
 */
export async function mixedLoad(url: string, seconds: number, connections = MIXED_CONNECTIONS): Promise<MixedLoadResult> {
  let seed = 20;
  const random = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff) / 0x80000000;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const base = `${url}/sheets/demo`;
  let rows = 7;
  let posted = 0;
  const counts: Record<string, number> = {};
  const next = (): Planned => {
    const roll = random();
    const row = Math.floor(random() * rows);
    if (roll < 0.12) {
      const n = posted++;
      const one = { Name: `Person ${n}`, Age: 20 + (n % 50), City: pick(CITIES), Joined: '2024-01-02', Active: n % 2 === 0, Score: n % 100, Notes: 'note '.repeat(n % 8) };
      return { method: 'POST', path: base, body: random() < 0.8 ? one : [one, { Name: `Person ${posted++}b`, City: pick(CITIES) }] };
    }
    if (roll < 0.16) return { method: 'PATCH', path: `${base}/${row}`, body: { Score: Math.floor(random() * 100), Notes: 'patched' } };
    if (roll < 0.2) return { method: 'PATCH', path: `${base}/Name/${encodeURIComponent(`Person ${Math.floor(random() * posted)}`)}`, body: { Age: 33 } };
    if (roll < 0.24) return { method: 'DELETE', path: `${base}/${row}` };
    const reads = [
      base,
      `${base}?_limit=20&_offset=${row}`,
      `${base}/City/${pick(CITIES)}`,
      `${base}?_sort=-Score&_limit=50`,
      `${base}/search?Name=*${Math.floor(random() * 100)}*`,
      `${base}/query?Age=__gt(${Math.floor(random() * 60)})&_limit=100`,
      `${base}/${row}`,
      `${base}?_raw=1&_format=split&_limit=100`,
      `${base}/Name/*person 1*?_limit=10`,
      `${base}/tabs`,
      `${base}/tabs/Sales%202024`,
    ];
    return { method: 'GET', path: pick(reads) };
  };
  const end = Date.now() + seconds * 1000;
  const worker = async (): Promise<void> => {
    while (Date.now() < end) {
      const { method, path, body } = next();
      const init: RequestInit = body === undefined ? { method } : { method, body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } };
      let status = 'failed';
      try {
        const response = await fetch(path, init);
        await response.arrayBuffer();
        status = String(response.status);
        const total = response.headers.get('x-sheet-rows');
        if (total !== null) rows = Math.max(Number(total), 1);
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      counts[`${method} ${status}`] = (counts[`${method} ${status}`] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  return { counts, rows };
}

/** The same few reads, once each, after a start and after the load: both servers have built the same caches. */
export async function warmUp(url: string): Promise<void> {
  const base = `${url}/sheets/demo`;
  const paths = [base, `${base}?_limit=20`, `${base}/City/Lisbon`, `${base}?_sort=-Score&_limit=50`, `${base}/search?Name=*1*`, `${base}/query?Age=__gt(30)&_limit=100`, `${base}/0`, `${base}/tabs`, `${base}/tabs/Sales%202024`];
  for (const path of paths) {
    const response = await fetch(path);
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`warm-up read ${path} answered ${response.status}`);
  }
}
