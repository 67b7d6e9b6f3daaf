// A state folder that cannot be made says what is wrong and what to do, never a bare
// `EEXIST: file already exists, mkdir ...`: `--state-dir` naming a file, or a path through a file.
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { ensureStateDir } from '../../server/durable/state.ts';
import { RUNTIME, tempDir } from '../helpers/http.ts';

test(`a state folder that is a file, or below one, is named with what to do (${RUNTIME})`, async (t) => {
  const dir = await tempDir(t);
  await writeFile(dir.path('notes.txt'), 'not a folder');
  await assert.rejects(ensureStateDir(dir.path('notes.txt')), (error: Error) => {
    assert.match(error.message, /^the state folder \S*notes\.txt is a file, not a folder: give --state-dir \(or "stateDir" in the config file\) the path of a folder/);
    assert.doesNotMatch(error.message, /EEXIST/);
    return true;
  });
  await assert.rejects(ensureStateDir(dir.path('notes.txt/state')), (error: Error) => {
    assert.match(error.message, /^the state folder \S*notes\.txt\/state cannot be made: \S*notes\.txt is a file, not a folder; give --state-dir/);
    return true;
  });
  await mkdir(dir.path('made'));
  await ensureStateDir(dir.path('made'));
  await ensureStateDir(dir.path('new/nested'));
});
