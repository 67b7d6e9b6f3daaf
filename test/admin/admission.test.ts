// What a connection made through the admin API may use (server/admin/admission.ts): files only
// inside admin.fileRoot after following symlinks, regular files only, one answer for every
// refused path; no {"env"} in a body; Google endpoints from admin.allowedEndpoints only; the
// server's own Google credentials only with admin.allowServerCredentials; and an open that
// hangs gives up after admin.openTimeoutMs without holding up the next change.
//   POST /_admin/connections {"id": "pw", "source": {"type": "file", "path": "link.csv"}}   (link.csv -> ../outside/secret.csv)
//   -> 400 invalid_body "The source cannot be opened: source.path: the admin API opens only existing regular files inside ..."
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { isApiError } from '../../lib/errors.ts';
import { isAllowedEndpoint } from '../../server/admin/admission.ts';
import { AdminService } from '../../server/admin/service.ts';
import { ConfigError, loadConfig, type Config } from '../../server/config/config.ts';
import { GOOGLE_ENDPOINTS } from '../../server/config/schema.ts';
import { ConnectionRegistry, openConnection } from '../../server/connections.ts';
import { createLogger } from '../../server/log.ts';
import type { Source } from '../../server/sources/source.ts';
import { RUNTIME, startServer, tempDir, type TempDir, type TestContext } from '../helpers/http.ts';

const TOKEN = 'admin-token-0123456789abcdef';
const REFUSED_PATH = /^The source cannot be opened: source\.path: the admin API opens only existing regular files inside .+ \(admin\.fileRoot\), after following symlinks\.$/;

interface Reply {
  readonly status: number;
  // deno-lint-ignore no-explicit-any
  readonly body: any;
}

type Admin = (method: string, path: string, body?: unknown) => Promise<Reply>;

/**
 * A folder with `root/` (the config file, book.csv, crm.csv, data/people.csv, alias.csv ->
 * data/people.csv, link.csv -> ../outside/secret.csv, a folder dir.csv) and `outside/secret.csv`.
 */
async function layout(t: TestContext): Promise<TempDir> {
  const dir = await tempDir(t);
  await mkdir(dir.path('root/data'), { recursive: true });
  await mkdir(dir.path('root/dir.csv'));
  await mkdir(dir.path('outside'));
  await writeFile(dir.path('root/book.csv'), 'Name\nAnn\n');
  await writeFile(dir.path('root/crm.csv'), 'Lead\nAcme\n');
  await writeFile(dir.path('root/data/people.csv'), 'Person\nBob\n');
  await writeFile(dir.path('outside/secret.csv'), 'Secret\nhunter2\n');
  await writeFile(dir.path('root/key.json'), '{}');
  await writeFile(dir.path('outside/key.json'), '{}');
  await symlink(dir.path('outside/secret.csv'), dir.path('root/link.csv'));
  await symlink('data/people.csv', dir.path('root/alias.csv'));
  return dir;
}

