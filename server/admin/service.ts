// What the admin API does, apart from HTTP: creates, changes and deletes connections while the
// server runs, and their keys and plans. `create({ id: 'crm', source: { type: 'file', path:
// 'crm.xlsx' } })` opens the file, writes admin.json durably, then adds the connection to the
// registry the app reads on every request: the next `GET /sheets/crm` is served.
//
// Rules:
// - One change at a time (a queue), each made durable before it is answered and before the
//   registry shows it; a change that cannot be saved changes nothing.
// - Connections from the config file are listed but read-only here (403 permission_denied):
//   the file stays the one place that says what they are.
// - A deleted connection leaves the registry first (new requests get 404), then its source is
//   closed, which waits for its writes in flight; the answer comes after that.
// - A change of source or readOnly closes the old source before opening the new one (two
//   sources on one file would fight over its journal); meanwhile requests get 503 with
//   Retry-After: 1. If the new one cannot be opened the old one is reopened and nothing changes.
// - A stored connection that cannot be opened at start (its file was moved) does not stop the
//   server: it answers 503 and the admin API shows why, so it can be fixed or deleted there.
// - What arrives through /_admin is held to the config's admin rules (admission.ts): no
//   `{"env"}`, endpoints from the allow-list, the server's credentials only when allowed, files
//   only inside admin.fileRoot. Every open of an admin connection gives up after
//   admin.openTimeoutMs (504), so a source that hangs holds up no later change.
// - With Redis (`shared`), the state lives there instead of admin.json (server/admin/redis-state.ts):
//   a change is made under the admin lease on the latest state, and answered once every instance
//   told of it has applied it; changes made elsewhere are applied here as they are published.
import { dirname } from 'node:path';
import { apiError, isApiError, type ApiError } from '../../lib/errors.ts';
import type { Connection } from '../connections.ts';
import { ConfigError, resolveConnection, type AdminRules, type ConnectionConfig } from '../config/config.ts';
import { DEFAULTS, GOOGLE_ENDPOINTS } from '../config/schema.ts';
import { ConnectionRegistry, engineOptions, openConnection, type OpenSettings } from '../connections.ts';
import { sameFile } from '../durable/lock.ts';
import type { Logger } from '../log.ts';
import type { QuotaStore } from '../quota/quota.ts';
import { sourceTypeOf, type ParsedSource } from '../sources/registry.ts';
import type { Source } from '../sources/source.ts';
import { isDiskFull } from '../durable/disk.ts';
import type { AtomicWriter } from '../durable/state.ts';
import type { AdminSnapshot, SharedAdminState } from './redis-state.ts';
import { redisUnavailable } from '../redis/unavailable.ts';
import { admitFile, checkRequestedSource, stillAdmitted, withTimeout, type AdmittedFile } from './admission.ts';
import { apiKeysOf, grantOf, isExpired, keyView, makeKey, type KeyGrant, type KeyView } from './keys.ts';
import { operationsOfScope } from '../auth.ts';
import { OPERATIONS } from '../../lib/parse-request.ts';
import type { ChangeConnectionInput, CreateConnectionInput, CreateKeyInput, RotateKeyInput } from './requests.ts';
import { brokenSource, pausedSource } from './standin-sources.ts';
import { writeAdminFile, type StoredConnection, type StoredKey } from './store.ts';
import type { UsageHistory } from '../usage/history.ts';
import { KEEP_DAYS, RECENT_REQUESTS, type Counts, type DayUsage, type RecentRequest } from '../usage/tally.ts';
import { usageOf, viewOf, type ConnectionView, type UsageView } from './views.ts';
import type { CreateWebhookInput } from './requests.ts';
import type { StoredWebhook } from './store.ts';
import { Secret } from '../config/secret.ts';
import type { WebhookHub } from '../webhooks/hub.ts';
import type { Delivery, PingResult } from '../webhooks/webhooks.ts';
import { newWebhookSecret, webhookConfigsOf, webhookView, type NewWebhookView, type WebhookView } from './webhook-views.ts';

export type { ConnectionView, UsageView } from './views.ts';

/** `GET /_admin/connections/crm/usage/history?days=30`. */
export interface UsageHistoryView {
  readonly connection: string;
  readonly days: number;
  /** The first and last day answered (UTC), `2026-10-25` .. `2026-11-23`. */
  readonly from: string;
  readonly to: string;
  readonly keepDays: number;
  readonly totals: Counts;
  readonly history: DayUsage[];
}

/** `GET /_admin/connections/crm/requests`. */
export interface RecentRequestsView {
  readonly connection: string;
  /** How many are kept per connection (in each instance's memory). */
  readonly kept: number;
  /** Newest first. */
  readonly requests: RecentRequest[];
}

