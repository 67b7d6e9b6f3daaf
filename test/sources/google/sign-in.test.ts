// Signing in to Google, end to end and offline: a service-account key file (JWT bearer grant),
// Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, a service account or gcloud's
// authorized_user file) and an OAuth refresh token, each against the emulator's token endpoint,
// which checks the JWT's RS256 signature against the key's public half and its claims. Keys are
// generated when the test runs (the emulator keeps only the public half); none is in the repo.
// Then what goes wrong: a token renewed before it expires, a token Google stops accepting, a
// deleted key, a revoked refresh token, a wrong client secret, a skewed clock, an unreadable key
// file: each a 502 naming the setting to fix, never a secret.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { isApiError, type ApiError } from '../../../lib/errors.ts';
import { createApp } from '../../../server/http/app.ts';
import { Secret } from '../../../server/config/config.ts';
import { startEmulator, type Emulator } from '../../../tools/google-emulator/mod.ts';
import { createLogger } from '../../../server/log.ts';
import { openQuotaStore } from '../../../server/quota/quota.ts';
import { openGoogleSource, type GoogleAuth } from '../../../server/sources/google/mod.ts';

const FAST_RETRY = { retries: 2, baseDelayMs: 2, maxDelayMs: 10, budgetMs: 5_000 };
const ROBOT = 'robot@sheetrest-test.iam.gserviceaccount.com';
const ANN = 'ann@example.com';

interface Context {
  after(fn: () => unknown): void;
}

/** An emulator with one spreadsheet the robot and Ann may edit, and a folder for key files. */
async function setUp(t: Context, options: Parameters<typeof startEmulator>[0] = {}) {
  const emulator = await startEmulator(options);
  const dir = await mkdtemp(join(tmpdir(), 'sheetrest-sign-in-'));
  t.after(async () => {
    await emulator.close();
    await rm(dir, { recursive: true, force: true });
  });
  const spreadsheetId = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: [['Name'], ['Ann'], ['Bob']] }], access: { [ROBOT]: 'writer', [ANN]: 'writer' } });
  const keyFile = async (contents: unknown, name = 'key.json') => {
    const path = join(dir, name);
    await writeFile(path, typeof contents === 'string' ? contents : JSON.stringify(contents));
    return path;
  };
  const logs: string[] = [];
  const open = (auth: GoogleAuth) =>
    openGoogleSource({ spreadsheetId, rootUrl: emulator.rootUrl, auth, retry: FAST_RETRY, timeoutMs: 5_000, freshnessMs: 0, log: (line) => logs.push(line) });
  return { emulator, spreadsheetId, keyFile, open, logs };
}

/** The emulator's log since the last reset: `POST /token 200`, `GET /v4/... 200`. */
function upstream(emulator: Emulator): string[] {
  return emulator.requests.map((request) => `${request.method} ${request.path === '/token' ? '/token' : '/v4'} ${request.status}`);
}

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  let caught: unknown;
  await assert.rejects(promise, (error: unknown) => {
    caught = error;
    return isApiError(error);
  });
  return caught as ApiError;
}

/** Runs `body` with GOOGLE_APPLICATION_CREDENTIALS set to `path`, then puts it back. */
async function withAdc<T>(path: string, body: () => Promise<T>): Promise<T> {
  const before = process.env.GOOGLE_APPLICATION_CREDENTIALS;
  process.env.GOOGLE_APPLICATION_CREDENTIALS = path;
  try {
    return await body();
  } finally {
    if (before === undefined) delete process.env.GOOGLE_APPLICATION_CREDENTIALS;
    else process.env.GOOGLE_APPLICATION_CREDENTIALS = before;
  }
}

