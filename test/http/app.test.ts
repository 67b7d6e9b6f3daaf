// The fetch handler in-process: keys, quota, CORS, body caps, errors and logs, over a memory
// source. `await app.fetch(new Request('http://x/sheets/demo'))`, no port opened.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../server/http/app.ts';
import type { Connection } from '../../server/connections.ts';
import type { BillingPlan } from '../../server/config/config.ts';
import { digestKey, type ApiKey } from '../../server/auth.ts';
import { defaultAllowedHosts } from '../../server/http/hosts.ts';
import { createLogger } from '../../server/log.ts';
import { openQuotaStore } from '../../server/quota/quota.ts';
import { memorySource } from '../../server/sources/memory.ts';
import type { Source } from '../../server/sources/source.ts';
import type { Workbook } from '../../lib/workbook.ts';

function people(): Workbook {
  const row = (...cells: (string | number)[]) => ({ text: cells.map(String), value: cells });
  return { tabs: [{ name: 'People', rows: [row('Name', 'Age'), row('Ann', 30), row('Bob', 41)] }] };
}

interface Setup {
  readonly keys?: ApiKey[];
  readonly plan?: BillingPlan;
  readonly readOnly?: boolean;
  readonly source?: Source;
  readonly bodyBytes?: number;
  readonly bodyTimeoutMs?: number;
  readonly cors?: '*' | string[];
  readonly corsWrites?: 'same-origin' | 'any' | string[];
  readonly allowedHosts?: '*' | string[];
}

async function appWith(t: { after(fn: () => Promise<void>): void }, setup: Setup = {}) {
  const stateDir = await mkdtemp(join(tmpdir(), 'sheetrest-app-'));
  const quota = await openQuotaStore({ stateDir });
  const lines: string[] = [];
  const connection: Connection = {
    id: 'demo',
    source: setup.source ?? memorySource(people()),
    keys: setup.keys ?? [],
    plan: setup.plan,
    readOnly: setup.readOnly ?? false,
    engine: {},
  };
  const app = createApp({
    connections: [connection],
    quota,
    bodyBytes: setup.bodyBytes ?? 1024 * 1024,
    bodyTimeoutMs: setup.bodyTimeoutMs,
    cors: setup.cors ?? '*',
    corsWrites: setup.corsWrites,
    allowedHosts: setup.allowedHosts,
    log: createLogger('info', (line) => lines.push(line)),
  });
  t.after(async () => {
    await quota.close();
    await rm(stateDir, { recursive: true, force: true });
  });
  const call = (path: string, init: RequestInit = {}) => app.fetch(new Request('http://x' + path, init));
  return { app, call, lines };
}

async function errorOf(response: Response): Promise<string> {
  const body = await response.json();
  assert.equal(typeof body.message, 'string');
  assert.ok(body.message.length > 0);
  return body.error;
}

test('routing', async (t) => {
  const { call } = await appWith(t);
  await t.test('GET /healthz', async () => {
    const response = await call('/healthz');
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { status: 'ok' });
  });
  await t.test('GET /nowhere is 404 not_found', async () => {
    const response = await call('/nowhere');
    assert.equal(response.status, 404);
    assert.equal(await errorOf(response), 'not_found');
  });
  await t.test('GET /sheets/nope is 404 not_found without sheet headers', async () => {
    const response = await call('/sheets/nope');
    assert.equal(response.status, 404);
    assert.equal(await errorOf(response), 'not_found');
    assert.equal(response.headers.get('x-sheet-rows'), null);
  });
  await t.test('GET /sheets/demo reads rows with every header', async () => {
    const response = await call('/sheets/demo');
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), [{ Name: 'Ann', Age: '30' }, { Name: 'Bob', Age: '41' }]);
    assert.equal(response.headers.get('x-sheet-rows'), '2');
    assert.equal(response.headers.get('x-sheet-columns'), '2');
    assert.equal(response.headers.get('x-ratelimit-plan'), 'unlimited');
    assert.equal(response.headers.get('x-ratelimit-limit'), null);
    assert.equal(response.headers.get('access-control-allow-origin'), '*');
    assert.match(response.headers.get('access-control-expose-headers') ?? '', /X-RateLimit-Remaining/);
  });
  await t.test('POST then GET sees the write', async () => {
    const posted = await call('/sheets/demo', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"Name":"Cy","Age":7}' });
    assert.equal(posted.status, 201);
    assert.deepEqual(await posted.json(), { Name: 'Cy', Age: '7' });
    const read = await call('/sheets/demo/Name/cy');
    assert.deepEqual(await read.json(), [{ Name: 'Cy', Age: '7' }]);
  });
});

