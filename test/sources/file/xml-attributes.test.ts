// Attributes read and set as XML reads them (server/sources/file/xml/attributes.ts): either
// quote, whitespace around `=`, entities, and a value holding `>` or ` r=` taken whole.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { attribute, startTags, withAttribute } from '../../../server/sources/file/xml/attributes.ts';

const READS: [string, string, string | null][] = [
  [`<row r="2">`, 'r', '2'],
  [`<row r='2'>`, 'r', '2'],
  [`<row r = '2' spans ="1:3">`, 'spans', '1:3'],
  [`<x:c r='A1' s='3'/>`, 's', '3'],
  [`<sheet name='A &amp; B' r:id='rId1'/>`, 'name', 'A & B'],
  [`<sheet name="Tom's" r:id="rId1"/>`, 'name', "Tom's"],
  [`<c t="s" foo=" r='B9'" r="A1">`, 'r', 'A1'],
  [`<numFmt numFmtId='164' formatCode='[>=100]0'/>`, 'formatCode', '[>=100]0'],
  [`<row spans="1:3">`, 'r', null],
  [`<row rr="5">`, 'r', null],
];

for (const [tag, name, expected] of READS) {
  test(`attribute(${tag}, ${name}) -> ${expected}`, () => assert.equal(attribute(tag, name), expected));
}

const SETS: [string, string, string | null, string][] = [
  [`<row r='2' spans='1:3'>`, 'r', '3', `<row r="3" spans='1:3'>`],
  [`<row spans='1:3'>`, 'r', '3', `<row r="3" spans='1:3'>`],
  [`<row r='2' spans = '1:3' ht='20'>`, 'spans', null, `<row r='2' ht='20'>`],
  [`<dimension ref='A1:C4'/>`, 'ref', 'A1:C9', `<dimension ref="A1:C9"/>`],
  [`<sheet name='x'/>`, 'name', 'a<b&"c"', `<sheet name="a&lt;b&amp;&quot;c&quot;"/>`],
];

for (const [tag, name, value, expected] of SETS) {
  test(`withAttribute(${tag}, ${name}, ${value})`, () => assert.equal(withAttribute(tag, name, value), expected));
}

test('withAttribute adds last when asked', () => {
  assert.equal(withAttribute(`<xf numFmtId='0' />`, 'applyNumberFormat', '1', 'last'), `<xf numFmtId='0' applyNumberFormat="1" />`);
});

test('startTags takes values whole and any prefix', () => {
  assert.deepEqual(startTags(`<numFmts><x:numFmt formatCode='[>=100]0'/><numFmt formatCode="0"/></numFmts><numFmtX/>`, 'numFmt'), [`<x:numFmt formatCode='[>=100]0'/>`, `<numFmt formatCode="0"/>`]);
});