test('each way of signing in reads the spreadsheet through the token endpoint', async (t) => {
  const { emulator, keyFile, open } = await setUp(t);
  const serviceAccount = await keyFile(emulator.createServiceAccountKey(ROBOT), 'robot.json');
  const { clientId, clientSecret } = emulator.createOAuthClient();
  const refreshToken = emulator.issueRefreshToken(clientId, ANN);
  const authorizedUser = await keyFile({ type: 'authorized_user', client_id: clientId, client_secret: clientSecret, refresh_token: refreshToken, token_uri: emulator.tokenUrl }, 'adc-user.json');
  const cases: [string, GoogleAuth, string | null][] = [
    ['a service-account key file (credentialsFile)', { kind: 'credentialsFile', path: serviceAccount }, null],
    ['Application Default Credentials: a service-account key', { kind: 'applicationDefault' }, serviceAccount],
    ["Application Default Credentials: gcloud's authorized_user file", { kind: 'applicationDefault' }, authorizedUser],
    ['an OAuth client and refresh token (oauth)', { kind: 'oauth', clientId, clientSecret: new Secret(clientSecret), refreshToken: new Secret(refreshToken), tokenUri: emulator.tokenUrl }, null],
  ];
  for (const [name, auth, adc] of cases) {
    await t.test(name, async () => {
      const run = async () => {
        const source = await open(auth);
        emulator.resetRequests();
        const first = await source.read();
        await source.read();
        await source.close();
        return first;
      };
      const workbook = adc === null ? await run() : await withAdc(adc, run);
      assert.deepEqual(workbook.tabs[0].rows.map((row) => row.text[0]), ['Name', 'Ann', 'Bob']);
      // The first read of every tab asks for the list (the grids' sizes) before the cells.
      assert.deepEqual(upstream(emulator), ['POST /token 200', 'GET /v4 200', 'GET /v4 200', 'GET /v4 200'], 'one token, used for both reads');
    });
  }
});

test('tokens are renewed before they expire, and after Google stops accepting one', async (t) => {
  // Tokens living 301 s: the client library renews a token once it has under 5 minutes left,
  // so after a second each token is due, well before the emulator would refuse it.
  const { emulator, keyFile, open } = await setUp(t, { tokenLifetimeSeconds: 301 });
  const serviceAccount = await keyFile(emulator.createServiceAccountKey(ROBOT));
  const { clientId, clientSecret } = emulator.createOAuthClient();
  const refreshToken = emulator.issueRefreshToken(clientId, ANN);
  const cases: [string, GoogleAuth][] = [
    ['service account', { kind: 'credentialsFile', path: serviceAccount }],
    ['refresh token', { kind: 'oauth', clientId, clientSecret: new Secret(clientSecret), refreshToken: new Secret(refreshToken), tokenUri: emulator.tokenUrl }],
  ];
  for (const [name, auth] of cases) {
    await t.test(`${name}: renewed before expiry`, async () => {
      const source = await open(auth);
      emulator.resetRequests();
      await source.read();
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      await source.read();
      await source.close();
      assert.deepEqual(upstream(emulator), ['POST /token 200', 'GET /v4 200', 'GET /v4 200', 'POST /token 200', 'GET /v4 200'], 'a new token before the old one was refused');
    });
    await t.test(`${name}: a token Google no longer accepts is replaced once`, async () => {
      emulator.setTokenLifetime(3599);
      const source = await open(auth);
      await source.read();
      emulator.expireAccessTokens();
      emulator.resetRequests();
      await source.read();
      await source.close();
      assert.deepEqual(upstream(emulator), ['GET /v4 401', 'POST /token 200', 'GET /v4 200']);
      emulator.setTokenLifetime(301);
    });
  }
});