test('keys', async (t) => {
  const keys: ApiKey[] = [
    { digest: digestKey('write-secret'), scope: 'write' },
    { digest: digestKey('read-secret'), scope: 'read' },
  ];
  const { call, lines } = await appWith(t, { keys });
  for (const [name, headers, status, code] of [
    ['no key', {}, 401, 'not_authenticated'],
    ['empty key', { 'X-Api-Key': '' }, 401, 'not_authenticated'],
    ['wrong key', { 'X-Api-Key': 'guess' }, 401, 'authentication_failed'],
    ['Authorization is not used', { Authorization: 'Bearer write-secret' }, 401, 'not_authenticated'],
  ] as const) {
    await t.test(name, async () => {
      const response = await call('/sheets/demo', { headers });
      assert.equal(response.status, status);
      assert.equal(await errorOf(response), code);
      assert.equal(response.headers.get('x-sheet-rows'), null);
    });
  }
  await t.test('the right key reads', async () => {
    const response = await call('/sheets/demo', { headers: { 'X-Api-Key': 'write-secret' } });
    assert.equal(response.status, 200);
  });
  await t.test('a read key cannot write: 403 permission_denied', async () => {
    const response = await call('/sheets/demo', { method: 'POST', headers: { 'X-Api-Key': 'read-secret', 'Content-Type': 'application/json' }, body: '{"Name":"x"}' });
    assert.equal(response.status, 403);
    assert.equal(await errorOf(response), 'permission_denied');
    const rows = await (await call('/sheets/demo', { headers: { 'X-Api-Key': 'read-secret' } })).json();
    assert.equal(rows.length, 2);
  });
  await t.test('keys never reach the log', () => {
    assert.ok(lines.length > 0);
    for (const line of lines) assert.doesNotMatch(line, /secret|guess/);
  });
});

test('a read-only connection answers writes with 403 write_error and keeps reading', async (t) => {
  const { call } = await appWith(t, { readOnly: true });
  for (const [method, path] of [['POST', '/sheets/demo'], ['PATCH', '/sheets/demo/0'], ['PUT', '/sheets/demo/0'], ['DELETE', '/sheets/demo/0']]) {
    await t.test(`${method} ${path}`, async () => {
      const response = await call(path, { method, headers: { 'Content-Type': 'application/json' }, body: method === 'DELETE' ? undefined : '{"Name":"x"}' });
      assert.equal(response.status, 403);
      assert.equal(await errorOf(response), 'write_error');
    });
  }
  const response = await call('/sheets/demo');
  assert.equal((await response.json()).length, 2);
});

