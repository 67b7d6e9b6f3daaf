// Every call to the Sheets API goes through `callUpstream`: a timeout per attempt, bounded
// retries with exponential backoff and full jitter on 429 and 5xx, and Google's answer turned
// into the contract's errors. `GET /sheets/crm` while Google answers 503 three times, then 200
// -> the rows, about 1.5 s late; five 503s in a row -> 503 upstream_unavailable, Retry-After.
import { apiError, isApiError, type ApiError } from '../../../lib/errors.ts';
import type { SignInKind } from './sign-in.ts';

export interface RetryPolicy {
  /** Retries after the first attempt (default 4: five attempts in all). */
  readonly retries: number;
  /** The first backoff ceiling; each retry doubles it (default 500 ms). */
  readonly baseDelayMs: number;
  /** No single wait is longer than this (default 8 s). */
  readonly maxDelayMs: number;
  /** No retry starts once this long has passed since the first attempt (default 20 s). */
  readonly budgetMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 4, baseDelayMs: 500, maxDelayMs: 8_000, budgetMs: 20_000 };
export const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * How safe a call is to send twice. `idempotent` (reads, values.batchUpdate of fixed cells) is
 * retried on 429, 5xx and network failures. `once` (values.append, row deletion) could land
 * twice if Google applied it and still failed to answer, so it is retried only on 429, which
 * Google sends before doing anything.
 */
export type Repeatable = 'idempotent' | 'once';

export interface CallSettings {
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
  /** Whether a 403 means "no edit access" (a write) or "no access at all" (a read). */
  readonly purpose: 'read' | 'write';
  readonly repeatable: Repeatable;
  /** Names the spreadsheet in messages: `spreadsheet 1AbC...`. */
  readonly what: string;
  /** The credentials in use, to say which setting to fix when Google refuses to sign in. */
  readonly signIn?: SignInKind;
  /** Called before each attempt, outside its timeout: waits for a quota slot, or throws 503. */
  readonly admit?: () => Promise<void>;
  /** For tests: waits without timers; defaults to setTimeout. */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly random?: () => number;
}

/** What Google answered, read off a GaxiosError or any error with a status. */
export interface UpstreamFailure {
  readonly status: number | null;
  readonly message: string;
  readonly retryAfterSeconds: number | null;
  /** Set when the token endpoint refused to sign in (OAuth's `{"error": "invalid_grant", "error_description"}`). */
  readonly oauth?: { readonly error: string; readonly description: string };
}

