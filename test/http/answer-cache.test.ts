// The kept read answers (server/http/answer-cache.ts): an answer is served again only while the tab
// it was built from is still served; a write to another tab keeps it, a reordering of tabs drops
// an answer for "the first tab"; memory stays under the bound, least recently used out first.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Tab, Workbook } from '../../lib/workbook.ts';
import { AnswerCache } from '../../server/http/answer-cache.ts';
import type { Answer } from '../../server/http/respond.ts';

const tab = (name: string): Tab => ({ name, rows: [{ text: ['Name'], value: ['Name'] }] });
const answer = (bytes: number): Answer => ({ status: 200, headers: {}, body: new Uint8Array(bytes) });

test('an answer holds while its tab object is served', async (t) => {
  const people = tab('People');
  const other = tab('Other');
  const workbook: Workbook = { tabs: [people, other] };
  const cache = new AnswerCache(1 << 20);
  const kept = answer(10);
  cache.set('named', workbook, people, kept);
  cache.set('first', workbook, people, kept, true);
  cache.set('tabs', workbook, null, kept);

  await t.test('the same workbook', () => {
    for (const key of ['named', 'first', 'tabs']) assert.equal(cache.get(key, workbook), kept, key);
  });
  await t.test('another tab written: the tab answers hold, /tabs does not', () => {
    const next: Workbook = { tabs: [people, tab('Other')] };
    assert.equal(cache.get('named', next), kept);
    assert.equal(cache.get('first', next), kept);
    assert.equal(cache.get('tabs', next), undefined);
  });
  await t.test('the tabs reordered: the named tab holds, "the first tab" does not', () => {
    const reordered: Workbook = { tabs: [other, people] };
    assert.equal(cache.get('named', reordered), kept);
    assert.equal(cache.get('first', reordered), undefined);
  });
  await t.test('the tab written: dropped, and its bytes given back', () => {
    const before = cache.bytes;
    assert.equal(cache.get('named', { tabs: [tab('People'), other] }), undefined);
    assert.ok(cache.bytes < before);
    assert.equal(cache.get('named', workbook), undefined, 'a dropped entry stays dropped');
  });
  await t.test('an unknown key', () => assert.equal(cache.get('nothing', workbook), undefined));
});

test('memory stays under the bound; the least recently used answer goes first', () => {
  const people = tab('People');
  const workbook: Workbook = { tabs: [people] };
  const cache = new AnswerCache(8_000);
  for (const key of ['a', 'b', 'c', 'd']) cache.set(key, workbook, people, answer(700));
  assert.equal(cache.size, 4);
  assert.ok(cache.get('a', workbook) !== undefined, 'a is now the most recently used');
  for (const key of ['e', 'f', 'g', 'h', 'i', 'j']) cache.set(key, workbook, people, answer(700));
  assert.ok(cache.bytes <= 8_000, `${cache.bytes} bytes held`);
  assert.equal(cache.get('b', workbook), undefined, 'b was the least recently used');
  assert.ok(cache.get('a', workbook) !== undefined, 'a was used after b, so b went first');
  assert.ok(cache.get('j', workbook) !== undefined);

  // More than an eighth of the bound is not kept at all.
  cache.set('big', workbook, people, answer(1_200));
  assert.equal(cache.get('big', workbook), undefined);
  // Replacing an entry does not count it twice.
  const held = cache.bytes;
  cache.set('j', workbook, people, answer(700));
  assert.equal(cache.bytes, held);
});
