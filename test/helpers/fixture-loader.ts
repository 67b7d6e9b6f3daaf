// Reads the golden fixtures from fixtures/*.json for the engine runner (test/engine/fixtures.test.ts)
// and the HTTP replayer, and re-exports the pure format functions both need. File access goes
// through `node:fs/promises`, which Node, Deno and Bun all provide.
import { readdir, readFile } from 'node:fs/promises';
import type { Fixture } from './fixture-format.ts';
import { validateFixture } from './fixture-format.ts';

export type {
  ActualResponse,
  EngineRequestInit,
  Fixture,
  FixtureCase,
  FixtureCell,
  FixtureExpect,
  FixtureRequest,
} from './fixture-format.ts';
export {
  buildWorkbook,
  caseMethod,
  caseName,
  checkCase,
  FIXTURE_ORIGIN,
  fixtureCellToModel,
  toEngineRequest,
  validateFixture,
} from './fixture-format.ts';

/** The fixtures folder, found from this file so the tests run from any working directory. */
export const FIXTURES_DIR = new URL('../../fixtures/', import.meta.url);

export interface LoadedFixture {
  /** The file name, `filters.json`. */
  readonly file: string;
  readonly fixture: Fixture;
}

/** The fixture file names, sorted so every runtime replays them in the same order. */
export async function listFixtureFiles(dir: URL = FIXTURES_DIR): Promise<string[]> {
  const names = await readdir(dir);
  return names.filter((name) => name.endsWith('.json')).sort();
}

/** Reads and checks one fixture file; a malformed file throws, naming every problem. */
export async function readFixtureFile(file: string, dir: URL = FIXTURES_DIR): Promise<Fixture> {
  const text = await readFile(new URL(file, dir), 'utf8');
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new Error(`${file} is not JSON: ${(error as Error).message}`);
  }
  const problems = validateFixture(data);
  if (problems.length > 0) throw new Error(`${file} is not a well-formed fixture:\n  ${problems.join('\n  ')}`);
  return data as Fixture;
}

export async function loadFixtures(dir: URL = FIXTURES_DIR): Promise<LoadedFixture[]> {
  const files = await listFixtureFiles(dir);
  return Promise.all(files.map(async (file) => ({ file, fixture: await readFixtureFile(file, dir) })));
}
