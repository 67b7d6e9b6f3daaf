// A number too large for a double (`1e309`, which JSON.parse reads as Infinity) is named as
// such, once: not "got null" (what JSON.stringify makes of Infinity), and not once per rule
// it breaks (whole, at most ...).
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { isApiError } from '../../lib/errors.ts';
import { ChangeConnectionSchema, parseAdminBody, RotateKeySchema } from '../../server/admin/requests.ts';
import { ConfigError, loadConfig } from '../../server/config/config.ts';
import { tempDir } from '../helpers/http.ts';

const body = (text: string) => new TextEncoder().encode(text);

test('1e309 in a settings PATCH or a rotation is "too large", said once', () => {
  for (const [schema, text, field] of [
    [ChangeConnectionSchema, '{"plan":{"name":"p","rateLimit":{"requests":1e309,"perSeconds":10}}}', 'plan.rateLimit.requests'],
    [ChangeConnectionSchema, '{"plan":{"name":"p","monthlyRequests":-1e309}}', 'plan.monthlyRequests'],
    [RotateKeySchema, '{"overlapSeconds":1e309}', 'overlapSeconds'],
  ] as const) {
    const parsed = parseAdminBody(schema, 'application/json', body(text));
    assert.ok(isApiError(parsed), text);
    assert.doesNotMatch(parsed.message, /null/, text);
    assert.match(parsed.message, new RegExp(`${field.replace(/\./g, '\\.')}: expected a whole number[^;]*, got a number too large to hold \\(1e309 or more\\)\\.$`), parsed.message);
    assert.equal(parsed.message.split(field).length, 2, `said once: ${parsed.message}`);
  }
  // An ordinary wrong number still shows as sent.
  const wrong = parseAdminBody(ChangeConnectionSchema, 'application/json', body('{"plan":{"name":"p","monthlyRequests":1.5}}'));
  assert.ok(isApiError(wrong));
  assert.match(wrong.message, /plan\.monthlyRequests: expected a whole number >= 0, got 1\.5\.$/);
});

test('1e309 in the config file is "too large" too', async (t) => {
  const dir = await tempDir(t);
  await writeFile(dir.path('sheetrest.json'), '{"connections":[{"id":"crm","source":{"type":"file","path":"crm.xlsx"},"plan":{"name":"p","monthlyRequests":1e309}}]}');
  await assert.rejects(loadConfig(dir.path('sheetrest.json')), (error: ConfigError) => {
    assert.match(error.message, /monthlyRequests: expected a whole number >= 0, got a number too large to hold/);
    assert.doesNotMatch(error.message, /null/);
    return true;
  });
});
