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
  const links = [link(query, 0, 'first')];
  if (offset > 0) links.push(link(query, Math.max(0, offset - limit), 'prev'));
  if (offset + limit < total) links.push(link(query, offset + limit, 'next'));
  links.push(link(query, lastPage(offset, limit, total), 'last'));
  return links.join(', ');
}

/**
 * The last page's offset, on the same steps of `limit` as this page's (next, next... last), or
 * a step back from a page past the end; 0 when nothing matches. `_offset=3&_limit=10` over 25
 * rows: 23.
 */
function lastPage(offset: number, limit: number, total: number): number {
  return Math.max(0, offset + Math.floor((total - 1 - offset) / limit) * limit);
}

function link(query: string, offset: number, rel: string): string {
  return `<?${withOffset(query, offset)}>; rel="${rel}"`;
}

/** The query with `_offset=n` in place of the one it has, or at its end. */
function withOffset(query: string, offset: number): string {
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

/** A parameter's name as URLSearchParams reads it (`%5Foffset` is `_offset`). */
function nameOf(parameter: string): string {
  const equals = parameter.indexOf('=');
  const name = equals === -1 ? parameter : parameter.slice(0, equals);
  if (!name.includes('%') && !name.includes('+')) return name;
  return new URLSearchParams(name + '=').keys().next().value ?? name;
}
