// toResponse, the Web Response that Deno and Bun send: the same answer bytes every time, whether
// the runtime gets them as bytes or (Deno, for a byte answer met again) as the text they decode to.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { textOnceSeen, toResponse, type Answer } from '../../server/http/respond.ts';

const HEADERS = { 'Content-Type': 'application/json; charset=utf-8' };

test('a kept byte answer sent again and again is the same bytes each time, as bytes or as its text', async () => {
  const cases: [string, string][] = [
    ['ascii', '[{"Name":"Ann","Age":30}]'],
    ['latin-1', '[{"City":"Zürich","Name":"Chloé"}]'],
    ['beyond the BMP', '[{"Name":"名前 🦕","Note":"a\\"b"}]'],
  ];
  for (const [name, json] of cases) {
    const bytes = new TextEncoder().encode(json);
    const answer: Answer = { status: 200, headers: HEADERS, body: bytes };
    for (let round = 0; round < 6; round++) {
      // Rounds 0-2 as bytes (Node and Bun); 3-5 through Deno's choice, which sends text from the second time.
      const response = round < 3 ? toResponse(answer, 'GET') : toResponse(answer, 'GET', { bodyOf: textOnceSeen });
      assert.equal(response.status, 200, name);
      assert.equal(response.headers.get('content-type'), HEADERS['Content-Type'], name);
      assert.deepEqual(new Uint8Array(await response.arrayBuffer()), bytes, `${name}, round ${round}`);
    }
    const head = toResponse(answer, 'HEAD');
    assert.equal(head.headers.get('content-length'), String(bytes.byteLength), name);
    assert.equal((await head.arrayBuffer()).byteLength, 0, name);
  }
});

test('textOnceSeen: bytes the first time, the same text from then on; strings and big answers as they are', () => {
  const bytes = new TextEncoder().encode('[{"Name":"Zoë"}]');
  assert.equal(textOnceSeen(bytes), bytes);
  assert.equal(textOnceSeen(bytes), '[{"Name":"Zoë"}]');
  assert.equal(textOnceSeen(bytes), '[{"Name":"Zoë"}]');
  assert.equal(textOnceSeen('[]'), '[]');
  const big = new Uint8Array(1024 * 1024 + 1).fill(0x20);
  textOnceSeen(big);
  assert.equal(textOnceSeen(big), big);
});

test('an answer sent again is a copy of one Response: the same status, headers and body, each its own', async () => {
  const answer: Answer = { status: 200, headers: { ...HEADERS, ETag: '"t1-2"' }, body: '[{"Name":"Ann"}]' };
  for (let round = 0; round < 4; round++) {
    const response = toResponse(answer, 'GET');
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('etag'), '"t1-2"');
    assert.equal(response.headers.get('x-mine'), null, `round ${round}: a header set on an earlier copy stays there`);
    assert.equal(await response.text(), '[{"Name":"Ann"}]', `round ${round}`);
    response.headers.set('X-Mine', String(round));
  }
  for (let round = 0; round < 3; round++) {
    const head = toResponse(answer, 'HEAD');
    assert.equal(head.headers.get('content-length'), '16', `HEAD, round ${round}`);
    assert.equal(await head.text(), '', `HEAD, round ${round}`);
  }
  const notModified: Answer = { status: 304, headers: { ETag: '"t1-2"' }, body: '' };
  for (let round = 0; round < 3; round++) {
    const response = toResponse(notModified, 'GET');
    assert.equal(response.status, 304);
    assert.equal(response.body, null);
  }
});

test('a large byte answer gets a new Response each time; a small one is cloned from one kept', async () => {
  // A Response copies a byte body when it is made, so a byte changed after the second send shows
  // which Responses were made anew (answers never change in the server; here it is the probe).
  const sent = async (answer: Answer) => new Uint8Array(await toResponse(answer, 'GET').arrayBuffer())[0];
  const large: Answer = { status: 200, headers: HEADERS, body: new Uint8Array(64 * 1024 + 1).fill(0x20) };
  const small: Answer = { status: 200, headers: HEADERS, body: new Uint8Array(1024).fill(0x20) };
  for (const answer of [large, small]) {
    await sent(answer);
    await sent(answer);
    (answer.body as Uint8Array)[0] = 0x5b;
  }
  assert.equal(await sent(large), 0x5b, 'made anew: a kept one would hold a second copy of a whole tab');
  assert.equal(await sent(small), 0x20, 'cloned from the Response kept at the second send');
});
