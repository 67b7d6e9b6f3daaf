// Writes fixtures/demo.xlsx, the workbook `npm start` serves: `node tools/make-demo.ts`.
// Two tabs (one with a space in its name) with text, numbers, formatted numbers, dates,
// booleans, empty cells and a blank row, so every kind of value can be tried from the README.
import * as XLSX from '@e965/xlsx';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

type Cell = string | number | boolean | null | { date: string } | { n: number; z: string };

const people: Cell[][] = [
  ['Name', 'Age', 'City', 'Joined', 'Active', 'Score', 'Notes'],
  ['Ann Lee', 34, 'Lisbon', { date: '2021-03-01' }, true, { n: 91.5, z: '0.0' }, 'Team lead'],
  ['Bob Stone', 27, 'Berlin', { date: '2022-07-15' }, false, { n: 78.25, z: '0.0' }, null],
  ['Chloé Martin', 41, 'Paris', { date: '2019-11-30' }, true, { n: 88, z: '0.0' }, 'Works remotely'],
  ['Dan Kim', 22, 'Seoul', { date: '2024-01-08' }, true, { n: 64.75, z: '0.0' }, null],
  [null, null, null, null, null, null, null],
  ['Eva Jensen', 30, 'Zürich', { date: '2023-05-20' }, false, { n: 95, z: '0.0' }, 'Joined from the Oslo office'],
  ['Farid Haddad', 38, 'Lisbon', { date: '2020-09-14' }, true, { n: 70.5, z: '0.0' }, '007 is her badge'],
];

const sales: Cell[][] = [
  ['Date', 'Region', 'Product', 'Units', 'Revenue'],
  [{ date: '2024-01-15' }, 'North', 'Widget', 120, { n: 1800, z: '"$"#,##0.00' }],
  [{ date: '2024-02-03' }, 'South', 'Gadget', 45, { n: 2250.5, z: '"$"#,##0.00' }],
  [{ date: '2024-02-28' }, 'North', 'Gadget', 60, { n: 3000, z: '"$"#,##0.00' }],
  [{ date: '2024-03-12' }, 'East', 'Widget', 200, { n: 3000, z: '"$"#,##0.00' }],
  [{ date: '2024-04-01' }, 'West', 'Doohickey', 12, { n: 599.99, z: '"$"#,##0.00' }],
];

function sheet(rows: Cell[][]): XLSX.WorkSheet {
  const worksheet: XLSX.WorkSheet = {};
  rows.forEach((row, r) =>
    row.forEach((value, c) => {
      if (value === null) return;
      const address = XLSX.utils.encode_cell({ r, c });
      if (typeof value === 'string') worksheet[address] = { t: 's', v: value };
      else if (typeof value === 'number') worksheet[address] = { t: 'n', v: value };
      else if (typeof value === 'boolean') worksheet[address] = { t: 'b', v: value };
      else if ('date' in value) worksheet[address] = { t: 'n', v: serial(value.date), z: 'yyyy-mm-dd' };
      else worksheet[address] = { t: 'n', v: value.n, z: value.z };
    }),
  );
  worksheet['!ref'] = XLSX.utils.encode_range({ s: { r: 0, c: 0 }, e: { r: rows.length - 1, c: rows[0].length - 1 } });
  return worksheet;
}

/** Days since 1899-12-30, the spreadsheet date epoch. */
function serial(iso: string): number {
  return (Date.parse(iso + 'T00:00:00Z') - Date.UTC(1899, 11, 30)) / 86_400_000;
}

const workbook = XLSX.utils.book_new();
XLSX.utils.book_append_sheet(workbook, sheet(people), 'People');
XLSX.utils.book_append_sheet(workbook, sheet(sales), 'Sales 2024');
const target = fileURLToPath(new URL('../fixtures/demo.xlsx', import.meta.url));
writeFileSync(target, XLSX.write(workbook, { type: 'buffer', bookType: 'xlsx' }));
console.log(`wrote ${target}`);
