// toResponse, the Web Response that Deno and Bun send: the same answer bytes every time, whether
// the runtime gets them as bytes or (Deno, for a byte answer met again) as the text they decode to.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { toResponse, type Answer } from '../server/respond.ts';

const HEADERS = { 'Content-Type': 'application/json; charset=utf-8' };

test('a kept byte answer sent again and again is the same bytes each time', async () => {
  const cases: [string, string][] = [
    ['ascii', '[{"Name":"Ann","Age":30}]'],
    ['latin-1', '[{"City":"Zürich","Name":"Chloé"}]'],
    ['beyond the BMP', '[{"Name":"名前 🦕","Note":"a\\"b"}]'],
  ];
  for (const [name, json] of cases) {
    const bytes = new TextEncoder().encode(json);
    const answer: Answer = { status: 200, headers: HEADERS, body: bytes };
    for (let round = 0; round < 3; round++) {
      const response = toResponse(answer, 'GET');
      assert.equal(response.status, 200, name);
      assert.equal(response.headers.get('content-type'), HEADERS['Content-Type'], name);
      assert.deepEqual(new Uint8Array(await response.arrayBuffer()), bytes, `${name}, round ${round}`);
    }
    const head = toResponse(answer, 'HEAD');
    assert.equal(head.headers.get('content-length'), String(bytes.byteLength), name);
    assert.equal((await head.arrayBuffer()).byteLength, 0, name);
  }
});
