// "Connect a Google spreadsheet" (docs/dashboard.md): the OAuth authorization-code flow with
// `state` and PKCE, for the OAuth client in the config's `admin.google`.
//   POST /_admin/google/authorize {"id": "people", "spreadsheet": "https://docs.google.com/spreadsheets/d/1AbC.../edit"}
//     -> 200 {"url": "https://accounts.google.com/o/oauth2/v2/auth?client_id=...&state=...&code_challenge=..."}
//   GET /_admin/google/callback?code=...&state=...   (the browser, sent back by Google)
//     -> 303 /#connected=people&new-key=<ticket>, the connection made with the refresh token,
//        closed with a first key (or /#google-error=...)
//   POST /_admin/google/new-key {"ticket": "<ticket>"}
//     -> 200 {"connection": "people", "key": "sr_...", ...}, good once
// The callback carries no admin token (Google's redirect cannot add one); it is trusted only
// through `state`, a random value issued to an admin, good once and for 10 minutes, and the
// PKCE verifier that never left the server. The refresh token goes straight into the connection
// (kept in admin.json, 0600, written atomically by the service) and is never logged or shown.
// The new connection's first key cannot ride in the redirect (it would stay in the browser's
// history): the redirect carries a ticket, and the dashboard trades it, with the admin token,
// for the key. The ticket is good once and for 10 minutes, like `state`; the key is held in
// memory until then, on the instance that made it (as `state` is).
import { createHash, randomBytes } from 'node:crypto';
import * as v from 'valibot';
import { apiError, isApiError, type ApiError } from '../../lib/errors.ts';
import type { GoogleConnectConfig } from '../config/config.ts';
import { ConnectionEntries, GOOGLE_TOKEN_URL, strict, expected } from '../config/schema.ts';
import type { Logger } from '../log.ts';
import type { Answer } from '../http/respond.ts';
import { CreateConnectionSchema } from './requests.ts';
import type { AdminService, NewKeyView } from './service.ts';

export const CALLBACK_PATH = '/_admin/google/callback';
const SCOPE = 'https://www.googleapis.com/auth/spreadsheets';
const FLOW_LIFETIME_MS = 10 * 60 * 1000;
/** Flows started and not finished; past this the oldest is dropped (each needs the admin token to start). */
const MAX_PENDING = 100;
const GOOGLE_SHEETS_ROOT = 'https://sheets.googleapis.com/';

/** `POST /_admin/google/authorize`. */
export const AuthorizeSchema = strict('an object with "id" and "spreadsheet"', {
  id: ConnectionEntries.id,
  spreadsheet: v.pipe(v.string(expected('a spreadsheet URL or id')), v.nonEmpty(expected('a spreadsheet URL or id'))),
});

/** `POST /_admin/google/new-key`. */
export const NewKeySchema = strict('an object with "ticket"', {
  ticket: v.pipe(v.string(expected('the ticket from the dashboard\'s address')), v.nonEmpty(expected('the ticket from the dashboard\'s address'))),
});

/** A Google connection's first key, until the dashboard fetches it. */
interface Kept {
  readonly key: NewKeyView & { readonly connection: string };
  readonly expires: number;
}

interface Pending {
  readonly id: string;
  readonly spreadsheetId: string;
  readonly verifier: string;
  readonly redirectUri: string;
  readonly expires: number;
}

export interface GoogleConnectOptions {
  readonly config: GoogleConnectConfig;
  readonly service: AdminService;
  readonly log: Logger;
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
}

export class GoogleConnect {
  readonly #options: GoogleConnectOptions;
  readonly #pending = new Map<string, Pending>();
  readonly #newKeys = new Map<string, Kept>();

  constructor(options: GoogleConnectOptions) {
    this.#options = options;
  }

