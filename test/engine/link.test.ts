// The Link header's page URLs (lib/link.ts): `pageLinks('_limit=10&_offset=20', 20, 10, 40)` ->
// first, prev, next and last, each the query as sent with only `_offset` set.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pageLinks } from '../../lib/link.ts';

const cases: [string, [string, number, number, number], string | null][] = [
  ['first page of three', ['_limit=10', 0, 10, 25], '<?_limit=10&_offset=0>; rel="first", <?_limit=10&_offset=10>; rel="next", <?_limit=10&_offset=20>; rel="last"'],
  ['middle page', ['_limit=10&_offset=10', 10, 10, 25], '<?_limit=10&_offset=0>; rel="first", <?_limit=10&_offset=0>; rel="prev", <?_limit=10&_offset=20>; rel="next", <?_limit=10&_offset=20>; rel="last"'],
  ['last page, exactly full', ['_offset=20&_limit=10', 20, 10, 30], '<?_offset=0&_limit=10>; rel="first", <?_offset=10&_limit=10>; rel="prev", <?_offset=20&_limit=10>; rel="last"'],
  ['offset off the grid', ['_offset=3&_limit=10', 3, 10, 25], '<?_offset=0&_limit=10>; rel="first", <?_offset=0&_limit=10>; rel="prev", <?_offset=13&_limit=10>; rel="next", <?_offset=23&_limit=10>; rel="last"'],
  ['past the end', ['_offset=50&_limit=10', 50, 10, 25], '<?_offset=0&_limit=10>; rel="first", <?_offset=40&_limit=10>; rel="prev", <?_offset=20&_limit=10>; rel="last"'],
  ['nothing matched', ['a=1&_limit=5', 0, 5, 0], '<?a=1&_limit=5&_offset=0>; rel="first", <?a=1&_limit=5&_offset=0>; rel="last"'],
  ['_limit=0: no links', ['_limit=0', 0, 0, 10], null],
  ['other parameters kept as sent, empty ones too', ['x=a%20b+c&&_limit=1&y', 0, 1, 2], '<?x=a%20b+c&&_limit=1&y&_offset=0>; rel="first", <?x=a%20b+c&&_limit=1&y&_offset=1>; rel="next", <?x=a%20b+c&&_limit=1&y&_offset=1>; rel="last"'],
  ['an encoded _offset is the one replaced', ['%5Foffset=1&_limit=1', 1, 1, 3], '<?_offset=0&_limit=1>; rel="first", <?_offset=0&_limit=1>; rel="prev", <?_offset=2&_limit=1>; rel="next", <?_offset=2&_limit=1>; rel="last"'],
  // Offsets past 2^53 are steps of the numbers as sent, in decimal: never `1e+22`, which _offset refuses.
  ['an offset past what a double holds', ['_limit=3&_offset=9999999999999999999999', 1e22, 3, 10], '<?_limit=3&_offset=0>; rel="first", <?_limit=3&_offset=9999999999999999999996>; rel="prev", <?_limit=3&_offset=9>; rel="last"'],
  ['a limit and an offset past what a double holds', ['_offset=90000000000000000000001&_limit=30000000000000000000000', 9e22, 3e22, 10], '<?_offset=0&_limit=30000000000000000000000>; rel="first", <?_offset=60000000000000000000001&_limit=30000000000000000000000>; rel="prev", <?_offset=1&_limit=30000000000000000000000>; rel="last"'],
  ['an offset past 2^53 in a query that encodes its name', ['%5Foffset=9007199254740993&_limit=2', 9007199254740992, 2, 4], '<?_offset=0&_limit=2>; rel="first", <?_offset=9007199254740991&_limit=2>; rel="prev", <?_offset=3&_limit=2>; rel="last"'],
  ['a parameter merely starting with _offset is not it', ['_offsets=9&_limit=1', 0, 1, 2], '<?_offsets=9&_limit=1&_offset=0>; rel="first", <?_offsets=9&_limit=1&_offset=1>; rel="next", <?_offsets=9&_limit=1&_offset=1>; rel="last"'],
];

for (const [name, [query, offset, limit, total], expected] of cases) {
  test(`${name}: ?${query} offset ${offset} limit ${limit} of ${total}`, () => {
    assert.equal(pageLinks(query, offset, limit, total), expected);
  });
}

test('every link resolves against the request URL to the same path, with the page offset', () => {
  const request = new URL('https://example.org/api/sheets/demo/tabs/Orders?City=Lisbon&_limit=2&_offset=4');
  const header = pageLinks(request.search.slice(1), 4, 2, 9)!;
  const links = [...header.matchAll(/<([^>]*)>; rel="(\w+)"/g)].map(([, target, rel]) => [rel, new URL(target, request)] as const);
  assert.deepEqual(links.map(([rel]) => rel), ['first', 'prev', 'next', 'last']);
  for (const [, url] of links) {
    assert.equal(url.origin + url.pathname, 'https://example.org/api/sheets/demo/tabs/Orders');
    assert.equal(url.searchParams.get('City'), 'Lisbon');
    assert.equal(url.searchParams.get('_limit'), '2');
  }
  assert.deepEqual(links.map(([, url]) => url.searchParams.get('_offset')), ['0', '2', '6', '8']);
});
