// Write bodies that are not what they should be: invalid JSON is described by line and column
// and never quoted back (a body may hold secrets), a body nested 10,000 or 100,000 deep is a 400
// and never a stack overflow, and the scanner that locates JSON errors agrees with JSON.parse.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { handle } from '../../lib/mod.ts';
import { jsonProblem } from '../../lib/json-error.ts';
import type { Workbook } from '../../lib/workbook.ts';

const workbook: Workbook = { tabs: [{ name: 'T', rows: [{ text: ['Name', 'Key'], value: ['Name', 'Key'] }] }] };
const SECRET = 'sk-live-Secret4711';

function post(body: string, method = 'POST', url = '/sheets/x'): { status: number; error: string; message: string } {
  const result = handle(workbook, { method, url, headers: { 'Content-Type': 'application/json' }, body });
  const parsed = JSON.parse(result.body) as { error: string; message: string };
  return { status: result.status, ...parsed };
}

test('invalid JSON is located by line and column, and no part of the body is echoed', async (t) => {
  const cases: [body: string, where: string][] = [
    [`{"Name": "x", "Key": "${SECRET}"} trailing`, 'the JSON value ends but more text follows at line 1, column 44'],
    [`{"Key": "${SECRET}" "Name": 1}`, "a ',' or '}' was expected at line 1, column 30"],
    [`{"Key": "${SECRET}", ${SECRET}: 1}`, 'a property name in double quotes was expected at line 1, column 31'],
    [`{\n  "Key": "${SECRET}",\n  "Name": "x",\n}`, 'a property name in double quotes was expected at line 4, column 1'],
    [`{"Key": ${SECRET}}`, 'a value (an object, array, string, number, true, false or null) was expected at line 1, column 9'],
    [`{"Key": "${SECRET}\n"}`, 'a string holds an unescaped control character (a line break or tab must be written \\n or \\t) at line 1, column 28'],
    [`{"Key": "\\x${SECRET}"}`, 'a string holds an invalid escape sequence at line 1, column 10'],
    [`{"Key": "\\u12G4"}`, 'a string holds an invalid escape sequence at line 1, column 10'],
    [`{"Key": "${SECRET}`, 'a string is not closed at line 1, column 9'],
    [`{"Key" "${SECRET}"}`, "a ':' was expected after the property name at line 1, column 8"],
    [`{"Key": "${SECRET}"`, "the body ends where a ',' or '}' was still expected at line 1, column 29"],
    [`["${SECRET}", `, 'the body ends where a value (an object, array, string, number, true, false or null) was still expected at line 1, column 24'],
    [`{"Key": 012}`, "a ',' or '}' was expected at line 1, column 10"],
    [`{"Key": -}`, 'a value (an object, array, string, number, true, false or null) was expected at line 1, column 9'],
    [`{"Key": tru}`, 'a value (an object, array, string, number, true, false or null) was expected at line 1, column 9'],
    [`{'Key': '${SECRET}'}`, 'a property name in double quotes was expected at line 1, column 2'],
  ];
  for (const [body, where] of cases) {
    await t.test(body, () => {
      const answer = post(body);
      assert.equal(answer.status, 400);
      assert.equal(answer.error, 'invalid_json');
      assert.equal(answer.message, `The body is not valid JSON: ${where}.`);
      assert.ok(!answer.message.includes('Secret'), 'the message quotes the body');
    });
  }
});

test('PATCH and PUT bodies are located the same way', () => {
  for (const method of ['PATCH', 'PUT']) {
    const answer = post(`{"Key": "${SECRET}",}`, method, '/sheets/x/Name/a');
    assert.equal(answer.error, 'invalid_json');
    assert.match(answer.message, /line 1, column 30\.$/);
    assert.ok(!answer.message.includes('Secret'));
  }
});

const depths = [10_000, 100_000];
const nested: [name: string, build: (depth: number) => string, code: string][] = [
  ['[[[...]]]', (depth) => '['.repeat(depth) + ']'.repeat(depth), 'invalid_body'],
  ['{"a":{"a":...}}', (depth) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth), 'invalid_body'],
  ['{"Name": [[[...]]]}', (depth) => '{"Name":' + '['.repeat(depth) + ']'.repeat(depth) + '}', 'invalid_body'],
  ['[{"Name": {"a": ...}}]', (depth) => '[{"Name":' + '{"a":'.repeat(depth) + 'null' + '}'.repeat(depth) + '}]', 'invalid_body'],
  ['[[[... never closed', (depth) => '['.repeat(depth), 'invalid_json'],
  ['{"a":{"a":... closed with the wrong bracket', (depth) => '{"a":'.repeat(depth) + '1' + ']'.repeat(depth), 'invalid_json'],
];

