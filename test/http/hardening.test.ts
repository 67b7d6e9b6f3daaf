// Hostile and broken clients over real HTTP, on the runtime running the test, each sent as raw
// bytes because fetch() would refuse or repair them: `DELETE /sheets/other/Name/x` with
// `Host: x/sheets/open/Name/proto2#` -> 400 invalid_host and nothing deleted anywhere; a POST
// from a foreign Origin -> 403; a body trickling in -> 408 without holding up anyone else.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { ERRORS } from '../../lib/errors.ts';
import { configForFile, loadConfig, type Config, type FileModeOverrides } from '../../server/config/config.ts';
import { createLogger } from '../../server/log.ts';
import { RUNTIME, getRows, rawRequest, readBook, startServer, tempDir, trickle, within, writeXlsx, type Cell, type RawAnswer, type TestContext } from '../helpers/http.ts';

const SEED: Cell[][] = [['Id', 'Name'], ['a1', 'proto1'], ['b2', 'proto2']];

/** One workbook `book.xlsx` (connection `book`) served in-process. */
async function serveBook(t: TestContext, overrides: FileModeOverrides = {}, log = createLogger('silent')) {
  const dir = await tempDir(t);
  const path = dir.path('book.xlsx');
  await writeXlsx(path, 'People', SEED);
  const server = await startServer(t, configForFile(path, { stateDir: dir.path('state'), ...overrides }), log);
  return { ...server, path, port: new URL(server.url).port };
}

/** `GET path HTTP/1.1` with these extra header lines, answered on a connection of its own. */
function head(method: string, path: string, host: string, extra: string[] = []): string {
  return [`${method} ${path} HTTP/1.1`, `Host: ${host}`, ...extra, 'Connection: close', '', ''].join('\r\n');
}

function assertJsonError(answer: RawAnswer, status: number, code: string): void {
  assert.equal(answer.status, status, `answer: ${JSON.stringify(answer)}`);
  assert.match(answer.headers['content-type'] ?? '', /^application\/json/);
  const body = JSON.parse(answer.body) as { error: string; message: string };
  assert.equal(body.error, code);
  assert.ok(body.message.length > 0);
}

test(`a Host header never rewrites the path, and a malformed one is 400 invalid_host (${RUNTIME})`, async (t) => {
  // The audit's case: two open connections; the DELETE names `other`, the Host smuggles in `open`.
  const dir = await tempDir(t);
  for (const name of ['open', 'other']) await writeXlsx(dir.path(`${name}.xlsx`), 'People', SEED);
  const connections = ['open', 'other'].map((id) => ({ id, source: { type: 'file', path: `${id}.xlsx` } }));
  await writeFile(dir.path('sheetrest.json'), JSON.stringify({ stateDir: 'state', connections }));
  const config: Config = await loadConfig(dir.path('sheetrest.json'));
  const { url } = await startServer(t, config);

  const hosts = ['x/sheets/open/Name/proto2#', 'x/sheets/open', 'x?y', 'x#y', 'user@evil.example', 'a b', '[::1', 'x:port', 'x\\y', '', 'évil.example', 'x:99999', 'a.1', '1.2.3.999', '[1:2]'];
  for (const host of hosts) {
    await t.test(`Host: ${JSON.stringify(host)}`, async () => {
      const answer = await rawRequest(url, head('DELETE', '/sheets/other/Name/proto1', host));
      assertJsonError(answer, 400, 'invalid_host');
    });
  }
  await t.test('nothing was deleted on either connection', async () => {
    for (const id of ['open', 'other']) assert.deepEqual((await getRows(`${url}/sheets/${id}`)).map((row) => row.Name), ['proto1', 'proto2'], id);
  });
  await t.test('a well-formed Host still deletes what the path names, and only that', async () => {
    const answer = await rawRequest(url, head('DELETE', '/sheets/other/Name/proto1', `localhost:${new URL(url).port}`));
    assert.equal(answer.status, 200, answer.body);
    assert.deepEqual((await getRows(`${url}/sheets/other`)).map((row) => row.Name), ['proto2']);
    assert.deepEqual((await getRows(`${url}/sheets/open`)).map((row) => row.Name), ['proto1', 'proto2']);
  });
});

