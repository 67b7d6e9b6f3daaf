// GET /sheets/demo?City=Lisbon&_limit=10&_offset=20 (40 rows match) ->
// `Link: <?City=Lisbon&_limit=10&_offset=0>; rel="first", <?City=Lisbon&_limit=10&_offset=10>; rel="prev",
// <?City=Lisbon&_limit=10&_offset=30>; rel="next", <?City=Lisbon&_limit=10&_offset=30>; rel="last"`.
// The page links of RFC 8288. Each URL is a reference of the query alone, which a client resolves
// against the URL it sent (RFC 3986 5.2.2: same scheme, host and path, this query): right behind
// any proxy, whatever host or path prefix it puts in front of the server. The query is the one
// sent, every parameter in its place and in its own encoding, with only `_offset` set.

/**
 * The `Link` header of a page of `limit` rows from `offset` among `total`, or null for
 * `_limit=0` (pages of no rows have no next or last). `query` is the query string as sent, without `?`.
 */
export function pageLinks(query: string, offset: number, limit: number, total: number): string | null {
  if (limit === 0) return null;
  // Steps of the numbers as sent: `_offset=9999999999999999999999` is past what a double holds
  // exactly, and a page link must never read `_offset=1e+22`, which _offset refuses.
  const from = sentWhole(query, '_offset') ?? BigInt(offset);
  const step = sentWhole(query, '_limit') ?? BigInt(limit);
  const rows = BigInt(total);
  const links = [link(query, 0n, 'first')];
  if (from > 0n) links.push(link(query, from > step ? from - step : 0n, 'prev'));
  if (from + step < rows) links.push(link(query, from + step, 'next'));
  links.push(link(query, lastPage(from, step, rows), 'last'));
  return links.join(', ');
}

/**
 * The last page's offset, on the same steps of `limit` as this page's (next, next... last), or
 * a step back from a page past the end; 0 when nothing matches. `_offset=3&_limit=10` over 25
 * rows: 23.
 */
function lastPage(offset: bigint, limit: bigint, total: bigint): bigint {
  const lastRow = total - 1n;
  if (offset <= lastRow) return offset + ((lastRow - offset) / limit) * limit;
  const back = offset - ((offset - lastRow + limit - 1n) / limit) * limit;
  return back > 0n ? back : 0n;
}

function link(query: string, offset: bigint, rel: string): string {
  return `<?${withOffset(query, offset)}>; rel="${rel}"`;
}

/** The query with `_offset=n` in place of the one it has, or at its end. */
function withOffset(query: string, offset: bigint): string {
  const parameters = query === '' ? [] : query.split('&');
  let replaced = false;
  for (let index = 0; index < parameters.length; index++) {
    if (nameOf(parameters[index]) !== '_offset') continue;
    // A second `_offset` is refused before (400), so there is at most one.
    parameters[index] = `_offset=${offset}`;
    replaced = true;
  }
  if (!replaced) parameters.push(`_offset=${offset}`);
  return parameters.join('&');
}

/** A whole-number parameter's digits as sent (`%5Foffset=...` too), exactly; null when absent. */
function sentWhole(query: string, name: string): bigint | null {
  for (const parameter of query.split('&')) {
    if (nameOf(parameter) !== name) continue;
    const value = parameter.slice(parameter.indexOf('=') + 1);
    // parse-request refused any other value before; a caller's own query may differ (tests).
    return /^\d+$/.test(value) ? BigInt(value) : null;
  }
  return null;
}

/** A parameter's name as URLSearchParams reads it (`%5Foffset` is `_offset`). */
function nameOf(parameter: string): string {
  const equals = parameter.indexOf('=');
  const name = equals === -1 ? parameter : parameter.slice(0, equals);
  if (!name.includes('%') && !name.includes('+')) return name;
  return new URLSearchParams(name + '=').keys().next().value ?? name;
}