test('a lone surrogate anywhere in a write body is 400 invalid_body naming the field, and nothing is written', async (t) => {
  const form = 'multipart/form-data; boundary=XYZ';
  const multipart = (name: string, value: string) => `--XYZ\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n--XYZ--\r\n`;
  const cases: [name: string, method: string, url: string, type: string, body: string, names: string][] = [
    ['a JSON value, high half', 'POST', '/sheets/x', 'application/json', '{"Name": "\\ud800"}', 'The body: the value of "Name"'],
    ['a JSON value, low half inside text', 'POST', '/sheets/x', 'application/json', '{"Name": "a\\udc00b"}', 'The body: the value of "Name"'],
    ['a JSON value, the halves in the wrong order', 'POST', '/sheets/x', 'application/json', '{"Name": "\\ude00\\ud83d"}', 'The body: the value of "Name"'],
    ['a JSON column name', 'POST', '/sheets/x', 'application/json', '{"\\ud800": "x"}', 'The body: the column name "\\ud800"'],
    ['a text/plain JSON value in the second row', 'POST', '/sheets/x', 'text/plain', '[{"Name": "ok"}, {"Key": "\\udbff"}]', 'Element 1: the value of "Key"'],
    ['a PATCH value', 'PATCH', '/sheets/x/0', 'application/json', '{"Key": "\\ud800"}', 'The body: the value of "Key"'],
    ['a PUT value', 'PUT', '/sheets/x/0', 'application/json', '{"Key": "\\ud800"}', 'The body: the value of "Key"'],
    ['an urlencoded value', 'POST', '/sheets/x', 'application/x-www-form-urlencoded', 'Name=\ud800', 'The form field "Name"'],
    ['an urlencoded field name', 'POST', '/sheets/x', 'application/x-www-form-urlencoded', '\udc00=x', 'The form field name "\\udc00"'],
    ['a multipart value', 'POST', '/sheets/x', form, multipart('Name', 'a\ud800'), 'The form field "Name"'],
  ];
  const rows: Workbook = { tabs: [{ name: 'T', rows: [{ text: ['Name', 'Key'], value: ['Name', 'Key'] }, { text: ['Ann', 'k1'], value: ['Ann', 'k1'] }] }] };
  for (const [name, method, url, type, body, names] of cases) {
    await t.test(name, () => {
      const result = handle(rows, { method, url, headers: { 'Content-Type': type }, body });
      assert.equal(result.status, 400, result.body);
      const answer = JSON.parse(result.body) as { error: string; message: string };
      assert.equal(answer.error, 'invalid_body');
      assert.ok(answer.message.startsWith(`${names} holds text that is not valid Unicode`), answer.message);
      assert.equal(result.plan, null);
      // The message itself is well formed: the field name is shown escaped.
      assert.equal(/\p{Cs}/u.test(answer.message), false);
    });
  }
  await t.test('a whole astral character (a pair in the right order) is written', () => {
    const result = handle(rows, { method: 'POST', url: '/sheets/x', headers: { 'Content-Type': 'application/json' }, body: '{"Name": "\\ud83d\\ude00 ok"}' });
    assert.equal(result.status, 201, result.body);
    assert.equal(JSON.parse(result.body).Name, '\u{1F600} ok');
  });
});

test('a deeply nested body is a 400 with a clear message, never a stack overflow', async (t) => {
  for (const depth of depths) {
    for (const [name, build, code] of nested) {
      await t.test(`${name} ${depth} deep`, () => {
        const answer = post(build(depth));
        assert.equal(answer.status, 400);
        assert.equal(answer.error, code);
        assert.ok(answer.message.length < 200, answer.message);
        if (code === 'invalid_json') assert.match(answer.message, /at line 1, column \d+\.$/);
        else assert.match(answer.message, /an object of columns|a cell takes a string/);
      });
    }
  }
});

test('jsonProblem finds a problem exactly when JSON.parse refuses the text', () => {
  const parses = (text: string): boolean => {
    try {
      JSON.parse(text);
      return true;
    } catch {
      return false;
    }
  };
  // Valid JSON, then now and then one character inserted or removed: mostly invalid texts near valid ones.
  const mutated = fc
    .tuple(fc.json(), fc.nat(), fc.constantFrom('', ',', ':', '"', '\\', '{', '}', '[', ']', '0', '-', '.', 'e', ' ', '\n', '\t', 'x', '\u0001'), fc.boolean())
    .map(([text, at, char, remove]) => {
      const i = at % (text.length + 1);
      return remove ? text.slice(0, i) + text.slice(i + 1) : text.slice(0, i) + char + text.slice(i);
    });
  fc.assert(
    fc.property(fc.oneof(mutated, fc.string({ maxLength: 12 })), (text) => {
      assert.equal(jsonProblem(text) === null, parses(text), `text: ${JSON.stringify(text)}`);
    }),
    { numRuns: 2000 },
  );
});