test(`odd request targets are served by their path or refused, never a 500 (${RUNTIME})`, async (t) => {
  const { url, port } = await serveBook(t);
  const cases: [string, number | 'refused' | 'not 5xx'][] = [
    // The absolute form is meant for proxies; its host is not the Host and routes nothing.
    ['http://evil.example/sheets/book', 200],
    ['https://evil.example/sheets/book', 200],
    ['//evil.example/sheets/book', 404],
    // No URL holds it: Node and Deno refuse it (400); Bun builds its URL from Host and serves the path.
    ['http://evil.example:99999/sheets/book', 'not 5xx'],
    ['*', 'refused'],
    ['sheets/book', 'refused'],
    ['/sheets/%2e%2e/book', 404],
  ];
  for (const [target, expected] of cases) {
    await t.test(`GET ${target}`, async () => {
      const answer = await rawRequest(url, head('GET', target, `127.0.0.1:${port}`));
      assert.ok(answer.status !== null && answer.status < 500, `${answer.status} ${answer.body}`);
      if (expected === 'refused') assert.ok(answer.status >= 400, `${answer.status} ${answer.body}`);
      else if (expected !== 'not 5xx') assert.equal(answer.status, expected, answer.body);
    });
  }
});

test(`a request without Host (${RUNTIME})`, async (t) => {
  const { url } = await serveBook(t);
  for (const version of ['1.0', '1.1']) {
    await t.test(`HTTP/${version}`, async () => {
      const answer = await rawRequest(url, `GET /sheets/book HTTP/${version}\r\nConnection: close\r\n\r\n`);
      // Deno takes its bind address for the URL and serves it; Bun refuses HTTP/1.1 itself, bare.
      if (RUNTIME === 'deno') assert.equal(answer.status, 200, answer.body);
      else if (RUNTIME === 'bun' && version === '1.1') assert.equal(answer.status, 400);
      else assertJsonError(answer, 400, 'invalid_host');
    });
  }
});

test(`a loopback server answers only to loopback names and IP addresses by default (${RUNTIME})`, async (t) => {
  const { url, port } = await serveBook(t);
  const cases: [string, string, string, number][] = [
    ['GET', '/sheets/book', `localhost:${port}`, 200],
    ['GET', '/sheets/book', `127.0.0.1:${port}`, 200],
    ['GET', '/sheets/book', `[::1]:${port}`, 200],
    ['GET', '/sheets/book', 'LOCALHOST', 200],
    // A page on attacker.example whose name was rebound to 127.0.0.1.
    ['GET', '/sheets/book', `attacker.example:${port}`, 403],
    ['GET', '/healthz', `attacker.example:${port}`, 403],
    ['DELETE', '/sheets/book/0', `attacker.example:${port}`, 403],
    ['GET', '/sheets/book', `localhost.attacker.example:${port}`, 403],
  ];
  for (const [method, path, host, status] of cases) {
    await t.test(`${method} ${path} Host: ${host}`, async () => {
      const answer = await rawRequest(url, head(method, path, host));
      if (status === 403) assertJsonError(answer, 403, 'host_not_allowed');
      else assert.equal(answer.status, status, answer.body);
    });
  }
  await t.test('nothing was deleted', async () => {
    assert.equal((await getRows(`${url}/sheets/book`)).length, 2);
  });
});

test(`allowedHosts adds names; "*" answers any Host (${RUNTIME})`, async (t) => {
  await t.test('a listed name', async (t) => {
    const { url } = await serveBook(t, { allowedHosts: ['sheets.example.com'] });
    assert.equal((await rawRequest(url, head('GET', '/sheets/book', 'Sheets.Example.com:443'))).status, 200);
    assert.equal((await rawRequest(url, head('GET', '/sheets/book', 'localhost'))).status, 200);
    assertJsonError(await rawRequest(url, head('GET', '/sheets/book', 'other.example.com')), 403, 'host_not_allowed');
  });
  await t.test('"*"', async (t) => {
    const { url } = await serveBook(t, { allowedHosts: '*' });
    assert.equal((await rawRequest(url, head('GET', '/sheets/book', 'anything.example'))).status, 200);
    // Still a host name: a malformed Host is refused whatever the list.
    assertJsonError(await rawRequest(url, head('GET', '/sheets/book', 'x/sheets/book#')), 400, 'invalid_host');
  });
});

