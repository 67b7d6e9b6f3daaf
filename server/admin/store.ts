// What the admin API has changed, kept in `<stateDir>/admin.json`: the connections it created
// (their settings as given, paths made absolute) and their keys (SHA-256 digests only, never a
// key). Read once at start; replaced whole on every change, atomically (temp file, fsync,
// rename, fsync of the folder: server/durable/state.ts), before the change is answered, so an answered
// change survives kill -9 and a crash leaves the old or the new file, never a torn one.
// The file is 0600: a Google source's secrets given in plaintext are stored here.
import { join } from 'node:path';
import * as v from 'valibot';
import { SCOPES } from '../auth.ts';
import { OPERATIONS } from '../../lib/parse-request.ts';
import { ConnectionEntries } from '../config/schema.ts';
import { EVENT_TYPES } from '../feed/event.ts';
import { diskWriter, readStateFile, type AtomicWriter } from '../durable/state.ts';

export const ADMIN_FILE = 'admin.json';

const isoDate = v.pipe(v.string(), v.isoTimestamp());

export const StoredKeySchema = v.object({
  /** The key's id in admin URLs (`/_admin/connections/crm/keys/{id}`); not secret. */
  id: v.pipe(v.string(), v.regex(/^[0-9a-f]{16}$/)),
  /** The key's first characters (`sr_AbCd1234`), so a person can tell keys apart; not enough to use it. */
  prefix: v.string(),
  sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)),
  /** What it may do, as keys before `operations` said it; left out by keys made since. */
  scope: v.optional(v.picklist(SCOPES)),
  /** What it may do (any of read, create, update, delete); left out: what `scope` says. */
  operations: v.optional(v.array(v.picklist(OPERATIONS))),
  /** The only tabs it sees; left out: every tab. */
  tabs: v.optional(v.array(v.string())),
  name: v.optional(v.string()),
  created: isoDate,
  /** When the key stops working, as made; absent: never. */
  expiresAt: v.optional(isoDate),
  /** When a rotated key stops working (the end of the overlap); absent: never. */
  expires: v.optional(isoDate),
  /** The key that replaced this one in a rotation. */
  replacedBy: v.optional(v.string()),
});

const { keys: _configKeys, ...entries } = ConnectionEntries;

/**
 * A webhook made with `POST /_admin/connections/crm/webhooks`. Its secret is kept in plaintext
 * (every delivery is signed with it), as a Google source's secrets given as text are: this file
 * is 0600, and in Redis the state is as private as the server's own connection to it.
 */
export const StoredWebhookSchema = v.object({
  name: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,64}$/)),
  url: v.string(),
  events: v.optional(v.array(v.picklist(EVENT_TYPES))),
  secret: v.string(),
  created: isoDate,
});

export const StoredConnectionSchema = v.object({
  ...entries,
  created: isoDate,
  updated: isoDate,
  keys: v.array(StoredKeySchema),
  /**
   * true: open to any caller, without a key. Anything else is closed, a connection with no keys
   * too; left out by versions before the flag (when no keys meant open): such a connection is
   * closed now, and the start says so in the log (server/admin/service.ts).
   */
  open: v.optional(v.boolean()),
  /** Where its events are POSTed (server/webhooks/); left out: none. */
  webhooks: v.optional(v.array(StoredWebhookSchema)),
});

const AdminFileSchema = v.object({
  version: v.literal(1),
  connections: v.array(StoredConnectionSchema),
});

export type StoredWebhook = v.InferOutput<typeof StoredWebhookSchema>;
export type StoredKey = v.InferOutput<typeof StoredKeySchema>;
export type StoredConnection = v.InferOutput<typeof StoredConnectionSchema>;

/** The connections of admin.json, in the order they were created; [] when there is no file yet. */
export async function readAdminFile(stateDir: string): Promise<StoredConnection[]> {
  const file = join(stateDir, ADMIN_FILE);
  // Starting without them would silently drop connections and let revoked keys' ids be reused.
  const saved = await readStateFile(file, AdminFileSchema, (problem) => `${file} is damaged (${problem}); restore it, or delete it to start without the connections the admin API created.`);
  return saved?.connections ?? [];
}

/** Replaces admin.json with `connections`, durably, before resolving. */
export async function writeAdminFile(stateDir: string, connections: readonly StoredConnection[], writer: AtomicWriter = diskWriter): Promise<void> {
  const file = join(stateDir, ADMIN_FILE);
  const temporary = await writer.prepare(file, `${JSON.stringify({ version: 1, connections }, null, 2)}\n`);
  await writer.commit(temporary, file);
}