test('quota', async (t) => {
  await t.test('a limit of 2 serves 2 requests, then 402 throttle', async (t) => {
    const { call } = await appWith(t, { plan: { name: 'tiny', monthlyRequests: 2, operations: ['read', 'create', 'update', 'delete'] } });
    const first = await call('/sheets/demo');
    assert.equal(first.headers.get('x-ratelimit-limit'), '2');
    assert.equal(first.headers.get('x-ratelimit-remaining'), '1');
    assert.equal(first.headers.get('x-ratelimit-plan'), 'tiny');
    assert.match(first.headers.get('x-ratelimit-reset') ?? '', /^\d+$/);
    // An error still counts: the client was served an answer.
    const second = await call('/sheets/demo/query?Nope=1');
    assert.equal(second.status, 400);
    assert.equal(second.headers.get('x-ratelimit-remaining'), '0');
    const third = await call('/sheets/demo');
    assert.equal(third.status, 402);
    assert.equal(await errorOf(third), 'throttle');
    assert.equal(third.headers.get('x-ratelimit-remaining'), '0');
  });
  await t.test('the same read again, answered from what was kept, carries its own count', async (t) => {
    const { call } = await appWith(t, { plan: { name: 'small', monthlyRequests: 4, operations: ['read'] } });
    const remaining = [];
    for (let round = 0; round < 5; round++) remaining.push((await call('/sheets/demo/Name/Ann')).headers.get('x-ratelimit-remaining'));
    assert.deepEqual(remaining, ['3', '2', '1', '0', '0']);
  });
  await t.test('an operation the plan leaves out is 402 throttle', async (t) => {
    const { call } = await appWith(t, { plan: { name: 'readers', operations: ['read'] } });
    const response = await call('/sheets/demo', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"Name":"x"}' });
    assert.equal(response.status, 402);
    assert.equal(await errorOf(response), 'throttle');
    assert.equal((await call('/sheets/demo')).status, 200);
  });
  await t.test('an upsert is a create and an update: a plan without updates refuses it, writing nothing', async (t) => {
    const { call } = await appWith(t, { plan: { name: 'forms', operations: ['read', 'create'] } });
    const upsert = await call('/sheets/demo?_upsert=Name', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"Name":"Ann","Age":99}' });
    assert.equal(upsert.status, 402);
    assert.match(JSON.parse(await upsert.text()).message, /does not include update requests/);
    const post = await call('/sheets/demo', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"Name":"Cy"}' });
    assert.equal(post.status, 201, 'a plain POST is a create only');
    await post.body?.cancel();
    assert.deepEqual(await (await call('/sheets/demo/Name/Ann')).json(), [{ Name: 'Ann', Age: '30' }]);
  });
  await t.test('the new write headers are exposed to scripts', async (t) => {
    const { call } = await appWith(t);
    const response = await call('/sheets/demo', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"Name":"Di","Cty":"Rome"}' });
    assert.equal(response.headers.get('sheetrest-ignored-columns'), 'Cty');
    const exposed = (response.headers.get('access-control-expose-headers') ?? '').split(', ');
    for (const name of ['Sheetrest-Ignored-Columns', 'Sheetrest-Inserted', 'Sheetrest-Updated']) assert.ok(exposed.includes(name), name);
    await response.body?.cancel();
  });
  await t.test('failed authentication is not counted', async (t) => {
    const { call } = await appWith(t, { plan: { name: 'tiny', monthlyRequests: 1, operations: ['read'] }, keys: [{ digest: digestKey('k'), scope: 'write' }] });
    assert.equal((await call('/sheets/demo', { headers: { 'X-Api-Key': 'nope' } })).status, 401);
    const response = await call('/sheets/demo', { headers: { 'X-Api-Key': 'k' } });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-ratelimit-remaining'), '0');
  });
});

test('CORS', async (t) => {
  await t.test('a preflight needs no key, is not counted, and allows the path\'s methods', async (t) => {
    const { call } = await appWith(t, { keys: [{ digest: digestKey('k'), scope: 'write' }], plan: { name: 'one', monthlyRequests: 1, operations: ['read'] } });
    const preflight = await call('/sheets/demo/0', { method: 'OPTIONS', headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'PATCH' } });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-methods'), 'GET, HEAD, PATCH, PUT, DELETE, OPTIONS');
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /X-Api-Key/);
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /X-HTTP-Method-Override/);
    const read = await call('/sheets/demo', { headers: { 'X-Api-Key': 'k' } });
    assert.equal(read.headers.get('x-ratelimit-remaining'), '0');
  });
  await t.test('a list of origins echoes a listed origin only', async (t) => {
    const { call } = await appWith(t, { cors: ['https://app.example'] });
    const listed = await call('/sheets/demo', { headers: { Origin: 'https://app.example' } });
    assert.equal(listed.headers.get('access-control-allow-origin'), 'https://app.example');
    const other = await call('/sheets/demo', { headers: { Origin: 'https://evil.example' } });
    assert.equal(other.headers.get('access-control-allow-origin'), null);
    assert.equal(other.status, 200);
    // The same kept answer, again for each origin in turn: each gets its own CORS headers.
    for (const origin of ['https://app.example', 'https://evil.example', 'https://app.example']) {
      const again = await call('/sheets/demo', { headers: { Origin: origin } });
      assert.equal(again.headers.get('access-control-allow-origin'), origin === 'https://app.example' ? origin : null, origin);
      assert.equal(again.headers.get('vary'), 'Origin');
    }
  });
});

test('bodies are capped while streaming', async (t) => {
  const { call } = await appWith(t, { bodyBytes: 1024 });
  await t.test('a declared Content-Length over the cap', async () => {
    const response = await call('/sheets/demo', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify([{ Name: 'x'.repeat(2000) }]) });
    assert.equal(response.status, 413);
    assert.equal(await errorOf(response), 'payload_too_large');
  });
  await t.test('an endless stream is refused at the cap, not buffered', async () => {
    let pulled = 0;
    const chunk = new Uint8Array(256).fill(32);
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += chunk.byteLength;
        // 2 GiB if nobody stops it.
        if (pulled > 2 ** 31) controller.close();
        else controller.enqueue(chunk);
      },
    });
    const init: RequestInit & { duplex: 'half' } = { method: 'POST', headers: { 'Content-Type': 'application/json' }, body, duplex: 'half' };
    const response = await call('/sheets/demo', init);
    assert.equal(response.status, 413);
    assert.ok(pulled < 64 * 1024, `read ${pulled} bytes of a body capped at 1024`);
  });
});

