// Recovery on its own (server/sources/file/recovery.ts), with Folding stood in for: the journal
// the last run left, replayed on the file as it is now (its base, a fold's mark, or neither:
// saved outside meanwhile); read-only and full-disk starts; and an outside save that drops rows
// already folded into the file, which are saved aside and not applied again.
import assert from 'node:assert/strict';
import { access, open, readdir } from 'node:fs/promises';
import { test } from 'node:test';
import { FoldHistory } from '../../../server/sources/file/fold-history.ts';
import { readJournal, type JournalContents, type JournalEntry, type JournalFiles } from '../../../server/sources/file/journal.ts';
import { Recovery } from '../../../server/sources/file/recovery.ts';
import { appendEntry, fileParts, names, type FileParts } from '../../helpers/file-state.ts';

/** Recovery on `parts`, and the folds it asked for (forced or not). */
function recoveryOf(parts: FileParts): { recovery: Recovery; folds: boolean[] } {
  const folds: boolean[] = [];
  return { recovery: new Recovery(parts.config, parts.state, { arm: () => undefined, fold: async (force) => void folds.push(force) }), folds };
}

const journalOf = (base: string, entries: readonly JournalEntry[], folds: JournalContents['folds'] = []): JournalContents => ({ base, entries, folds, torn: false, damaged: [] });

/** Replaces data row 0, which held `was` when the write was planned, with `name`. */
const replaceFirst = (name: string, was: string): JournalEntry => ({
  plan: { tab: 'People', replaced: [{ index: 0, row: { text: [name], value: [name] }, columns: [0] }], removed: [], appended: null },
  expected: { dataRows: 1, rows: [[0, [was]]] },
});

const conflictFiles = async (parts: FileParts) => (await readdir(parts.config.stateDir)).filter((file) => file.includes('.conflict-'));

test('the journal the last run left, on the file as it is now', async (t) => {
  const cases: [string, string, (print: string) => JournalContents | null, string[], number, RegExp | null][] = [
    ['no journal: a first start', 'Name\r\nAnn\r\n', () => null, ['Ann'], 0, null],
    ['on the file\'s base: every write replayed', 'Name\r\nAnn\r\n', (print) => journalOf(print, [appendEntry('Bob', 1), appendEntry('Cy', 2)]), ['Ann', 'Bob', 'Cy'], 2, /recovered 2 journaled write\(s\)/],
    ['on a fold\'s mark: the writes after it replayed', 'Name\r\nAnn\r\nBob\r\n', (print) => journalOf('an older file', [appendEntry('Bob', 1), appendEntry('Cy', 2)], [{ fingerprint: print, entriesBefore: 1 }]), ['Ann', 'Bob', 'Cy'], 1, /recovered 1 journaled write\(s\)/],
    ['saved outside meanwhile: what still fits re-applied, the rest saved aside', 'Name\r\nZed\r\n', () => journalOf('an older file', [replaceFirst('Eve', 'Ann'), appendEntry('Cy', 1)]), ['Zed', 'Cy'], 1, /1 acknowledged write\(s\) to .* conflict with a change made outside the server; kept the outside version and saved the writes to /],
  ];
  for (const [name, csv, contents, rows, pending, logged] of cases) {
    await t.test(name, async () => {
      const parts = await fileParts(csv);
      const { recovery, folds } = recoveryOf(parts);
      try {
        await recovery.recover(contents(parts.state.fingerprint));
        assert.deepEqual(names(parts.state.durable), rows);
        assert.equal(parts.state.latest, parts.state.durable);
        assert.equal(parts.state.entries.length, pending);
        const journal = await readJournal(parts.config.journalPath);
        assert.equal(journal?.base, parts.state.fingerprint, 'a fresh journal on the file as it is');
        assert.equal(journal?.entries.length, pending);
        assert.deepEqual(folds, [true], 'then folded, whatever the backoff');
        if (logged === null) assert.deepEqual(parts.messages, []);
        else assert.match(parts.messages.join('\n'), logged);
        assert.equal((await conflictFiles(parts)).length, name.startsWith('saved outside') ? 1 : 0);
      } finally {
        await parts.state.journal?.close();
        await parts.cleanup();
      }
    });
  }
});

test('read-only: the writes are served, and the journal is left for a run that can write', async () => {
  const parts = await fileParts('Name\r\nAnn\r\n', { notWritable: 'the connection is read-only' });
  const { recovery, folds } = recoveryOf(parts);
  try {
    await recovery.recover(journalOf(parts.state.fingerprint, [appendEntry('Bob', 1)]));
    assert.deepEqual(names(parts.state.durable), ['Ann', 'Bob']);
    assert.equal(parts.state.journal, null);
    await assert.rejects(access(parts.config.journalPath), 'no journal was written');
    assert.deepEqual(folds, []);
  } finally {
    await parts.cleanup();
  }
});

test('a full disk at start: the writes are served, no journal is open, writes answer 507 until space is freed', async () => {
  const full: JournalFiles = {
    open: async (path, flags, mode) => (flags === 'wx' ? Promise.reject(Object.assign(new Error('ENOSPC: injected'), { code: 'ENOSPC' })) : open(path, flags, mode)),
  };
  const parts = await fileParts('Name\r\nAnn\r\n', { journalFiles: full });
  const { recovery, folds } = recoveryOf(parts);
  try {
    await recovery.recover(journalOf(parts.state.fingerprint, [appendEntry('Bob', 1)]));
    assert.deepEqual(names(parts.state.durable), ['Ann', 'Bob']);
    assert.equal(parts.state.journal, null);
    assert.deepEqual(folds, []);
    assert.match(parts.messages.join('\n'), /writes answer 507 until space is freed \(1 journaled write\(s\) stay in /);
  } finally {
    await parts.cleanup();
  }
});

test('an outside save without rows already folded into the file: those writes are saved aside, not applied again', async () => {
  const parts = await fileParts('Name\r\nAnn\r\n');
  const { recovery } = recoveryOf(parts);
  try {
    await recovery.recover(null);
    const history = (parts.state.history = await FoldHistory.load(parts.config.journalPath.replace(/\.journal$/, '.compacted')));
    await history.add({ base: 'the file before', produced: parts.state.fingerprint, entries: [appendEntry('Bob', 1)] });
    // The outside version (Ann alone, as the file already is) lacks Bob, whom the fold wrote.
    await recovery.adopt(parts.state.durable, 'the outside version', parts.state.identity, [], { announce: true, outside: true });
    assert.deepEqual(names(parts.state.durable), ['Ann']);
    assert.equal((await conflictFiles(parts)).length, 1);
    assert.match(parts.messages.join('\n'), /picked up a change to .* made outside the server/);
    assert.match(parts.messages.join('\n'), /was replaced by a version without the rows of 1 acknowledged write\(s\) already folded into it/);
    assert.deepEqual(history.folds, [], 'from now on folds are compared with the outside version');
    assert.equal((await readJournal(parts.config.journalPath))?.base, 'the outside version');
  } finally {
    await parts.state.journal?.close();
    await parts.cleanup();
  }
});
