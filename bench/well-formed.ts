// The cost of the well-formedness check a fold runs over each part it wrote (issue 24, part 1):
// `node bench/well-formed.ts` builds a 100k x 10 worksheet part in memory, shaped as openpyxl and
// SheetJS write them (inline strings, numbers, a style per cell), and times
// `wellFormedProblem` over it, beside deflating the same part (which the fold does to every part
// it writes anyway): both in the same process, alternated, so a busy machine weighs on both.
import { deflateRawSync } from 'node:zlib';
import { loadavg } from 'node:os';
import { wellFormedProblem } from '../server/sources/file/xml/well-formed.ts';

const ROWS = Number(process.argv[2] ?? 100_000);
const COLUMNS = 10;
const LETTERS = 'ABCDEFGHIJ';

function sheetPart(rows: number): string {
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1:J', String(rows), '"/><sheetData>'];
  for (let r = 1; r <= rows; r++) {
    out.push(`<row r="${r}" spans="1:10">`);
    for (let c = 0; c < COLUMNS; c++) {
      const ref = `${LETTERS[c]}${r}`;
      out.push(c % 2 === 0 ? `<c r="${ref}" t="inlineStr" s="1"><is><t>Name &amp; ${r * 7 + c}</t></is></c>` : `<c r="${ref}" s="2"><v>${(r * 13.25 + c).toFixed(2)}</v></c>`);
    }
    out.push('</row>');
  }
  out.push('</sheetData></worksheet>');
  return out.join('');
}

function time(run: () => unknown): number {
  const start = performance.now();
  run();
  return performance.now() - start;
}

const xml = sheetPart(ROWS);
const bytes = new TextEncoder().encode(xml);
const checks: number[] = [];
const deflates: number[] = [];
for (let round = 0; round < 7; round++) {
  checks.push(time(() => {
    if (wellFormedProblem(xml) !== null) throw new Error('the generated part should be well-formed');
  }));
  deflates.push(time(() => deflateRawSync(bytes)));
}
const median = (list: number[]) => list.toSorted((a, b) => a - b)[list.length >> 1];
console.log(`well-formedness check of a ${ROWS.toLocaleString('en')}-row x ${COLUMNS} sheet part (${(bytes.length / 1_048_576).toFixed(1)} MiB), ${process.release.name} ${process.version}, load average ${loadavg()[0].toFixed(2)}`);
console.log(`  check:   median ${median(checks).toFixed(0)} ms, min ${Math.min(...checks).toFixed(0)} ms (7 runs)`);
console.log(`  deflate: median ${median(deflates).toFixed(0)} ms, min ${Math.min(...deflates).toFixed(0)} ms (the same part, alternated)`);
