// The tab bench/engine.ts and bench/engine-ab.ts time: 6 columns (Name, Age, City, Score, Joined,
// Active) of deterministic generated people, as a source builds a tab (header row, then rows of
// displayed text and typed values; equal short texts and dates shared, as the file source does).
import { createInterner } from '../lib/mod.ts';
import type { SheetRow, TypedValue, Workbook } from '../lib/mod.ts';

export const COLUMNS = ['Name', 'Age', 'City', 'Score', 'Joined', 'Active'] as const;
export const NAME = 0;
export const AGE = 1;
export const CITY = 2;
export const SCORE = 3;
const FIRST_NAMES = ['Ann', 'Anna', 'Joanna', 'Hannah', 'Johann', 'Susanne', 'Bob', 'Carlos', 'Diana', 'Eve', 'Frank', 'Grace', 'Hugo', 'Ines', 'Jorge', 'Luis', 'Maria', 'Nuno', 'Olga', 'Pedro', 'Rita', 'Sofia', 'Tiago', 'Vera'];
const SURNAMES = ['Silva', 'Santos', 'Ferreira', 'Pereira', 'Oliveira', 'Costa', 'Rodrigues', 'Martins', 'Jansen', 'Brandt', 'Moreau', 'Rossi'];
const CITIES = ['Lisbon', 'Porto', 'Madrid', 'Paris', 'Berlin', 'Rome', 'Vienna', 'Prague', 'Dublin', 'Oslo'];

// ---------------------------------------------------------------------------------------------
// The data

/** A small deterministic PRNG (mulberry32), so every run times the same tab. */
function randomSource(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A tab as a source builds one: header row, then rows of displayed text and typed values. */
export function buildWorkbook(rowCount: number): Workbook {
  const random = randomSource(rowCount);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const rows: SheetRow[] = [{ text: [...COLUMNS], value: [...COLUMNS] }];
  const interner = createInterner();
  for (let i = 0; i < rowCount; i++) {
    // Flatten the concatenation, as a parsed file's strings are.
    const name = `${pick(FIRST_NAMES)} ${pick(SURNAMES)}`.split('').join('');
    const age = 18 + Math.floor(random() * 70);
    const city = pick(CITIES);
    // About 2% of scores are empty, so sorting has empty cells to put last.
    const score = random() < 0.02 ? null : Math.round(random() * 10_000) / 100;
    const day = new Date(Date.UTC(2015, 0, 1) + Math.floor(random() * 3650) * 86_400_000).toISOString().slice(0, 10);
    const active = random() < 0.5;
    // As the file source reads a tab: equal short texts and equal dates are shared (createInterner).
    const date = interner.date(day);
    const text = [name, interner.text(String(age)), city, score === null ? '' : interner.text(String(score)), date.iso, active ? 'TRUE' : 'FALSE'];
    const value: TypedValue[] = [name, age, city, score, date, active];
    rows.push({ text, value });
  }
  return { tabs: [{ name: 'People', rows }] };
}
