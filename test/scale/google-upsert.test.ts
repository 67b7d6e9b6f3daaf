// 50 clients upserting overlapping keys (`POST /sheets/crm?_upsert=Key`) through three sheetrest
// processes sharing one Redis, in front of the Sheets emulator: at the end every key is in the
// spreadsheet exactly once (no instance appended a key another had just appended), and each key
// holds the value of a write no other acknowledged write to it certainly followed: a write sent
// after another was acknowledged wins over it (the last acknowledged value wins).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { startEmulator } from '../../tools/google-emulator/mod.ts';
import { defer, RUNTIME, spawnServer, tempDir } from '../helpers/http.ts';
import { startRedis } from '../helpers/redis.ts';

const WRITER = 'writer-token';
const NO_QUOTA = { readPerMinutePerUser: 1e6, writePerMinutePerUser: 1e6, readPerMinutePerProject: 1e6, writePerMinutePerProject: 1e6 };
const NO_BUDGET = { readsPerMinutePerUser: 1e6, writesPerMinutePerUser: 1e6, readsPerMinutePerProject: 1e6, writesPerMinutePerProject: 1e6 };
const CLIENTS = 50;
const WRITES_PER_CLIENT = 4;
/** k00-k04 are there at the start; k05-k39 are appended by whichever upsert comes first. */
const KEYS = Array.from({ length: 40 }, (_, i) => `k${String(i).padStart(2, '0')}`);

interface Acknowledged {
  readonly key: string;
  readonly value: string;
  readonly sentAt: number;
  readonly ackedAt: number;
}

test(`50 clients upserting overlapping keys through 3 instances: every key once, the last acknowledged value wins (${RUNTIME})`, async (t) => {
  const redis = await startRedis(t);
  if (typeof redis === 'string') return t.skip(redis);
  const emulator = await startEmulator({ quota: NO_QUOTA });
  defer(t, () => emulator.close());
  const spreadsheetId = emulator.createSpreadsheet({
    sheets: [{ title: 'People', rows: [['Key', 'Value', 'Note'], ...KEYS.slice(0, 5).map((key) => [key, 'seed', ''])] }],
    access: { [WRITER]: 'writer' },
  });
  const dir = await tempDir(t);
  const instances = await Promise.all([0, 1, 2].map(async (n) => {
    const config = {
      stateDir: dir.path(`state-${n}`),
      log: { level: 'warn' },
      store: { type: 'redis', url: redis.url, leaseMs: 1000, leaseWaitMs: 30_000 },
      connections: [{ id: 'crm', source: { type: 'google', spreadsheetId, rootUrl: emulator.rootUrl, accessToken: WRITER, retries: 0, timeoutMs: 5000, freshnessMs: 60_000, quota: NO_BUDGET } }],
    };
    await writeFile(dir.path(`sheetrest-${n}.json`), JSON.stringify(config));
    return spawnServer(t, ['--config', dir.path(`sheetrest-${n}.json`)], 30_000);
  }));

  const acknowledged: Acknowledged[] = [];
  const failures: string[] = [];
  await Promise.all(Array.from({ length: CLIENTS }, async (_, client) => {
    for (let write = 0; write < WRITES_PER_CLIENT; write++) {
      // One or two keys per body, overlapping between clients: every key is contended, and many
      // bodies only append (no key there yet), which an instance must not plan on a stale tab.
      const first = KEYS[(client * 3 + write * 11) % KEYS.length];
      const keys = client % 2 === 0 ? [first] : [first, KEYS[(client * 7 + write * 5 + 1) % KEYS.length]].filter((key, i, all) => all.indexOf(key) === i);
      const value = `c${client}w${write}`;
      const sentAt = performance.now();
      const answer = await fetch(`${instances[(client + write) % 3].url}/sheets/crm?_upsert=Key`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(keys.map((key) => ({ Key: key, Value: value }))),
      });
      const body = await answer.text();
      if (answer.status !== 200 && answer.status !== 201) failures.push(`${answer.status} ${body}`);
      else for (const key of keys) acknowledged.push({ key, value, sentAt, ackedAt: performance.now() });
    }
  }));
  assert.deepEqual(failures, [], 'every upsert is acknowledged');

  const rows = emulator.sheet(spreadsheetId, 'People').rows.slice(1).map((cells) => ({ key: String(cells[0]?.formattedValue ?? ''), value: String(cells[1]?.formattedValue ?? '') }));
  const written = new Set(acknowledged.map(({ key }) => key));
  assert.deepEqual(rows.map(({ key }) => key).sort(), [...new Set([...KEYS.slice(0, 5), ...written])].sort(), 'every key exactly once');
  for (const { key, value } of rows) {
    if (!written.has(key)) continue;
    const final = acknowledged.find((write) => write.key === key && write.value === value);
    assert.ok(final !== undefined, `${key} holds ${value}, which no acknowledged write sent`);
    const later = acknowledged.filter((write) => write.key === key && write.sentAt > final.ackedAt);
    assert.deepEqual(later.map((write) => write.value), [], `${key} holds ${value}, but these writes were sent after it was acknowledged`);
  }
  // Every instance answers the same rows.
  const seen = await Promise.all(instances.map(async (instance) => (await fetch(`${instance.url}/sheets/crm`, { headers: { 'Cache-Control': 'no-cache' } })).json()));
  for (const answer of seen) assert.equal((answer as unknown[]).length, rows.length);
});