/** The server of `root/sheetrest.json` with these `admin` settings, and an admin client calling its handler in process. */
async function serve(t: TestContext, dir: TempDir, admin: Record<string, unknown> = {}): Promise<Admin> {
  await writeFile(dir.path('root/sheetrest.json'), JSON.stringify({
    stateDir: dir.path('state'),
    log: { level: 'silent' },
    admin: { token: TOKEN, ...admin },
    connections: [{ id: 'book', source: { type: 'file', path: 'book.csv' } }],
  }));
  const { running } = await startServer(t, await loadConfig(dir.path('root/sheetrest.json'), { env: {} }));
  return async (method, path, body) => {
    const init: RequestInit = { method, headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' } };
    if (body !== undefined) init.body = JSON.stringify(body);
    const response = await running.app.fetch(new Request(`http://127.0.0.1${path}`, init));
    const text = await response.text();
    return { status: response.status, body: text === '' ? null : JSON.parse(text) };
  };
}

function fileSource(path: string) {
  return { type: 'file', path };
}

/** Makes a FIFO; null where mkfifo is not there (then the FIFO cases skip, saying so). */
function makeFifo(path: string): string | null {
  const made = spawnSync('mkfifo', [path]);
  return made.status === 0 ? path : null;
}

test(`admin file connections: only regular files inside admin.fileRoot, one answer for every refusal (${RUNTIME})`, async (t) => {
  const dir = await layout(t);
  const call = await serve(t, dir);
  const refused: [string, string][] = [
    ['a symlink to a file outside the root', 'link.csv'],
    ['a ../ escape', '../outside/secret.csv'],
    ['an absolute path outside the root', dir.path('outside/secret.csv')],
    ['a missing file inside the root', 'nope.csv'],
    ['a missing file outside the root', '../outside/nope.csv'],
    ['a folder', 'dir.csv'],
  ];
  const messages = new Set<string>();
  for (const [name, path] of refused) {
    await t.test(name, async () => {
      const reply = await call('POST', '/_admin/connections', { id: 'x', source: fileSource(path) });
      assert.equal(reply.status, 400, JSON.stringify(reply.body));
      assert.equal(reply.body.error, 'invalid_body');
      assert.match(reply.body.message, REFUSED_PATH);
      assert.doesNotMatch(reply.body.message, /secret|nope|dir\.csv|link\.csv/, 'the answer does not repeat the path');
      messages.add(reply.body.message);
    });
  }
  await t.test('a missing file and a file outside the root get the identical message', () => {
    assert.equal(messages.size, 1, [...messages].join('\n'));
  });
  await t.test('nothing refused was made or served', async () => {
    assert.equal((await call('GET', '/_admin/connections/x')).status, 404);
  });
  await t.test('a file inside the root works, by a relative or an absolute path', async () => {
    const relative = await call('POST', '/_admin/connections', { id: 'crm', source: fileSource('crm.csv') });
    assert.equal(relative.status, 201, JSON.stringify(relative.body));
    assert.equal(relative.body.source.path, dir.path('root/crm.csv'), 'relative to admin.fileRoot');
    const absolute = await call('POST', '/_admin/connections', { id: 'people', source: fileSource(dir.path('root/data/people.csv')) });
    assert.equal(absolute.status, 201, JSON.stringify(absolute.body));
  });
  await t.test('a symlink inside the root to a file inside it works', async () => {
    assert.equal((await call('DELETE', '/_admin/connections/people')).status, 204);
    const reply = await call('POST', '/_admin/connections', { id: 'alias', source: fileSource('alias.csv') });
    assert.equal(reply.status, 201, JSON.stringify(reply.body));
  });
  await t.test('a change of source to a file outside the root is refused and changes nothing', async () => {
    const reply = await call('PATCH', '/_admin/connections/crm', { source: fileSource('link.csv') });
    assert.equal(reply.status, 400);
    assert.match(reply.body.message, REFUSED_PATH);
    assert.equal((await call('GET', '/_admin/connections/crm')).body.source.path, dir.path('root/crm.csv'));
  });
  await t.test('an unsupported extension says so, whether or not the file exists', async () => {
    for (const path of ['notes.txt', '../outside/whatever.txt']) {
      const reply = await call('POST', '/_admin/connections', { id: 'y', source: fileSource(path) });
      assert.equal(reply.status, 400);
      assert.equal(reply.body.message, 'The source cannot be opened: source.path: unsupported file type; sheetrest reads .xlsx, .xlsm, .ods and .csv files.');
    }
  });
});

test(`a FIFO is refused at once, and the next admin change is answered (${RUNTIME})`, async (t) => {
  const dir = await layout(t);
  const fifo = makeFifo(dir.path('root/x.csv'));
  if (fifo === null) return t.skip('mkfifo is not available here');
  const call = await serve(t, dir);
  const started = Date.now();
  const reply = await call('POST', '/_admin/connections', { id: 'x', source: fileSource('x.csv') });
  assert.equal(reply.status, 400);
  assert.match(reply.body.message, REFUSED_PATH);
  const patched = await call('POST', '/_admin/connections', { id: 'crm', source: fileSource('crm.csv') });
  assert.equal(patched.status, 201, JSON.stringify(patched.body));
  assert.equal((await call('PATCH', '/_admin/connections/crm', { source: fileSource('x.csv') })).status, 400);
  assert.equal((await call('PATCH', '/_admin/connections/crm', { readOnly: true })).status, 200);
  assert.ok(Date.now() - started < 5000, `answered in ${Date.now() - started} ms`);
});

test(`admin.fileRoot: relative to the config file's folder; the config's own connections are not bound by it (${RUNTIME})`, async (t) => {
  const dir = await layout(t);
  // The config file's own connection is outside the root: the operator wrote it.
  await writeFile(dir.path('root/sheetrest.json'), JSON.stringify({
    stateDir: dir.path('state'),
    log: { level: 'silent' },
    admin: { token: TOKEN, fileRoot: 'data' },
    connections: [{ id: 'secret', source: { type: 'file', path: '../outside/secret.csv' } }],
  }));
  const config = await loadConfig(dir.path('root/sheetrest.json'), { env: {} });
  assert.equal(config.admin?.fileRoot, dir.path('root/data'));
  const { running } = await startServer(t, config);
  const call = (body: unknown) =>
    running.app.fetch(new Request('http://127.0.0.1/_admin/connections', { method: 'POST', headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) }));
  assert.equal((await running.app.fetch(new Request('http://127.0.0.1/sheets/secret'))).status, 200);
  const inRoot = await call({ id: 'people', source: fileSource('people.csv') });
  assert.equal(inRoot.status, 201, await inRoot.text());
  const beside = await call({ id: 'crm', source: fileSource(dir.path('root/crm.csv')) });
  assert.equal(beside.status, 400, 'the config folder is outside a root set to data/');
  assert.match((await beside.json()).message, REFUSED_PATH);
});