  /** `GET /_admin/google`: what the dashboard needs to offer the flow (no secret). */
  describe(origin: string): { clientId: string; redirectUri: string } {
    return { clientId: this.#options.config.clientId, redirectUri: this.#redirectUri(origin) };
  }

  /** The address of Google's consent page for a new connection `id` of `spreadsheet`. */
  authorize(input: v.InferOutput<typeof AuthorizeSchema>, origin: string): { url: string } | ApiError {
    const spreadsheetId = spreadsheetIdOf(input.spreadsheet);
    if (spreadsheetId === null) return apiError('invalid_body', 'spreadsheet: expected a Google Sheets URL (https://docs.google.com/spreadsheets/d/<id>/...) or a spreadsheet id');
    if (!isApiError(this.#options.service.get(input.id))) {
      return apiError('conflict', `There is already a connection "${input.id}"; choose another id.`);
    }
    const now = this.#now();
    for (const [state, pending] of this.#pending) if (pending.expires < now || this.#pending.size >= MAX_PENDING) this.#pending.delete(state);
    const state = randomBytes(32).toString('base64url');
    const verifier = randomBytes(32).toString('base64url');
    const redirectUri = this.#redirectUri(origin);
    this.#pending.set(state, { id: input.id, spreadsheetId, verifier, redirectUri, expires: now + FLOW_LIFETIME_MS });
    const url = new URL(this.#options.config.authorizationUrl);
    url.search = new URLSearchParams({
      client_id: this.#options.config.clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: SCOPE,
      // offline + consent: Google gives a refresh token every time, not only on the first sign-in.
      access_type: 'offline',
      prompt: 'consent',
      state,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    return { url: url.href };
  }

  /** Google's redirect back: redeem the code, check edit access, make the connection; a 303 to the dashboard either way. */
  async callback(requestUrl: string): Promise<Answer> {
    const query = new URL(requestUrl, 'http://localhost').searchParams;
    const state = query.get('state') ?? '';
    const pending = this.#pending.get(state);
    // Good once: a replayed or forged callback finds nothing.
    this.#pending.delete(state);
    if (pending === undefined || pending.expires < this.#now()) return back({ 'google-error': 'this sign-in is unknown or expired (it is good once, for 10 minutes); start again from the dashboard' });
    if (query.get('error') !== null) return back({ 'google-error': `the sign-in was not completed (${query.get('error')?.slice(0, 100)})` });
    const tokens = await this.#redeem(query.get('code') ?? '', pending);
    if (typeof tokens === 'string') return back({ 'google-error': tokens });
    const access = await this.#checkAccess(pending.spreadsheetId, tokens.accessToken);
    if (access === 'none') return back({ 'google-error': `the account you signed in with cannot open the spreadsheet ${pending.spreadsheetId}` });
    const input = v.safeParse(CreateConnectionSchema, {
      id: pending.id,
      source: {
        type: 'google',
        spreadsheetId: pending.spreadsheetId,
        ...(this.#options.config.sheetsRootUrl === undefined ? {} : { rootUrl: this.#options.config.sheetsRootUrl }),
        oauth: {
          clientId: this.#options.config.clientId,
          clientSecret: this.#options.config.clientSecretSetting,
          refreshToken: tokens.refreshToken,
          // The token address the refresh token came from renews it (Google's own unless configured).
          ...(this.#options.config.tokenUrl === GOOGLE_TOKEN_URL ? {} : { tokenUri: this.#options.config.tokenUrl }),
        },
      },
      readOnly: access !== 'edit',
    });
    if (!input.success) return back({ 'google-error': 'the connection could not be described' });
    const created = await this.#options.service.create(input.output, 'google-connect');
    if (isApiError(created)) return back({ 'google-error': created.message });
    this.#options.log.info('connected a Google spreadsheet', { connection: pending.id, readOnly: access !== 'edit' });
    if (created.newKey === undefined) return back({ connected: pending.id });
    return back({ connected: pending.id, 'new-key': this.#keep({ connection: pending.id, ...created.newKey }) });
  }

  /** `POST /_admin/google/new-key`: the first key of a connection the callback made, once. */
  newKey(input: v.InferOutput<typeof NewKeySchema>): Kept['key'] | ApiError {
    const kept = this.#newKeys.get(input.ticket);
    this.#newKeys.delete(input.ticket);
    if (kept === undefined || kept.expires < this.#now()) {
      return apiError('not_found', 'This key was already shown, or its 10 minutes are over; make a new key for the connection with POST /_admin/connections/{id}/keys.');
    }
    return kept.key;
  }

  /** Holds a new key for the dashboard under a fresh ticket. */
  #keep(key: Kept['key']): string {
    const now = this.#now();
    for (const [ticket, kept] of this.#newKeys) if (kept.expires < now || this.#newKeys.size >= MAX_PENDING) this.#newKeys.delete(ticket);
    const ticket = randomBytes(32).toString('base64url');
    this.#newKeys.set(ticket, { key, expires: now + FLOW_LIFETIME_MS });
    return ticket;
  }

  async #redeem(code: string, pending: Pending): Promise<{ accessToken: string; refreshToken: string } | string> {
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: pending.redirectUri,
      client_id: this.#options.config.clientId,
      client_secret: this.#options.config.clientSecret.reveal(),
      code_verifier: pending.verifier,
    });
    let answer: Response;
    try {
      answer = await this.#fetch()(this.#options.config.tokenUrl, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: form });
    } catch {
      return 'the token endpoint could not be reached';
    }
    const body = (await answer.json().catch(() => ({}))) as { access_token?: unknown; refresh_token?: unknown; error?: unknown };
    // Only OAuth's error code is repeated: a description might echo what was sent.
    if (!answer.ok) return `the token endpoint refused the code (${typeof body.error === 'string' ? body.error.slice(0, 60) : answer.status})`;
    if (typeof body.refresh_token !== 'string' || typeof body.access_token !== 'string') {
      return 'Google gave no refresh token; remove the app at myaccount.google.com/permissions and sign in again';
    }
    return { accessToken: body.access_token, refreshToken: body.refresh_token };
  }

  /**
   * 'edit', 'read' or 'none'. Reading is a small spreadsheets.get; editing is an empty
   * spreadsheets.batchUpdate, which Google checks against the caller's edit right and which
   * changes nothing. An answer that is neither 2xx nor 403 counts as read-only: a connection
   * that cannot write is safer than one that fails on its first write.
   */
  async #checkAccess(spreadsheetId: string, accessToken: string): Promise<'edit' | 'read' | 'none'> {
    const root = this.#options.config.sheetsRootUrl ?? GOOGLE_SHEETS_ROOT;
    const base = new URL(`v4/spreadsheets/${encodeURIComponent(spreadsheetId)}`, root.endsWith('/') ? root : `${root}/`).href;
    const headers = { Authorization: `Bearer ${accessToken}` };
    try {
      const read = await this.#fetch()(`${base}?fields=spreadsheetId`, { headers });
      await read.body?.cancel();
      if (!read.ok) return 'none';
      const edit = await this.#fetch()(`${base}:batchUpdate?fields=spreadsheetId`, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: '{"requests":[]}' });
      await edit.body?.cancel();
      return edit.ok ? 'edit' : 'read';
    } catch {
      return 'none';
    }
  }

  #redirectUri(origin: string): string {
    return this.#options.config.redirectUri ?? new URL(CALLBACK_PATH, origin).href;
  }

  #fetch(): typeof fetch {
    return this.#options.fetch ?? fetch;
  }

  #now(): number {
    return this.#options.now?.() ?? Date.now();
  }
}

/** `https://docs.google.com/spreadsheets/d/1AbC-_x/edit#gid=0` or `1AbC-_x` -> `1AbC-_x`; null for anything else. */
export function spreadsheetIdOf(input: string): string | null {
  const text = input.trim();
  const inUrl = /^https:\/\/docs\.google\.com\/spreadsheets\/(?:u\/\d+\/)?d\/([A-Za-z0-9_-]+)/.exec(text);
  if (inUrl !== null) return inUrl[1];
  return /^[A-Za-z0-9_-]{1,200}$/.test(text) ? text : null;
}

/** A 303 to the dashboard with the outcome in the fragment (never sent to a server, never in a Referer). */
function back(outcome: Record<string, string>): Answer {
  const fragment = new URLSearchParams(outcome).toString();
  return { status: 303, headers: { Location: `/#${fragment}`, 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' }, body: '' };
}