test('a failing source gives a bare 500 and one log line', async (t) => {
  const broken: Source = {
    description: 'broken',
    writable: true,
    read: () => Promise.reject(new Error('disk on fire at /secret/path')),
    write: () => Promise.reject(new Error('disk on fire')),
    close: async () => {},
  };
  const { call, lines } = await appWith(t, { source: broken });
  const response = await call('/sheets/demo');
  assert.equal(response.status, 500);
  const body = await response.json();
  assert.equal(body.error, 'internal_error');
  assert.doesNotMatch(body.message, /fire|secret/);
  assert.ok(lines.some((line) => /disk on fire/.test(line) && JSON.parse(line).level === 'error'));
});

test('one log line per request, without query string or body', async (t) => {
  const { call, lines } = await appWith(t);
  await call('/sheets/demo/search?Name=private', { method: 'GET' });
  const line = JSON.parse(lines.at(-1)!);
  assert.equal(line.method, 'GET');
  assert.equal(line.path, '/sheets/demo/search');
  assert.equal(line.status, 200);
  assert.equal(line.connection, 'demo');
  assert.equal(typeof line.ms, 'number');
  assert.doesNotMatch(lines.at(-1)!, /private/);
});

test('the logged path keeps a filter\'s column, not its value', async (t) => {
  const { call, lines } = await appWith(t);
  const cases: [string, string][] = [
    ['/sheets/demo/Name/Ann', '/sheets/demo/Name/…'],
    ['/sheets/demo/tabs/People/Name/Ann', '/sheets/demo/tabs/People/Name/…'],
    ['/sheets/demo/Name/Ann/', '/sheets/demo/Name/…'],
    ['/sheets/demo/Name/Ann?_limit=1', '/sheets/demo/Name/…'],
    ['/sheets/demo/0', '/sheets/demo/0'],
    ['/sheets/demo/0:2', '/sheets/demo/0:2'],
    ['/sheets/demo/tabs', '/sheets/demo/tabs'],
    ['/sheets/demo/tabs/People', '/sheets/demo/tabs/People'],
    ['/sheets/demo/tabs/People/1', '/sheets/demo/tabs/People/1'],
    ['/sheets/demo', '/sheets/demo'],
    ['/healthz', '/healthz'],
  ];
  for (const [path, logged] of cases) {
    await t.test(path, async () => {
      await (await call(path)).body?.cancel();
      const line = JSON.parse(lines.at(-1)!);
      assert.equal(line.path, logged);
      assert.equal(line.connection, path.startsWith('/sheets/') ? 'demo' : undefined);
      assert.doesNotMatch(lines.at(-1)!, /Ann/);
    });
  }
});

test('a request line is the JSON of its fields, whatever the path holds', async (t) => {
  const { call, lines } = await appWith(t);
  const cases: [string, Record<string, unknown>][] = [
    ['/sheets/de%22mo%5C/Name/x', { path: '/sheets/de%22mo%5C/Name/…', status: 404, connection: 'de"mo\\' }],
    ['/sheets/d%C3%A9mo', { path: '/sheets/d%C3%A9mo', status: 404, connection: 'démo' }],
    ['/sheets/%E0%A4%A', { path: '/sheets/%E0%A4%A', status: 404, connection: '%E0%A4%A' }],
    ['/nowhere', { path: '/nowhere', status: 404 }],
  ];
  for (const [path, expected] of cases) {
    await t.test(path, async () => {
      await (await call(path)).body?.cancel();
      const line = JSON.parse(lines.at(-1)!) as Record<string, unknown>;
      const { time, ms } = line;
      assert.equal(lines.at(-1), JSON.stringify({ time, level: 'info', message: 'request', method: 'GET', path: expected.path, status: expected.status, ms, connection: expected.connection }));
    });
  }
});

/** What a listener hands the app, with any Host and Origin (a Web Request would drop or fix them). */
function incoming(path: string, headers: Record<string, string> = {}, method = 'GET', body: ReadableStream<Uint8Array> | null = null) {
  const lower = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  return { url: 'http://localhost' + path, method, headers: { get: (name: string) => lower[name.toLowerCase()] ?? null }, body };
}