export interface AdminServiceOptions {
  readonly registry: ConnectionRegistry;
  /** The config file's connections, as loaded (read-only here). */
  readonly configConnections: readonly ConnectionConfig[];
  /** The config file's path (relative paths in the admin API resolve against its folder; else the working directory). */
  readonly configPath?: string;
  readonly settings: OpenSettings;
  readonly quota: Pick<QuotaStore, 'used'>;
  readonly log: Logger;
  readonly now?: () => Date;
  readonly writer?: AtomicWriter;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The state in Redis, shared by every instance; admin.json when absent. */
  readonly shared?: SharedAdminState;
  /**
   * What admin connections may use (the config's `admin` section). Absent (the admin API is
   * off): changes are held to the defaults, and connections stored earlier open unchecked.
   */
  readonly rules?: AdminRules;
  /** Opens a connection (tests stand in a slow one); connections.ts's by default. */
  readonly openConnection?: typeof openConnection;
  /** Delivers the connections' webhooks; the admin API's are handed to it as they change. Absent: none can be made. */
  readonly webhooks?: WebhookHub;
  /** The requests per day, key and operation, and the recent ones (server/usage/); absent: not kept. */
  readonly usageHistory?: UsageHistory;
}

/** Where a connection to create comes from: a request's body, or the Google connect flow (built from the config's admin.google). */
export type ConnectionOrigin = 'request' | 'google-connect';

export interface NewKeyView extends KeyView {
  /** The key: shown in this answer only. */
  readonly key: string;
}

/** A new connection as answered: a closed one with its first key, shown in this answer only. */
export interface CreatedView extends ConnectionView {
  readonly newKey?: NewKeyView;
}

export class AdminService {
  readonly #options: AdminServiceOptions;
  readonly #now: () => Date;
  readonly #baseDir: string;
  readonly #rules: AdminRules;
  readonly #configs: Map<string, ConnectionConfig>;
  /** The admin API's connections as in admin.json, in creation order. */
  #stored: StoredConnection[] = [];
  /** Why a stored connection is not served (it could not be opened). */
  readonly #problems = new Map<string, string>();
  #queue: Promise<unknown> = Promise.resolve();
  /** With Redis: the revision of the state applied here, and the last change saved by this instance. */
  #revision = 0;
  #saved: { revision: number; told: number } | null = null;

