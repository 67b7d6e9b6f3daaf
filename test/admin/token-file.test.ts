// `--admin` with no token set: adminTokenFile makes <stateDir>/admin-token (0600) once and reads
// it back on later starts; a copy with a looser mode is tightened; a file that holds no token
// stops the start with a message naming it (never its content).
import assert from 'node:assert/strict';
import { chmod, lstat, mkdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { adminTokenFile } from '../../server/admin/token-file.ts';
import { RUNTIME, tempDir } from '../helpers/http.ts';

test(`the admin token file: made once, kept, 0600 (${RUNTIME})`, async (t) => {
  const dir = await tempDir(t);
  const made = await adminTokenFile(dir.path('.'));
  assert.equal(made.made, true);
  assert.match(made.token, /^[0-9a-f]{64}$/);
  assert.equal((await readFile(made.path, 'utf8')).trim(), made.token);
  assert.equal((await stat(made.path)).mode & 0o777, 0o600);
  const again = await adminTokenFile(dir.path('.'));
  assert.deepEqual(again, { ...made, made: false });
  await chmod(made.path, 0o644);
  await adminTokenFile(dir.path('.'));
  assert.equal((await stat(made.path)).mode & 0o777, 0o600, 'a looser mode is tightened');
  await writeFile(made.path, 'short secret\n');
  await assert.rejects(adminTokenFile(dir.path('.')), (error: Error) => /admin-token does not hold a token .*delete it/.test(error.message) && !error.message.includes('short secret'));
});

test(`an admin-token that is a folder is named in the error, not a bare EISDIR (${RUNTIME})`, async (t) => {
  const dir = await tempDir(t);
  await mkdir(dir.path('admin-token'));
  await assert.rejects(adminTokenFile(dir.path('.')), (error: Error) => /could not read the admin token file .*admin-token.*EISDIR/.test(error.message));
});

test(`an admin-token that is a symlink is refused, and its target left as it was (${RUNTIME})`, async (t) => {
  const dir = await tempDir(t);
  const target = dir.path('elsewhere.txt');
  await writeFile(target, `${'a'.repeat(64)}\n`);
  await chmod(target, 0o644);
  await symlink(target, dir.path('admin-token'));
  await assert.rejects(adminTokenFile(dir.path('.')), (error: Error) => {
    assert.match(error.message, /the admin token file \S*admin-token is a symbolic link; sheetrest does not follow it .*replace it with the file itself, or delete it/);
    return true;
  });
  assert.equal((await stat(target)).mode & 0o777, 0o644, 'the target was not chmodded');
  assert.ok((await lstat(dir.path('admin-token'))).isSymbolicLink());
  // A dangling link is refused too (never written through).
  await rm(target);
  await assert.rejects(adminTokenFile(dir.path('.')), /is a symbolic link/);
  await assert.rejects(stat(target), { code: 'ENOENT' });
});