test('Host', async (t) => {
  await t.test('any well-formed Host by default', async (t) => {
    const { app } = await appWith(t);
    for (const host of ['sheets.example.com', 'localhost:8080', '10.0.0.7:80', '[::1]:8080', 'a_b.example']) {
      assert.equal((await app.answer(incoming('/sheets/demo', { Host: host }))).status, 200, host);
    }
  });
  await t.test('a malformed Host is 400 invalid_host, whatever the path', async (t) => {
    const { app } = await appWith(t, { allowedHosts: '*' });
    for (const host of ['x/sheets/demo/Name/Ann#', 'x?', 'x#', 'u@x', 'a b', '', '[::1', 'x:', 'x:abc', 'x:123456', 'x:99999', 'x:65536', 'a.1', '1.2.3.999', '[1:2]', 'é.example', 'x\\y']) {
      for (const path of ['/sheets/demo', '/healthz', '/nowhere']) {
        const answer = await app.answer(incoming(path, { Host: host }));
        assert.equal(answer.status, 400, `${JSON.stringify(host)} ${path}`);
        assert.equal(JSON.parse(answer.body as string).error, 'invalid_host');
      }
    }
  });
  await t.test('no Host with a relative URL (Bun, HTTP/1.0) is 400; no Host on an absolute URL (in-process) is served', async (t) => {
    const { app } = await appWith(t);
    const relative = await app.answer({ ...incoming('/sheets/demo'), url: '/sheets/demo' });
    assert.equal(relative.status, 400);
    assert.equal(JSON.parse(relative.body as string).error, 'invalid_host');
    assert.equal((await app.answer(incoming('/sheets/demo'))).status, 200);
  });
  await t.test('allowed hosts: the list, localhost and IP addresses', async (t) => {
    const { app } = await appWith(t, { allowedHosts: ['sheets.example.com'] });
    const cases: [string, number][] = [
      ['sheets.example.com', 200],
      ['SHEETS.example.com:8443', 200],
      ['sheets.example.com.', 200],
      ['localhost:1234', 200],
      ['127.0.0.1:8080', 200],
      ['192.168.1.20', 200],
      ['[::1]:8080', 200],
      ['evil.example', 403],
      ['sheets.example.com.evil.example', 403],
      ['example.com', 403],
      ['1.2.3.4.nip.io', 403],
    ];
    for (const [host, status] of cases) {
      for (const path of ['/sheets/demo', '/healthz']) {
        const answer = await app.answer(incoming(path, { Host: host }));
        assert.equal(answer.status, status, `${host} ${path}`);
        if (status === 403) assert.equal(JSON.parse(answer.body as string).error, 'host_not_allowed');
      }
    }
  });
});

test('allowed hosts by default: only loopback names and IP addresses on a loopback bind', () => {
  const cases: [string, '*' | string[]][] = [
    ['127.0.0.1', []],
    ['127.0.1.1', []],
    ['::1', []],
    ['localhost', []],
    ['0.0.0.0', '*'],
    ['::', '*'],
    ['192.168.1.20', '*'],
    ['sheets.internal', '*'],
  ];
  for (const [bind, expected] of cases) assert.deepEqual(defaultAllowedHosts(bind), expected, bind);
});

test('a CORS list refuses writes from other origins before reading them', async (t) => {
  const { app, call } = await appWith(t, { cors: ['https://app.example'] });
  const cases: [string, string, string | null, number][] = [
    ['POST', '/sheets/demo', 'https://evil.example', 403],
    ['POST', '/sheets/demo', 'null', 403],
    ['PATCH', '/sheets/demo/0', 'https://evil.example', 403],
    ['PUT', '/sheets/demo/0', 'https://evil.example', 403],
    ['DELETE', '/sheets/demo/0', 'https://evil.example', 403],
    ['PROPFIND', '/sheets/demo', 'https://evil.example', 403],
    ['GET', '/sheets/demo', 'https://evil.example', 200],
    ['HEAD', '/sheets/demo', 'https://evil.example', 200],
    ['POST', '/sheets/demo', 'https://app.example', 201],
    // No Origin: not a browser's cross-site request (curl, a server).
    ['POST', '/sheets/demo', null, 201],
  ];
  for (const [method, path, origin, status] of cases) {
    await t.test(`${method} ${path} from ${origin}`, async () => {
      const body = method === 'POST' || method === 'PATCH' || method === 'PUT' ? '{"Name":"Zed"}' : null;
      const headers: Record<string, string> = { 'Content-Type': 'text/plain', ...(origin === null ? {} : { Origin: origin }) };
      const answer = await app.answer(incoming(path, headers, method, body === null ? null : new Response(body).body));
      assert.equal(answer.status, status, answer.body as string);
      if (status === 403) assert.equal(JSON.parse(answer.body as string).error, 'origin_not_allowed');
    });
  }
  await t.test('only the listed origin\'s and the origin-less writes landed', async () => {
    const rows = await (await call('/sheets/demo')).json();
    assert.deepEqual(rows.map((row: { Name: string }) => row.Name), ['Ann', 'Bob', 'Zed', 'Zed']);
  });
});

