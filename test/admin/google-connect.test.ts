// "Connect a Google spreadsheet" over real HTTP against the bundled emulator, on whichever
// runtime runs the test: POST /_admin/google/authorize gives the consent page's address (with
// `state` and a PKCE challenge); the emulator's consent form sends the browser back to
// /_admin/google/callback with a code, which the server redeems (with the verifier), checks the
// account's access, and makes the connection (read-only without edit access). The refresh token
// lands in admin.json (0600) and in no answer and no log line. A callback is good once; a
// forged, replayed or refused one makes nothing.
import assert from 'node:assert/strict';
import { readFile, stat } from 'node:fs/promises';
import { test } from 'node:test';
import { configForFile, ConfigError, type Config } from '../../server/config/config.ts';
import { startEmulator, type Emulator } from '../../tools/google-emulator/mod.ts';
import { createLogger } from '../../server/log.ts';
import { spreadsheetIdOf } from '../../server/admin/google-connect.ts';
import { RUNTIME, startServer, tempDir, writeXlsx, type TestContext } from '../helpers/http.ts';

const TOKEN = 'admin-token-0123456789abcdef';
const AUTH = { Authorization: `Bearer ${TOKEN}` };
const CLIENT_SECRET = 'client-secret-that-must-not-leak';
const WRITER = 'writer-account@example.test';
const READER = 'reader-account@example.test';
const STRANGER = 'stranger@example.test';

interface Setup {
  readonly url: string;
  readonly emulator: Emulator;
  readonly spreadsheetId: string;
  readonly stateDir: string;
  readonly logLines: string[];
}

async function setup(t: TestContext, google = true): Promise<Setup> {
  const emulator = await startEmulator();
  t.after(() => emulator.close());
  const spreadsheetId = emulator.createSpreadsheet({
    sheets: [{ title: 'People', rows: [['Name', 'Age'], ['Ann', 30]] }],
    access: { [WRITER]: 'writer', [READER]: 'reader' },
  });
  const dir = await tempDir(t);
  await writeXlsx(dir.path('book.xlsx'), 'People', [['Name'], ['Ann']]);
  const admin = {
    token: TOKEN,
    ...(google && {
      google: { clientId: 'client-1.apps.example', clientSecret: CLIENT_SECRET, authorizationUrl: `${emulator.rootUrl}o/oauth2/v2/auth`, tokenUrl: `${emulator.rootUrl}token`, sheetsRootUrl: emulator.rootUrl },
    }),
  };
  const config: Config = configForFile(dir.path('book.xlsx'), { stateDir: dir.path('state'), admin, log: { level: 'debug' } });
  const logLines: string[] = [];
  const { url } = await startServer(t, config, createLogger('debug', (line) => logLines.push(line)));
  return { url, emulator, spreadsheetId, stateDir: dir.path('state'), logLines };
}

