// The host stage (server/http/hosts.ts, hostRefusal): which Host headers reach routing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostCheck, hostRefusal } from '../../server/http/hosts.ts';
import { incoming } from '../helpers/incoming.ts';

test('hostRefusal', async (t) => {
  const cases: [string, string, string | undefined, string | null][] = [
    // [allowed hosts, request URL, Host header, error code or null]
    ['*', 'http://x/sheets/demo', 'anything.example:8080', null],
    ['*', 'http://x/sheets/demo', undefined, null],
    ['*', '/sheets/demo', undefined, 'invalid_host'],
    ['*', 'http://x/sheets/demo', 'x/sheets/open/Name/p#', 'invalid_host'],
    ['*', 'http://x/sheets/demo', 'h:99999', 'invalid_host'],
    ['local', 'http://x/sheets/demo', 'localhost:3000', null],
    ['local', 'http://x/sheets/demo', '127.0.0.1:3000', null],
    ['local', 'http://x/sheets/demo', '[::1]:3000', null],
    ['local', 'http://x/sheets/demo', 'attacker.example:3000', 'host_not_allowed'],
    ['local', 'http://x/sheets/demo', 'sheets.example.com.', null],
  ];
  for (const [allowed, url, host, expected] of cases) {
    await t.test(`${allowed} ${url} Host: ${host}`, () => {
      const check = hostCheck(allowed === '*' ? '*' : ['sheets.example.com']);
      const refused = hostRefusal(check, incoming('GET', url, host === undefined ? {} : { host }));
      assert.equal(refused?.code ?? null, expected);
    });
  }
});
