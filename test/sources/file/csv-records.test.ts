// A .csv fold keeps every record no write touched byte for byte (issue 24, part 3): `a,b,`
// stayed `a,b` and `,,,,,,,,` became an empty line in 8 of 25 corpus files. Trailing empty
// fields, all-empty records, quoted empties, mixed line endings and a last line without a
// newline survive POST, PATCH and DELETE folded; written rows read back as written.
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { decodeWorkbook, encodeWorkbook } from '../../../server/sources/file/codec.ts';
import { formatCsvInSteps } from '../../../server/sources/file/csv/fold.ts';
import { openFileSource } from '../../../server/sources/file/mod.ts';
import { appOver } from '../../helpers/app.ts';
import { recordingLog, tempFolder } from '../../helpers/file-source.ts';

const utf8 = (bytes: Uint8Array): string => new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);

const piece = fc.constantFrom('a', 'bc', ',', '"', '""', '\r', '\n', '\r\n', ' ', 'é', '=1', "'", '\uFEFF');
const csvText = fc.array(piece, { maxLength: 30 }).map((pieces) => pieces.join(''));

test('any file written back untouched is the same bytes, in one piece and a slice at a time', async () => {
  await fc.assert(
    fc.asyncProperty(csvText, async (text) => {
      const bytes = new TextEncoder().encode(text);
      const decoded = decodeWorkbook(bytes, 'csv', 'T');
      assert.equal(utf8(encodeWorkbook(decoded.workbook, decoded, []).bytes), text);
      const { pieces } = await formatCsvInSteps(decoded.workbook.tabs[0].rows, decoded.csvStyle, 2);
      assert.equal(utf8(Buffer.concat(pieces)), text);
    }),
    { numRuns: 1500 },
  );
});

/** Lines with their endings: `a\r\nb\nc` -> `['a\r\n', 'b\n', 'c']`. */
function lines(text: string): string[] {
  return text.match(/[^\r\n]*(?:\r\n|\r|\n|$)/g)!.filter((line) => line !== '');
}

const FILES: Record<string, string> = {
  'trailing empty fields': 'Name,Age,City,Note\r\na,1,,\r\nb,2,x,\r\nc,3,,\r\nd,4,y,z\r\n',
  'all-empty records': 'Name,Age,City\n,,\nAnn,30,Oslo\n,,\n,,\nBob,40,Rome\n',
  'quoted empties and needless quotes': 'Name,Age,City\r\n"Ann","30",""\r\n"Bob",40,"Rome, IT"\r\nCy,"",""\r\nDee,5,Lima\r\n',
  'mixed line endings': 'Name,Age,City\r\nAnn,30,Oslo\nBob,40,Rome\r\nCy,50,Lima\rDee,60,Kyiv\n',
  'a last line without a newline': '\uFEFFName,Age,City\r\nAnn,30,\r\nBob,40,Rome\r\nCy,50,,',
};

test('through the API: POST, PATCH and DELETE folded keep every untouched line byte for byte', async (t) => {
  for (const [name, original] of Object.entries(FILES)) {
    await t.test(name, async (t) => {
      const folder = await tempFolder();
      const path = join(folder.dir, 'People.csv');
      await writeFile(path, original);
      const source = await openFileSource({ path, foldAfterMs: Infinity, log: recordingLog().log });
      t.after(() => folder.cleanup());
      const call = await appOver(t, source);
      const json = { 'Content-Type': 'application/json' };
      // Data row 1 is PATCHed, data row 2 DELETEd, one row POSTed at the end.
      assert.equal((await call('/sheets/crm/1', { method: 'PATCH', headers: json, body: '{"Age":"41"}' })).status, 200);
      assert.equal((await call('/sheets/crm/2', { method: 'DELETE' })).status, 200);
      assert.equal((await call('/sheets/crm', { method: 'POST', headers: json, body: '{"Name":"New","Age":"7","City":"Here, there"}' })).status, 201);
      await source.close();
      const before = lines(original);
      const after = lines(utf8(await readFile(path)));
      // Lines 0 (header) and 1 (data row 0) are untouched; 2 was PATCHed; 3 DELETEd; then the rest.
      assert.equal(after[0], before[0], 'the header');
      assert.equal(after[1], before[1], 'data row 0');
      const untouched = before.slice(4);
      const last = untouched.length - 1;
      untouched.forEach((line, index) => {
        // A last line without a newline gets the file's line ending once a row follows it.
        const expected = index === last && !/[\r\n]$/.test(line) ? line + '\r\n' : line;
        assert.equal(after[3 + index], expected, `data row ${3 + index - 1}`);
      });
      assert.equal(after.length, before.length, 'one row deleted, one appended');
      assert.equal(/[\r\n]$/.test(after.at(-1)!), /[\r\n]$/.test(original), 'the final newline as the file had it');
      const again = await openFileSource({ path, log: recordingLog().log });
      t.after(() => again.close());
      const rows = (await again.read()).tabs[0].rows;
      assert.equal(rows[2].text[1], '41', 'the PATCHed row reads back');
      assert.deepEqual(rows.at(-1)!.text, ['New', '7', 'Here, there'], 'the POSTed row reads back');
      assert.equal(rows.length, before.length, 'as many rows as lines');
    });
  }
});