/** A write (or read) as a browser sends it: with a text/plain body where it has one, no preflight needed. */
function browserRequest(method: string, path: string, headers: Record<string, string>) {
  const body = method === 'POST' || method === 'PATCH' || method === 'PUT' ? new Response(method === 'POST' ? '{"Name":"Zed"}' : '{"Age":99}').body : null;
  return incoming(path, { 'Content-Type': 'text/plain', ...headers }, method, body);
}

async function namesAndAges(call: (path: string) => Promise<Response>): Promise<string[]> {
  const rows: { Name: string; Age: number }[] = await (await call('/sheets/demo')).json();
  return rows.map((row) => `${row.Name} ${row.Age}`);
}

test('a page on another site may not write to a connection without keys: 403 permission_denied naming cors.writes, nothing written', async (t) => {
  const { app, call } = await appWith(t);
  const elsewhere = { Host: 'localhost:8080', Origin: 'https://elsewhere.example' };
  const cases: [string, string, string, Record<string, string>, number][] = [
    ['a text/plain POST', 'POST', '/sheets/demo', elsewhere, 403],
    ['PATCH', 'PATCH', '/sheets/demo/0', elsewhere, 403],
    ['PUT', 'PUT', '/sheets/demo/0', elsewhere, 403],
    ['PUT overridden to PATCH', 'PUT', '/sheets/demo/Name/Ann', { ...elsewhere, 'X-HTTP-Method-Override': 'PATCH' }, 403],
    ['DELETE', 'DELETE', '/sheets/demo/0', elsewhere, 403],
    ['Origin: null (a sandboxed frame)', 'POST', '/sheets/demo', { Host: 'localhost:8080', Origin: 'null' }, 403],
    ['another port of the same host', 'DELETE', '/sheets/demo/0', { Host: 'localhost:8080', Origin: 'http://localhost:5173' }, 403],
    ['a name that only starts like the host', 'POST', '/sheets/demo', { Host: 'sheets.example.com', Origin: 'https://sheets.example.com.evil.example' }, 403],
    ['a read from there is fine', 'GET', '/sheets/demo', elsewhere, 200],
  ];
  for (const [name, method, path, headers, status] of cases) {
    await t.test(`${name}: ${method} ${path} from ${headers.Origin}`, async () => {
      const answer = await app.answer(browserRequest(method, path, headers));
      assert.equal(answer.status, status, answer.body as string);
      if (status !== 403) return;
      const body = JSON.parse(answer.body as string);
      assert.equal(body.error, 'permission_denied');
      assert.match(body.message, /no API key/);
      assert.match(body.message, /cors\.writes/);
      // The page may read why: the refusal carries the CORS headers.
      assert.equal(answer.headers['Access-Control-Allow-Origin'], '*');
    });
  }
  await t.test('nothing was written', async () => {
    assert.deepEqual(await namesAndAges(call), ['Ann 30', 'Bob 41']);
  });
});

