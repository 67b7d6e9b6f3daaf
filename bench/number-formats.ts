// What showing a number cell costs at load (issue 24, parts 6-10): `node bench/number-formats.ts`
// times readCell (server/sources/file/xlsx/read-cells.ts) over 1M cells per format, as SheetJS
// hands them over (its text already made), the fastest of 15 rounds. Formats SSF shows right
// only look their format up (number-format.ts); the ones it shows wrongly are formatted again.
// `node bench/number-formats.ts <checkout>` times another checkout's readCell (a paired run:
// `git archive <commit> | tar -x -C /tmp/base`, node_modules linked, then both in turns).
import { join } from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';
import { ROOT } from './processes.ts';

const root = process.argv[2] ?? ROOT;
const load = (path: string) => import(pathToFileURL(join(root, path)).href);
const { loadSheetJs } = await load('server/sources/file/xlsx/sheetjs.ts');
const { readCell } = await load('server/sources/file/xlsx/read-cells.ts');
await loadSheetJs();

const CELLS = 1_000_000;
const cases: [format: string, value: (i: number) => number][] = [
  ['General', (i) => i / 7],
  ['#,##0.00', (i) => i / 7],
  ['yyyy-mm-dd', (i) => 40_000 + (i % 3650)],
  ['[h]:mm', (i) => (i % 1000) / 7],
  ['[h]:mm (negative)', (i) => -(i % 1000) / 7],
  ['[<=9999999]###\\-####;(###) ###\\-####', (i) => -i],
  ['##0.0E+0', (i) => i / 7],
  ['[$-411]ggge"年"m"月"d"日"', (i) => 40_000 + (i % 3650)],
];

console.log(`readCell over ${CELLS.toLocaleString('en')} number cells, ${root}`);
console.log('| format | ms per 1M cells |');
console.log('|---|---:|');
for (const [name, value] of cases) {
  const format = name.replace(' (negative)', '');
  const cells = Array.from({ length: CELLS }, (_, i) => ({ t: 'n', v: value(i), z: format, w: 'as SheetJS showed it' }));
  let fastest = Infinity;
  for (let round = 0; round < 15; round++) {
    const at = performance.now();
    for (const cell of cells) readCell(cell, false);
    fastest = Math.min(fastest, performance.now() - at);
  }
  console.log(`| \`${name}\` | ${Math.round(fastest)} |`);
}
