// The dashboard's calls to its own server: the admin API with the admin token (kept in
// sessionStorage, so it lasts for the tab and goes with it), and a connection's own endpoints
// with an API key, exactly as any client sends them, or without one with the admin token
// (`Authorization: Bearer`, which reads and writes any connection, not counted: docs/api.md).
//   await admin('GET', '/connections') -> { ok: true, status: 200, body: [...] }

const TOKEN_KEY = 'sheetrest.adminToken';

export const token = {
  get: () => sessionStorage.getItem(TOKEN_KEY),
  set: (value) => sessionStorage.setItem(TOKEN_KEY, value),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

/** An admin request; the body (if any) is sent as JSON. Never throws for an HTTP error. */
export async function admin(method, path, body) {
  const headers = { Authorization: `Bearer ${token.get() ?? ''}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(`/_admin${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  return { ok: response.ok, status: response.status, body: text === '' ? null : parse(text) };
}

/** A connection's request, as the playground builds it: the status, headers and text of the answer. */
export async function send({ method, url, key, body }) {
  const headers = keyHeaders(key);
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const started = performance.now();
  const response = await fetch(url, { method, headers, body, cache: 'no-store' });
  const text = await response.text();
  requestMade();
  return { status: response.status, statusText: response.statusText, headers: [...response.headers], text, ms: Math.round(performance.now() - started) };
}

/** A connection's OpenAPI document, or the error answer (401 without a key on a keyed connection). */
export async function openApi(id, key) {
  const response = await fetch(`/sheets/${encodeURIComponent(id)}/openapi.json`, { headers: keyHeaders(key) });
  const text = await response.text();
  requestMade();
  return { ok: response.ok, status: response.status, body: parse(text) };
}

/**
 * Says that the page's own request reached a connection (a key's is counted): the header's
 * usage is read again (app.js listens for `sheetrest:request`). grid.js calls it too.
 */
export function requestMade() {
  dispatchEvent(new Event('sheetrest:request'));
}

/** The key's header, or without a key the admin token's. */
export function keyHeaders(key) {
  if (key) return { 'X-Api-Key': key };
  const admin = token.get();
  return admin ? { Authorization: `Bearer ${admin}` } : {};
}

/** The message of an error body, or a stand-in. */
export function messageOf(reply) {
  return reply.body?.message ?? `The server answered ${reply.status}.`;
}

function parse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
