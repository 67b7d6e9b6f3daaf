// The webhook pieces on their own, on every runtime: the signature checked by node:crypto (an
// independent HMAC), private targets told apart from public ones, a refused target stopping
// the start, and the outbox keeping events and cursors across a reopen (a torn last line dropped).
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { appendFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { ConfigError } from '../../server/config/config.ts';
import { Secret } from '../../server/config/secret.ts';
import { silentLogger } from '../../server/log.ts';
import { Outbox } from '../../server/webhooks/outbox.ts';
import { signatureHeader } from '../../server/webhooks/sign.ts';
import { privateKind, whyRefused } from '../../server/webhooks/target.ts';
import { DEFAULT_WEBHOOK_SETTINGS, OPEN_AFTER, WINDOW, Webhooks } from '../../server/webhooks/webhooks.ts';
import { tempDir } from '../helpers/http.ts';

/** How a Stripe-style receiver checks `Sheetrest-Signature`, with node:crypto. */
function verifies(header: string, body: string, secret: string): boolean {
  const parts = Object.fromEntries(header.split(',').map((part) => part.split('=') as [string, string]));
  const expected = Buffer.from(createHmac('sha256', secret).update(`${parts.t}.${body}`).digest('hex'));
  const given = Buffer.from(parts.v1 ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

test('the signature is t=<seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">, as node:crypto computes it', async () => {
  const body = '{"id":"1718000000000-0","type":"rows.created","rows":[{"Name":"Zoë"}]}';
  const header = signatureHeader('whsec_test', body, 1718000000);
  assert.match(header, /^t=1718000000,v1=[0-9a-f]{64}$/);
  assert.ok(verifies(header, body, 'whsec_test'));
  assert.ok(!verifies(header, body, 'whsec_other'), 'another secret does not verify');
  assert.ok(!verifies(header, body.replace('Zoë', 'Zoe'), 'whsec_test'), 'another body does not verify');
});

test('loopback, private, link-local and unique-local addresses are told apart from public ones', () => {
  for (const [address, kind] of [
    ['127.0.0.1', 'loopback'], ['10.1.2.3', 'private'], ['172.16.0.1', 'private'], ['192.168.1.1', 'private'], ['169.254.169.254', 'link-local'],
    ['::1', 'loopback'], ['fe80::1', 'link-local'], ['fd00::7', 'unique-local'], ['::ffff:10.0.0.1', 'private'], ['::ffff:7f00:1', 'loopback'], ['0.0.0.0', 'unspecified'],
  ] as const) assert.equal(privateKind(address), kind, address);
  for (const address of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111']) assert.equal(privateKind(address), null, address);
});

test('a name resolving to a private address is refused, naming the address; allowPrivateTargets lets it through', async () => {
  const resolve = (host: string) => Promise.resolve(host === 'rebind.example' ? ['93.184.216.34', '10.0.0.7'] : ['93.184.216.34']);
  assert.equal(await whyRefused('https://hooks.example/x', false, resolve), null);
  assert.match((await whyRefused('https://rebind.example/x', false, resolve))!, /rebind\.example is at 10\.0\.0\.7, a private address/);
  assert.match((await whyRefused('http://127.0.0.1:9/x', false, resolve))!, /127\.0\.0\.1 is a loopback address/);
  assert.match((await whyRefused('http://[::1]:9/x', false, resolve))!, /loopback/);
  assert.equal(await whyRefused('http://127.0.0.1:9/x', true, resolve), null);
});

test('a webhook to a private target stops the start with a config error naming it and why', async (t) => {
  const dir = await tempDir(t);
  const connection = { id: 'crm', webhooks: [{ name: 'a', url: 'http://127.0.0.1:9/hook', secret: new Secret('s') }] } as never;
  await assert.rejects(Webhooks.open(dir.path('state'), [connection], DEFAULT_WEBHOOK_SETTINGS, silentLogger), (error: unknown) => {
    assert.ok(error instanceof ConfigError);
    assert.match(error.message, /connections\[0\]\.webhooks\[0\]\.url: refused: its host 127\.0\.0\.1 is a loopback address/);
    return true;
  });
});

test('the outbox keeps recorded events and cursors across a reopen, and drops a torn last line', async (t) => {
  const dir = await tempDir(t);
  const state = dir.path('state');
  const draft = (tab: string) => ({ type: 'rows.created' as const, connection: 'crm', tab, at: new Date().toISOString(), rows: [], indexes: [] });
  const first = await Outbox.open(state, 'crm', ['a'], (error) => assert.fail(String(error)));
  await Promise.all([first.record([draft('One'), draft('Two')]), first.record([draft('Three')])]);
  const one = first.next(null)!;
  assert.deepEqual([one.tab, first.next(one.id)!.tab], ['One', 'Two']);
  await first.advance('a', one.id);
  await first.close();
  await appendFile(`${state}/webhooks/crm.outbox`, '{"id":"9999999999999-0","ty');
  // What a crash mid-rewrite leaves: temp files of a dead process beside the outbox and a cursor.
  const leftovers = [`${state}/webhooks/.crm.outbox.sheetrest-999999999-0a1b2c3d4e5f.tmp`, `${state}/webhooks/.crm.cursors.sheetrest-999999999-0a1b2c3d4e5f.tmp`];
  for (const leftover of leftovers) await writeFile(leftover, 'half');

  const second = await Outbox.open(state, 'crm', ['a'], (error) => assert.fail(String(error)));
  assert.deepEqual(await readdir(`${state}/webhooks`).then((names) => names.filter((name) => name.endsWith('.tmp'))), [], 'leftover temp files are removed');
  assert.equal(second.cursor('a'), one.id);
  const next = second.next(second.cursor('a'))!;
  assert.equal(next.tab, 'Two');
  assert.equal(second.next(next.id)!.tab, 'Three');
  await second.record([draft('Four')]);
  const ids = (await readFile(`${state}/webhooks/crm.outbox`, 'utf8')).trim().split('\n').map((line) => JSON.parse(line).id as string);
  assert.equal(ids.length, 4, 'the torn line is gone and the new event is a line of its own');
  assert.deepEqual([...ids].sort(), ids, 'ids keep increasing across the reopen');
  await second.close();
});

test('cursors are saved once per while, the newest id, and close saves what is still waiting', async (t) => {
  const dir = await tempDir(t);
  const state = dir.path('state');
  const draft = (tab: string) => ({ type: 'rows.created' as const, connection: 'crm', tab, at: new Date().toISOString(), rows: [], indexes: [] });
  const outbox = await Outbox.open(state, 'crm', ['a'], (error) => assert.fail(String(error)));
  await outbox.record([draft('One'), draft('Two'), draft('Three')]);
  const one = outbox.next(null)!;
  const two = outbox.next(one.id)!;
  const three = outbox.next(two.id)!;
  // Three deliveries in a row: one save, of the newest, not waited for here.
  void outbox.advance('a', one.id);
  void outbox.advance('a', two.id);
  void outbox.advance('a', three.id);
  await outbox.close();
  assert.deepEqual(JSON.parse(await readFile(`${state}/webhooks/crm.cursors`, 'utf8')), { a: three.id }, 'one record for the connection');
  const reopened = await Outbox.open(state, 'crm', ['a'], (error) => assert.fail(String(error)));
  assert.equal(reopened.cursor('a'), three.id);
  assert.equal(reopened.next(reopened.cursor('a')), undefined, 'nothing left to deliver');
  await reopened.close();
});

test('an older version\'s cursor file per webhook is read once, then replaced by the connection\'s record', async (t) => {
  const dir = await tempDir(t);
  const state = dir.path('state');
  const draft = (tab: string) => ({ type: 'rows.created' as const, connection: 'crm', tab, at: new Date().toISOString(), rows: [], indexes: [] });
  const first = await Outbox.open(state, 'crm', [], (error) => assert.fail(String(error)));
  await first.record([draft('One'), draft('Two')]);
  const one = first.next(null)!;
  await first.close();
  await writeFile(`${state}/webhooks/crm.a.cursor`, one.id);
  const outbox = await Outbox.open(state, 'crm', ['a', 'b'], (error) => assert.fail(String(error)));
  assert.equal(outbox.cursor('a'), one.id, 'the old file says where a was');
  assert.equal(outbox.cursor('b'), null);
  const two = outbox.next(one.id)!;
  await outbox.advance('b', two.id);
  await outbox.close();
  assert.deepEqual(JSON.parse(await readFile(`${state}/webhooks/crm.cursors`, 'utf8')), { a: one.id, b: two.id });
  assert.deepEqual((await readdir(`${state}/webhooks`)).filter((name) => name.endsWith('.cursor')), [], 'the old file is gone once the record holds it');
});

/** A receiver answering 204 after `delayMs`, and 500 to the first attempt of the event of row `failOnce`; it notes the rows in arrival order and the most requests it held at once. */
async function windowReceiver(t: { after(fn: () => unknown): void }, failOnce: number, delayMs: number) {
  const arrivals: number[] = [];
  const accepted = new Set<number>();
  let [open, most] = [0, 0];
  const server = createServer((request, response) => {
    most = Math.max(most, ++open);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const row = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { indexes: number[] }).indexes[0];
      arrivals.push(row);
      setTimeout(() => {
        open--;
        if (row === failOnce && arrivals.filter((each) => each === row).length === 1) return void response.writeHead(500).end();
        accepted.add(row);
        response.writeHead(204).end();
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, arrivals, accepted, most: () => most };
}

test(`deliveries: one at a time until ${OPEN_AFTER} 2xx in a row, then up to ${WINDOW} at once, first attempts in order; a failure lets none but those already sent pass it`, { timeout: 60_000 }, async (t) => {
  const dir = await tempDir(t);
  const burst = 300;
  const failing = OPEN_AFTER + 150;
  const receiver = await windowReceiver(t, failing, 3);
  const connection = { id: 'crm', webhooks: [{ name: 'a', url: receiver.url, secret: new Secret('s') }] } as never;
  const settings = { ...DEFAULT_WEBHOOK_SETTINGS, allowPrivateTargets: true, retryBaseMs: 20, retryCapMs: 40 };
  const webhooks = await Webhooks.open(dir.path('state'), [connection], settings, silentLogger);
  const draft = (n: number) => ({ type: 'rows.created' as const, connection: 'crm', tab: 'T', at: new Date().toISOString(), rows: [], indexes: [n] });
  const delivered = async (count: number) => {
    const deadline = Date.now() + 30_000;
    while (receiver.accepted.size < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(receiver.accepted.size, count, 'every event delivered');
  };
  // A backlog from the start: still one at a time until OPEN_AFTER answers in a row.
  await webhooks.record('crm', Array.from({ length: OPEN_AFTER }, (_, n) => draft(n)));
  await delivered(OPEN_AFTER);
  assert.equal(receiver.most(), 1, `one delivery at a time before ${OPEN_AFTER} 2xx in a row`);
  await webhooks.record('crm', Array.from({ length: burst }, (_, n) => draft(OPEN_AFTER + n)));
  await delivered(OPEN_AFTER + burst);
  assert.ok(receiver.most() > 1 && receiver.most() <= WINDOW, `up to ${WINDOW} at once after the window opened (${receiver.most()})`);
  const retried = receiver.arrivals.lastIndexOf(failing);
  assert.ok(retried > receiver.arrivals.indexOf(failing), 'the failed event was tried again');
  const passed = receiver.arrivals.slice(0, retried).filter((row) => row > failing);
  assert.ok(passed.every((row) => row < failing + WINDOW), `only events already in flight passed the failing one (${passed.join(', ')})`);
  // First attempts in order: each row's first arrival comes after the first arrival of every row WINDOW before it.
  const firsts = receiver.arrivals.filter((row, at) => receiver.arrivals.indexOf(row) === at);
  for (const [at, row] of firsts.entries()) assert.ok(firsts.slice(at + 1).every((later) => later > row - WINDOW), `row ${row} was not sent after rows ${WINDOW} later`);
  // Closed here, not in t.after: Bun's test runner would leave the outbox's file handle to the GC.
  await webhooks.close();
});
