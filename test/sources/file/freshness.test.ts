// Freshness on its own (server/sources/file/freshness.ts): when a read must look at the file, and
// what a look does with what it finds: the same bytes saved again, another program's version,
// a missing file, a version that cannot be read.
import assert from 'node:assert/strict';
import { rm, utimes, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { ApiError } from '../../../lib/errors.ts';
import { identityNeedsHash } from '../../../server/durable/disk.ts';
import { Freshness, LOOK_EVERY_MS, type OutsideVersion } from '../../../server/sources/file/freshness.ts';
import { fileParts, names, type FileParts } from '../../helpers/file-state.ts';
import { bookBytes, bookOf } from '../../helpers/file-source.ts';

/** A Freshness on `parts`, and the versions it handed over to be adopted. */
function freshnessOf(parts: FileParts): { freshness: Freshness; adopted: OutsideVersion[] } {
  const adopted: OutsideVersion[] = [];
  const freshness = new Freshness(parts.config, parts.state, async (version) => void adopted.push(version));
  return { freshness, adopted };
}

test('a read looks at the file at first, when asked to, and once the last look is LOOK_EVERY_MS old', async () => {
  const parts = await fileParts('Name\r\nAnn\r\n');
  const { freshness } = freshnessOf(parts);
  try {
    assert.equal(freshness.mustLook({}), true, 'nothing was looked at yet');
    await freshness.refresh();
    assert.equal(freshness.mustLook({}), false, 'just looked');
    assert.equal(freshness.mustLook({ fresh: true }), true, 'Cache-Control: no-cache');
    await sleep(LOOK_EVERY_MS + 50);
    assert.equal(freshness.mustLook({}), true, 'the last look is too old');
  } finally {
    freshness.stop();
    await parts.cleanup();
  }
});

test('a write arriving before a look needs no look of its own; one arriving after does', async () => {
  const parts = await fileParts('Name\r\nAnn\r\n');
  const { freshness } = freshnessOf(parts);
  try {
    // Only a look that a stat answers counts for arrivals; where ctime is in whole seconds (Deno)
    // a file changed within the last one is read and hashed instead (disk.ts, identityNeedsHash).
    while (identityNeedsHash(parts.state.identity ?? '')) await sleep(100);
    const before = freshness.arrive();
    await freshness.refresh();
    const after = freshness.arrive();
    assert.equal(freshness.lookedSince(before), true);
    assert.equal(freshness.lookedSince(after), false);
  } finally {
    freshness.stop();
    await parts.cleanup();
  }
});

test('what a look at the file finds', async (t) => {
  await t.test('the same bytes saved again: nothing to adopt, the new identity is remembered', async () => {
    const parts = await fileParts('Name\r\nAnn\r\n');
    const { freshness, adopted } = freshnessOf(parts);
    try {
      const identity = parts.state.identity;
      await utimes(parts.path, new Date(2001, 0, 1), new Date(2001, 0, 1));
      await parts.state.io.run(() => freshness.adoptIfChanged());
      assert.deepEqual(adopted, []);
      assert.notEqual(parts.state.identity, identity);
    } finally {
      freshness.stop();
      await parts.cleanup();
    }
  });

  await t.test('another version: its rows and fingerprint are handed over to be adopted', async () => {
    const parts = await fileParts('Name\r\nAnn\r\n');
    const { freshness, adopted } = freshnessOf(parts);
    try {
      await writeFile(parts.path, 'Name\r\nAnn\r\nBob\r\n');
      assert.equal(await parts.state.io.run(() => freshness.adoptIfChanged()), true);
      assert.equal(adopted.length, 1);
      assert.deepEqual(names(adopted[0].workbook), ['Ann', 'Bob']);
      assert.notEqual(adopted[0].fingerprint, parts.config.fingerprint);
    } finally {
      freshness.stop();
      await parts.cleanup();
    }
  });

  await t.test('a missing file: 503 until it is back, logged once each way', async () => {
    const parts = await fileParts('Name\r\nAnn\r\n');
    const { freshness } = freshnessOf(parts);
    try {
      await rm(parts.path);
      await assert.rejects(freshness.refresh(), (error) => error instanceof ApiError && error.code === 'upstream_unavailable' && error.headers['Retry-After'] === '5');
      await assert.rejects(freshness.refresh());
      assert.equal(freshness.missing, true);
      assert.equal(freshness.mustLook({}), true, 'a missing file is looked at on every read');
      await writeFile(parts.path, 'Name\r\nAnn\r\n');
      await freshness.refresh();
      assert.equal(freshness.missing, false);
      assert.deepEqual(parts.messages, [`sheetrest: ${parts.path} is missing; requests get 503 until it is back`, `sheetrest: ${parts.path} is back`]);
    } finally {
      freshness.stop();
      await parts.cleanup();
    }
  });

  await t.test('a version that cannot be read: the last good one stays, writes wait, logged once', async () => {
    const parts = await fileParts(bookBytes(bookOf([{ name: 'People', cells: [[{ t: 's', v: 'Name' }], [{ t: 's', v: 'Ann' }]] }]), 'xlsx'), {}, 'book.xlsx');
    const { freshness, adopted } = freshnessOf(parts);
    try {
      const served = parts.state.durable;
      await writeFile(parts.path, new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0xff, 0xff]));
      assert.equal(await parts.state.io.run(() => freshness.adoptIfChanged()), true);
      assert.equal(await parts.state.io.run(() => freshness.adoptIfChanged()), true);
      assert.equal(freshness.unreadable, true);
      assert.deepEqual(adopted, []);
      assert.equal(parts.state.durable, served);
      assert.equal(parts.messages.length, 1, parts.messages.join('\n'));
      assert.match(parts.messages[0], /changed but cannot be read/);
    } finally {
      freshness.stop();
      await parts.cleanup();
    }
  });
});