test(`a write from an origin outside the CORS list is refused before it is read (${RUNTIME})`, async (t) => {
  const { url, port } = await serveBook(t, { cors: { origins: ['https://app.example'] } });
  const body = '{"Id":"z9","Name":"csrf"}';
  // What a form or fetch() on another site sends without a preflight: a text/plain POST.
  const post = (origin: string) =>
    rawRequest(url, head('POST', '/sheets/book', `127.0.0.1:${port}`, [`Origin: ${origin}`, 'Content-Type: text/plain', `Content-Length: ${body.length}`]), body);
  assertJsonError(await post('https://evil.example'), 403, 'origin_not_allowed');
  assertJsonError(await post('null'), 403, 'origin_not_allowed');
  assert.deepEqual((await getRows(`${url}/sheets/book`)).map((row) => row.Id), ['a1', 'b2']);
  assert.equal((await post('https://app.example')).status, 201);
  assert.deepEqual((await getRows(`${url}/sheets/book`)).map((row) => row.Id), ['a1', 'b2', 'z9']);
});

test(`with CORS origins "*", another site's page may not write to a connection without keys; its own pages may (${RUNTIME})`, async (t) => {
  const { url, port } = await serveBook(t);
  const post = (origin: string, id: string) => {
    const body = `{"Id":"${id}","Name":"from ${origin}"}`;
    return rawRequest(url, head('POST', '/sheets/book', `127.0.0.1:${port}`, [`Origin: ${origin}`, 'Content-Type: text/plain', `Content-Length: ${body.length}`]), body);
  };
  assertJsonError(await post('https://elsewhere.example', 'x1'), 403, 'permission_denied');
  assertJsonError(await post(`http://localhost:${port}`, 'x2'), 403, 'permission_denied');
  assert.equal((await post(`http://127.0.0.1:${port}`, 'z9')).status, 201);
  assert.deepEqual((await getRows(`${url}/sheets/book`)).map((row) => row.Id), ['a1', 'b2', 'z9']);
});

test(`cors.writes "any" lets every site's pages write to a connection without keys, as documented (${RUNTIME})`, async (t) => {
  const { url, port } = await serveBook(t, { cors: { writes: 'any' } });
  const body = '{"Id":"z9","Name":"any"}';
  const answer = await rawRequest(url, head('POST', '/sheets/book', `127.0.0.1:${port}`, ['Origin: https://elsewhere.example', 'Content-Type: text/plain', `Content-Length: ${body.length}`]), body);
  assert.equal(answer.status, 201, answer.body);
});

test(`a body that trickles in gets 408 and holds up no one else (${RUNTIME})`, async (t) => {
  const { url, port } = await serveBook(t, { timeouts: { bodyMs: 3000 } });
  const slowHead = head('POST', '/sheets/book', `127.0.0.1:${port}`, ['Content-Type: application/json', 'Content-Length: 1000']);
  const slow = Array.from({ length: 5 }, () => trickle(url, slowHead, 100));
  t.after(() => slow.forEach((client) => client.stop()));
  let slowAnswered = 0;
  for (const client of slow) void client.answer.then(() => slowAnswered++);
  // While all five are still sending, others are served.
  for (let i = 0; i < 5; i++) {
    const response = await fetch(`${url}/sheets/book`);
    assert.equal(response.status, 200);
    await response.body?.cancel();
  }
  assert.equal(slowAnswered, 0, 'the reads were answered while the slow bodies were still arriving');
  for (const client of slow) assertJsonError(await client.answer, 408, 'request_timeout');
  assert.equal((await getRows(`${url}/sheets/book`)).length, 2, 'nothing was written');
});

test(`a body that takes longer than the header timeout but arrives within bodyMs is written (${RUNTIME})`, async (t) => {
  // Bun's idle timeout (here 1 s) would drop the request during a 2 s pause in its body.
  const { url, port } = await serveBook(t, { timeouts: { headersMs: 1000, bodyMs: 30_000 } });
  const body = '{"Id":"s1","Name":"slow but steady"}';
  const slow = trickle(url, head('POST', '/sheets/book', `127.0.0.1:${port}`, ['Content-Type: application/json', `Content-Length: ${body.length}`]), 2000, body, 2);
  t.after(() => slow.stop());
  const answer = await within(20_000, 'the slow upload is answered', slow.answer);
  assert.equal(answer.status, 201, JSON.stringify(answer));
  assert.deepEqual((await getRows(`${url}/sheets/book`)).map((row) => row.Id), ['a1', 'b2', 's1']);
});

