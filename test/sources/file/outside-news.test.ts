// News from outside the server is logged at info, not error: a save from a spreadsheet program
// picked up (recovery.ts), and the lock file such a program writes beside the workbook when it
// opens it (lock-files.ts: LibreOffice's `.~lock.<name>#`, Excel's `~$<name>`), once per
// appearance. Through openFileSource, as a connection opens it, with its folder watcher.
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { lockFileProgram } from '../../../server/sources/file/lock-files.ts';
import { openFileSource } from '../../../server/sources/file/mod.ts';
import { RUNTIME, tempDir, writeXlsx } from '../../helpers/http.ts';

type Line = [level: string, message: string];

/** Waits until `lines` holds `count` lines matching `pattern` (a folder watcher is not instant), failing after 5 s. */
async function until(lines: Line[], pattern: RegExp, count = 1): Promise<Line[]> {
  for (let waited = 0; waited < 5000; waited += 25) {
    const found = lines.filter(([, message]) => pattern.test(message));
    if (found.length >= count) return found;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no ${count} line(s) matching ${pattern} within 5 s; lines: ${JSON.stringify(lines)}`);
}

test('which names are lock files', () => {
  assert.equal(lockFileProgram('/srv/crm.xlsx', '.~lock.crm.xlsx#')?.program, 'LibreOffice (or OpenOffice)');
  assert.equal(lockFileProgram('/srv/crm.xlsx', '~$crm.xlsx')?.program, 'Microsoft Excel');
  // Excel's owner file of a longer name drops its first two characters.
  assert.equal(lockFileProgram('/srv/Quarterly.xlsx', '~$arterly.xlsx')?.program, 'Microsoft Excel');
  assert.equal(lockFileProgram('/srv/crm.xlsx', '.~lock.other.xlsx#'), null);
  assert.equal(lockFileProgram('/srv/crm.xlsx', 'crm.xlsx.tmp'), null);
});

test(`an outside save and a lock file are info lines (${RUNTIME})`, async (t) => {
  const dir = await tempDir(t);
  const path = dir.path('crm.xlsx');
  await writeXlsx(path, 'Leads', [['Lead'], ['Acme']]);
  const lines: Line[] = [];
  const source = await openFileSource({ path, stateDir: dir.path('state'), log: (message, level = 'error') => lines.push([level, message]) });
  t.after(() => source.close());

  await writeXlsx(path, 'Leads', [['Lead'], ['Globex']]);
  await source.read({ fresh: true });
  assert.deepEqual((await until(lines, /picked up a change to .*crm\.xlsx made outside the server/)).map(([level]) => level), ['info']);

  await writeFile(dir.path('.~lock.crm.xlsx#'), ',me,host,2026-11-26T10:00:00,');
  const [libre] = await until(lines, /\.~lock\.crm\.xlsx# appeared/);
  assert.equal(libre[0], 'info');
  assert.match(libre[1], /open in LibreOffice \(or OpenOffice\) \(its lock file, named \.~lock\.<name>#\)/);
  // Written again while it stays: not told again. Gone and back: told again.
  await writeFile(dir.path('.~lock.crm.xlsx#'), ',me,host,2026-11-26T10:00:01,');
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(lines.filter(([, message]) => /\.~lock\.crm\.xlsx# appeared/.test(message)).length, 1);
  await rm(dir.path('.~lock.crm.xlsx#'));
  await new Promise((resolve) => setTimeout(resolve, 300));
  await writeFile(dir.path('.~lock.crm.xlsx#'), ',me,host,2026-11-26T10:05:00,');
  await until(lines, /\.~lock\.crm\.xlsx# appeared/, 2);

  await writeFile(dir.path('~$crm.xlsx'), 'me');
  const [excel] = await until(lines, /~\$crm\.xlsx appeared/);
  assert.equal(excel[0], 'info');
  assert.match(excel[1], /Microsoft Excel/);
  assert.deepEqual(lines.filter(([level]) => level === 'error'), []);
});
