// One file is one file, however its path is written: a symlinked folder (`link/people.csv` for
// `data/people.csv`), a symlink to the file, or a hard link. Two connections writing it are
// refused when the config loads (naming both) and by the admin API (409), and the in-process
// workbook lock is shared rather than taken over, whichever path each connection uses.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { link, mkdir, symlink, writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { ConfigError, configForFile, loadConfig } from '../../../server/config/config.ts';
import { lockWorkbook, sameFile, workbookLockPath } from '../../../server/durable/lock.ts';
import { RUNTIME, startServer, tempDir, type TempDir, type TestContext } from '../../helpers/http.ts';

const TOKEN = 'admin-token-0123456789abcdef';

/** `data/people.csv`, and three other paths to it: through a symlinked folder, a symlink, a hard link. */
async function paths(t: TestContext): Promise<{ dir: TempDir; real: string; others: [string, string][] }> {
  const dir = await tempDir(t);
  await mkdir(dir.path('data'));
  const real = dir.path('data/people.csv');
  await writeFile(real, 'Name,City\nAnn,Oslo\n');
  await symlink(dir.path('data'), dir.path('link'));
  await symlink(real, dir.path('data/alias.csv'));
  await link(real, dir.path('data/hard.csv'));
  return {
    dir,
    real,
    others: [
      ['through a symlinked folder', dir.path('link/people.csv')],
      ['through a symlink to the file', dir.path('data/alias.csv')],
      ['through a hard link', dir.path('data/hard.csv')],
    ],
  };
}

test('sameFile tells one file reached by two paths from two files', async (t) => {
  const { dir, real, others } = await paths(t);
  await writeFile(dir.path('data/other.csv'), 'Name,City\nAnn,Oslo\n');
  for (const [name, other] of others) await t.test(name, () => assert.equal(sameFile(real, other), true));
  await t.test('a copy with the same bytes is another file', () => assert.equal(sameFile(real, dir.path('data/other.csv')), false));
  await t.test('a missing file through a symlinked folder', () => assert.equal(sameFile(dir.path('data/none.csv'), dir.path('link/none.csv')), true));
});

test('lockWorkbook through a symlinked folder, a symlink or a hard link shares the one lock', async (t) => {
  const { real, others } = await paths(t);
  for (const [name, other] of others) {
    await t.test(name, () => {
      const first = lockWorkbook(real);
      const second = lockWorkbook(other);
      assert.equal(second.path, first.path, 'one lock file');
      second.release();
      // Taken over instead of shared, the second's release would have removed the first's lock.
      assert.ok(existsSync(workbookLockPath(real)), 'still held by the first connection');
      first.release();
      assert.equal(existsSync(workbookLockPath(real)), false);
    });
  }
});

test('two connections writing one file refuse to load, naming both, however the paths are written', async (t) => {
  const { dir, real, others } = await paths(t);
  const load = (second: string, readOnly: boolean) => {
    const config = {
      connections: [
        { id: 'people', source: { type: 'file', path: real } },
        { id: 'again', source: { type: 'file', path: second }, ...(readOnly ? { readOnly: true } : {}) },
      ],
    };
    const path = dir.path('sheetrest.json');
    return writeFile(path, JSON.stringify(config)).then(() => loadConfig(path, { env: {} }));
  };
  for (const [name, other] of [['the same path', real] as [string, string], ...others]) {
    await t.test(name, async () => {
      await assert.rejects(load(other, false), (error: unknown) => {
        assert.ok(error instanceof ConfigError, String(error));
        assert.match(error.message, /connections\[1\]\.source\.path: the connection "again" \(.*\) and the connection "people" \(connections\[0\], .*people\.csv\) write the same file/);
        return true;
      });
    });
  }
  await t.test('a read-only connection beside the writing one loads', async () => {
    const config = await load(dir.path('link/people.csv'), true);
    assert.deepEqual(config.connections.map((connection) => connection.id), ['people', 'again']);
  });
});

test(`the admin API refuses a file another connection serves through a symlinked folder or a hard link (${RUNTIME})`, async (t) => {
  const { dir, real, others } = await paths(t);
  const config = configForFile(real, { stateDir: dir.path('state'), log: { level: 'silent' } }, { env: { SHEETREST_ADMIN_TOKEN: TOKEN } });
  const { url } = await startServer(t, config);
  for (const [name, other] of others) {
    await t.test(name, async () => {
      const response = await fetch(`${url}/_admin/connections`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ id: 'again', source: { type: 'file', path: other } }),
      });
      assert.equal(response.status, 409);
      const body = (await response.json()) as { error: string; message: string };
      assert.equal(body.error, 'conflict');
      assert.match(body.message, /already served by the connection "people"/);
    });
  }
  const listed = await fetch(`${url}/_admin/connections`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  assert.deepEqual(((await listed.json()) as { id: string }[]).map((connection) => connection.id), ['people'], 'nothing was created');
});