test('refused sign-ins answer 502 naming the setting to fix, never a secret', async (t) => {
  const { emulator, keyFile, open, logs } = await setUp(t);
  const key = emulator.createServiceAccountKey(ROBOT);
  const serviceAccount = await keyFile(key, 'robot.json');
  const deletedKey = emulator.createServiceAccountKey('gone@sheetrest-test.iam.gserviceaccount.com');
  const deleted = await keyFile(deletedKey, 'gone.json');
  emulator.deleteServiceAccountKey('gone@sheetrest-test.iam.gserviceaccount.com');
  const { clientId, clientSecret } = emulator.createOAuthClient();
  const refreshToken = emulator.issueRefreshToken(clientId, ANN);
  const revokedToken = emulator.issueRefreshToken(clientId, ANN);
  emulator.revokeRefreshToken(revokedToken);
  const oauth = (secret: string, token: string): GoogleAuth => ({ kind: 'oauth', clientId, clientSecret: new Secret(secret), refreshToken: new Secret(token), tokenUri: emulator.tokenUrl });
  const secrets = [key.private_key.split('\n')[1], deletedKey.private_key.split('\n')[1], clientSecret, refreshToken, revokedToken, 'GOCSPX-wrong'];

  const cases: [string, GoogleAuth, RegExp, string[]][] = [
    ['a deleted service-account key', { kind: 'credentialsFile', path: deleted }, /credentialsFile: the service account key was deleted or disabled.*create a new JSON key/, ['POST /token 400']],
    ['a revoked refresh token', oauth(clientSecret, revokedToken), /oauth\.refreshToken: the refresh token has expired or was revoked: obtain a new one/, ['POST /token 400']],
    ['a wrong client secret', oauth('GOCSPX-wrong', refreshToken), /oauth\.clientId.*oauth\.clientSecret/, ['POST /token 401']],
    ['a missing key file', { kind: 'credentialsFile', path: join(tmpdir(), 'no-such-key.json') }, /credentialsFile cannot be used: the file cannot be read \(ENOENT\)/, []],
    ['a key file that is not JSON', { kind: 'credentialsFile', path: await keyFile('-----BEGIN PRIVATE KEY-----', 'pem.json') }, /credentialsFile cannot be used: the file is not JSON/, []],
    ['a key file without its private key', { kind: 'credentialsFile', path: await keyFile({ ...key, private_key: undefined }, 'half.json') }, /no client_email or private_key/, []],
    ['a key file without a type', { kind: 'credentialsFile', path: await keyFile({ ...key, type: undefined }, 'untyped.json') }, /it has no "type"/, []],
  ];
  for (const [name, auth, message, requests] of cases) {
    await t.test(name, async () => {
      const source = await open(auth);
      emulator.resetRequests();
      const error = await refusal(source.read());
      await source.close();
      assert.equal(error.code, 'upstream_error');
      assert.equal(error.status, 502);
      assert.match(error.message, message);
      assert.deepEqual(upstream(emulator), requests, 'not retried: trying again cannot help');
      for (const secret of secrets) assert.ok(!error.message.includes(secret), 'no secret in the answer');
    });
  }

  await t.test('Application Default Credentials name the variable', async () => {
    const error = await withAdc(join(tmpdir(), 'no-such-adc.json'), async () => {
      const source = await open({ kind: 'applicationDefault' });
      const caught = await refusal(source.read());
      await source.close();
      return caught;
    });
    assert.match(error.message, /the key file named by GOOGLE_APPLICATION_CREDENTIALS cannot be used/);
  });

  await t.test('over HTTP: the contract error body, and nothing secret in the logs', async (t) => {
    const source = await open({ kind: 'credentialsFile', path: deleted });
    const stateDir = await mkdtemp(join(tmpdir(), 'sheetrest-sign-in-state-'));
    const quota = await openQuotaStore({ stateDir });
    t.after(async () => {
      await source.close();
      await quota.close();
      await rm(stateDir, { recursive: true, force: true });
    });
    const app = createApp({ connections: [{ id: 'crm', source, keys: [], readOnly: false, engine: {} }], quota, bodyBytes: 1024, cors: '*', log: createLogger('silent') });
    const response = await app.fetch(new Request('http://x/sheets/crm'));
    assert.equal(response.status, 502);
    const body = (await response.json()) as { error: string; message: string };
    assert.deepEqual(Object.keys(body), ['error', 'message']);
    assert.equal(body.error, 'upstream_error');
    assert.match(body.message, /credentialsFile/);
    const logged = logs.join('\n');
    assert.ok(logged.length > 0, 'refusals are logged');
    for (const secret of secrets) assert.ok(!logged.includes(secret), 'no secret in the logs');
  });

  await t.test('a token endpoint that fails for a moment is retried', async () => {
    const source = await open({ kind: 'oauth', clientId, clientSecret: new Secret(clientSecret), refreshToken: new Secret(refreshToken), tokenUri: emulator.tokenUrl });
    emulator.failNext({ status: 503, path: /^\/token$/ });
    emulator.resetRequests();
    const workbook = await source.read();
    await source.close();
    assert.equal(workbook.tabs[0].name, 'People');
    assert.deepEqual(upstream(emulator), ['POST /token 503', 'POST /token 200', 'GET /v4 200', 'GET /v4 200'], 'then the list and the cells');
  });
});

test("clock skew: minutes are tolerated, hours are answered 502 naming this machine's clock", async (t) => {
  const { emulator, keyFile, open } = await setUp(t);
  const serviceAccount = await keyFile(emulator.createServiceAccountKey(ROBOT));
  const cases: [string, number, boolean][] = [
    ["Google's clock 2 minutes behind", -2 * 60_000, true],
    ["Google's clock 20 minutes ahead", 20 * 60_000, true],
    ["Google's clock an hour behind (this machine's runs fast)", -60 * 60_000, false],
    ["Google's clock 2 hours ahead (this machine's runs slow)", 2 * 60 * 60_000, false],
  ];
  for (const [name, skew, signsIn] of cases) {
    await t.test(name, async () => {
      emulator.setClockSkew(skew);
      const source = await open({ kind: 'credentialsFile', path: serviceAccount });
      const read = source.read();
      if (signsIn) assert.equal((await read).tabs[0].name, 'People');
      else assert.match((await refusal(read)).message, /credentialsFile: this machine's clock is off.*set the clock right/);
      await source.close();
    });
  }
  emulator.setClockSkew(0);
});
