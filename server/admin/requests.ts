// The admin API's request bodies, checked with the config file's own valibot schemas
// (server/config/schema.ts), so a connection is valid here exactly when it would be valid in
// sheetrest.json: `POST /_admin/connections` with `{"id": "crm", "source": {"type": "fil"}}` ->
// 400 invalid_body `source.type: expected "file" or "google", got "fil"`. Unknown fields are
// errors, as in the file. Bodies are JSON (`Content-Type: application/json`).
import * as v from 'valibot';
import { apiError, type ApiError } from '../../lib/errors.ts';
import { jsonProblem } from '../../lib/json-error.ts';
import { SCOPES } from '../auth.ts';
import { fieldPath } from '../config/config.ts';
import { atMostOne, wholeNumber } from '../config/fields.ts';
import { ConnectionEntries, expected, KeyExpiry, KeyTabs, OperationList, PlanSchema, strict, WebhookEntries } from '../config/schema.ts';
import { DEFAULT_OVERLAP_SECONDS, MAX_OVERLAP_SECONDS } from './keys.ts';

const { keys: _keys, id, source, readOnly, formulas, hiddenTabs, unknownColumns, rowId, tabs, cacheControl } = ConnectionEntries;

const keysElsewhere = v.optional(v.never('keys are made with POST /_admin/connections/{id}/keys, which shows each new key once'));

/**
 * `"open": true` lets any caller in without a key. Left out or false: closed, and a new
 * connection is made with its first key (shown once in the answer).
 */
const open = v.optional(v.boolean(expected('true or false')));

/** `POST /_admin/connections`: a connection as in the config file, without `keys`, with `open`. */
export const CreateConnectionSchema = strict('an object', { id, source, plan: v.optional(PlanSchema), readOnly, formulas, hiddenTabs, unknownColumns, rowId, tabs, cacheControl, open, keys: keysElsewhere });

/** `PATCH /_admin/connections/{id}`: any of the fields to change; `"plan": null` removes the plan, `"cacheControl": null` the cache settings, `"rowId": null` and `"tabs": null` theirs. */
export const ChangeConnectionSchema = strict('an object', {
  source: v.optional(source),
  plan: v.optional(v.nullable(PlanSchema)),
  readOnly: v.optional(v.unwrap(readOnly)),
  formulas: v.optional(v.unwrap(formulas)),
  hiddenTabs: v.optional(v.unwrap(hiddenTabs)),
  unknownColumns: v.optional(unknownColumns),
  /** `null` removes the setting, as for `plan`. */
  rowId: v.optional(v.nullable(v.unwrap(rowId))),
  tabs: v.optional(v.nullable(v.unwrap(tabs))),
  cacheControl: v.optional(v.nullable(v.unwrap(cacheControl))),
  open,
  id: v.optional(v.never('a connection keeps its id: create a new connection and delete this one')),
  keys: keysElsewhere,
});

const label = v.pipe(
  v.string(expected('a non-empty label')),
  v.nonEmpty(expected('a non-empty label')),
  v.maxLength(100, expected('a label of at most 100 characters')),
);

/**
 * `POST /_admin/connections/{id}/keys`: `{"operations": ["create"], "tabs": ["Orders"],
 * "expiresAt": "2027-01-01T00:00:00Z", "name": "web form"}`, every field optional (a key that may
 * do everything, everywhere, for ever); `scope` is the short form of `operations`, as in the config file.
 */
export const CreateKeySchema = v.pipe(
  strict('an object', {
    scope: v.optional(v.picklist(SCOPES, expected('"read" or "write"'))),
    operations: v.optional(OperationList),
    tabs: v.optional(KeyTabs),
    expiresAt: v.optional(KeyExpiry),
    name: v.optional(label),
  }),
  atMostOne(['scope', 'operations']),
);

const overlapWhat = `a whole number of seconds from 0 to ${MAX_OVERLAP_SECONDS}`;

/**
 * `POST /_admin/connections/{id}/keys/{key}/rotate`: the new key may do what the old one did
 * unless `operations` (or `scope`), `tabs` or `expiresAt` say otherwise (`null` lifts a limit).
 */