test(`no {"env"} through the admin API, named by field, the same whether or not the variable is set (${RUNTIME})`, async (t) => {
  const dir = await layout(t);
  const call = await serve(t, dir);
  const oauth = (extra: Record<string, unknown>) => ({ clientId: 'c', clientSecret: 's', refreshToken: 'r', ...extra });
  const cases: [string, Record<string, unknown>, string][] = [
    ['accessToken from $HOME', { accessToken: { env: 'HOME' } }, 'source.accessToken'],
    ['accessToken from a variable that is not set', { accessToken: { env: 'SHEETREST_SURELY_UNSET_91' } }, 'source.accessToken'],
    ['apiKey from $PATH', { apiKey: { env: 'PATH' } }, 'source.apiKey'],
    ['oauth.clientSecret from $HOME', { oauth: oauth({ clientSecret: { env: 'HOME' } }) }, 'source.oauth.clientSecret'],
    ['oauth.refreshToken from $HOME', { oauth: oauth({ refreshToken: { env: 'HOME' } }) }, 'source.oauth.refreshToken'],
  ];
  for (const [name, credentials, field] of cases) {
    await t.test(name, async () => {
      for (const [method, path, body] of [
        ['POST', '/_admin/connections', { id: 'g', source: { type: 'google', spreadsheetId: 'abc', ...credentials } }],
        ['PATCH', '/_admin/connections/book', { source: { type: 'google', spreadsheetId: 'abc', ...credentials } }],
      ] as const) {
        const reply = await call(method, path, body);
        // PATCH of the config's connection would be 403: the body is refused before that is looked at.
        assert.equal(reply.status, 400, `${method}: ${JSON.stringify(reply.body)}`);
        assert.equal(reply.body.error, 'invalid_body');
        assert.equal(reply.body.message, `The body is not valid: ${field}: the admin API does not read environment variables; give the value itself.`);
      }
    });
  }
});

test(`Google endpoints through the admin API: only admin.allowedEndpoints (${RUNTIME})`, async (t) => {
  const dir = await layout(t);
  const call = await serve(t, dir);
  const google = (extra: Record<string, unknown>) => ({ type: 'google', spreadsheetId: 'abc', accessToken: 'a-token', ...extra });
  const refused: [string, Record<string, unknown>, string][] = [
    ['rootUrl on loopback', { rootUrl: 'http://127.0.0.1:9/' }, 'source.rootUrl'],
    ['rootUrl on a look-alike host', { rootUrl: 'https://sheets.googleapis.com.example.org/' }, 'source.rootUrl'],
    ['rootUrl over http', { rootUrl: 'http://sheets.googleapis.com/' }, 'source.rootUrl'],
    ['driveRootUrl elsewhere', { driveRootUrl: 'https://example.org/' }, 'source.driveRootUrl'],
    ['oauth.tokenUri elsewhere', { accessToken: undefined, oauth: { clientId: 'c', clientSecret: 's', refreshToken: 'r', tokenUri: 'http://127.0.0.1:9/token' } }, 'source.oauth.tokenUri'],
  ];
  for (const [name, extra, field] of refused) {
    await t.test(name, async () => {
      const reply = await call('POST', '/_admin/connections', { id: 'g', source: google(extra) });
      assert.equal(reply.status, 400, JSON.stringify(reply.body));
      assert.match(reply.body.message, new RegExp(`^The body is not valid: ${field.replaceAll('.', '\\.')}: the admin API may send requests only to https://sheets\\.googleapis\\.com, `));
    });
  }
  await t.test("Google's own addresses are allowed", async () => {
    const source = google({ rootUrl: 'https://sheets.googleapis.com/', driveRootUrl: 'https://www.googleapis.com/' });
    const reply = await call('POST', '/_admin/connections', { id: 'g', source });
    assert.equal(reply.status, 201, JSON.stringify(reply.body));
  });
  await t.test('a PATCH is held to the list too', async () => {
    const reply = await call('PATCH', '/_admin/connections/g', { source: google({ rootUrl: 'http://127.0.0.1:9/' }) });
    assert.equal(reply.status, 400);
    assert.match(reply.body.message, /source\.rootUrl/);
  });
});