  constructor(options: AdminServiceOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => new Date());
    this.#baseDir = options.configPath === undefined ? process.cwd() : dirname(options.configPath);
    this.#rules = options.rules ?? { fileRoot: this.#baseDir, allowServerCredentials: false, allowedEndpoints: GOOGLE_ENDPOINTS, openTimeoutMs: DEFAULTS.adminOpenMs };
    this.#configs = new Map(options.configConnections.map((connection) => [connection.id, connection]));
  }

  /** Opens the connections of admin.json into the registry (at start). An id the config file also has stops the start. */
  async open(stored: readonly StoredConnection[], revision = 0): Promise<void> {
    this.#revision = revision;
    const clash = stored.find((connection) => this.#configs.has(connection.id));
    if (clash !== undefined) {
      throw new Error(`the connection "${clash.id}" is in the config file and also in admin.json in the state folder (made with the admin API); rename or remove one of them`);
    }
    const now = this.#now();
    this.#stored = stored.map((connection) => ({ ...connection, keys: connection.keys.filter((key) => !isExpired(key, now)) }));
    for (const connection of this.#stored) {
      if (connection.open !== true && connection.keys.length === 0) this.#warnLocked(connection);
      this.#options.registry.set(await this.#openOrBroken(connection));
    }
    await this.#syncWebhooks([], this.#stored);
  }

  /** A closed connection without a usable key refuses everyone: said at start, with the way out. */
  #warnLocked(connection: StoredConnection): void {
    const id = encodeURIComponent(connection.id);
    this.#options.log.warn('a connection made with the admin API has no usable key, so it refuses every request (401); add a key, or open it to everyone', {
      connection: connection.id,
      addKey: `POST /_admin/connections/${id}/keys`,
      open: `PATCH /_admin/connections/${id} {"open": true}`,
      // Saved before the flag existed, when a connection without keys was open to everyone.
      ...(connection.open === undefined ? { why: 'saved by a version where a connection without keys was open; it is closed now' } : {}),
    });
  }

  // ---- reading --------------------------------------------------------------------------------

  list(): ConnectionView[] {
    return this.#options.registry.list().map((connection) => this.#view(connection));
  }

  get(id: string): ConnectionView | ApiError {
    const connection = this.#options.registry.get(id);
    return connection === undefined ? unknownConnection(id) : this.#view(connection);
  }

  keys(id: string): KeyView[] | ApiError {
    const view = this.get(id);
    return isApiError(view) ? view : [...view.keys];
  }

  key(id: string, keyId: string): KeyView | ApiError {
    const found = this.#findKey(id, keyId);
    return isApiError(found) ? found : keyView(found.key);
  }

  usage(id: string): UsageView | ApiError {
    const connection = this.#options.registry.get(id);
    return connection === undefined ? unknownConnection(id) : this.#usage(connection);
  }

  /** The `days` days ending today (UTC), oldest first, with their totals. */
  async usageHistory(id: string, days: number): Promise<UsageHistoryView | ApiError> {
    const connection = this.#options.registry.get(id);
    if (connection === undefined) return unknownConnection(id);
    const history = this.#options.usageHistory;
    if (history === undefined) return noUsageHistory();
    let each: DayUsage[];
    try {
      each = await history.history(connection.id, days);
    } catch {
      return redisUnavailable('The usage history could not be read');
    }
    const totals = { requests: 0, clientErrors: 0, serverErrors: 0 };
    for (const day of each) {
      totals.requests += day.requests;
      totals.clientErrors += day.clientErrors;
      totals.serverErrors += day.serverErrors;
    }
    return { connection: connection.id, days, from: each[0].day, to: each[each.length - 1].day, keepDays: KEEP_DAYS, totals, history: each };
  }

  /** The connection's last requests as this instance answered them, newest first. */
  recentRequests(id: string): RecentRequestsView | ApiError {
    const connection = this.#options.registry.get(id);
    if (connection === undefined) return unknownConnection(id);
    const history = this.#options.usageHistory;
    if (history === undefined) return noUsageHistory();
    return { connection: connection.id, kept: RECENT_REQUESTS, requests: history.recent(connection.id) };
  }

  // ---- connections ----------------------------------------------------------------------------

  /** Closed with a first key (answered once as `newKey`), unless `"open": true`. */
  create(input: CreateConnectionInput, origin: ConnectionOrigin = 'request'): Promise<CreatedView | ApiError> {
    // The flow's source is the config's admin.google (its endpoints, its clientSecret as written) and a fresh token.
    const refused = origin === 'request' ? checkRequestedSource(input.source, this.#rules) : null;
    if (refused !== null) return Promise.resolve(refused);
    return this.#serially(async () => {
      if (this.#options.registry.get(input.id) !== undefined) {
        return apiError('conflict', `There is already a connection "${input.id}"; choose another id, or change that one with PATCH.`);
      }
      const at = this.#now();
      const now = at.toISOString();
      const { keys: _none, open, ...fields } = input;
      const first = open === true ? null : makeKey({ operations: OPERATIONS }, undefined, at);
      const stored: StoredConnection = { ...fields, source: this.#absolute(input.source), created: now, updated: now, keys: first === null ? [] : [first.stored], open: open === true };
      const opened = await this.#openChecked(stored);
      if (isApiError(opened)) return opened;
      const saved = await this.#save([...this.#stored, stored]);
      if (saved !== null) {
        await this.#close(opened);
        return saved;
      }
      this.#options.registry.set(opened);
      const view = this.#view(opened);
      return first === null ? view : { ...view, newKey: { ...keyView(first.stored), key: first.secret } };
    });
  }

  change(id: string, input: ChangeConnectionInput): Promise<ConnectionView | ApiError> {
    const refused = input.source === undefined ? null : checkRequestedSource(input.source, this.#rules);
    if (refused !== null) return Promise.resolve(refused);
    return this.#serially(async () => {
      const found = this.#editable(id);
      if (isApiError(found)) return found;
      const { plan, cacheControl, rowId, tabs, source, id: _id, keys: _keys, ...flags } = input;
      const before = found;
      const now = this.#now();
      const usable = before.keys.filter((key) => !isExpired(key, now)).length;
      // Open and keyed at once would be a trap: keys that seem to protect it and do nothing.
      if (flags.open === true && before.open !== true && usable > 0) {
        return apiError('conflict', `The connection "${id}" has ${usable === 1 ? 'a key' : `${usable} keys`}; revoke ${usable === 1 ? 'it' : 'them'} first, then set it open (an open connection takes every caller without a key).`);
      }
      const { plan: _plan, cacheControl: _cacheControl, rowId: _rowId, tabs: _tabs, ...withoutBoth } = before;
      const next: StoredConnection = {
        ...withoutBoth,
        ...(rowId === null ? {} : rowId === undefined ? (before.rowId === undefined ? {} : { rowId: before.rowId }) : { rowId }),
        ...(tabs === null ? {} : tabs === undefined ? (before.tabs === undefined ? {} : { tabs: before.tabs }) : { tabs }),
        ...(plan === null ? {} : plan === undefined ? (before.plan === undefined ? {} : { plan: before.plan }) : { plan }),
        ...(cacheControl === null ? {} : cacheControl === undefined ? (before.cacheControl === undefined ? {} : { cacheControl: before.cacheControl }) : { cacheControl }),
        ...flags,
        ...(source === undefined ? {} : { source: this.#absolute(source) }),
        updated: this.#now().toISOString(),
      };
      const reopen = JSON.stringify(next.source) !== JSON.stringify(before.source) || next.readOnly !== before.readOnly || this.#problems.has(id);
      const current = this.#options.registry.get(id);
      let connection: Connection;
      if (reopen) {
        const swapped = await this.#swap(before, next, current);
        if (isApiError(swapped)) return swapped;
        connection = swapped;
      } else {
        // The same source: the same Idempotency-Key store goes on with it.
        connection = { ...this.#served(next, current?.source ?? brokenSource(id, 'not open')), idempotency: current?.idempotency };
      }
      const saved = await this.#save(this.#stored.map((stored) => (stored.id === id ? next : stored)));
      if (saved !== null) {
        // Not saved: back to the old source (the swap serves a broken one if even that fails).
        if (reopen) {
          const reverted = await this.#swap(next, before, connection);
          if (!isApiError(reverted)) this.#options.registry.set(reverted);
        }
        return saved;
      }
      this.#options.registry.set(connection);
      return this.#view(connection);
    });
  }

  remove(id: string): Promise<null | ApiError> {
    return this.#serially(async () => {
      const found = this.#editable(id);
      if (isApiError(found)) return found;
      const saved = await this.#save(this.#stored.filter((stored) => stored.id !== id));
      if (saved !== null) return saved;
      const connection = this.#options.registry.get(id);
      this.#options.registry.delete(id);
      this.#problems.delete(id);
      if (connection !== undefined) await this.#close(connection);
      return null;
    });
  }

  // ---- keys -----------------------------------------------------------------------------------

  createKey(id: string, input: CreateKeyInput): Promise<NewKeyView | ApiError> {
    return this.#serially(async () => {
      const found = this.#editable(id);
      if (isApiError(found)) return found;
      const now = this.#now();
      const grant: KeyGrant = {
        operations: input.operations ?? operationsOfScope(input.scope ?? 'write'),
        ...(input.tabs === undefined ? {} : { tabs: input.tabs }),
        ...(input.expiresAt === undefined ? {} : { expiresAt: input.expiresAt }),
      };
      const past = pastExpiry(grant, now);
      if (past !== null) return past;
      const made = makeKey(grant, input.name, now);
      // A key on an open connection closes it: from now on a request needs one of its keys.
      const failed = await this.#changeKeys(found.open === true ? { ...found, open: false } : found, [...found.keys, made.stored]);
      return failed ?? { ...keyView(made.stored), key: made.secret };
    });
  }

  rotateKey(id: string, keyId: string, input: RotateKeyInput): Promise<(NewKeyView & { replaces: KeyView }) | ApiError> {
    return this.#serially(async () => {
      const found = this.#findKey(id, keyId);
      if (isApiError(found)) return found;
      const { connection, key } = found;
      if (key.expires !== undefined) {
        return apiError('conflict', `The key ${key.prefix}… was already rotated and stops working at ${key.expires}; rotate its replacement, or revoke it.`);
      }
      const now = this.#now();
      const before = grantOf(key);
      const operations = input.operations ?? (input.scope === undefined ? before.operations : operationsOfScope(input.scope));
      const tabs = input.tabs === undefined ? before.tabs : (input.tabs ?? undefined);
      const expiresAt = input.expiresAt === undefined ? before.expiresAt : (input.expiresAt ?? undefined);
      const grant: KeyGrant = { operations, ...(tabs === undefined ? {} : { tabs }), ...(expiresAt === undefined ? {} : { expiresAt }) };
      const past = pastExpiry(grant, now);
      if (past !== null) return past;
      const made = makeKey(grant, key.name, now);
      // No overlap: the old key goes at once, as a revocation.
      const old: StoredKey | null = input.overlapSeconds === 0 ? null : { ...key, expires: new Date(now.getTime() + input.overlapSeconds * 1000).toISOString(), replacedBy: made.stored.id };
      const keys = connection.keys.flatMap((each) => (each.id !== keyId ? [each] : old === null ? [] : [old]));
      const failed = await this.#changeKeys(connection, [...keys, made.stored]);
      const replaced = old ?? { ...key, expires: now.toISOString(), replacedBy: made.stored.id };
      return failed ?? { ...keyView(made.stored), key: made.secret, replaces: keyView(replaced) };
    });
  }

  revokeKey(id: string, keyId: string): Promise<null | ApiError> {
    return this.#serially(async () => {
      const found = this.#findKey(id, keyId);
      if (isApiError(found)) return found;
      // The last key going leaves the connection closed to everyone, never open.
      return this.#changeKeys(found.connection, found.connection.keys.filter((key) => key.id !== keyId));
    });
  }

  // ---- webhooks -------------------------------------------------------------------------------

  /** A connection's webhooks, without secrets: the config file's (read-only here) or the admin API's. */
  webhooks(id: string): WebhookView[] | ApiError {
    if (this.#options.registry.get(id) === undefined) return unknownConnection(id);
    const config = this.#configs.get(id);
    if (config !== undefined) return (config.webhooks ?? []).map((hook) => webhookView(id, hook, 'config'));
    return (this.#stored.find((stored) => stored.id === id)?.webhooks ?? []).map((hook) => webhookView(id, hook, 'admin'));
  }

  /**
   * Adds a webhook, delivered from the next write on; its secret (made here unless given) is
   * shown in this answer only. 400 for a target the server refuses (a private address without
   * webhooks.allowPrivateTargets), naming why; 409 for a name the connection has.
   */
  async createWebhook(id: string, input: CreateWebhookInput): Promise<NewWebhookView | ApiError> {
    const webhooks = this.#options.webhooks;
    if (webhooks === undefined) return apiError('not_found', 'This server delivers no webhooks.');
    // Before the queue: a slow DNS answer holds up no other change.
    const why = await webhooks.whyRefused(input.url);
    if (why !== null) return apiError('invalid_body', `The body is not valid: url: refused: ${why}.`);
    return this.#serially(async () => {
      const found = this.#editable(id);
      if (isApiError(found)) return found;
      const hooks = found.webhooks ?? [];
      const names = new Set(hooks.map((hook) => hook.name));
      let name = input.name;
      if (name !== undefined && names.has(name)) return apiError('conflict', `The connection "${id}" has a webhook "${name}" already; choose another name, or delete that one first.`);
      for (let n = hooks.length + 1; name === undefined; n++) if (!names.has(`hook-${n}`)) name = `hook-${n}`;
      const made: StoredWebhook = {
        name,
        url: input.url,
        ...(input.events === undefined ? {} : { events: input.events }),
        secret: input.secret ?? newWebhookSecret(),
        created: this.#now().toISOString(),
      };
      const next: StoredConnection = { ...found, webhooks: [...hooks, made], updated: made.created };
      const saved = await this.#save(this.#stored.map((stored) => (stored.id === id ? next : stored)));
      return saved ?? { ...webhookView(id, made, 'admin'), secret: made.secret };
    });
  }

  /** Removes a webhook: its delivery in flight is cut off, and events not yet delivered to it are not. */
  removeWebhook(id: string, name: string): Promise<null | ApiError> {
    return this.#serially(async () => {
      const found = this.#editable(id);
      if (isApiError(found)) return found;
      const hooks = found.webhooks ?? [];
      if (!hooks.some((hook) => hook.name === name)) return unknownWebhook(id, name);
      const { webhooks: _hooks, ...rest } = found;
      const left = hooks.filter((hook) => hook.name !== name);
      const next: StoredConnection = { ...rest, ...(left.length === 0 ? {} : { webhooks: left }), updated: this.#now().toISOString() };
      return this.#save(this.#stored.map((stored) => (stored.id === id ? next : stored)));
    });
  }

  /** A webhook's recent deliveries from this instance, newest first. */
  async deliveries(id: string, name: string): Promise<Delivery[] | ApiError> {
    const known = this.#knownWebhook(id, name);
    if (known !== null) return known;
    return [...((await this.#options.webhooks?.deliveries(id, name)) ?? [])].reverse();
  }

  /** Sends the test event (`"type": "ping"`) now, once, outside the outbox, and answers how the receiver answered. */
  async ping(id: string, name: string): Promise<PingResult | ApiError> {
    const known = this.#knownWebhook(id, name);
    if (known !== null) return known;
    const result = await this.#options.webhooks?.ping(id, name);
    return result ?? unknownWebhook(id, name);
  }

  #knownWebhook(id: string, name: string): ApiError | null {
    const listed = this.webhooks(id);
    if (isApiError(listed)) return listed;
    return listed.some((hook) => hook.name === name) ? null : unknownWebhook(id, name);
  }

  /** Hands the admin API's webhooks to the deliverer: every connection in `before` or `after`, as `after` has them. */
  async #syncWebhooks(before: readonly StoredConnection[], after: readonly StoredConnection[]): Promise<void> {
    const webhooks = this.#options.webhooks;
    if (webhooks === undefined) return;
    const ids = new Set([...before, ...after].map((stored) => stored.id).filter((id) => !this.#configs.has(id)));
    for (const id of ids) {
      const hooks = after.find((stored) => stored.id === id)?.webhooks ?? [];
      try {
        await webhooks.set(id, webhookConfigsOf(hooks, (text) => new Secret(text)));
      } catch (error) {
        this.#options.log.error('the webhooks of a connection could not be started; they deliver after a restart', { connection: id, error: String(error) });
      }
    }
  }

  // ---- helpers --------------------------------------------------------------------------------

  #serially<T>(change: () => Promise<T | ApiError>): Promise<T | ApiError> {
    const shared = this.#options.shared;
    if (shared === undefined) return this.#queued(change);
    // The lease before this instance's queue, so changes published meanwhile can be applied here.
    return shared.underLock(async (): Promise<T | ApiError> => {
      const result = await this.#queued(async () => {
        const latest = await shared.load();
        // Revision 0 with some here: Redis lost the state; this change saves it again from here.
        if (latest.revision !== this.#revision && !(latest.revision === 0 && this.#revision !== 0)) await this.#apply(latest);
        this.#saved = null;
        return change();
      });
      const saved = this.#saved;
      if (saved !== null) await shared.applied(saved.revision, saved.told);
      return result;
    }).catch((error: unknown) => {
      // The lease's 503s (busy, Redis away) as they are; another failure in Redis: nothing was changed.
      if (isApiError(error)) return error;
      this.#options.log.error('an admin change failed in Redis', { error: String(error) });
      return redisUnavailable('The change was not made');
    });
  }

  #queued<T>(change: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(change);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** With Redis: applies every change other instances publish, from now on. */
  follow(): Promise<void> {
    const shared = this.#options.shared;
    if (shared === undefined) return Promise.resolve();
    const current = () => ({ revision: this.#revision, connections: this.#stored });
    return shared.follow(current, (snapshot) => this.#queued(() => (snapshot.revision !== this.#revision ? this.#apply(snapshot) : Promise.resolve())));
  }

  /** Makes the registry serve `snapshot` (saved by another instance): opens, changes and closes connections. */
  async #apply(snapshot: AdminSnapshot): Promise<void> {
    const { registry, log } = this.#options;
    const before = new Map(this.#stored.map((stored) => [stored.id, stored]));
    const served = snapshot.connections.filter((stored) => {
      if (!this.#configs.has(stored.id)) return true;
      log.error('a connection made with the admin API on another instance has the id of one in this instance\'s config file; it is not served here', { connection: stored.id });
      return false;
    });
    for (const next of served) {
      const old = before.get(next.id);
      if (old !== undefined && JSON.stringify(old) === JSON.stringify(next)) continue;
      const current = registry.get(next.id);
      const reopen = old === undefined || JSON.stringify(old.source) !== JSON.stringify(next.source) || old.readOnly !== next.readOnly || this.#problems.has(next.id);
      if (!reopen && current !== undefined) {
        registry.set({ ...this.#served(next, current.source), idempotency: current.idempotency });
        continue;
      }
      if (current !== undefined && old !== undefined) {
        registry.set(this.#served(old, pausedSource(old.id)));
        await this.#close(current);
      }
      registry.set(await this.#openOrBroken(next));
    }
    for (const old of before.values()) {
      if (served.some((stored) => stored.id === old.id)) continue;
      const current = registry.get(old.id);
      registry.delete(old.id);
      this.#problems.delete(old.id);
      if (current !== undefined) await this.#close(current);
    }
    // All of them, clashing ones too: a change saved from here must not drop them for the others.
    const previous = this.#stored;
    this.#stored = snapshot.connections;
    this.#revision = snapshot.revision;
    await this.#syncWebhooks(previous, served);
  }

  /** An admin connection to change; 404 for none, 403 for one of the config file's. */
  #editable(id: string): StoredConnection | ApiError {
    if (this.#configs.has(id)) {
      return apiError('permission_denied', `The connection "${id}" comes from the config file; change it there and restart the server.`);
    }
    return this.#stored.find((stored) => stored.id === id) ?? unknownConnection(id);
  }

  #findKey(id: string, keyId: string): { connection: StoredConnection; key: StoredKey } | ApiError {
    const connection = this.#editable(id);
    if (isApiError(connection)) return connection;
    const now = this.#now();
    const key = connection.keys.find((each) => each.id === keyId && !isExpired(each, now));
    return key === undefined ? apiError('not_found', `The connection "${id}" has no key ${JSON.stringify(keyId).slice(0, 40)}.`) : { connection, key };
  }

  /** Saves a connection's new keys and puts them in the registry; expired keys are dropped on the way. */
  async #changeKeys(connection: StoredConnection, keys: StoredKey[]): Promise<ApiError | null> {
    const now = this.#now();
    const next: StoredConnection = { ...connection, keys: keys.filter((key) => !isExpired(key, now)), updated: now.toISOString() };
    const saved = await this.#save(this.#stored.map((stored) => (stored.id === connection.id ? next : stored)));
    if (saved !== null) return saved;
    const served = this.#options.registry.get(connection.id);
    if (served !== undefined) this.#options.registry.set({ ...served, keys: apiKeysOf(next.keys), open: next.open === true });
    return null;
  }

  /** Writes admin.json; null when saved, else the error to answer (and nothing has changed). */
  async #save(next: StoredConnection[]): Promise<ApiError | null> {
    const shared = this.#options.shared;
    if (shared !== undefined) {
      try {
        this.#saved = await shared.save(next);
      } catch (error) {
        this.#options.log.error('the admin API could not save its state in Redis', { error: String(error) });
        return redisUnavailable('The change was not saved');
      }
      this.#revision = this.#saved.revision;
      const before = this.#stored;
      this.#stored = next;
      await this.#syncWebhooks(before, next);
      return null;
    }
    try {
      await writeAdminFile(this.#options.settings.stateDir, next, this.#options.writer);
    } catch (error) {
      this.#options.log.error('the admin API could not save admin.json', { error: String(error) });
      if (isDiskFull(error)) return apiError('insufficient_storage', 'The disk is full: the change was not saved.');
      return apiError('internal_error', 'The change could not be saved in the state folder; it has been logged.');
    }
    const before = this.#stored;
    this.#stored = next;
    await this.#syncWebhooks(before, next);
    return null;
  }

  /**
   * A source's paths (a workbook, a Google credentials file) made absolute, so a later working
   * directory does not matter. Relative to admin.fileRoot: the folder the admin API's files are in.
   */
  #absolute(source: ParsedSource): ParsedSource {
    return sourceTypeOf(source).absolutePaths(source, this.#rules.fileRoot);
  }

  /** Opens a stored connection for serving, or answers why not: 409 for a file another connection serves, 400 otherwise. */
  async #openChecked(stored: StoredConnection): Promise<Connection | ApiError> {
    const taken = this.#fileTaken(stored);
    if (taken !== null) return taken;
    try {
      // A change made through /_admin: its files are held to admin.fileRoot whether or not the server was given rules.
      return await this.#open(stored, true);
    } catch (error) {
      if (isApiError(error)) return error;
      const problem = error instanceof ConfigError ? error.problems.join('; ') : error instanceof Error ? error.message : String(error);
      return apiError('invalid_body', `The source cannot be opened: ${problem}.`);
    }
  }

  /**
   * Opens a stored connection. Its file (or credentials file) must be inside admin.fileRoot,
   * checked before the open (so a FIFO never blocks it) and after (so a path swapped meanwhile
   * is not served); at start with the admin API off there are no rules to hold it to. Throws
   * an ApiError for a refused file or an open that outlasts admin.openTimeoutMs.
   */
  async #open(stored: StoredConnection, checkFiles = this.#options.rules !== undefined): Promise<Connection> {
    // The server file the source reads: a workbook, or a Google key file.
    const file = sourceTypeOf(stored.source).serverFile(stored.source, 'source');
    let admitted: AdmittedFile | null = null;
    if (checkFiles && file !== null) {
      const checked = await admitFile(file, this.#rules);
      if (isApiError(checked)) throw checked;
      admitted = checked;
    }
    const resolved = resolveConnection(stored, this.#baseDir, this.#options.env);
    const open = this.#options.openConnection ?? openConnection;
    const { openTimeoutMs } = this.#rules;
    const opened = await withTimeout(open(resolved, this.#options.settings, this.#options.log), openTimeoutMs, (late) => {
      this.#options.log.warn('a connection opened after the admin API had given up on it; closing it', { connection: stored.id });
      void this.#close(late);
    });
    if (opened === 'timeout') {
      throw apiError('upstream_timeout', `The source did not open within ${openTimeoutMs} ms (admin.openTimeoutMs); nothing was changed.`);
    }
    if (file !== null && admitted !== null) {
      const swapped = await stillAdmitted(file, this.#rules, admitted);
      if (swapped !== null) {
        await this.#close(opened);
        throw swapped;
      }
    }
    this.#problems.delete(stored.id);
    // Closed unless stored open: an empty key list never opens an admin connection.
    return { ...opened, keys: apiKeysOf(stored.keys), open: stored.open === true };
  }

  async #openOrBroken(stored: StoredConnection): Promise<Connection> {
    try {
      return await this.#open(stored);
    } catch (error) {
      const problem = error instanceof ConfigError ? error.problems.join('; ') : isApiError(error) || error instanceof Error ? error.message : String(error);
      this.#problems.set(stored.id, problem);
      this.#options.log.error('a connection made with the admin API could not be opened; it answers 503 until it is fixed', { connection: stored.id, problem });
      return this.#served(stored, brokenSource(stored.id, problem));
    }
  }

  /** A stored connection served through `source` (its keys, plan and engine options from `stored`). */
  #served(stored: StoredConnection, source: Source): Connection {
    return { id: stored.id, source, keys: apiKeysOf(stored.keys), open: stored.open === true, plan: stored.plan, readOnly: stored.readOnly, cacheControl: stored.cacheControl, engine: engineOptions(stored, this.#options.settings) };
  }

  /**
   * Replaces `current` (serving `from`) with a connection opened from `to`. Requests meanwhile
   * get 503; if `to` cannot be opened, `from` is reopened and the error answered.
   */
  async #swap(from: StoredConnection, to: StoredConnection, current: Connection | undefined): Promise<Connection | ApiError> {
    const { registry } = this.#options;
    const taken = this.#fileTaken(to);
    if (taken !== null) return taken;
    registry.set(this.#served(from, pausedSource(from.id)));
    if (current !== undefined) await this.#close(current);
    const opened = await this.#openChecked(to);
    if (!isApiError(opened)) return opened;
    registry.set(await this.#openOrBroken(from));
    return opened;
  }

  /** 409 when the file `stored` would serve is served by another connection already (read-only or not); null otherwise. */
  #fileTaken(stored: StoredConnection): ApiError | null {
    const path = sourceTypeOf(stored.source).servedFile(stored.source)?.path;
    if (path === undefined) return null;
    const other = this.#options.registry.list().find((connection) => connection.id !== stored.id && sameFile(this.#filePathOf(connection.id), path));
    if (other === undefined) return null;
    return apiError('conflict', `The file ${path} is already served by the connection "${other.id}"; two connections on one file would overwrite each other's writes.`);
  }

  #filePathOf(id: string): string | undefined {
    const source = this.#configs.get(id)?.source ?? this.#stored.find((stored) => stored.id === id)?.source;
    return source === undefined ? undefined : sourceTypeOf(source).servedFile(source)?.path;
  }

  async #close(connection: Connection): Promise<void> {
    try {
      await connection.source.close();
    } catch (error) {
      this.#options.log.error('closing a connection\'s source failed', { connection: connection.id, error: String(error) });
    }
    // After the source: its last fold hands the keys of the writes it folds to the store.
    await connection.idempotency?.close().catch((error: unknown) => {
      this.#options.log.error('closing a connection\'s Idempotency-Key store failed', { connection: connection.id, error: String(error) });
    });
  }

  #usage(connection: Connection): UsageView {
    return usageOf(connection, this.#options.quota.used(connection.id, connection.plan), this.#now());
  }

  #view(connection: Connection): ConnectionView {
    return viewOf({
      connection,
      config: this.#configs.get(connection.id),
      stored: this.#stored.find((each) => each.id === connection.id),
      problem: this.#problems.get(connection.id) ?? null,
      requests: this.#options.quota.used(connection.id, connection.plan),
      now: this.#now(),
    });
  }
}

/** 400 for a key that would be expired when made: surely a typo in the year. */
function pastExpiry(grant: KeyGrant, now: Date): ApiError | null {
  if (grant.expiresAt === undefined || Date.parse(grant.expiresAt) > now.getTime()) return null;
  return apiError('invalid_body', `The body is not valid: expiresAt: ${grant.expiresAt} has passed; give a moment in the future.`);
}

function unknownWebhook(id: string, name: string): ApiError {
  return apiError('not_found', `The connection "${id}" has no webhook ${JSON.stringify(name).slice(0, 70)}.`);
}

function noUsageHistory(): ApiError {
  return apiError('not_found', 'This server keeps no usage history.');
}

function unknownConnection(id: string): ApiError {
  return apiError('not_found', `There is no connection "${id}".`);
}