test('a connection without keys still takes writes from its own pages, clients without Origin, and origins the config lets write', async (t) => {
  const writer: ApiKey = { digest: digestKey('writer-key'), scope: 'write' };
  const cases: [string, Setup, Record<string, string>, number][] = [
    ['its own page', {}, { Host: 'localhost:8080', Origin: 'http://localhost:8080' }, 201],
    ['its own page through a proxy that ends TLS', {}, { Host: 'Sheets.Example.com', Origin: 'https://sheets.example.com' }, 201],
    ['its own page, the default port in Host', {}, { Host: 'sheets.example.com:443', Origin: 'https://sheets.example.com' }, 201],
    ['an in-process call without Host: the URL\'s host', {}, { Origin: 'http://localhost' }, 201],
    ['no Origin (curl, a server)', {}, { Host: 'localhost:8080' }, 201],
    ['an origin in cors.origins', { cors: ['https://app.example'] }, { Host: 'localhost:8080', Origin: 'https://app.example' }, 201],
    ['an origin in cors.writes', { corsWrites: ['https://app.example'] }, { Host: 'localhost:8080', Origin: 'https://app.example' }, 201],
    ['another origin than cors.writes lists', { corsWrites: ['https://app.example'] }, { Host: 'localhost:8080', Origin: 'https://elsewhere.example' }, 403],
    ['cors.writes "any"', { corsWrites: 'any' }, { Host: 'localhost:8080', Origin: 'https://elsewhere.example' }, 201],
    ['a keyed connection, the key sent from another site', { keys: [writer] }, { Host: 'localhost:8080', Origin: 'https://elsewhere.example', 'X-Api-Key': 'writer-key' }, 201],
    ['a keyed connection, no key sent from another site', { keys: [writer] }, { Host: 'localhost:8080', Origin: 'https://elsewhere.example' }, 401],
  ];
  for (const [name, setup, headers, status] of cases) {
    await t.test(name, async (t) => {
      const { app, call } = await appWith(t, setup);
      const answer = await app.answer(browserRequest('POST', '/sheets/demo', headers));
      assert.equal(answer.status, status, answer.body as string);
      const read = (path: string) => call(path, setup.keys === undefined ? {} : { headers: { 'X-Api-Key': 'writer-key' } });
      assert.deepEqual(await namesAndAges(read), status === 201 ? ['Ann 30', 'Bob 41', 'Zed '] : ['Ann 30', 'Bob 41']);
    });
  }
});

test('a CORS list lets the server\'s own pages write, listed or not', async (t) => {
  const { app } = await appWith(t, { cors: ['https://app.example'] });
  const own = await app.answer(browserRequest('POST', '/sheets/demo', { Host: 'localhost:8080', Origin: 'http://localhost:8080' }));
  assert.equal(own.status, 201, own.body as string);
  const other = await app.answer(browserRequest('POST', '/sheets/demo', { Host: 'localhost:8080', Origin: 'http://localhost:5173' }));
  assert.equal(JSON.parse(other.body as string).error, 'origin_not_allowed');
});

test('a body that stalls, or is cut off, or is still arriving at shutdown', async (t) => {
  /** A body that sends `{"Na` and then nothing, or errors as a closed connection does. */
  const stalled = (error?: Error) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"Na'));
        if (error !== undefined) controller.error(error);
      },
    });
  const post = (body: ReadableStream<Uint8Array>) => incoming('/sheets/demo', { 'Content-Type': 'application/json' }, 'POST', body);
  await t.test('408 request_timeout at the body deadline', async (t) => {
    const { app } = await appWith(t, { bodyTimeoutMs: 50 });
    const answer = await app.answer(post(stalled()));
    assert.equal(answer.status, 408);
    assert.equal(JSON.parse(answer.body as string).error, 'request_timeout');
  });
  await t.test('a connection closed mid-body is 400 invalid_body and no error line', async (t) => {
    const { app, lines } = await appWith(t);
    const answer = await app.answer(post(stalled(new Error('aborted'))));
    assert.equal(answer.status, 400);
    assert.equal(JSON.parse(answer.body as string).error, 'invalid_body');
    assert.deepEqual(lines.filter((line) => JSON.parse(line).level === 'error'), []);
  });
  await t.test('abortBodies() ends the bodies still arriving', async (t) => {
    const { app, call } = await appWith(t, { bodyTimeoutMs: 600_000 });
    const answering = Promise.all([app.answer(post(stalled())), app.answer(post(stalled()))]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    app.abortBodies();
    for (const answer of await answering) assert.equal(answer.status, 408);
    assert.equal((await (await call('/sheets/demo')).json()).length, 2);
  });
});