export async function callUpstream<T>(settings: CallSettings, send: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const sleep = settings.sleep ?? defaultSleep;
  const random = settings.random ?? Math.random;
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    await settings.admit?.();
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error('upstream timeout'));
    }, settings.timeoutMs);
    try {
      return await send(controller.signal);
    } catch (error) {
      // A hung upstream is not retried: the caller has already waited timeoutMs.
      if (timedOut) throw timeoutError(settings);
      // Already the contract's answer (credentials that cannot be loaded): retrying changes nothing.
      if (isApiError(error)) throw error;
      const failure = describeFailure(error);
      if (!isRetryable(failure, settings.repeatable)) throw toApiError(failure, settings);
      const wait = backoffMs(attempt, failure, settings.retry, random);
      if (attempt >= settings.retry.retries || Date.now() - started + wait > settings.retry.budgetMs) throw exhausted(failure, settings);
      await sleep(wait);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Full jitter: a uniform wait below min(max, base * 2^attempt); Google's Retry-After wins when longer. */
export function backoffMs(attempt: number, failure: UpstreamFailure, policy: RetryPolicy, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  const jittered = Math.floor(random() * ceiling);
  const asked = failure.retryAfterSeconds === null ? 0 : Math.min(policy.maxDelayMs, failure.retryAfterSeconds * 1000);
  return Math.max(jittered, asked);
}

/**
 * The longest one call can take: attempts failing just before their timeout, with the longest
 * waits between, but no retry begun past the budget, and the last attempt cut at its timeout.
 */
export function worstCaseMs(policy: RetryPolicy, timeoutMs: number): number {
  let elapsed = timeoutMs;
  for (let attempt = 0; attempt < policy.retries; attempt++) {
    const next = elapsed + policy.maxDelayMs;
    if (next > policy.budgetMs) break;
    elapsed = next + timeoutMs;
  }
  return Math.min(elapsed, policy.budgetMs + timeoutMs);
}

function isRetryable(failure: UpstreamFailure, repeatable: Repeatable): boolean {
  if (failure.status === 429) return true;
  if (repeatable === 'once') return false;
  return failure.status === null || failure.status >= 500;
}

export function describeFailure(error: unknown): UpstreamFailure {
  const record = (typeof error === 'object' && error !== null ? error : {}) as {
    status?: unknown;
    code?: unknown;
    message?: unknown;
    response?: { status?: unknown; headers?: unknown; data?: unknown };
  };
  const status = typeof record.response?.status === 'number' ? record.response.status : typeof record.status === 'number' ? record.status : null;
  const message = googleMessage(record.response?.data) ?? (typeof record.message === 'string' ? record.message : String(error));
  const oauth = oauthError(record.response?.data);
  return { status, message, retryAfterSeconds: retryAfterOf(record.response?.headers), ...(oauth === null ? {} : { oauth }) };
}

/** OAuth's error body (`{"error": "invalid_grant", "error_description": "..."}`), unlike the Sheets API's `{"error": {...}}`. */
function oauthError(data: unknown): { error: string; description: string } | null {
  const body = (typeof data === 'string' ? safeJson(data) : data) as { error?: unknown; error_description?: unknown } | null;
  if (typeof body?.error !== 'string') return null;
  return { error: body.error, description: typeof body.error_description === 'string' ? body.error_description : '' };
}

function googleMessage(data: unknown): string | null {
  const body = typeof data === 'string' ? safeJson(data) : data;
  const message = (body as { error?: { message?: unknown } } | null)?.error?.message;
  return typeof message === 'string' ? message : null;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function retryAfterOf(headers: unknown): number | null {
  let value: unknown = null;
  if (headers !== null && typeof headers === 'object') {
    value = typeof (headers as Headers).get === 'function' ? (headers as Headers).get('retry-after') : (headers as Record<string, unknown>)['retry-after'];
  }
  if (typeof value !== 'string' || !/^\d+$/.test(value.trim())) return null;
  return Number(value.trim());
}

/** Google's answer as the contract's error. Google's own message is never sent to clients: it may name accounts. */
export function toApiError(failure: UpstreamFailure, settings: Pick<CallSettings, 'purpose' | 'what' | 'signIn'>): ApiError {
  const { status } = failure;
  if (failure.oauth !== undefined && status !== null && status >= 400 && status < 500 && status !== 429) return signInRefused(failure.oauth, settings.signIn);
  if (status === 404) return apiError('not_found', `The Google ${settings.what} was not found: it was deleted or its id is wrong.`);
  if (status === 403 && settings.purpose === 'write') {
    return apiError('write_error', `This server's Google credentials may not edit the ${settings.what}; nothing was written.`);
  }
  if (status === 403) return apiError('upstream_error', `This server's Google credentials may not read the ${settings.what}; share it with them.`);
  if (status === 401) return apiError('upstream_error', 'Google refused this server\'s credentials (they may have expired); nothing was done.');
  if (status === 400 && /api key not valid/i.test(failure.message)) return apiError('upstream_error', 'Google refused this server\'s API key; nothing was done.');
  if (status === 400 && /unable to parse range/i.test(failure.message)) return apiError('tab_not_found', `A tab of the ${settings.what} no longer exists.`);
  if (status === 429 || status === null || status >= 500) return exhausted(failure, settings);
  return apiError('upstream_error', `Google Sheets refused the request (status ${status}); nothing was done.`);
}

/**
 * Google's token endpoint refused to sign in: a 502 saying what to fix, in the configuration's
 * terms. Google's description picks the advice; it is not passed on, and no secret is.
 */
export function signInRefused(oauth: { readonly error: string; readonly description: string }, signIn: SignInKind = { grant: 'other', setting: 'the credentials' }): ApiError {
  const refused = (advice: string) => apiError('upstream_error', `Google refused to sign this server in with ${signIn.setting}: ${advice}; nothing was done.`);
  if (/\b(iat|exp)\b|timeframe/i.test(oauth.description)) {
    return refused("this machine's clock is off by more than a few minutes from Google's (a signed sign-in request is valid only around the time it was made): set the clock right (NTP)");
  }
  if (oauth.error === 'invalid_client') return refused('Google does not know oauth.clientId, or oauth.clientSecret is not its secret: copy both from the Cloud console');
  if (oauth.error === 'invalid_grant' && signIn.grant === 'service-account') {
    return refused('the service account key was deleted or disabled, or its account no longer exists: create a new JSON key for the account and configure it');
  }
  if (oauth.error === 'invalid_grant' && signIn.grant === 'refresh-token') return refused('the refresh token has expired or was revoked: obtain a new one');
  if (oauth.error === 'invalid_scope') return refused('the credentials may not ask for the Google Sheets scope');
  return refused(`Google answered "${oauth.error.replace(/[^a-z_]/gi, '').slice(0, 40)}": check the credentials`);
}

function exhausted(failure: UpstreamFailure, settings: Pick<CallSettings, 'purpose' | 'what'>): ApiError {
  const retryAfter = String(Math.max(1, failure.retryAfterSeconds ?? (failure.status === 429 ? 60 : 10)));
  const why = failure.status === 429 ? 'its request quota is used up for now' : failure.status === null ? 'it could not be reached' : `it answered ${failure.status}`;
  // A write that could not be retried may or may not have landed: say so rather than guess.
  const outcome = settings.purpose === 'write' && failure.status !== 429 ? ' The write may or may not have been applied; read the rows before sending it again.' : '';
  return apiError('upstream_unavailable', `Google Sheets is unavailable: ${why}.${outcome}`, { 'Retry-After': retryAfter });
}

function timeoutError(settings: Pick<CallSettings, 'purpose' | 'timeoutMs'>): ApiError {
  const outcome = settings.purpose === 'write' ? ' The write may or may not have been applied; read the rows before sending it again.' : '';
  return apiError('upstream_timeout', `Google Sheets did not answer within ${settings.timeoutMs / 1000} s.${outcome}`);
}

function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
