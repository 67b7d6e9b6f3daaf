// `npm run fixtures -- [DIR] [--base-url URL] [--api-key KEY]`: replays golden fixtures and prints
// pass/fail per case and a summary. Without --base-url each file runs through the engine on its
// own workbook; with it, each request goes over HTTP to a running server (sheetrest or any service
// with the same API) that holds the fixture's workbook under the fixture's connection id.
import process from 'node:process';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { handle } from '../lib/engine.ts';
import type { Workbook } from '../lib/workbook.ts';
import { buildWorkbook, caseMethod, caseName, checkCase, loadFixtures, toEngineRequest, type ActualResponse, type LoadedFixture } from '../test/helpers/fixture-loader.ts';

type Replay = (loaded: LoadedFixture) => AsyncGenerator<{ name: string; problems: string[] }>;

async function* throughEngine({ fixture }: LoadedFixture) {
  let workbook: Workbook = buildWorkbook(fixture.workbook);
  for (const fixtureCase of fixture.cases) {
    const result = handle(workbook, toEngineRequest(fixtureCase.request), fixture.options ?? {});
    workbook = result.workbook;
    const problems = checkCase(fixtureCase.expect, { status: result.status, headers: result.headers, bodyText: result.body }, caseMethod(fixtureCase));
    yield { name: caseName(fixtureCase), problems };
  }
}

function overHttp(baseUrl: string, apiKey: string | undefined): Replay {
  return async function* ({ fixture }) {
    for (const fixtureCase of fixture.cases) {
      const request = toEngineRequest(fixtureCase.request, baseUrl.replace(/\/+$/, ''));
      const headers = new Headers(request.headers);
      if (apiKey !== undefined && !headers.has('x-api-key')) headers.set('X-Api-Key', apiKey);
      let actual: ActualResponse;
      try {
        const response = await fetch(request.url, { method: request.method, headers, body: request.body ?? undefined });
        actual = { status: response.status, headers: response.headers, bodyText: await response.text() };
      } catch (error) {
        yield { name: caseName(fixtureCase), problems: [`request failed: ${(error as Error).message}`] };
        continue;
      }
      yield { name: caseName(fixtureCase), problems: checkCase(fixtureCase.expect, actual, caseMethod(fixtureCase)) };
    }
  };
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    args: process.argv.slice(2),
    allowPositionals: true,
    options: { 'base-url': { type: 'string' }, 'api-key': { type: 'string' }, quiet: { type: 'boolean' } },
  });
  const dir = pathToFileURL(resolve(positionals[0] ?? new URL('../fixtures/', import.meta.url).pathname) + '/');
  const baseUrl = values['base-url'];
  const replay = baseUrl === undefined ? throughEngine : overHttp(baseUrl, values['api-key'] ?? process.env.SHEETREST_API_KEY);
  let fixtures: LoadedFixture[];
  try {
    fixtures = await loadFixtures(dir);
  } catch (error) {
    console.error(`fixtures: ${(error as Error).message}`);
    return 2;
  }
  let passed = 0;
  let failed = 0;
  console.log(`Replaying ${fixtures.length} fixture files ${baseUrl === undefined ? 'through the engine' : `against ${baseUrl}`}`);
  for (const loaded of fixtures) {
    console.log(`\n${loaded.file} (connection "${loaded.fixture.connection}")`);
    for await (const { name, problems } of replay(loaded)) {
      if (problems.length === 0) {
        passed++;
        if (!values.quiet) console.log(`  ok    ${name}`);
      } else {
        failed++;
        console.log(`  FAIL  ${name}\n${problems.map((problem) => `          ${problem}`).join('\n')}`);
      }
    }
  }
  console.log(`\n${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

process.exitCode = await main();
