// What the app hands the usage history per request (server/http/app.ts stage 9b): the status,
// the duration, and the time it was answered (ms since the epoch, from the request's own clock
// read); a 500 from a throw or a rejection outside the engine (a shared quota's store away) is
// recorded too, not only the answers that came back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createApp } from '../../server/http/app.ts';
import { createLogger } from '../../server/log.ts';
import type { Quota } from '../../server/quota/quota.ts';
import { memorySource } from '../../server/sources/memory.ts';
import type { UsageRecorder } from '../../server/usage/history.ts';

const source = memorySource({ tabs: [{ name: 'People', rows: [{ text: ['Name'], value: ['Name'] }, { text: ['Ann'], value: ['Ann'] }] }] });

function appRecording(quota: Quota['take'] = () => ({ allowed: true, headers: {} })) {
  const recorded: { status: number; ms: number; at: number | undefined; url: string }[] = [];
  const usage: UsageRecorder = { record: (_id, _method, url, status, ms, _access, at) => void recorded.push({ status, ms, at, url }) };
  const app = createApp({
    connections: [{ id: 'crm', source, keys: [], readOnly: false, engine: {} }],
    quota: { take: quota, peek: () => ({}) } as unknown as Quota,
    bodyBytes: 1024,
    cors: '*',
    log: createLogger('silent'),
    usage,
  });
  return { recorded, call: (path: string) => app.fetch(new Request(`http://x${path}`)) };
}

test('each answer is recorded once, with its duration and the time it was answered', async () => {
  const { recorded, call } = appRecording();
  const before = Date.now();
  // The first request of a target goes through the router, the second is served from the noted route.
  for (let n = 0; n < 2; n++) assert.equal((await call('/sheets/crm')).status, 200);
  assert.equal((await call('/sheets/crm/Nope/x')).status, 400);
  assert.deepEqual(recorded.map((each) => each.status), [200, 200, 400]);
  for (const each of recorded) {
    assert.ok(each.ms >= 0 && each.ms < 10_000, `ms ${each.ms}`);
    assert.ok(each.at !== undefined && each.at >= before - 50 && each.at <= Date.now() + 50, `at ${each.at} within the test's time`);
  }
});

test('a 500 from a throw or a rejection before the engine is recorded', async () => {
  const throwing = appRecording(() => {
    throw new Error('quota store away');
  });
  assert.equal((await throwing.call('/sheets/crm')).status, 500);
  assert.deepEqual(throwing.recorded.map((each) => each.status), [500]);
  const rejecting = appRecording(() => Promise.reject(new Error('quota store away')) as never);
  assert.equal((await rejecting.call('/sheets/crm')).status, 500);
  assert.deepEqual(rejecting.recorded.map((each) => each.status), [500]);
});
