// Writes on their own (server/sources/file/writes.ts), with Freshness and Folding stood in for:
// writes are planned in arrival order on each other's rows and journaled together; what cannot
// be written is refused before the journal sees it; a failed append fails the write and takes
// back its rows; a long journal is folded after the batch.
import assert from 'node:assert/strict';
import { open } from 'node:fs/promises';
import { test } from 'node:test';
import { ApiError } from '../../../lib/errors.ts';
import type { Freshness } from '../../../server/sources/file/freshness.ts';
import { Journal, readJournal, type JournalFiles, type JournalHandle } from '../../../server/sources/file/journal.ts';
import { Writes } from '../../../server/sources/file/writes.ts';
import { fileParts, names, plannedAppend, type FileParts } from '../../helpers/file-state.ts';

/** Writes on `parts` with a journal open, Freshness saying the file is unchanged, and a Folding that records its calls. */
async function writesOf(parts: FileParts, freshness: Pick<Freshness, 'lookedSince' | 'refresh' | 'unreadable'> = { lookedSince: () => true, refresh: async () => undefined, unreadable: false }) {
  parts.state.journal = await Journal.create(parts.config.journalPath, parts.state.fingerprint, [], parts.config.journalFiles);
  const folding = { armed: 0, folds: 0, arm: () => void folding.armed++, fold: async () => void folding.folds++ };
  return { writes: new Writes(parts.config, parts.state, freshness, folding), folding };
}

const isError = (code: string, message?: RegExp) => (error: unknown) => error instanceof ApiError && error.code === code && (message === undefined || message.test(error.message));

test('writes sent together are planned in arrival order, each on the rows of the ones before, and journaled', async () => {
  const parts = await fileParts('Name\r\nAnn\r\n');
  try {
    const { writes, folding } = await writesOf(parts);
    const answers = await Promise.all(['Bob', 'Cy', 'Dee'].map((name, arrival) => writes.write(plannedAppend(name), arrival)));
    assert.deepEqual(answers, ['Bob', 'Cy', 'Dee']);
    assert.deepEqual(names(parts.state.durable), ['Ann', 'Bob', 'Cy', 'Dee']);
    assert.equal(parts.state.latest, parts.state.durable);
    const journaled = await readJournal(parts.config.journalPath);
    assert.deepEqual(journaled?.entries.map((entry) => [entry.plan.appended?.start, entry.plan.appended?.rows[0].text[0]]), [[1, 'Bob'], [2, 'Cy'], [3, 'Dee']]);
    assert.equal(parts.state.entries.length, 3);
    assert.ok(folding.armed >= 1, 'a quiet spell is waited for after each commit');
    assert.equal(folding.folds, 0);
  } finally {
    await parts.state.journal?.close();
    await parts.cleanup();
  }
});

test('a write that cannot be written is refused before the journal sees it', async (t) => {
  const cases: [string, (parts: FileParts) => Partial<{ lookedSince: () => boolean; refresh: () => Promise<void>; unreadable: boolean }>, (error: unknown) => boolean][] = [
    ['served read-only', (parts) => ((parts.state.writable = false), {}), isError('write_error', /read-only on this server/)],
    ['a file sheetrest cannot write back', (parts) => ((parts.state.cannotWrite = 'a test says so'), {}), isError('write_error', /\(a test says so\)/)],
    ['a tab that is not a worksheet', (parts) => ((parts.state.readOnlyTabs = new Map([['People', 'a chart sheet']])), {}), isError('write_error', /is a chart sheet/)],
    ['changed outside into a version that cannot be read', () => ({ unreadable: true }), isError('upstream_unavailable', /cannot be read/)],
  ];
  for (const [name, arrange, expected] of cases) {
    await t.test(name, async () => {
      const parts = await fileParts('Name\r\nAnn\r\n');
      try {
        const freshness = { lookedSince: () => true, refresh: async () => undefined, unreadable: false, ...arrange(parts) };
        const { writes } = await writesOf(parts, freshness);
        await assert.rejects(writes.write(plannedAppend('Bob'), 1), expected);
        assert.deepEqual((await readJournal(parts.config.journalPath))?.entries, []);
        assert.deepEqual(names(parts.state.latest), ['Ann']);
      } finally {
        await parts.state.journal?.close();
        await parts.cleanup();
      }
    });
  }
});

test('a write looks at the file first unless a look began after it arrived', async (t) => {
  for (const lookedSince of [true, false]) {
    await t.test(lookedSince ? 'looked since: no look' : 'not looked since: one look', async () => {
      const parts = await fileParts('Name\r\nAnn\r\n');
      try {
        let looks = 0;
        const { writes } = await writesOf(parts, { lookedSince: () => lookedSince, refresh: async () => void looks++, unreadable: false });
        await writes.write(plannedAppend('Bob'), 1);
        assert.equal(looks, lookedSince ? 0 : 1);
      } finally {
        await parts.state.journal?.close();
        await parts.cleanup();
      }
    });
  }
});

test('a full disk fails the write with 507, and the rows planned on it are taken back', async () => {
  // The journal's appends go to a disk that is full (its first write of a new journal is not an append).
  const full: JournalFiles = {
    async open(path, flags, mode): Promise<JournalHandle> {
      const handle = await open(path, flags, mode);
      if (flags === 'wx') return handle;
      return { ...bind(handle), write: async () => Promise.reject(Object.assign(new Error('ENOSPC: injected'), { code: 'ENOSPC' })) };
    },
  };
  const parts = await fileParts('Name\r\nAnn\r\n', { journalFiles: full });
  try {
    const { writes } = await writesOf(parts);
    await assert.rejects(writes.write(plannedAppend('Bob'), 1), isError('insufficient_storage'));
    assert.deepEqual(names(parts.state.latest), ['Ann']);
    assert.deepEqual(parts.state.entries, []);
    assert.match(parts.messages.join('\n'), /could not save writes to the journal of .*ENOSPC/);
  } finally {
    await parts.state.journal?.close();
    await parts.cleanup();
  }
});

test('a journal holding foldAfterEntries writes is folded after the batch', async () => {
  const parts = await fileParts('Name\r\nAnn\r\n', { foldAfterEntries: 2 });
  try {
    const { writes, folding } = await writesOf(parts);
    await writes.write(plannedAppend('Bob'), 1);
    await writes.settled();
    assert.equal(folding.folds, 0, 'one write is not yet many');
    await writes.write(plannedAppend('Cy'), 2);
    await writes.settled();
    assert.equal(folding.folds, 1);
  } finally {
    await parts.state.journal?.close();
    await parts.cleanup();
  }
});

/** A file handle's calls as a JournalHandle. */
function bind(handle: JournalHandle): JournalHandle {
  return {
    write: (buffer, offset, length) => handle.write(buffer, offset, length),
    datasync: () => handle.datasync(),
    sync: () => handle.sync(),
    truncate: (length) => handle.truncate(length),
    close: () => handle.close(),
  };
}