test(`close() ends within its deadline with a slow body attached, and flushes what was acknowledged (${RUNTIME})`, async (t) => {
  const { url, port, close, path } = await serveBook(t, { timeouts: { bodyMs: 600_000, shutdownMs: 300 } });
  const posted = await fetch(`${url}/sheets/book`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"Id":"c3","Name":"kept"}' });
  assert.equal(posted.status, 201);
  await posted.body?.cancel();
  const slow = trickle(url, head('POST', '/sheets/book', `127.0.0.1:${port}`, ['Content-Type: application/json', 'Content-Length: 100000']), 100);
  t.after(() => slow.stop());
  // The slow request is in the handler once a read has been answered after it started.
  await new Promise((resolve) => setTimeout(resolve, 300));
  // Without the deadline this waits for the body for ten minutes.
  await within(10_000, 'close() with a trickling client attached', close());
  const answer = await within(10_000, 'the slow client hears the end', slow.answer);
  assert.notEqual(answer.status, 201, 'the half-sent body was not written');
  // The source was flushed after the connections were closed: the acknowledged row is in the file.
  assert.deepEqual((await readBook(path)).People.map((row) => row[0]), ['Id', 'a1', 'b2', 'c3']);
});

test(`a client that hangs up mid-body is not a server error (${RUNTIME})`, async (t) => {
  const lines: string[] = [];
  const { url, port } = await serveBook(t, {}, createLogger('info', (line) => lines.push(line)));
  const socket: Socket = connect({ host: '127.0.0.1', port: Number(port) });
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(head('POST', '/sheets/book', `127.0.0.1:${port}`, ['Content-Type: application/json', 'Content-Length: 1000']) + '{"Id":');
  await new Promise((resolve) => setTimeout(resolve, 200));
  socket.destroy();
  // The request's own log line says how it ended.
  const logged = await within(10_000, 'the request line of the aborted POST', (async () => {
    for (;;) {
      const line = lines.map((text) => JSON.parse(text) as { message: string; method?: string; status?: number }).find((entry) => entry.message === 'request' && entry.method === 'POST');
      if (line !== undefined) return line;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })());
  assert.ok(logged.status !== undefined && logged.status < 500, `logged ${JSON.stringify(logged)}`);
  assert.deepEqual(lines.filter((line) => (JSON.parse(line) as { level: string }).level === 'error'), []);
  assert.equal((await getRows(`${url}/sheets/book`)).length, 2);
});

test(`headers over 16 KiB (${RUNTIME})`, async (t) => {
  const { url, port } = await serveBook(t);
  const answer = await rawRequest(url, head('GET', `/sheets/book/Name/${'a'.repeat(20_000)}`, `127.0.0.1:${port}`));
  if (RUNTIME === 'node') {
    assertJsonError(answer, 431, 'headers_too_large');
  } else if (RUNTIME === 'bun') {
    // Bun answers before any handler runs, with an empty body (docs/decisions.md).
    assert.equal(answer.status, 431);
  } else {
    // Deno reads heads up to about 400 KB: the long value is simply not found.
    assert.equal(answer.status, 200, answer.body);
  }
});

test(`a request that is not HTTP/1.1 gets a JSON 400 (${RUNTIME})`, { skip: RUNTIME === 'node' ? false : 'Deno and Bun answer their parsers\' refusals themselves (docs/decisions.md)' }, async (t) => {
  const { url } = await serveBook(t);
  assertJsonError(await rawRequest(url, 'GET /sheets/book HTTP/1.1\r\nHost: 127.0.0.1\r\nNot a header line\r\n\r\n'), 400, 'invalid_parameter');
});

test(`headers that trickle in are cut off (${RUNTIME})`, { skip: RUNTIME === 'deno' ? 'Deno.serve has no header timeout (docs/decisions.md)' : false }, async (t) => {
  const { url } = await serveBook(t, { timeouts: { headersMs: 300, bodyMs: 300 } });
  // One header line every 100 ms, never the blank line that ends them.
  const slow = trickle(url, 'GET /sheets/book HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ', 100);
  t.after(() => slow.stop());
  const answer = await within(15_000, 'the server ends the slow head', slow.answer);
  if (RUNTIME === 'node') assertJsonError(answer, 408, 'request_timeout');
  // Bun's idle timeout closes the connection without an answer.
  else assert.equal(answer.status, null);
});

test(`invalid percent-encoding anywhere in the path is a JSON 4xx that writes nothing (${RUNTIME})`, async (t) => {
  const { url, port } = await serveBook(t);
  const paths = [
    ['GET', '/sheets/%E0%A4%A'],
    ['GET', '/sheets/bo%ZZk'],
    ['GET', '/sheets/book/tabs/%E0%A4%A'],
    ['GET', '/sheets/book/tabs/%ZZ/Name/proto1'],
    ['GET', '/sheets/book/tabs/People/%ZZ/proto1'],
    ['GET', '/sheets/book/%ZZ/proto1'],
    ['GET', '/sheets/book/Name/%E0%A4%A'],
    ['GET', '/sheets/book/Name/%'],
    ['GET', '/sheets/book/Name/%C0%AF'],
    ['GET', '/sheets/book/search%ZZ?Name=x'],
    ['GET', '/sheets/book/tabs/%ZZ/search?Name=x'],
    ['GET', '/sheets/book/query%ZZ?Name=x'],
    ['GET', '/sheets/book/tabs/%ZZ/query?Name=x'],
    ['GET', '/sheets/book/0%ZZ'],
    ['DELETE', '/sheets/book/Name/%E0%A4%A'],
    ['DELETE', '/sheets/book/%ZZ/proto1'],
    ['DELETE', '/sheets/book/tabs/%ZZ/0'],
    ['PATCH', '/sheets/book/Name/%ZZ'],
  ];
  for (const [method, path] of paths) {
    await t.test(`${method} ${path}`, async () => {
      const body = method === 'PATCH' ? '{"Name":"changed"}' : '';
      const extra = method === 'PATCH' ? ['Content-Type: application/json', `Content-Length: ${body.length}`] : [];
      const answer = await rawRequest(url, head(method, path, `127.0.0.1:${port}`, extra), body);
      assert.ok(answer.status !== null && answer.status >= 400 && answer.status < 500, `${answer.status} ${answer.body}`);
      assert.match(answer.headers['content-type'] ?? '', /^application\/json/);
      const error = (JSON.parse(answer.body) as { error: string }).error;
      assert.equal(ERRORS[error as keyof typeof ERRORS], answer.status, error);
    });
  }
  for (const path of ['/sheets/book/search?Name=%E0%A4%A', '/sheets/book/query?Name=%ZZ', '/sheets/book/query?%ZZ=1']) {
    await t.test(`GET ${path} (a query string decodes leniently; never a 500)`, async () => {
      const answer = await rawRequest(url, head('GET', path, `127.0.0.1:${port}`));
      assert.ok(answer.status === 200 || (answer.status !== null && answer.status >= 400 && answer.status < 500), `${answer.status} ${answer.body}`);
    });
  }
  await t.test('nothing was written', async () => {
    assert.deepEqual((await getRows(`${url}/sheets/book`)).map((row) => row.Name), ['proto1', 'proto2']);
  });
});

test(`deeply nested and oversized bodies are refused and write nothing (${RUNTIME})`, async (t) => {
  const { url } = await serveBook(t);
  const cases: [string, string, number, string][] = [
    ['10,000 nested arrays', '['.repeat(10_000) + ']'.repeat(10_000), 400, 'invalid_body'],
    ['10,000 nested objects in a cell', '{"Name":' + '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000) + '}', 400, 'invalid_body'],
    // The default body cap is 1 MiB; what a format can hold in one cell is the file source's to say.
    ['a 1 MiB cell value', JSON.stringify({ Id: 'big', Name: 'x'.repeat(1024 * 1024) }), 413, 'payload_too_large'],
  ];
  for (const [name, body, status, code] of cases) {
    await t.test(name, async () => {
      const response = await fetch(`${url}/sheets/book`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
      assert.equal(response.status, status);
      assert.equal(((await response.json()) as { error: string }).error, code);
    });
  }
  await t.test('nothing was written', async () => {
    assert.deepEqual((await getRows(`${url}/sheets/book`)).map((row) => row.Id), ['a1', 'b2']);
  });
});

test(`200 idle keep-alive connections do not stall other requests (${RUNTIME})`, async (t) => {
  const { url, port } = await serveBook(t);
  const idle: Socket[] = [];
  t.after(() => idle.forEach((socket) => socket.destroy()));
  // Each connection makes one request, reads its answer and then stays open, saying nothing.
  await Promise.all(
    Array.from({ length: 200 }, () =>
      new Promise<void>((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port: Number(port) });
        idle.push(socket);
        socket.once('error', reject);
        socket.once('data', () => resolve());
        socket.once('connect', () => socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`));
      }),
    ),
  );
  const read = await fetch(`${url}/sheets/book`);
  assert.equal(read.status, 200);
  await read.body?.cancel();
  const posted = await fetch(`${url}/sheets/book`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"Id":"k1"}' });
  assert.equal(posted.status, 201);
  await posted.body?.cancel();
  assert.ok(idle.filter((socket) => !socket.destroyed).length > 0, 'the idle connections were still open');
});
