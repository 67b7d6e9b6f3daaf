// Webhooks end to end, the real server as a process (test/runtime/'s way): 1,000 writes while a
// receiver on loopback fails 30% of deliveries at random and the server is killed -9 twice.
// Every acknowledged write's event reaches the receiver at least once, duplicates carry the same
// id and body, first deliveries come in the connection's event order, and every signature
// verifies with node:crypto.
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { compareEventIds } from '../../server/feed/event-log.ts';
import { RUNTIME, burst, postJson, spawnServer, tempDir, within } from '../helpers/http.ts';
import { webhookBook } from '../helpers/webhook-book.ts';

const SECRET = 'whsec_delivery_test';

interface Received {
  readonly id: string;
  readonly body: string;
}

/** A receiver answering 500 to 30% of deliveries; it keeps every delivery it answered 200. */
async function receiver(t: { after(fn: () => unknown): void }) {
  const accepted: Received[] = [];
  const badSignatures: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const header = String(request.headers['sheetrest-signature'] ?? '');
      const { t: stamp, v1 } = Object.fromEntries(header.split(',').map((part) => part.split('='))) as { t?: string; v1?: string };
      const expected = Buffer.from(createHmac('sha256', SECRET).update(`${stamp}.${body}`).digest('hex'));
      const given = Buffer.from(v1 ?? '');
      const id = String(request.headers['sheetrest-event-id']);
      if (given.length !== expected.length || !timingSafeEqual(given, expected) || JSON.parse(body).id !== id || request.headers['content-type'] !== 'application/json') badSignatures.push(id);
      if (Math.random() < 0.3) {
        response.writeHead(500).end();
        return;
      }
      accepted.push({ id, body });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  const address = server.address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}/hook`, accepted, badSignatures };
}

test(`1,000 writes, a receiver failing 30%, kill -9 twice: every acknowledged event delivered in order (${RUNTIME})`, { timeout: 240_000 }, async (t) => {
  const dir = await tempDir(t);
  const hook = await receiver(t);
  const args = await webhookBook(dir, hook.url, { env: 'HOOK_SECRET' }, 200);
  const env = { HOOK_SECRET: SECRET };
  const acknowledged: string[] = [];
  const rounds = [{ from: 0, to: 350, killAfter: 300 }, { from: 350, to: 700, killAfter: 620 }, { from: 700, to: 1000, killAfter: Infinity }];
  let child = await spawnServer(t, args, 15_000, env);
  for (const round of rounds) {
    let killed = false;
    await burst(round.to - round.from, 10, async (i) => {
      const id = `w${round.from + i}`;
      try {
        const response = await postJson(`${child.url}/sheets/book`, { Id: id, Name: `row ${i}` });
        await response.text();
        if (response.status === 201) acknowledged.push(id);
      } catch {
        // Killed mid-request: not acknowledged, so nothing is promised about it.
      }
      if (!killed && acknowledged.length >= round.killAfter) {
        killed = true;
        child.signal('SIGKILL');
      }
    });
    if (round.killAfter === Infinity) break;
    assert.ok(killed, 'the server was killed mid-burst');
    assert.equal((await within(5000, 'SIGKILL', child.exited)).signal, 'SIGKILL');
    child = await spawnServer(t, args, 15_000, env);
  }
  assert.ok(acknowledged.length >= 900, `${acknowledged.length} writes acknowledged`);

  // Every acknowledged row reaches the receiver in a rows.created event.
  const delivered = () => new Set(hook.accepted.flatMap(({ body }) => (JSON.parse(body).rows as { Id: string }[]).map((row) => row.Id)));
  const deadline = Date.now() + 120_000;
  while (acknowledged.some((id) => !delivered().has(id)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
  const missing = acknowledged.filter((id) => !delivered().has(id));
  assert.deepEqual(missing, [], `${missing.length} acknowledged writes never reached the receiver`);
  assert.deepEqual(hook.badSignatures, [], 'every delivery carried a valid signature');

  // Duplicates only with the same id, carrying the same event; first deliveries in id order.
  const bodies = new Map<string, string>();
  const firsts: string[] = [];
  for (const { id, body } of hook.accepted) {
    const earlier = bodies.get(id);
    if (earlier === undefined) {
      bodies.set(id, body);
      firsts.push(id);
    } else assert.equal(body, earlier, `a repeated delivery of ${id} is the same event`);
  }
  for (let i = 1; i < firsts.length; i++) assert.ok(compareEventIds(firsts[i - 1], firsts[i]) < 0, `first deliveries in order: ${firsts[i - 1]} before ${firsts[i]}`);
  const rowIds = [...bodies.values()].flatMap((body) => (JSON.parse(body).rows as { Id: string }[]).map((row) => row.Id));
  assert.equal(new Set(rowIds).size, rowIds.length, 'no row is in two different events');
  child.signal('SIGTERM');
  await within(8000, 'exit', child.exited);
});
