// Failed admin sign-ins are throttled per client address: 10 wrong admin tokens within a minute
// from one address -> 429 rate_limited with Retry-After for the rest of that minute (the right
// token too), a warn line without the token, other addresses unaffected, memory bounded. In
// process with a clock of the test's own, then once over real HTTP on whichever runtime runs the
// test (the listener gives the socket's address).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AdminService } from '../../server/admin/service.ts';
import { adminHandler } from '../../server/admin/routes.ts';
import { clientKey, MAX_FAILURES, SignInThrottle, WINDOW_MS } from '../../server/admin/sign-in-throttle.ts';
import type { IncomingRequest } from '../../server/http/request.ts';
import { configForFile, Secret } from '../../server/config/config.ts';
import { createLogger } from '../../server/log.ts';
import { RUNTIME, startServer, tempDir, writeXlsx } from '../helpers/http.ts';

const TOKEN = 'admin-token-0123456789abcdef';
const WRONG = 'wrong-token-guess-0123456789';

/** The admin handler with a clock and a log of the test's own; `GET /_admin` needs no service. */
function setup() {
  let now = Date.parse('2026-11-26T12:00:00Z');
  const lines: string[] = [];
  const throttle = new SignInThrottle({ log: createLogger('debug', (line) => lines.push(line)), now: () => now });
  const handler = adminHandler({} as AdminService, new Secret(TOKEN), undefined, throttle);
  const call = async (remoteAddress: string, token: string) => {
    const request: IncomingRequest = { url: 'http://localhost/_admin', method: 'GET', headers: new Headers({ Authorization: `Bearer ${token}` }), body: null, remoteAddress };
    return handler(request, async () => new Uint8Array());
  };
  return { call, lines, throttle, advance: (ms: number) => (now += ms) };
}

test('ten wrong admin tokens from one address: 429 rate_limited with Retry-After, then lifted after the window', async () => {
  const { call, lines, advance } = setup();
  for (let n = 1; n <= MAX_FAILURES; n++) {
    const answer = await call('203.0.113.7', WRONG);
    assert.equal(answer.status, 401, `wrong token ${n}`);
    advance(1000);
  }
  const refused = await call('203.0.113.7', WRONG);
  assert.equal(refused.status, 429);
  assert.equal(JSON.parse(String(refused.body)).error, 'rate_limited');
  // The window began at the first wrong token, ten seconds ago: fifty seconds are left.
  assert.equal(refused.headers['Retry-After'], '50');

  const right = await call('203.0.113.7', TOKEN);
  assert.equal(right.status, 429, 'the right token is refused too during the lockout: guessing on learns nothing');

  const other = await call('198.51.100.1', TOKEN);
  assert.equal(other.status, 200, 'another address is not affected');
  assert.equal((await call('198.51.100.2', WRONG)).status, 401, 'and has its own count');

  advance(50_000);
  assert.equal((await call('203.0.113.7', TOKEN)).status, 200, 'lifted once the window is over');
  assert.ok(lines.every((line) => !line.includes(WRONG) && !line.includes(TOKEN)), 'no token in the log');
});

test('failed admin sign-ins are logged at warn: the first, the lockout, one summary per window', async () => {
  const { call, lines, advance } = setup();
  for (let n = 0; n < 3_000; n++) await call('203.0.113.7', `${WRONG}-${n}`);
  const warned = lines.map((line) => JSON.parse(line)).filter((entry) => entry.level === 'warn');
  assert.deepEqual(warned.map((entry) => [entry.message, entry.client]), [
    ['a wrong admin token was sent', '203.0.113.7'],
    ['admin requests from a client are refused for now: too many wrong admin tokens', '203.0.113.7'],
  ]);
  advance(WINDOW_MS);
  await call('203.0.113.7', WRONG);
  const summary = lines.map((line) => JSON.parse(line)).filter((entry) => entry.level === 'warn')[2];
  assert.equal(summary.message, 'failed admin sign-ins from a client, in one window');
  assert.deepEqual([summary.wrongTokens, summary.refused], [MAX_FAILURES, 3_000 - MAX_FAILURES]);
  assert.ok(lines.every((line) => !line.includes(WRONG)), 'no token in the log');
});

test('a missing token is not counted as a guess', async () => {
  const { call } = setup();
  for (let n = 0; n < MAX_FAILURES + 5; n++) assert.equal((await call('203.0.113.7', '')).status, 401);
  assert.equal((await call('203.0.113.7', TOKEN)).status, 200);
});

test('the throttle keeps at most maxAddresses addresses, forgetting the oldest', () => {
  let now = 0;
  const throttle = new SignInThrottle({ log: createLogger('silent'), maxAddresses: 100, now: () => now++ });
  for (let n = 0; n < 1_000; n++) throttle.failed(`10.0.${n >> 8}.${n & 255}`);
  assert.equal(throttle.size, 100);
});

test('lines about failed sign-ins are capped per window, from all addresses together', () => {
  const lines: string[] = [];
  let now = 0;
  const throttle = new SignInThrottle({ log: createLogger('debug', (line) => lines.push(line)), now: () => now });
  for (let n = 0; n < 5_000; n++) throttle.failed(`10.1.${n >> 8}.${n & 255}`);
  assert.equal(lines.length, 100);
  now += WINDOW_MS;
  throttle.failed('192.0.2.1');
  assert.match(lines[100], /"left":4900/);
});

test('clientKey: IPv4 as it is, IPv4-mapped as IPv4, IPv6 by its /64', async (t) => {
  const cases: [string, string][] = [
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:ffff::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['unknown', 'unknown'],
  ];
  for (const [address, key] of cases) await t.test(address, () => assert.equal(clientKey(address), key));
});

test(`over HTTP the socket's address is counted: wrong tokens lead to 429 (${RUNTIME})`, async (t) => {
  const dir = await tempDir(t);
  await writeXlsx(dir.path('book.xlsx'), 'People', [['Name'], ['Ann']]);
  const config = configForFile(dir.path('book.xlsx'), { stateDir: dir.path('state'), log: { level: 'warn' } }, { env: { SHEETREST_ADMIN_TOKEN: TOKEN } });
  const lines: string[] = [];
  const { url } = await startServer(t, config, createLogger('warn', (line) => lines.push(line)));
  const statusWith = async (token: string) => {
    const response = await fetch(`${url}/_admin/connections`, { headers: { Authorization: `Bearer ${token}` } });
    await response.body?.cancel();
    return { status: response.status, retryAfter: response.headers.get('retry-after') };
  };
  for (let n = 0; n < MAX_FAILURES; n++) assert.equal((await statusWith(WRONG)).status, 401);
  const refused = await statusWith(TOKEN);
  assert.equal(refused.status, 429);
  assert.match(refused.retryAfter ?? '', /^[1-9]\d*$/);
  const warned = lines.filter((line) => line.includes('"level":"warn"'));
  assert.ok(warned.some((line) => line.includes('a wrong admin token was sent') && /"client":"(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)"/.test(line)), warned.join('\n'));
  assert.ok(lines.every((line) => !line.includes(WRONG) && !line.includes(TOKEN)), 'no token in the log');
});
