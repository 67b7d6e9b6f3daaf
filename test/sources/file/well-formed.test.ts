// The check every part a fold wrote passes before the file is replaced (server/sources/file/xml/
// well-formed.ts): well-formed XML passes, each way of breaking it is named with where.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkWrittenParts, wellFormedProblem } from '../../../server/sources/file/xml/well-formed.ts';

const WELL_FORMED = [
  '<a/>',
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n<x:worksheet xmlns:x="u"><x:sheetData><x:row r=\'2\' spans = "1:2"><x:c r="A2" t="inlineStr"><x:is><x:t xml:space="preserve"> a &amp; b &#x1F600; &#60; </x:t></x:is></x:c></x:row></x:sheetData></x:worksheet>\n',
  '\ufeff<!-- a comment --><a b="1 &gt; 0" c=\'say "hi"\'><![CDATA[<not a tag> & ]]><?pi x?>text</a ><!-- after -->',
  '<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>',
  '<table:table-cell table:style-name="ce1" office:value="1"><text:p>é ü 日本</text:p></table:table-cell>',
];

for (const xml of WELL_FORMED) {
  test(`well-formed: ${xml.slice(0, 60)}`, () => assert.equal(wellFormedProblem(xml), null));
}

const BROKEN: [string, string][] = [
  ['<row r="2" r=\'2\'/>', 'duplicate attribute "r" in <row> at line 1, column 12'],
  ['<a><b></a></b>', '</a> closes <b> at line 1, column 7'],
  ['<a><b>', '<b> is never closed at line 1, column 7'],
  ['<a></a></b>', '</b> closes no element at line 1, column 8'],
  ['<a b=1/>', 'the value of "b" in <a> is not quoted at line 1, column 6'],
  ['<a b="1 < 2"/>', '"<" in the value of "b" in <a> at line 1, column 9'],
  ['<a b="x"c="y"/>', 'an attribute of <a> not set off by whitespace, or not a name at line 1, column 9'],
  ['<a>\n  Tom & Jerry</a>', '"&" that starts no reference (write it as &amp;) at line 2, column 7'],
  ['<a>&nbsp;</a>', 'unknown entity &nbsp; at line 1, column 4'],
  ['<a>&#0;</a>', 'character reference &#0; to no character XML allows at line 1, column 4'],
  ['<a b="&#xD800;"/>', 'character reference &#xD800; to no character XML allows at line 1, column 7'],
  ['<a>\u0001</a>', 'character U+0001, which XML does not allow at line 1, column 4'],
  ['<a/><b/>', 'a second root element at line 1, column 5'],
  ['text<a/>', 'text outside the root element at line 1, column 1'],
  ['<a>1 < 2</a>', '"<" that starts no tag (write it as &lt;) at line 1, column 6'],
  ['<a>]]></a>', '"]]>" in text at line 1, column 4'],
  ['<a b="1"', '<a> is cut off at line 1, column 1'],
  ['', 'it has no root element'],
];

for (const [xml, problem] of BROKEN) {
  test(`broken: ${JSON.stringify(xml)}`, () => assert.equal(wellFormedProblem(xml), problem));
}

test('checkWrittenParts names the part and why, and passes good parts', () => {
  checkWrittenParts(new Map([['xl/styles.xml', '<styleSheet/>']]));
  assert.throws(() => checkWrittenParts(new Map([['xl/styles.xml', '<styleSheet/>'], ['xl/worksheets/sheet1.xml', '<worksheet><row r="2" r=\'2\'/></worksheet>']])), {
    message: 'the fold would have written xl/worksheets/sheet1.xml as XML that does not parse (duplicate attribute "r" in <row> at line 1, column 23), so the file was left as it was',
  });
});
