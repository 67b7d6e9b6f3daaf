// Zip parts that lie about their size (issue 24, part 12): `node bench/zip-sizes.ts` prints how
// long refusing a `sheet1.xml` that declares 1,000 bytes and inflates to 2 GiB takes (the
// decoder, and openFileSource at start; it took 8.8 s, then read an empty tab), and, paired on
// one .xlsx (bench/big-files.ts's 100k x 10 file when it is cached, else a 20k-row one made
// here), how long SheetJS's reading takes with its own unzip (before) and with the parts
// unpacked by zip.ts (now). Runs alternate, so load from other jobs falls on both.
import * as XLSX from '@e965/xlsx';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeWorkbook } from '../server/sources/file/codec.ts';
import { openFileSource } from '../server/sources/file/mod.ts';
import { mendXlsxPackage, type ZipContainer } from '../server/sources/file/xlsx/mend-package.ts';
import { readBook } from '../server/sources/file/xlsx/read-cells.ts';
import { loadSheetJs } from '../server/sources/file/xlsx/sheetjs.ts';
import { plainBook } from '../test/helpers/make-xlsx-corpus.ts';
import { withLyingPart, zerosDeflated } from '../test/helpers/zip-bomb.ts';

await loadSheetJs();
const load = () => loadavg()[0].toFixed(1);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const good = plainBook('<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Name</t></is></c></row></sheetData></worksheet>');
const bomb = withLyingPart(good, 'xl/worksheets/sheet1.xml', 1000, { deflated: zerosDeflated(2048) });
const decodeTimes: number[] = [];
for (let run = 0; run < 7; run++) {
  const start = performance.now();
  try {
    decodeWorkbook(bomb, 'xlsx', 'Data');
    throw new Error('the bomb was read');
  } catch (error) {
    if (!/unpacks to more than the 1,000 bytes it declares/.test((error as Error).message)) throw error;
  }
  decodeTimes.push(performance.now() - start);
}
console.log(`refusing a ${(bomb.length / 1_048_576).toFixed(1)} MB .xlsx whose 1,000-byte sheet1.xml inflates to 2 GiB: decodeWorkbook median ${median(decodeTimes).toFixed(1)} ms of 7 (load ${load()})`);

const folder = await mkdtemp(join(tmpdir(), 'sheetrest-zip-sizes-'));
try {
  const path = join(folder, 'bomb.xlsx');
  await writeFile(path, bomb);
  const start = performance.now();
  const message = await openFileSource({ path, log: () => {} }).then(
    () => 'opened',
    (error: Error) => error.message,
  );
  console.log(`openFileSource at start: refused in ${(performance.now() - start).toFixed(1)} ms: ${message} (load ${load()})`);
} finally {
  await rm(folder, { recursive: true, force: true });
}

/** readBook as it was: SheetJS's own unzip (every part inflated to its end), then the same mending and reading. */
function readBookBefore(bytes: Uint8Array): XLSX.WorkBook {
  const zip: ZipContainer = XLSX.CFB.read(bytes, { type: 'array' });
  mendXlsxPackage(zip);
  return (XLSX as unknown as { parse_zip(zip: ZipContainer, options: object): XLSX.WorkBook }).parse_zip(zip, { type: 'array', bookVBA: true, dense: true, cellDates: false, cellNF: true, cellFormula: true, cellText: true, cellHTML: false });
}

const cached = join(tmpdir(), 'sheetrest-big-files', 'big.xlsx');
let bytes: Uint8Array;
let label: string;
if (existsSync(cached)) {
  bytes = new Uint8Array(await readFile(cached));
  label = `${cached} (100k x 10, ${(bytes.length / 1_048_576).toFixed(1)} MB)`;
} else {
  const rows = [['Id', 'Name', 'City', 'Amount'], ...Array.from({ length: 20_000 }, (_, n) => [n, `Name ${n}`, `City ${n % 50}`, n * 1.5])];
  const book = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet(rows), 'Data');
  bytes = new Uint8Array(XLSX.write(book, { type: 'array', bookType: 'xlsx', compression: true }) as ArrayBuffer);
  label = `a 20k x 4 .xlsx made here (${(bytes.length / 1_048_576).toFixed(1)} MB)`;
}
const before: number[] = [];
const now: number[] = [];
for (let run = 0; run < 3; run++) {
  for (const [read, times] of [[readBookBefore, before], [readBook, now]] as const) {
    const start = performance.now();
    read(bytes);
    times.push(performance.now() - start);
  }
}
console.log(`reading ${label}, paired, 3 runs each: SheetJS's unzip median ${median(before).toFixed(0)} ms, zip.ts's median ${median(now).toFixed(0)} ms (load ${load()})`);
