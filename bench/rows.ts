// The rows the HTTP benchmarks serve: `generate(1000)` gives 1,000 people with names, ages,
// cities, scores, dates and flags, the same every run; `writeBenchBook` writes them as the
// one-tab .xlsx (`People`) sheetrest serves, `writeBenchCsv` as a .csv file.
import { writeFile } from 'node:fs/promises';
import * as XLSX from '@e965/xlsx';

const CITIES = ['Lisbon', 'Berlin', 'Paris', 'Seoul', 'Zürich', 'Porto', 'Oslo', 'Lima'];
const NAMES = ['Ann', 'Bob', 'Chloé', 'Dan', 'Eva', 'Farid', 'Gil', 'Hana', 'Ivan', 'Joanna'];

export interface Row {
  id: number;
  Name: string;
  Age: number;
  City: string;
  Score: number;
  Joined: string;
  Active: boolean;
}

export function generate(count: number): Row[] {
  const rows: Row[] = [];
  for (let i = 0; i < count; i++) {
    rows.push({
      id: i + 1,
      Name: `${NAMES[i % NAMES.length]} ${NAMES[(i * 7) % NAMES.length]}son ${i}`,
      Age: 18 + ((i * 13) % 60),
      City: CITIES[(i * 5) % CITIES.length],
      Score: Math.round(((i * 37) % 1000) * 1.25) / 10,
      Joined: `20${10 + (i % 15)}-0${1 + (i % 9)}-1${i % 10}`,
      Active: i % 3 !== 0,
    });
  }
  return rows;
}

const HEADER = ['Name', 'Age', 'City', 'Score', 'Joined', 'Active'] as const;

export async function writeBenchBook(path: string, rows: readonly Row[]): Promise<void> {
  const sheet = XLSX.utils.aoa_to_sheet([[...HEADER], ...rows.map((row) => HEADER.map((column) => row[column]))]);
  const workbook = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(workbook, sheet, 'People');
  await writeFile(path, XLSX.write(workbook, { type: 'buffer', bookType: 'xlsx' }));
}

/** The rows as a .csv file (a header line, then one line per row; no field needs quotes). */
export async function writeBenchCsv(path: string, rows: readonly Row[]): Promise<void> {
  const lines = [HEADER.join(',')];
  for (const row of rows) lines.push(HEADER.map((column) => String(row[column])).join(','));
  await writeFile(path, lines.join('\n') + '\n');
}

/** A wrk script POSTing one row shaped like `rows[0]` (named "Bench Row"): `wrk -s PATH`. */
export async function writePostScript(path: string, rows: readonly Row[]): Promise<void> {
  const { Name: _name, ...rest } = rows[0];
  await writeFile(path, `wrk.method = "POST"\nwrk.body = ${JSON.stringify(JSON.stringify({ ...rest, Name: 'Bench Row' }))}\nwrk.headers["Content-Type"] = "application/json"\n`);
}
