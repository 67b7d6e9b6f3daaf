// What keeping untouched CSV records byte for byte costs (issue 24, part 3): `node --expose-gc
// bench/csv-records.ts [rows]` decodes three files of the same 1M rows (default) as the file
// source does, each in a fresh process, and prints the decode time and the live heap it added:
//   plain        `1000000,Ann Silva,Lisbon,18,0.00,2015-01-01` (nothing kept),
//   quoted each  `"1000000","Ann Silva",...` (a count of fields kept per row),
//   trailing     `1000000,Ann Silva,...,2015-01-01,` (each record's text kept).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { decodeWorkbook } from '../server/sources/file/codec.ts';

const [mode, arg] = process.argv.slice(2);

if (mode === 'decode') {
  const bytes = new Uint8Array(await readFile(arg));
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  gc();
  const before = process.memoryUsage().heapUsed;
  const start = performance.now();
  const decoded = decodeWorkbook(bytes, 'csv', 'T');
  const ms = performance.now() - start;
  gc();
  const mb = (process.memoryUsage().heapUsed - before) / 1_048_576;
  console.log(JSON.stringify({ ms, mb, rows: decoded.workbook.tabs[0].rows.length }));
} else {
  const rows = Number(mode ?? 1_000_000);
  const CITIES = ['Lisbon', 'Porto', 'Madrid', 'Paris', 'Berlin', 'Rome'];
  const fields = (n: number) => [String(1_000_000 + n), `Name ${n % 997}`, CITIES[n % CITIES.length], String(18 + (n % 60)), (n % 10_000 / 100).toFixed(2), `2015-01-${String(1 + (n % 28)).padStart(2, '0')}`];
  const styles: Record<string, (f: string[]) => string> = {
    plain: (f) => f.join(','),
    'quoted each': (f) => f.map((v) => `"${v}"`).join(','),
    trailing: (f) => `${f.join(',')},`,
  };
  for (const [name, line] of Object.entries(styles)) {
    const path = join(tmpdir(), `sheetrest-csv-records-${rows}-${name.replace(' ', '-')}.csv`);
    if (!existsSync(path)) {
      const parts = [line(['id', 'name', 'city', 'age', 'amount', 'date'])];
      for (let n = 0; n < rows; n++) parts.push(line(fields(n)));
      await writeFile(path, parts.join('\r\n') + '\r\n');
    }
    const child = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), 'decode', path], { encoding: 'utf8' });
    if (child.status !== 0) throw new Error(child.stderr);
    const { ms, mb } = JSON.parse(child.stdout) as { ms: number; mb: number };
    console.log(`${name.padEnd(12)} ${rows.toLocaleString('en-US')} rows: decode ${ms.toFixed(0)} ms, live heap +${mb.toFixed(0)} MB (load ${loadavg()[0].toFixed(1)})`);
  }
}
