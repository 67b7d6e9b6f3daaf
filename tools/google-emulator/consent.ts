// Google's sign-in for an OAuth client, emulated: the consent page and the authorization_code
// grant, so a web or installed-app flow (with `state` and PKCE) can be tested offline.
//   GET  /o/oauth2/v2/auth?client_id=C&redirect_uri=R&response_type=code&state=S&code_challenge=X&code_challenge_method=S256
//        -> a page asking which account signs in, with Allow and Deny
//   POST /o/oauth2/v2/auth/approve   (the page's form) -> 302 R?code=K&state=S, or R?error=access_denied&state=S
//   POST /token grant_type=authorization_code&code=K&redirect_uri=R&client_id=C&code_verifier=V
//        -> {access_token, refresh_token, ...} for the account; a code works once, for 10 minutes.
// The account typed on the page is the principal: spreadsheets grant it 'writer' or 'reader'
// (`access: { 'ann@example.com': 'writer' }`); the tokens come from the emulator's token service
// (tokens.ts), so the refresh token works in its refresh grant and the access token in the API.
import { createHash, randomBytes } from 'node:crypto';
import type { ApiRequest, ApiResponse, State } from './exchange.ts';

const AUTHORIZE_PATH = '/o/oauth2/v2/auth';
const APPROVE_PATH = '/o/oauth2/v2/auth/approve';
const CODE_LIFETIME_MS = 10 * 60 * 1000;
/** The parameters the consent page carries from the authorization request to its form. */
const CARRIED = ['client_id', 'redirect_uri', 'state', 'scope', 'code_challenge', 'code_challenge_method'] as const;

interface IssuedCode {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly challenge: string | null;
  readonly method: string;
  readonly account: string;
  readonly scope: string;
  readonly expires: number;
}

/** The codes each running emulator has issued and not yet seen redeemed. */
const issuedCodes = new WeakMap<State, Map<string, IssuedCode>>();

/** The consent flow's answer, or undefined when the request is not part of it (the router goes on). */
export function consentRoute(state: State, request: ApiRequest): ApiResponse | undefined {
  if (request.path === AUTHORIZE_PATH && request.method === 'GET') return consentPage(request.query);
  if (request.path === APPROVE_PATH && request.method === 'POST') return approve(state, new URLSearchParams(request.body));
  if (request.path === '/token' && request.method === 'POST') {
    const form = new URLSearchParams(request.body);
    if (form.get('grant_type') === 'authorization_code') return redeem(state, form);
  }
  return undefined;
}

function consentPage(query: URLSearchParams): ApiResponse {
  const problem = checkAuthorization(query);
  if (problem !== null) return html(400, `<h1>Error 400: invalid_request</h1><p>${escape(problem)}</p>`);
  const hidden = CARRIED.map((name) => `<input type="hidden" name="${name}" value="${escape(query.get(name) ?? '')}">`).join('');
  return html(
    200,
    `<h1>Sign in to continue</h1><p>The application ${escape(query.get('client_id') ?? '')} asks for ${escape(query.get('scope') ?? '')}.</p>` +
      `<form method="post" action="${APPROVE_PATH}">${hidden}<label>Account <input name="account" id="account" value="${escape(query.get('login_hint') ?? '')}" required></label>` +
      `<button name="decision" value="allow" id="allow">Allow</button> <button name="decision" value="deny" id="deny" formnovalidate>Deny</button></form>`,
  );
}

function checkAuthorization(query: URLSearchParams): string | null {
  if ((query.get('client_id') ?? '') === '') return 'Missing required parameter: client_id';
  if (query.get('response_type') !== 'code') return 'Unsupported response_type: only code is emulated';
  const redirect = query.get('redirect_uri') ?? '';
  if (!URL.canParse(redirect) || !/^https?:$/.test(new URL(redirect).protocol)) return 'Invalid parameter value for redirect_uri: an absolute http(s) URL is required';
  const method = query.get('code_challenge_method');
  if (query.get('code_challenge') !== null && method !== null && method !== 'S256' && method !== 'plain') return 'Invalid code_challenge_method';
  return null;
}

function approve(state: State, form: URLSearchParams): ApiResponse {
  const problem = checkAuthorization(new URLSearchParams([...form, ['response_type', 'code']]));
  if (problem !== null) return html(400, `<h1>Error 400: invalid_request</h1><p>${escape(problem)}</p>`);
  const back = new URL(form.get('redirect_uri') ?? '');
  const stateParam = form.get('state');
  const account = (form.get('account') ?? '').trim();
  if (form.get('decision') !== 'allow' || account === '') {
    back.searchParams.set('error', 'access_denied');
  } else {
    const code = `4/emulator.${randomBytes(24).toString('base64url')}`;
    codesOf(state).set(code, {
      clientId: form.get('client_id') ?? '',
      redirectUri: form.get('redirect_uri') ?? '',
      challenge: form.get('code_challenge') || null,
      method: form.get('code_challenge_method') || 'plain',
      account,
      scope: form.get('scope') ?? '',
      expires: Date.now() + CODE_LIFETIME_MS,
    });
    back.searchParams.set('code', code);
  }
  if (stateParam !== null) back.searchParams.set('state', stateParam);
  return { status: 302, headers: { location: back.href, 'content-type': 'text/html; charset=utf-8' }, body: '' };
}

function redeem(state: State, form: URLSearchParams): ApiResponse {
  const codes = codesOf(state);
  const code = form.get('code') ?? '';
  const issued = codes.get(code);
  // A code works once, even when the attempt fails (as Google's does).
  codes.delete(code);
  const invalid = (description: string) => json(400, { error: 'invalid_grant', error_description: description });
  if (issued === undefined || issued.expires < Date.now()) return invalid('Malformed auth code.');
  if (form.get('client_id') !== issued.clientId) return json(401, { error: 'invalid_client', error_description: 'The OAuth client was not found.' });
  if (form.get('redirect_uri') !== issued.redirectUri) return json(400, { error: 'redirect_uri_mismatch', error_description: 'Bad Request' });
  if (issued.challenge !== null) {
    const verifier = form.get('code_verifier') ?? '';
    const computed = issued.method === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
    if (verifier === '' || computed !== issued.challenge) return invalid('Invalid code verifier.');
  }
  // Tokens from the emulator's token service (tokens.ts), so the refresh token works in its
  // refresh grant and the access token in the Sheets API, as Google's would.
  const scopes = issued.scope.split(' ').filter((scope) => scope !== '');
  const { status, body } = state.credentials.tokens.codeGrant(issued.clientId, form.get('client_secret') ?? '', issued.account, scopes);
  return json(status, body);
}

function codesOf(state: State): Map<string, IssuedCode> {
  let codes = issuedCodes.get(state);
  if (codes === undefined) issuedCodes.set(state, (codes = new Map()));
  return codes;
}

function html(status: number, content: string): ApiResponse {
  return { status, headers: { 'content-type': 'text/html; charset=utf-8' }, body: `<!doctype html><html lang="en"><meta charset="utf-8"><title>Sign in - Google Accounts (emulated)</title><body>${content}</body></html>` };
}

function json(status: number, body: unknown): ApiResponse {
  return { status, headers: { 'content-type': 'application/json; charset=UTF-8' }, body: JSON.stringify(body) };
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
