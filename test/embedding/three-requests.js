// The three requests every embedding test answers, in plain JavaScript so that each runtime
// loads this file as it is (Node, Deno, Bun, a browser page, a workerd Worker): a filtered read
// (GET /sheets/people/City/Oslo), an aggregate-free comparison query
// (GET /sheets/people/query?Age=__gte(30)&_sort=-Age) and a POST, whose plan and next workbook
// are reported. The engine is passed in, imported by each runtime its own way; the answer is
// plain JSON that test/engine/embedding.test.ts compares with EXPECTED.

/** A workbook built in code: one tab, a header row and three people. */
export function peopleWorkbook(engine) {
  const row = (...cells) => ({ text: cells.map(String), value: cells });
  return {
    tabs: [{
      name: 'People',
      rows: [
        row('Name', 'Age', 'City', 'Joined'),
        { text: ['Ann', '30', 'Oslo', '2024-03-01'], value: ['Ann', 30, 'Oslo', engine.sheetDate('2024-03-01')] },
        row('Bob', 41, 'Rome'),
        row('Cy', 25, 'Oslo'),
      ],
    }],
  };
}

export function threeRequests(engine) {
  const workbook = peopleWorkbook(engine);
  const read = engine.handle(workbook, { method: 'GET', url: '/sheets/people/City/Oslo' });
  const query = engine.handle(workbook, { method: 'GET', url: '/sheets/people/query?Age=__gte(30)&_sort=-Age' });
  const post = engine.handle(workbook, {
    method: 'POST',
    url: '/sheets/people',
    headers: { 'Content-Type': 'application/json' },
    body: '{"Name": "Dee", "Age": "52", "City": "Oslo", "Joined": "2025-01-31"}',
  });
  // The next workbook answers the read again with the new row; the one passed in is unchanged.
  const after = engine.handle(post.workbook, { method: 'GET', url: '/sheets/people/City/Oslo?_raw=1' });
  const before = engine.handle(workbook, { method: 'GET', url: '/sheets/people' });
  return {
    read: { status: read.status, total: read.headers['X-Total-Count'], rows: JSON.parse(read.body) },
    query: { status: query.status, total: query.headers['X-Total-Count'], rows: JSON.parse(query.body) },
    post: {
      status: post.status,
      body: JSON.parse(post.body),
      plan: post.plan,
      nextRows: JSON.parse(after.body),
      unchangedRows: JSON.parse(before.body).length,
    },
  };
}