test(`the server's own Google credentials through the admin API only with admin.allowServerCredentials (${RUNTIME})`, async (t) => {
  const google = (extra: Record<string, unknown> = {}) => ({ type: 'google', spreadsheetId: 'abc', ...extra });
  await t.test('refused by default: no credentials (ADC), or a credentials file', async (t) => {
    const dir = await layout(t);
    const call = await serve(t, dir);
    for (const [source, why] of [[google(), /Application Default Credentials/], [google({ credentialsFile: 'key.json' }), /"credentialsFile" is a key file of the server's/]] as const) {
      const reply = await call('POST', '/_admin/connections', { id: 'g', source });
      assert.equal(reply.status, 400, JSON.stringify(reply.body));
      assert.match(reply.body.message, /^The body is not valid: source: a Google source made through the admin API carries its own credentials/);
      assert.match(reply.body.message, why);
      assert.match(reply.body.message, /"admin\.allowServerCredentials": true/);
    }
  });
  await t.test('allowed: ADC, and a credentials file inside admin.fileRoot only', async (t) => {
    const dir = await layout(t);
    const call = await serve(t, dir, { allowServerCredentials: true });
    assert.equal((await call('POST', '/_admin/connections', { id: 'adc', source: google() })).status, 201);
    const outside = await call('POST', '/_admin/connections', { id: 'out', source: google({ credentialsFile: '../outside/key.json' }) });
    assert.equal(outside.status, 400);
    assert.match(outside.body.message, /^The source cannot be opened: source\.credentialsFile: the admin API opens only existing regular files inside /);
    const inside = await call('POST', '/_admin/connections', { id: 'in', source: google({ credentialsFile: 'key.json' }) });
    assert.equal(inside.status, 201, JSON.stringify(inside.body));
  });
});

test(`an admin open that hangs gives up after admin.openTimeoutMs, and the next change is answered (${RUNTIME})`, async (t) => {
  const dir = await layout(t);
  await mkdir(dir.path('state'));
  await writeFile(dir.path('root/sheetrest.json'), JSON.stringify({ admin: { token: TOKEN, openTimeoutMs: 200 }, stateDir: dir.path('state'), connections: [{ id: 'book', source: { type: 'file', path: 'book.csv' } }] }));
  const config: Config = await loadConfig(dir.path('root/sheetrest.json'), { env: {} });
  let finishSlow: () => void = () => undefined;
  let slowClosed = false;
  const log = createLogger('silent');
  const service = new AdminService({
    registry: new ConnectionRegistry(),
    configConnections: [],
    configPath: config.configPath,
    settings: config,
    quota: { used: () => 0 },
    log,
    rules: config.admin,
    // "slow" stands for a source that does not open (a FIFO swapped in after the check, an upstream that never answers).
    openConnection: (connection, settings, logger) => {
      if (connection.id !== 'slow') return openConnection(connection, settings, logger);
      return new Promise((resolve) => {
        finishSlow = () => resolve({ id: 'slow', source: { close: async () => void (slowClosed = true) } as unknown as Source, keys: [], readOnly: false, engine: {} });
      });
    },
  });
  const started = Date.now();
  const slow = await service.create({ id: 'slow', source: { type: 'file', path: 'crm.csv' }, readOnly: false, formulas: false, hiddenTabs: 'serve' });
  assert.ok(isApiError(slow), 'an error');
  assert.equal(slow.code, 'upstream_timeout');
  assert.equal(slow.status, 504);
  assert.match(slow.message, /did not open within 200 ms \(admin\.openTimeoutMs\); nothing was changed/);
  const next = await service.create({ id: 'people', source: { type: 'file', path: 'data/people.csv' }, readOnly: false, formulas: false, hiddenTabs: 'serve' });
  assert.ok(!isApiError(next), String(next));
  assert.ok(Date.now() - started < 5000, `answered in ${Date.now() - started} ms`);
  assert.deepEqual(service.list().map((connection) => connection.id), ['people']);
  finishSlow();
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(slowClosed, true, 'a source that opens after the timeout is closed, not leaked');
  await Promise.all(service.list().map((connection) => service.remove(connection.id)));
});

test('isAllowedEndpoint compares origins whole, and paths by prefix', async (t) => {
  const cases: [string, readonly string[], boolean][] = [
    ['https://sheets.googleapis.com/', GOOGLE_ENDPOINTS, true],
    ['https://sheets.googleapis.com', GOOGLE_ENDPOINTS, true],
    ['https://oauth2.googleapis.com/token', GOOGLE_ENDPOINTS, true],
    ['https://sheets.googleapis.com:443/v4/', GOOGLE_ENDPOINTS, true],
    ['https://sheets.googleapis.com:8443/', GOOGLE_ENDPOINTS, false],
    ['https://sheets.googleapis.com.example.org/', GOOGLE_ENDPOINTS, false],
    ['https://user@evil.example/', GOOGLE_ENDPOINTS, false],
    ['http://sheets.googleapis.com/', GOOGLE_ENDPOINTS, false],
    ['http://127.0.0.1:8085/', ['http://127.0.0.1:8085/'], true],
    ['http://127.0.0.1:8085/proxy/v4', ['http://127.0.0.1:8085/proxy'], true],
    ['http://127.0.0.1:8085/proxy', ['http://127.0.0.1:8085/proxy/'], true],
    ['http://127.0.0.1:8085/proxyx', ['http://127.0.0.1:8085/proxy'], false],
    ['http://127.0.0.1:8085/other', ['http://127.0.0.1:8085/proxy'], false],
    ['http://127.0.0.1:8085/', [], false],
  ];
  for (const [url, allowed, expected] of cases) {
    await t.test(`${url} in ${JSON.stringify(allowed)}`, () => assert.equal(isAllowedEndpoint(url, allowed), expected));
  }
});

test(`the admin rules' settings in the config file (${RUNTIME})`, async (t) => {
  const dir = await tempDir(t);
  await writeFile(dir.path('book.csv'), 'Name\nAnn\n');
  const load = async (admin: Record<string, unknown>) => {
    await writeFile(dir.path('sheetrest.json'), JSON.stringify({ admin: { token: TOKEN, ...admin }, connections: [{ id: 'book', source: { type: 'file', path: 'book.csv' } }] }));
    return loadConfig(dir.path('sheetrest.json'), { env: {} });
  };
  await t.test('defaults: the config file\'s folder, no server credentials, Google\'s endpoints, 10 s, uploads up to 25 MiB', async () => {
    const admin = (await load({})).admin;
    assert.deepEqual({ ...admin, token: undefined }, { token: undefined, fileRoot: dir.dir, allowServerCredentials: false, allowedEndpoints: GOOGLE_ENDPOINTS, openTimeoutMs: 10_000, uploadBytes: 25 * 1024 * 1024 });
  });
  const bad: [string, Record<string, unknown>, RegExp][] = [
    ['an endpoint with a query', { allowedEndpoints: ['https://example.org/?x=1'] }, /admin\.allowedEndpoints\[0\]: expected an http\(s\) URL/],
    ['an endpoint that is not a URL', { allowedEndpoints: ['example.org'] }, /admin\.allowedEndpoints\[0\]: expected an http\(s\) URL/],
    ['an endpoint with a user', { allowedEndpoints: ['https://me@example.org/'] }, /admin\.allowedEndpoints\[0\]: expected an http\(s\) URL/],
    ['a timeout of 0', { openTimeoutMs: 0 }, /admin\.openTimeoutMs: expected a whole number from 1 to 600000/],
    ['allowServerCredentials as a string', { allowServerCredentials: 'yes' }, /admin\.allowServerCredentials: expected true or false/],
  ];
  for (const [name, admin, message] of bad) {
    await t.test(name, () => assert.rejects(load(admin), (error: unknown) => error instanceof ConfigError && message.test(error.message)));
  }
});

test(`a connection stored earlier with a file outside admin.fileRoot is not served after a restart (${RUNTIME})`, async (t) => {
  const dir = await layout(t);
  await mkdir(dir.path('state'));
  const now = new Date().toISOString();
  // As a server before admin.fileRoot could have stored it: a symlink out of the folder.
  const stored = { id: 'pw', source: { type: 'file', path: dir.path('root/link.csv') }, created: now, updated: now, keys: [] };
  await writeFile(dir.path('state/admin.json'), JSON.stringify({ version: 1, connections: [stored] }));
  const call = await serve(t, dir);
  const shown = await call('GET', '/_admin/connections/pw');
  assert.equal(shown.body.status, 'unavailable', JSON.stringify(shown.body));
  assert.match(shown.body.problem, /source\.path: the admin API opens only existing regular files inside/);
});
