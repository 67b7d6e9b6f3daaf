// Replays every golden fixture (fixtures/*.json) through the engine in-process: one test per
// file, one sub-test per case (`GET /sheets/people/Name/ann`), in order, each case seeing the
// workbook the previous case's write left behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { handle } from '../../lib/mod.ts';
import type { Workbook } from '../../lib/workbook.ts';
import { buildWorkbook, caseMethod, caseName, checkCase, loadFixtures, toEngineRequest } from '../helpers/fixture-loader.ts';

// The fixtures promise broad coverage; a lost file or a truncated one must not pass quietly.
const MINIMUM_CASES = 200;

const fixtures = await loadFixtures();

test('the fixtures hold enough cases', () => {
  const total = fixtures.reduce((sum, { fixture }) => sum + fixture.cases.length, 0);
  assert.ok(total >= MINIMUM_CASES, `expected at least ${MINIMUM_CASES} fixture cases, found ${total}`);
});

for (const { file, fixture } of fixtures) {
  test(file, async (t) => {
    let workbook: Workbook = buildWorkbook(fixture.workbook);
    const options = fixture.options ?? {};
    for (const fixtureCase of fixture.cases) {
      await t.test(caseName(fixtureCase), () => {
        const result = handle(workbook, toEngineRequest(fixtureCase.request), options);
        // Later cases see this case's write even when this case's answer was wrong.
        workbook = result.workbook;
        const problems = checkCase(
          fixtureCase.expect,
          { status: result.status, headers: result.headers, bodyText: result.body },
          caseMethod(fixtureCase),
        );
        assert.deepEqual(problems, [], problems.join('\n'));
      });
    }
  });
}
