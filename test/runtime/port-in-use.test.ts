// A port in use stops the start with a message that says so and names the ways to choose
// another (--port, $PORT, "port" in the config file), on whichever runtime runs the test: Node,
// Deno and Bun each word the listen error their own way (server/main.ts, isPortInUse).
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { test } from 'node:test';
import { RUNTIME, runCli, tempDir, writeXlsx } from '../helpers/http.ts';

test(`a port in use: the error says so and names --port (${RUNTIME})`, async (t) => {
  const dir = await tempDir(t);
  await writeXlsx(dir.path('book.xlsx'), 'People', [['Name'], ['Ann']]);
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => taken.close(() => resolve())));
  const port = (taken.address() as AddressInfo).port;
  const run = await runCli([dir.path('book.xlsx'), '--host', '127.0.0.1', '--port', String(port)], 30_000);
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, new RegExp(`the port ${port} is already in use \\(127\\.0\\.0\\.1:${port}\\)`));
  assert.match(run.stderr, /choose another port with --port N \(or \$PORT, or "port" in the config file\)/);
});
