// Folding on its own (server/sources/file/folding.ts), with Freshness stood in for: a fold
// writes the rows into the file and starts a fresh journal on its new fingerprint; there is
// nothing to fold without writes, a journal or permission; a failing fold is logged once and
// backs off (only a forced one tries again meanwhile); a quiet spell starts one, unless closing.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { fingerprint } from '../../../server/durable/disk.ts';
import { Folding } from '../../../server/sources/file/folding.ts';
import type { Freshness } from '../../../server/sources/file/freshness.ts';
import { Journal, readJournal } from '../../../server/sources/file/journal.ts';
import { applyKeepingCells } from '../../../server/sources/file/rebase.ts';
import { appendEntry, fileParts, type FileParts } from '../../helpers/file-state.ts';

const UNCHANGED: Pick<Freshness, 'adoptIfChanged' | 'unreadable'> = { adoptIfChanged: async () => true, unreadable: false };

/** `parts` with a journal holding one acknowledged write appending Bob, as Writes leaves it. */
async function withBob(parts: FileParts): Promise<void> {
  const entry = appendEntry('Bob', 1);
  parts.state.journal = await Journal.create(parts.config.journalPath, parts.state.fingerprint, [entry], parts.config.journalFiles);
  parts.state.entries = [entry];
  parts.state.durable = parts.state.latest = applyKeepingCells(parts.state.durable, entry.plan);
}

test('a fold writes the rows into the file, then starts an empty journal on the new file', async () => {
  const parts = await fileParts('Name\r\nAnn\r\n');
  try {
    await withBob(parts);
    const folding = new Folding(parts.config, parts.state, UNCHANGED);
    await parts.state.io.run(() => folding.fold(false));
    const bytes = await readFile(parts.path);
    assert.equal(new TextDecoder().decode(bytes), 'Name\r\nAnn\r\nBob\r\n');
    assert.equal(parts.state.fingerprint, fingerprint(bytes));
    assert.deepEqual(parts.state.entries, []);
    const journal = await readJournal(parts.config.journalPath);
    assert.equal(journal?.base, fingerprint(bytes));
    assert.deepEqual(journal?.entries, []);
    assert.equal(folding.failures, 0);
  } finally {
    await parts.state.journal?.close();
    await parts.cleanup();
  }
});

test('nothing is folded, and the file is not touched', async (t) => {
  const cases: [string, (parts: FileParts) => Promise<void>, Pick<Freshness, 'adoptIfChanged' | 'unreadable'>][] = [
    ['no writes', async (parts) => void (parts.state.journal = await Journal.create(parts.config.journalPath, parts.state.fingerprint, [])), UNCHANGED],
    ['served read-only', async (parts) => void (await withBob(parts), (parts.state.writable = false)), UNCHANGED],
    ['no journal open (a full disk at start)', async (parts) => void (await withBob(parts), await parts.state.journal?.close(), (parts.state.journal = null)), UNCHANGED],
    ['the file is missing', withBob, { adoptIfChanged: async () => false, unreadable: false }],
    ['the file changed into a version that cannot be read', withBob, { adoptIfChanged: async () => true, unreadable: true }],
  ];
  for (const [name, arrange, freshness] of cases) {
    await t.test(name, async () => {
      const parts = await fileParts('Name\r\nAnn\r\n');
      try {
        await arrange(parts);
        const entries = parts.state.entries;
        await parts.state.io.run(() => new Folding(parts.config, parts.state, freshness).fold(true));
        assert.equal(await readFile(parts.path, 'utf8'), 'Name\r\nAnn\r\n');
        assert.equal(parts.state.entries, entries, 'the journal keeps its writes');
        assert.deepEqual(parts.messages, []);
      } finally {
        await parts.state.journal?.close();
        await parts.cleanup();
      }
    });
  }
});

test('a failing fold is logged once, waits out its backoff, and is tried again when forced', async () => {
  const parts = await fileParts('Name\r\nAnn\r\n', { foldAfterMs: 60_000 });
  let looks = 0;
  const failing = { adoptIfChanged: async () => (looks++, Promise.reject(Object.assign(new Error('EIO: injected'), { code: 'EIO' }))), unreadable: false };
  const folding = new Folding(parts.config, parts.state, failing);
  try {
    await withBob(parts);
    await parts.state.io.run(() => folding.fold(false));
    assert.equal(folding.failures, 1);
    assert.equal(folding.cause, 'EIO');
    await parts.state.io.run(() => folding.fold(false));
    assert.equal(looks, 1, 'within the backoff an idle fold does not try');
    await parts.state.io.run(() => folding.fold(true));
    assert.equal(looks, 2, 'a forced fold (start, close) tries regardless');
    assert.equal(folding.failures, 2);
    assert.equal(parts.messages.length, 1, 'the same cause is logged once');
    assert.match(parts.messages[0], /could not fold the journal into .*: EIO; 1 acknowledged write\(s\) stay in .*retried with backoff/);
    assert.equal(parts.state.entries.length, 1, 'the journal keeps the write');
  } finally {
    folding.stop();
    await parts.state.journal?.close();
    await parts.cleanup();
  }
});

test('a quiet spell of foldAfterMs starts a fold; none is started while closing', async (t) => {
  for (const closing of [false, true]) {
    await t.test(closing ? 'closing' : 'running', async () => {
      const parts = await fileParts('Name\r\nAnn\r\n', { foldAfterMs: 10 });
      const folding = new Folding(parts.config, parts.state, UNCHANGED);
      try {
        await withBob(parts);
        parts.state.closing = closing;
        folding.arm();
        await sleep(200);
        await parts.state.io.run(async () => undefined);
        assert.equal(await readFile(parts.path, 'utf8'), closing ? 'Name\r\nAnn\r\n' : 'Name\r\nAnn\r\nBob\r\n');
      } finally {
        folding.stop();
        await parts.state.journal?.close();
        await parts.cleanup();
      }
    });
  }
});