async function adminCall(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; text: string; body: any }> {
  const response = await fetch(url + path, { method, headers: { ...AUTH, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, text, body: text === '' ? null : JSON.parse(text) };
}

/** The browser's part: start, fill the emulator's consent form as `account`, follow Google's redirect back. */
async function signIn(s: Setup, id: string, account: string, decision = 'allow'): Promise<{ outcome: URLSearchParams; callback: URL }> {
  const started = await adminCall(s.url, 'POST', '/_admin/google/authorize', { id, spreadsheet: `https://docs.google.com/spreadsheets/d/${s.spreadsheetId}/edit#gid=0` });
  assert.equal(started.status, 200, started.text);
  const consent = new URL(started.body.url);
  const page = await fetch(consent);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /name="account"/);
  const form = new URLSearchParams({ account, decision });
  for (const name of ['client_id', 'redirect_uri', 'state', 'scope', 'code_challenge', 'code_challenge_method']) form.set(name, consent.searchParams.get(name) ?? '');
  const approved = await fetch(`${s.emulator.rootUrl}o/oauth2/v2/auth/approve`, { method: 'POST', body: form, redirect: 'manual' });
  assert.equal(approved.status, 302);
  const callback = new URL(approved.headers.get('location') ?? '');
  return { outcome: await follow(callback), callback };
}

/** The first key of a connection the callback made, traded for the ticket in the redirect. */
async function newKeyOf(s: Setup, outcome: URLSearchParams): Promise<string> {
  const reply = await adminCall(s.url, 'POST', '/_admin/google/new-key', { ticket: outcome.get('new-key') });
  assert.equal(reply.status, 200, reply.text);
  return reply.body.key;
}

/** The callback as the browser sends it (no admin token): the outcome in the 303's fragment. */
async function follow(callback: URL | string): Promise<URLSearchParams> {
  const response = await fetch(callback, { redirect: 'manual' });
  assert.equal(response.status, 303);
  assert.equal(response.headers.get('cache-control'), 'no-store');
  const location = response.headers.get('location') ?? '';
  assert.match(location, /^\/#/);
  return new URLSearchParams(location.slice(2));
}

test(`connect a Google spreadsheet with OAuth, state and PKCE (${RUNTIME})`, async (t) => {
  const s = await setup(t);

  await t.test('the authorization URL carries the client, the callback, state and an S256 challenge', async () => {
    const started = await adminCall(s.url, 'POST', '/_admin/google/authorize', { id: 'x', spreadsheet: s.spreadsheetId });
    const consent = new URL(started.body.url);
    assert.equal(consent.origin + consent.pathname, `${s.emulator.rootUrl}o/oauth2/v2/auth`);
    const query = Object.fromEntries(consent.searchParams);
    assert.equal(query.client_id, 'client-1.apps.example');
    assert.equal(query.redirect_uri, `${s.url}/_admin/google/callback`);
    assert.equal(query.response_type, 'code');
    assert.equal(query.code_challenge_method, 'S256');
    assert.match(query.code_challenge, /^[\w-]{43}$/);
    assert.match(query.state, /^[\w-]{43}$/);
    assert.equal(query.access_type, 'offline');
    assert.ok(!started.text.includes(CLIENT_SECRET));
  });

  await t.test('an account that can edit: a writable connection, serving the spreadsheet', async () => {
    const { outcome } = await signIn(s, 'people', WRITER);
    assert.equal(outcome.get('connected'), 'people', outcome.toString());
    const view = await adminCall(s.url, 'GET', '/_admin/connections/people');
    assert.equal(view.status, 200);
    assert.equal(view.body.readOnly, false);
    assert.equal(view.body.source.spreadsheetId, s.spreadsheetId);
    assert.equal(view.body.source.oauth.refreshToken, '[secret]');
    assert.equal(view.body.source.oauth.clientSecret, '[secret]');
    // The connection signs in with the refresh token it was given (at the emulator's token address) and serves the rows.
    const key = await newKeyOf(s, outcome);
    const rows = await fetch(`${s.url}/sheets/people`, { headers: { 'X-Api-Key': key } });
    assert.equal(rows.status, 200, await rows.clone().text());
    assert.ok(((await rows.json()) as unknown[]).length > 0);
  });

  await t.test('a Google-connect connection starts closed with one key, shown once through a ticket', async () => {
    const { outcome } = await signIn(s, 'people-closed', WRITER);
    assert.equal(outcome.get('connected'), 'people-closed', outcome.toString());
    const ticket = outcome.get('new-key') ?? '';
    assert.match(ticket, /^[\w-]{43}$/, 'the redirect carries a ticket, never the key');
    const view = await adminCall(s.url, 'GET', '/_admin/connections/people-closed');
    assert.equal(view.body.open, false);
    assert.equal(view.body.keys.length, 1);
    const anonymous = await fetch(`${s.url}/sheets/people-closed`);
    assert.equal(anonymous.status, 401);
    assert.equal((await anonymous.json()).error, 'not_authenticated');
    // The ticket needs the admin token, and is good once.
    const withoutToken = await fetch(`${s.url}/_admin/google/new-key`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ ticket }) });
    assert.equal(withoutToken.status, 401);
    await withoutToken.body?.cancel();
    const shown = await adminCall(s.url, 'POST', '/_admin/google/new-key', { ticket });
    assert.equal(shown.status, 200, shown.text);
    assert.equal(shown.body.connection, 'people-closed');
    assert.equal(shown.body.id, view.body.keys[0].id);
    assert.match(shown.body.key, /^sr_[\w-]{43}$/);
    const again = await adminCall(s.url, 'POST', '/_admin/google/new-key', { ticket });
    assert.equal(again.status, 404);
    assert.equal(again.body.error, 'not_found');
    const keyed = await fetch(`${s.url}/sheets/people-closed`, { headers: { 'X-Api-Key': shown.body.key } });
    assert.equal(keyed.status, 200, await keyed.clone().text());
    await keyed.body?.cancel();
    assert.ok(!s.logLines.join('\n').includes(shown.body.key), 'the key is never logged');
    assert.ok(!s.logLines.join('\n').includes(ticket), 'nor the ticket');
  });

  await t.test('an account that can only read: a read-only connection', async () => {
    const { outcome } = await signIn(s, 'people-ro', READER);
    assert.equal(outcome.get('connected'), 'people-ro', outcome.toString());
    const view = await adminCall(s.url, 'GET', '/_admin/connections/people-ro');
    assert.equal(view.body.readOnly, true);
    assert.equal(view.body.writable, false);
  });

  await t.test('an account without access, or a refused consent: no connection, the reason', async () => {
    const none = await signIn(s, 'nobody', STRANGER);
    assert.match(none.outcome.get('google-error') ?? '', /cannot open the spreadsheet/);
    const denied = await signIn(s, 'denied', WRITER, 'deny');
    assert.match(denied.outcome.get('google-error') ?? '', /not completed \(access_denied\)/);
    for (const id of ['nobody', 'denied']) assert.equal((await adminCall(s.url, 'GET', `/_admin/connections/${id}`)).status, 404);
  });

  await t.test('a callback is good once; a forged state makes nothing', async () => {
    const { outcome, callback } = await signIn(s, 'once', WRITER);
    assert.equal(outcome.get('connected'), 'once');
    assert.match((await follow(callback)).get('google-error') ?? '', /unknown or expired/);
    const forged = new URL(callback);
    forged.searchParams.set('state', 'A'.repeat(43));
    assert.match((await follow(forged)).get('google-error') ?? '', /unknown or expired/);
    assert.match((await follow(`${s.url}/_admin/google/callback`)).get('google-error') ?? '', /unknown or expired/);
  });

  await t.test('the refresh token is in admin.json (0600) and in no answer and no log line', async () => {
    const file = `${s.stateDir}/admin.json`;
    const stored = await readFile(file, 'utf8');
    const refreshTokens = [...stored.matchAll(/"refreshToken": "(1\/\/emulator-[^"]+)"/g)].map((match) => match[1]);
    assert.ok(refreshTokens.length >= 2, 'the refresh tokens the emulator issued are stored');
    if (process.platform !== 'win32') assert.equal((await stat(file)).mode & 0o777, 0o600);
    const list = await adminCall(s.url, 'GET', '/_admin/connections');
    for (const secret of [...refreshTokens, CLIENT_SECRET]) {
      assert.ok(!list.text.includes(secret), 'answer');
      assert.ok(!s.logLines.join('\n').includes(secret), 'log');
    }
  });

  const bad: [string, unknown, number, string][] = [
    ['a spreadsheet that is neither a URL nor an id', { id: 'a', spreadsheet: 'https://example.com/x' }, 400, 'invalid_body'],
    ['an id in use', { id: 'people', spreadsheet: s.spreadsheetId }, 409, 'conflict'],
    ['an id that cannot be one', { id: 'a b', spreadsheet: s.spreadsheetId }, 400, 'invalid_body'],
    ['a field too many', { id: 'a', spreadsheet: s.spreadsheetId, scope: 'x' }, 400, 'invalid_body'],
  ];
  for (const [name, body, status, code] of bad) {
    await t.test(`authorize with ${name}: ${status} ${code}`, async () => {
      const reply = await adminCall(s.url, 'POST', '/_admin/google/authorize', body);
      assert.equal(reply.status, status, reply.text);
      assert.equal(reply.body.error, code);
    });
  }

  await t.test('GET /_admin/google needs the admin token; with it, says where Google sends the browser back', async () => {
    assert.equal((await fetch(`${s.url}/_admin/google`)).status, 401);
    const reply = await adminCall(s.url, 'GET', '/_admin/google');
    assert.equal(reply.body.redirectUri, `${s.url}/_admin/google/callback`);
    assert.ok(!reply.text.includes(CLIENT_SECRET));
  });
});

