// A TypeScript consumer of the packed package: `tsc --noEmit` checks it against the published
// declarations (dist/engine/*.d.ts), then Node 24 and 22.18 (type stripping works outside
// node_modules), Deno and Bun run it, and it prints the answers to the filtered read, the /query
// and the POST, and two refusals.
import { handle, sheetDate, isApiError, parseRequest, type EngineResult, type ErrorCode, type Workbook, type WritePlan } from 'sheetrest/engine';

const workbook: Workbook = {
  tabs: [{
    name: 'People',
    rows: [
      { text: ['Name', 'Age', 'City', 'Joined'], value: ['Name', 'Age', 'City', 'Joined'] },
      { text: ['Ann', '30', 'Oslo', '2024-03-01'], value: ['Ann', 30, 'Oslo', sheetDate('2024-03-01')] },
      { text: ['Bob', '41', 'Rome'], value: ['Bob', 41, 'Rome'] },
      { text: ['Cy', '25', 'Oslo'], value: ['Cy', 25, 'Oslo'] },
    ],
  }],
};

const read: EngineResult = handle(workbook, { method: 'GET', url: '/sheets/people/City/Oslo' });
const query: EngineResult = handle(workbook, { method: 'GET', url: '/sheets/people/query?Age=__gte(30)&_sort=-Age' });
const post = handle(workbook, { method: 'POST', url: '/sheets/people', headers: { 'Content-Type': 'application/json' }, body: '{"Name": "Dee", "Age": "52", "City": "Oslo", "Joined": "2025-01-31"}' });
const plan: WritePlan | null = post.plan;
const appended: number = plan?.appended?.rows.length ?? 0;
const next: Workbook = post.workbook;
const after = handle(next, { method: 'GET', url: '/sheets/people/City/Oslo?_raw=1' });
// Errors are values, never exceptions: a malformed request from parseRequest, an unknown
// operator as the answer's 400.
const malformed = parseRequest({ method: 'GET', url: '/sheets/people?_limit=-1' });
const refused = handle(workbook, { method: 'GET', url: '/sheets/people/query?Age=__about(30)' });
const refusedCode: ErrorCode = JSON.parse(refused.body).error;
const status: number = read.status;

console.log(JSON.stringify({
  read: { status, rows: JSON.parse(read.body) },
  query: { status: query.status, rows: JSON.parse(query.body) },
  post: { status: post.status, appended, nextRows: JSON.parse(after.body) },
  malformed: isApiError(malformed) ? malformed.code : null,
  refused: { status: refused.status, code: refusedCode },
}));