test('a target met again is served as the router served it the first time', async (t) => {
  const row = (...cells: string[]) => ({ text: cells, value: cells });
  const book = (name: string): Workbook => ({
    tabs: [
      { name: 'People', rows: [row('Name'), row(name), row(`${name} 2`)] },
      { name: 'Orders', rows: [row('Item'), row(`${name}'s order`)] },
    ],
  });
  // What each read asked the source for, at once or waiting: the tab a Google source would fetch alone.
  const asked: Array<string | null | undefined> = [];
  const recording = (source: Source): Source => ({
    ...source,
    read: (options) => (asked.push(options?.tab), source.read(options)),
    readNow: (options) => (asked.push(options?.tab), source.readNow?.(options)),
  });
  const stateDir = await mkdtemp(join(tmpdir(), 'sheetrest-app-'));
  const quota = await openQuotaStore({ stateDir });
  t.after(async () => {
    await quota.close();
    await rm(stateDir, { recursive: true, force: true });
  });
  const connection = (id: string, name: string): Connection => ({ id, source: recording(memorySource(book(name))), keys: [], readOnly: false, engine: {} });
  const app = createApp({ connections: [connection('one', 'Ann'), connection('two', 'Bob')], quota, bodyBytes: 1024, cors: '*', log: createLogger('silent') });
  const answer = async (method: string, path: string) => {
    const response = await app.fetch(new Request('http://x' + path, { method }));
    return `${response.status} ${await response.text()}`;
  };
  const targets: Array<[method: string, path: string, tab: string | null | undefined]> = [
    ['GET', '/sheets/one/Name/Ann', null],
    ['GET', '/sheets/two/Name/Bob', null],
    ['GET', '/sheets/one?_limit=1', null],
    ['GET', '/sheets/one?_limit=2', null],
    ['GET', '/sheets/two/tabs/Orders', 'Orders'],
    ['HEAD', '/sheets/one/tabs/Orders', 'Orders'],
    ['GET', '/sheets/one/tabs', undefined],
    ['GET', '/sheets/nope', undefined],
    ['GET', '/healthz', undefined],
  ];
  const first = new Map<string, string>();
  for (const [method, path] of targets) first.set(`${method} ${path}`, await answer(method, path));
  assert.notEqual(first.get('GET /sheets/one?_limit=1'), first.get('GET /sheets/one?_limit=2'), 'the query is part of the target');
  assert.match(first.get('GET /sheets/two/tabs/Orders') ?? '', /Bob's order/);

  await t.test('each again, twice: the same answer, and the source asked for the same tab', async () => {
    for (let round = 0; round < 2; round++) {
      for (const [method, path, tab] of targets) {
        asked.length = 0;
        assert.equal(await answer(method, path), first.get(`${method} ${path}`), `${method} ${path}`);
        if (tab !== undefined) assert.deepEqual(asked, [tab], `${method} ${path} reads its tab`);
      }
    }
  });
  await t.test('past the number of targets noted, every target still answers as at first', async () => {
    for (let limit = 3; limit < 5000; limit++) assert.equal((await app.fetch(new Request(`http://x/sheets/two?_limit=${limit}&_offset=1`))).status, 200);
    for (const [method, path] of targets) assert.equal(await answer(method, path), first.get(`${method} ${path}`), `${method} ${path}`);
  });
});

test('a 304 the engine gave is kept, and given again only to a request naming its tag', async (t) => {
  const source = memorySource(people());
  const served = async (call: (path: string, init?: RequestInit) => Promise<Response>, tag: string | null) => {
    const response = await call('/sheets/demo/Name/Ann', tag === null ? {} : { headers: { 'If-None-Match': tag } });
    return { status: response.status, etag: response.headers.get('etag'), rows: response.headers.get('x-sheet-rows'), body: await response.text() };
  };
  const before = await appWith(t, { source });
  const first = await served(before.call, null);
  assert.equal(first.status, 200);
  // A restarted server: the client revalidates with the tag it holds before anyone asks for the rows.
  const { call } = await appWith(t, { source });
  const tag = first.etag;
  assert.deepEqual(await served(call, tag), { status: 304, etag: tag, rows: '2', body: '' });
  assert.deepEqual(await served(call, tag), { status: 304, etag: tag, rows: '2', body: '' }, 'the kept 304');
  assert.deepEqual(await served(call, `"other", ${tag}`), { status: 304, etag: tag, rows: '2', body: '' }, 'a list naming it');
  assert.deepEqual(await served(call, null), first, 'no validator: the rows, not the kept 304');
  assert.deepEqual(await served(call, '"other"'), first, 'another tag: the rows');
  assert.deepEqual(await served(call, tag), { status: 304, etag: tag, rows: '2', body: '' }, 'the 304 of the kept 200');

  await t.test('a write: the tag no longer matches', async () => {
    const again = await appWith(t, { source });
    assert.equal((await served(again.call, tag)).status, 304);
    const posted = await again.call('/sheets/demo', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"Name":"Ann","Age":5}' });
    assert.equal(posted.status, 201);
    const after = await served(again.call, tag);
    assert.equal(after.status, 200);
    assert.notEqual(after.etag, tag);
    assert.deepEqual(JSON.parse(after.body), [{ Name: 'Ann', Age: '30' }, { Name: 'Ann', Age: '5' }]);
  });
});