export const RotateKeySchema = v.pipe(
  strict('an object', {
    overlapSeconds: v.optional(
      wholeNumber(0, MAX_OVERLAP_SECONDS, overlapWhat),
      DEFAULT_OVERLAP_SECONDS,
    ),
    scope: v.optional(v.picklist(SCOPES, expected('"read" or "write"'))),
    operations: v.optional(OperationList),
    tabs: v.optional(v.nullable(KeyTabs)),
    expiresAt: v.optional(v.nullable(KeyExpiry)),
  }),
  atMostOne(['scope', 'operations']),
);

const secretWhat = 'a secret of 16 to 256 characters';

/**
 * `POST /_admin/connections/{id}/webhooks`: `{"url": "https://hooks.example.com/sheets",
 * "events": ["rows.created"], "name": "crm-sync"}`; `secret` left out: the server makes one,
 * shown in this answer only. `name` left out: `hook-<n>`, the first number free.
 */
export const CreateWebhookSchema = strict('an object with "url"', {
  url: WebhookEntries.url,
  events: WebhookEntries.events,
  name: WebhookEntries.name,
  secret: v.optional(v.pipe(v.string(expected(secretWhat)), v.minLength(16, expected(secretWhat)), v.maxLength(256, expected(secretWhat)))),
});

export type CreateWebhookInput = v.InferOutput<typeof CreateWebhookSchema>;
export type CreateConnectionInput = v.InferOutput<typeof CreateConnectionSchema>;
export type ChangeConnectionInput = v.InferOutput<typeof ChangeConnectionSchema>;
export type CreateKeyInput = v.InferOutput<typeof CreateKeySchema>;
export type RotateKeyInput = v.InferOutput<typeof RotateKeySchema>;

const decoder = new TextDecoder('utf-8', { fatal: true });
/** Half of a surrogate pair alone: with the `u` flag a whole pair is one code point and matches nothing. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * A body checked against `schema`: 415 for a body that is not JSON by its type, 400
 * `invalid_json` (where and why, never quoting the body: it may hold a secret) or
 * `invalid_body` naming each field. An empty body is `{}` (a key with the defaults).
 */
export function parseAdminBody<TSchema extends v.GenericSchema>(schema: TSchema, contentType: string | null, body: Uint8Array): v.InferOutput<TSchema> | ApiError {
  let text: string;
  try {
    text = decoder.decode(body);
  } catch {
    return apiError('invalid_json', 'The body is not valid UTF-8.');
  }
  if (text.trim() === '') text = '{}';
  else if (!/^application\/json\s*(?:;|$)/i.test(contentType ?? '')) {
    return apiError('unsupported_media_type', 'The admin API reads JSON bodies: send Content-Type: application/json.');
  }
  let input: unknown;
  // The first key or string value holding half of a surrogate pair alone (`"\ud800"`): no file or
  // log line can keep it as sent, so it is refused as row writes refuse it (lib/parse-body.ts).
  let notUnicode: string | null = null;
  try {
    input = JSON.parse(text, (key: string, value: unknown) => {
      if (notUnicode === null && (LONE_SURROGATE.test(key) || (typeof value === 'string' && LONE_SURROGATE.test(value)))) notUnicode = key;
      return value;
    });
  } catch {
    const problem = jsonProblem(text);
    return apiError('invalid_json', problem === null ? 'The body is not valid JSON.' : `The body is not valid JSON: ${problem.problem} at line ${problem.line}, column ${problem.column}.`);
  }
  if (notUnicode !== null) {
    return apiError('invalid_body', `The body is not valid: the field ${JSON.stringify(notUnicode)} holds text that is not valid Unicode (half of a surrogate pair, such as \\ud800, alone); send whole characters.`);
  }
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  const problems = result.issues.map((issue) => `${fieldPath(issue)}: ${issue.message}`);
  return apiError('invalid_body', `The body is not valid: ${problems.join('; ')}.`);
}