test(`without admin.google the flow is not offered (${RUNTIME})`, async (t) => {
  const s = await setup(t, false);
  for (const [method, path] of [['GET', '/_admin/google'], ['POST', '/_admin/google/authorize'], ['GET', '/_admin/google/callback?state=x&code=y']]) {
    const reply = await adminCall(s.url, method, path, method === 'POST' ? {} : undefined);
    assert.equal(reply.status, 404, `${method} ${path}`);
  }
});

test(`the emulator's authorization_code grant checks the PKCE verifier, the redirect and the client (${RUNTIME})`, async (t) => {
  const emulator = await startEmulator();
  t.after(() => emulator.close());
  const verifier = 'v'.repeat(43);
  const challenge = Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))).toString('base64url');
  const redirect = 'http://127.0.0.1:1/cb';
  const code = async () => {
    const form = new URLSearchParams({ client_id: 'c', redirect_uri: redirect, state: 's', scope: 'x', code_challenge: challenge, code_challenge_method: 'S256', account: 'a@x', decision: 'allow' });
    const approved = await fetch(`${emulator.rootUrl}o/oauth2/v2/auth/approve`, { method: 'POST', body: form, redirect: 'manual' });
    const back = new URL(approved.headers.get('location') ?? '');
    assert.equal(back.searchParams.get('state'), 's');
    return back.searchParams.get('code') ?? '';
  };
  const redeem = async (fields: Record<string, string>) => {
    const response = await fetch(`${emulator.rootUrl}token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'authorization_code', client_id: 'c', redirect_uri: redirect, code_verifier: verifier, ...fields }) });
    return { status: response.status, body: await response.json() };
  };
  const cases: [string, Record<string, string>, number, string | undefined][] = [
    ['a wrong verifier', { code_verifier: 'w'.repeat(43) }, 400, 'invalid_grant'],
    ['no verifier', { code_verifier: '' }, 400, 'invalid_grant'],
    ['another redirect_uri', { redirect_uri: 'http://127.0.0.1:2/cb' }, 400, 'redirect_uri_mismatch'],
    ['another client', { client_id: 'd' }, 401, 'invalid_client'],
    ['the right verifier', {}, 200, undefined],
  ];
  for (const [name, fields, status, error] of cases) {
    await t.test(name, async () => {
      const answer = await redeem({ code: await code(), ...fields });
      assert.equal(answer.status, status);
      assert.equal(answer.body.error, error);
      if (status === 200) assert.match(answer.body.refresh_token, /^1\/\/emulator-/);
    });
  }
  await t.test('a code works once', async () => {
    const once = await code();
    assert.equal((await redeem({ code: once })).status, 200);
    assert.equal((await redeem({ code: once })).body.error, 'invalid_grant');
  });
  await t.test('the consent page escapes what it shows', async () => {
    const page = await fetch(`${emulator.rootUrl}o/oauth2/v2/auth?response_type=code&client_id=${encodeURIComponent('<script>x</script>')}&redirect_uri=${encodeURIComponent(redirect)}`);
    const text = await page.text();
    assert.ok(!text.includes('<script>x'));
    assert.ok(text.includes('&#60;script&#62;x'));
  });
});

test('spreadsheetIdOf: a Sheets URL or a bare id', async (t) => {
  const cases: [string, string | null][] = [
    ['https://docs.google.com/spreadsheets/d/1AbC-_x9/edit#gid=0', '1AbC-_x9'],
    ['https://docs.google.com/spreadsheets/u/1/d/1AbC/view', '1AbC'],
    ['  1AbC-_x9  ', '1AbC-_x9'],
    ['https://example.com/spreadsheets/d/1AbC', null],
    ['1AbC/../x', null],
    ['', null],
  ];
  for (const [input, expected] of cases) await t.test(JSON.stringify(input), () => assert.equal(spreadsheetIdOf(input), expected));
});

test('admin.google in the config: URLs checked, the secret named but never shown', async (t) => {
  const dir = await tempDir(t);
  await writeXlsx(dir.path('book.xlsx'), 'People', [['Name'], ['Ann']]);
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['no clientSecret', { clientId: 'c' }, /admin\.google\.clientSecret/],
    ['a token URL that is no URL', { clientId: 'c', clientSecret: 's3cr3t-value', tokenUrl: 'token' }, /admin\.google\.tokenUrl: expected an absolute URL/],
    ['an unknown field', { clientId: 'c', clientSecret: 's3cr3t-value', tokenURL: 'x' }, /tokenURL.*did you mean "tokenUrl"/],
    ['a secret from a missing variable', { clientId: 'c', clientSecret: { env: 'NO_SUCH_VARIABLE_HERE' } }, /NO_SUCH_VARIABLE_HERE/],
  ];
  for (const [name, google, message] of cases) {
    await t.test(name, () => {
      assert.throws(() => configForFile(dir.path('book.xlsx'), { admin: { token: TOKEN, google } } as never, { env: {} }), (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, message);
        assert.ok(!error.message.includes('s3cr3t-value'));
        return true;
      });
    });
  }
  await t.test('defaults: Google\'s own sign-in and token URLs', () => {
    const config = configForFile(dir.path('book.xlsx'), { admin: { token: TOKEN, google: { clientId: 'c', clientSecret: { env: 'SECRET' } } } }, { env: { SECRET: 'from-env' } });
    assert.equal(config.admin?.google?.authorizationUrl, 'https://accounts.google.com/o/oauth2/v2/auth');
    assert.equal(config.admin?.google?.tokenUrl, 'https://oauth2.googleapis.com/token');
    assert.equal(config.admin?.google?.clientSecret.reveal(), 'from-env');
    assert.deepEqual(config.admin?.google?.clientSecretSetting, { env: 'SECRET' });
  });
});
