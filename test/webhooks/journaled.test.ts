// A file source's writes carry their webhook events in their own journal line, so the write's
// one fsync makes them durable and the outbox appends them without an fsync of its own. Here the
// real server is killed -9 right after acknowledging writes, and the outbox is cut back to what a
// power cut could leave of it (the events appended without an fsync gone): after the restart the
// events come back from the journal and are delivered. A journal line torn by the crash (a write
// never acknowledged) has its events dropped with it: never delivered.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { appendFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { RUNTIME, postJson, spawnServer, tempDir, within } from '../helpers/http.ts';
import { webhookBook } from '../helpers/webhook-book.ts';

/** A receiver that answers 503 until `open()`, then 204, keeping the rows' Ids of what it accepted. */
async function receiver(t: { after(fn: () => unknown): void }) {
  const accepted: string[] = [];
  let open = false;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (!open) return void response.writeHead(503).end();
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { rows: { Id: string }[] };
      accepted.push(...event.rows.map((row) => row.Id));
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, accepted, open: () => (open = true) };
}

test(`events of writes acknowledged just before kill -9 are delivered from the journal; a torn line's never (${RUNTIME})`, { timeout: 120_000 }, async (t) => {
  const dir = await tempDir(t);
  const hook = await receiver(t);
  const args = await webhookBook(dir, hook.url, 'whsec_journaled', 50);
  let child = await spawnServer(t, args);
  // The first write after a start is slow (the code warms up): the journal is folded after it.
  await (await postJson(`${child.url}/sheets/book`, { Id: 'warm', Name: 'warm' })).text();
  const acknowledged: string[] = ['warm'];
  for (let i = 0; i < 5; i++) {
    const response = await postJson(`${child.url}/sheets/book`, { Id: `w${i}`, Name: `row ${i}` });
    await response.text();
    assert.equal(response.status, 201);
    acknowledged.push(`w${i}`);
  }
  // Right after the last answer: before the idle fold (200 ms) hands the journal's events over.
  child.signal('SIGKILL');
  assert.equal((await within(5000, 'SIGKILL', child.exited)).signal, 'SIGKILL');

  const state = dir.path('state');
  const journalName = (await readdir(state)).find((name) => name.endsWith('.journal'));
  assert.ok(journalName !== undefined, 'the journal is in the state folder');
  const journal = await readFile(`${state}/${journalName}`, 'utf8');
  const lines = journal.split('\n').filter((line) => /"events".*"Id":"w\d"/.test(line));
  assert.equal(lines.length, 5, 'each acknowledged write carries its events in its journal line');
  // What a power cut may leave of the outbox: the appends never fsynced (here: every one) gone.
  const outbox = `${state}/webhooks/book.outbox`;
  const before = await readFile(outbox, 'utf8').catch(() => '');
  await writeFile(outbox, before.split('\n').filter((line) => !/"Id":"w[34]"/.test(line)).join('\n').replace(/\n?$/, before.trim() === '' ? '' : '\n'));
  // A write the crash cut short in the journal: its line torn, so never acknowledged.
  const ghost = lines.at(-1)!.replaceAll('w4', 'ghost').replace(/"id":"(\d+)-(\d+)"/, (_, ms: string) => `"id":"${Number(ms) + 1000}-0"`);
  await appendFile(`${state}/${journalName}`, ghost.slice(0, -3));

  child = await spawnServer(t, args);
  hook.open();
  const deadline = Date.now() + 60_000;
  while (acknowledged.some((id) => !hook.accepted.includes(id)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(acknowledged.filter((id) => !hook.accepted.includes(id)), [], 'every acknowledged write reached the receiver');
  assert.equal(new Set(hook.accepted).size, hook.accepted.length, 'the events a restart finds in both the journal and the outbox are not doubled');
  // A write after the restart is delivered after them, and only then is it certain nothing else is coming.
  const response = await postJson(`${child.url}/sheets/book`, { Id: 'after', Name: 'after' });
  await response.text();
  while (!hook.accepted.includes('after') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(hook.accepted.includes('after'), 'the write after the restart is delivered');
  assert.ok(!hook.accepted.includes('ghost'), 'the torn write is not delivered');
  const read = await (await fetch(`${child.url}/sheets/book`)).json() as { Id: string }[];
  assert.deepEqual(read.map((row) => row.Id), [...acknowledged, 'after'], 'nor is it in the rows');
  child.signal('SIGTERM');
  await within(8000, 'exit', child.exited);
});
