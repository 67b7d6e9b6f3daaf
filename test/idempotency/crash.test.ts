// The black-box test: a client sends 100 POSTs, each with its own Idempotency-Key, and
// retries each (same key, same body) until it is answered, while the server (the CLI as a real
// process) is killed with SIGKILL mid-burst and restarted, three times. Then it sends all 100
// once more, as a client that never saw its answers would: every one is replayed, and exactly
// 100 rows exist, before and after one more kill and restart.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { burst, getRows, RUNTIME, spawnServer, tally, tempDir, within, writeXlsx, type Child } from '../helpers/http.ts';

const ROWS = 100;
const KILLS = 3;

function send(url: string, i: number): Promise<Response> {
  return fetch(`${url}/sheets/book`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Idempotency-Key': `post-${i}` },
    body: JSON.stringify({ Id: `row-${i}`, Name: `client ${i}` }),
  });
}

test(`100 keyed POSTs retried across SIGKILL and restarts leave exactly 100 rows (${RUNTIME})`, async (t) => {
  const dir = await tempDir(t);
  const book = dir.path('book.xlsx');
  await writeXlsx(book, 'People', [['Id', 'Name'], ['seed', 'Ann']]);
  const args = [book, '--state-dir', dir.path('state'), '--log-level', 'warn'];
  const restart = async (child: Child) => {
    child.signal('SIGKILL');
    await within(10_000, 'the killed server exits', child.exited);
    return spawnServer(t, args);
  };

  let server = await spawnServer(t, args);
  /** The first 201 body each POST got. */
  const answered = new Map<number, string>();
  for (let round = 0; answered.size < ROWS; round++) {
    assert.ok(round <= KILLS + 2, `still ${ROWS - answered.size} unanswered after ${round} rounds`);
    const pending = Array.from({ length: ROWS }, (_, i) => i).filter((i) => !answered.has(i));
    // Killed once a third of what is left is answered, while other POSTs are in flight.
    const killAt = round < KILLS ? answered.size + Math.ceil(pending.length / 3) : Infinity;
    let killed = false;
    const url = server.url;
    await burst(pending.length, 8, async (n) => {
      const i = pending[n];
      try {
        const response = await send(url, i);
        const text = await response.text();
        assert.equal(response.status, 201, `POST post-${i}: ${response.status} ${text}`);
        if (!answered.has(i)) answered.set(i, text);
      } catch (error) {
        if (error instanceof assert.AssertionError) throw error;
        // The connection broke: the write may have landed; the next round retries it.
      }
      if (!killed && answered.size >= killAt) {
        killed = true;
        server.signal('SIGKILL');
      }
    }, () => killed);
    if (killed) server = await restart(server);
  }

  // A client that never saw its answers sends every POST again: all replayed, nothing written.
  const again = async () => {
    for (let i = 0; i < ROWS; i++) {
      const response = await send(server.url, i);
      assert.deepEqual([response.status, response.headers.get('idempotent-replayed'), await response.text()], [201, 'true', answered.get(i)], `post-${i}`);
    }
  };
  const exactlyOnce = async () => {
    const ids = (await getRows(`${server.url}/sheets/book`)).map((row) => row.Id);
    const counts = tally(ids);
    assert.equal(ids.length, ROWS + 1, `${ids.length - 1} rows besides the seed`);
    for (let i = 0; i < ROWS; i++) assert.equal(counts.get(`row-${i}`), 1, `row-${i}`);
  };
  await again();
  await exactlyOnce();
  server = await restart(server);
  await again();
  await exactlyOnce();
});
