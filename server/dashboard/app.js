// The dashboard: signs in with the admin token, then shows the connections (from
// GET /_admin/connections), one at a time with its usage, keys, tabs and columns and a
// playground built from its OpenAPI document. Everything shown is built with dom.js (text
// nodes only). The location's hash keeps the open connection: `/#connection=crm`.
// A key just made (a new key, a rotation, a new closed connection's first key, a Google
// connection's first key) is shown once, with a copy button, until hidden or another connection
// is opened: the server never shows it again.
import { admin, messageOf, openApi, token } from './api.js';
import { copyButton, field, h, when } from './dom.js';
import { googleSection } from './google.js';
import { playground } from './playground.js';
import { usageSection } from './usage.js';
import { webhooksSection } from './webhooks.js';

const main = document.getElementById('main');
/**
 * The API key the playground sends, per connection: `{ key, pasted }`, in memory only, gone on
 * reload. A key made here is sent but shown in curl as $SHEETREST_KEY; a pasted one is shown.
 */
const playgroundKeys = new Map();
/** The last OpenAPI document of each connection: the playground stays when its key stops working. */
const documents = new Map();
let connections = [];
let google = null;
/** The new-connection forms of the source types (`/_dashboard/source-types.json`, from server/sources/registry.ts): `[{ type: 'file', title, fields }]`. */
let sourceForms = null;
let notice = null;
/** `{ connection, made }`: the key just made, in memory only, shown in its connection's page. */
let shownKey = null;

start();
addEventListener('hashchange', () => {
  if (shownKey !== null && selectedId() !== shownKey.connection) shownKey = null;
  if (token.get() && connections.length > 0) render();
});

async function start() {
  if (!token.get()) return signIn();
  const reply = await admin('GET', '');
  if (reply.status === 401) {
    token.clear();
    return signIn('That admin token was not accepted.');
  }
  const hash = new URLSearchParams(location.hash.slice(1));
  if (hash.has('google-error')) notice = { error: true, text: `Google: ${hash.get('google-error')}` };
  if (hash.has('connected')) {
    const id = hash.get('connected');
    const ticket = hash.get('new-key');
    notice = { error: false, text: `Connected the Google spreadsheet as "${id}".` };
    // The ticket leaves the address bar (and the history) before it is used.
    history.replaceState(null, '', `#connection=${encodeURIComponent(id)}`);
    if (ticket) {
      const reply = await admin('POST', '/google/new-key', { ticket });
      if (reply.ok) keyMade(id, reply.body, true);
      else notice = { error: true, text: `Connected "${id}", but its first key could not be shown (${messageOf(reply)})` };
    }
  }
  await refresh();
}

/** Marks the first screen drawn, for the browser test's time to first render. */
function rendered() {
  if (performance.getEntriesByName('sheetrest:first-render').length === 0) performance.mark('sheetrest:first-render');
}

function signIn(message) {
  const input = h('input', { id: 'admin-token', type: 'password', autocomplete: 'off', required: true });
  const form = h('form', { class: 'card', id: 'sign-in' },
    h('h2', {}, 'Sign in'),
    h('p', {}, 'The admin token is the one the server was started with (SHEETREST_ADMIN_TOKEN or admin.token). It is kept in this tab only.'),
    field('Admin token', input),
    message ? h('p', { class: 'error', role: 'alert' }, message) : null,
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    token.set(input.value.trim());
    start();
  });
  main.replaceChildren(form);
  rendered();
  input.focus();
}

function selectedId() {
  return new URLSearchParams(location.hash.slice(1)).get('connection');
}

async function refresh() {
  const [list, googleReply, forms] = await Promise.all([admin('GET', '/connections'), admin('GET', '/google'), sourceForms ?? loadSourceForms()]);
  if (list.status === 401) return signIn('The admin token is no longer accepted.');
  connections = list.ok ? list.body : [];
  google = googleReply.ok ? googleReply.body : null;
  sourceForms = forms;
  render();
}

function render() {
  const chosen = connections.find((connection) => connection.id === selectedId()) ?? connections[0];
  document.getElementById('who').replaceChildren(h('button', { onclick: () => { token.clear(); signIn(); } }, 'Sign out'));
  main.replaceChildren(
    h('nav', { class: 'side' },
      notice ? h('p', { class: notice.error ? 'error' : 'ok', role: 'status', id: 'notice' }, notice.text) : null,
      h('h2', {}, 'Connections'),
      h('ul', { class: 'connections', id: 'connection-list' }, connections.map((connection) =>
        h('li', {}, h('a', { href: `#connection=${encodeURIComponent(connection.id)}`, 'aria-current': connection === chosen ? 'page' : null },
          connection.id, connection.status === 'ok' ? null : h('small', { class: 'error' }, ` ${connection.status}`))))),
      (sourceForms ?? []).map(newConnection),
      googleSection(google, connections, (text) => showNotice(text, true))),
    chosen === undefined ? h('section', { class: 'detail' }, h('p', {}, 'No connection yet: create one.')) : detail(chosen));
  rendered();
}

function showNotice(text, error = false) {
  notice = { error, text };
  render();
}

/** The source types' forms; none (no "New connection" form) if they cannot be had. */
async function loadSourceForms() {
  const response = await fetch('/_dashboard/source-types.json');
  return response.ok ? response.json() : [];
}

/**
 * A new connection of one source type, from its form in source-types.json (`{ type: 'file', title,
 * fields: [{ name: 'path', label, placeholder }] }`): the first type's inputs are `#new-id`,
 * `#new-path`..., a later type's `#new-<type>-id`...
 */
function newConnection(form, index) {
  const prefix = index === 0 ? 'new' : `new-${form.type}`;
  const id = h('input', { id: `${prefix}-id`, required: true, pattern: '[A-Za-z0-9_\\-]+', placeholder: 'crm' });
  const inputs = form.fields.map((each) => [each, h('input', { id: `${prefix}-${each.name}`, required: true, placeholder: each.placeholder })]);
  const readOnly = h('input', { id: `${prefix}-readonly`, type: 'checkbox' });
  const open = h('input', { id: `${prefix}-open`, type: 'checkbox' });
  const element = h('form', { class: 'card', id: `${prefix}-connection` },
    h('h3', {}, form.title),
    field('Id', id), inputs.map(([each, input]) => field(each.label, input)), h('label', { class: 'check' }, readOnly, ' read-only'),
    h('label', { class: 'check' }, open, ' open to everyone, no key (else it gets a first key, shown once)'),
    h('button', { type: 'submit' }, 'Create'));
  element.addEventListener('submit', async (event) => {
    event.preventDefault();
    const source = { type: form.type, ...Object.fromEntries(inputs.map(([each, input]) => [each.name, input.value.trim()])) };
    const reply = await admin('POST', '/connections', { id: id.value.trim(), source, readOnly: readOnly.checked, ...(open.checked ? { open: true } : {}) });
    if (!reply.ok) return showNotice(messageOf(reply), true);
    if (reply.body.newKey) keyMade(reply.body.id, reply.body.newKey, true);
    location.hash = `connection=${encodeURIComponent(reply.body.id)}`;
    notice = { error: false, text: `Created "${reply.body.id}".` };
    await refresh();
  });
  return element;
}

// A plan's period as the plan line says it: "free (10000 monthly limit)". The usage view names
// the current span after the period: `"month": "2026-11"`, `"day": "2026-11-23"`.
const PERIOD_WORDS = { month: 'monthly', day: 'daily', hour: 'hourly' };

function detail(connection) {
  const usage = connection.usage;
  const period = connection.plan?.period ?? 'month';
  const section = h('section', { class: 'detail', id: 'detail' },
    h('h2', {}, connection.id, ' ', h('small', {}, connection.origin === 'config' ? '(config file, read-only here)' : '')),
    h('dl', { class: 'facts' },
      h('dt', {}, 'Source'), h('dd', {}, connection.description),
      h('dt', {}, 'Status'), h('dd', {}, connection.status, connection.problem ? `: ${connection.problem}` : ''),
      h('dt', {}, 'Access'), h('dd', { id: 'access' }, accessOf(connection)),
      h('dt', {}, 'Writes'), h('dd', { id: 'writable' }, connection.writable ? 'allowed' : 'read-only'),
      h('dt', {}, 'Plan'), h('dd', { id: 'plan' }, connection.plan ? `${connection.plan.name} (${usage.limit ?? 'no'} ${PERIOD_WORDS[period] ?? period} limit)` : 'none'),
      h('dt', {}, 'Usage'), h('dd', { id: 'usage' }, `${usage.requests} requests in ${usage[period]}`, usage.limit === null ? '' : `, ${usage.remaining} of ${usage.limit} left`, `; resets ${when(usage.resetAt)}`)),
    connection.editable ? h('p', {}, removeButton(connection)) : null,
    usageSection(connection),
    keysSection(connection),
    webhooksSection(connection, (text) => showNotice(text, true)),
    h('h3', {}, 'Tabs, columns and playground'),
    keyField(connection),
    h('div', { id: 'playground-area' }, h('p', {}, 'Loading the OpenAPI document…')));
  loadPlayground(connection, section.querySelector('#playground-area'));
  return section;
}

function accessOf(connection) {
  if (connection.open) return 'open: anyone who can reach the server, writes included';
  return connection.keys.length === 0 ? 'closed, with no usable key: every request is refused' : 'closed: a key is needed';
}

/** Shows `made` once in its connection's page; `use`: the playground sends it at once. */
function keyMade(connectionId, made, use) {
  shownKey = { connection: connectionId, made };
  if (use) playgroundKeys.set(connectionId, { key: made.key, pasted: false });
}

function removeButton(connection) {
  return twoStep('Delete connection', `Really delete "${connection.id}"?`, async () => {
    const reply = await admin('DELETE', `/connections/${encodeURIComponent(connection.id)}`);
    if (!reply.ok) return showNotice(messageOf(reply), true);
    location.hash = '';
    notice = { error: false, text: `Deleted "${connection.id}".` };
    await refresh();
  });
}

/** A button that asks once more before it acts: no confirm() dialogs. */
function twoStep(label, again, act) {
  const button = h('button', { class: 'danger' }, label);
  button.addEventListener('click', () => {
    if (button.dataset.armed === '1') return act();
    button.dataset.armed = '1';
    button.textContent = again;
  });
  return button;
}

function keysSection(connection) {
  const base = `/connections/${encodeURIComponent(connection.id)}/keys`;
  const shown = h('div', { id: 'new-key-area' }, shownKey?.connection === connection.id ? keyBox(shownKey.made, connection) : null);
  const rows = connection.keys.map((key) => h('tr', {},
    h('td', {}, key.prefix ? h('code', {}, `${key.prefix}…`) : '(config file)'), h('td', { class: 'key-operations' }, operationsText(key)),
    h('td', { class: 'key-tabs' }, key.tabs ? key.tabs.join(', ') : 'all'), h('td', {}, key.name ?? ''),
    h('td', {}, when(key.created)), h('td', {}, key.expires ? `ends ${when(key.expires)}` : key.expiresAt ? `expires ${when(key.expiresAt)}` : ''),
    h('td', {}, key.id === null || !connection.editable ? null : [
      key.expires ? null : h('button', { onclick: async () => {
        const reply = await admin('POST', `${base}/${key.id}/rotate`, {});
        if (!reply.ok) return showNotice(messageOf(reply), true);
        keyMade(connection.id, reply.body, false);
        await refresh();
      } }, 'Rotate'),
      twoStep('Revoke', revokeQuestion(connection, key), async () => {
        const reply = await admin('DELETE', `${base}/${key.id}`);
        if (!reply.ok) return showNotice(messageOf(reply), true);
        notice = { error: false, text: `Revoked ${key.prefix}….` };
        await refresh();
      }),
    ])));
  // What the key may do (a web form's key: create only), where (some tabs) and until when.
  const operations = OPERATIONS.map((operation) => h('input', { type: 'checkbox', id: `key-op-${operation}`, value: operation, checked: true }));
  const tabs = h('input', { id: 'key-tabs', placeholder: 'all tabs (or: Orders, Customers)' });
  const expires = h('input', { id: 'key-expires', type: 'datetime-local' });
  const name = h('input', { id: 'key-name', maxlength: 100, placeholder: 'a label' });
  const form = h('form', { class: 'inline', id: 'new-key-form' },
    h('fieldset', { class: 'field', id: 'key-operations' }, h('legend', {}, 'May'), operations.map((box) => h('label', {}, box, ` ${box.value}`))),
    field('Tabs', tabs), field('Expires (your time)', expires), field('Name', name), h('button', { type: 'submit' }, 'Create key'));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const chosen = operations.filter((box) => box.checked).map((box) => box.value);
    const tabList = tabs.value.split(',').map((tab) => tab.trim()).filter((tab) => tab !== '');
    const body = {
      operations: chosen,
      ...(tabList.length === 0 ? {} : { tabs: tabList }),
      // The picker's time is the reader's own; the admin API takes it with its zone.
      ...(expires.value === '' ? {} : { expiresAt: new Date(expires.value).toISOString() }),
      ...(name.value.trim() === '' ? {} : { name: name.value.trim() }),
    };
    const reply = await admin('POST', base, body);
    if (!reply.ok) return showNotice(messageOf(reply), true);
    keyMade(connection.id, reply.body, false);
    await refresh();
  });
  const empty = connection.open
    ? 'Open: no key is needed, anyone who can reach the server can read and write. Creating a key closes it to everyone without one.'
    : 'No usable key: this connection refuses every request. Create a key to use it.';
  return h('div', {},
    h('h3', {}, 'Keys'),
    rows.length === 0 ? h('p', { id: 'keys-empty' }, empty) :
      h('table', { id: 'keys' }, h('thead', {}, h('tr', {}, ['Key', 'May', 'Tabs', 'Name', 'Created', '', ''].map((text) => h('th', {}, text)))), h('tbody', {}, rows)),
    connection.editable ? form : null,
    connection.editable && !connection.open && rows.length === 0 ? h('p', {}, openButton(connection)) : null,
    shown);
}

const OPERATIONS = ['read', 'create', 'update', 'delete'];

/** What a key may do, in words: `read and write` for all four, else the list (`create`). */
function operationsText(key) {
  const operations = key.operations ?? (key.scope === 'read' ? ['read'] : OPERATIONS);
  if (operations.length === OPERATIONS.length) return 'read and write';
  return operations.length === 1 && operations[0] === 'read' ? 'read only' : operations.join(', ');
}

/** Revoking the last key (or the last that does not end) closes the connection to everyone; it never opens it. */
function revokeQuestion(connection, key) {
  const others = connection.keys.filter((other) => other.id !== key.id);
  const closed = 'the connection will then be closed to everyone (every request refused) until a key is added.';
  if (others.length === 0) return `Really revoke the last key? ${closed[0].toUpperCase()}${closed.slice(1)}`;
  if (others.every((other) => other.expires)) return `Really revoke? The other keys are ending: once they do, ${closed}`;
  return 'Really revoke?';
}

function openButton(connection) {
  return twoStep('Open to everyone', 'Really open it to everyone, writes included, with no key?', async () => {
    const reply = await admin('PATCH', `/connections/${encodeURIComponent(connection.id)}`, { open: true });
    if (!reply.ok) return showNotice(messageOf(reply), true);
    notice = { error: false, text: `"${connection.id}" is open to everyone.` };
    await refresh();
  });
}

/** The key just made, once: with a copy button, and a warning that it will not be shown again. */
function keyBox(made, connection) {
  const value = h('code', { id: 'new-key-value' }, made.key);
  const copy = copyButton('copy-key', made.key, value);
  return h('div', { class: 'card secret', id: 'new-key', role: 'status' },
    h('p', { class: 'warning', id: 'new-key-warning' }, `The new key of "${connection.id}" is shown only now: copy it and keep it safe. It will not be shown again; if it is lost, make a new one.`),
    h('p', {}, value),
    h('p', {},
      copy, ' ',
      h('button', { id: 'use-key', type: 'button', onclick: () => { playgroundKeys.set(connection.id, { key: made.key, pasted: false }); render(); } }, 'Use in the playground'), ' ',
      h('button', { id: 'hide-key', type: 'button', onclick: () => { shownKey = null; render(); } }, 'I have copied it: hide it')));
}

function keyField(connection) {
  const given = playgroundKeys.get(connection.id);
  const input = h('input', {
    id: 'playground-key', type: given?.pasted === false ? 'password' : 'text', autocomplete: 'off',
    placeholder: connection.open ? 'not needed: this connection is open' : 'needed: this connection is closed', value: given?.key ?? '',
  });
  input.addEventListener('change', () => {
    const key = input.value.trim();
    if (key === '') playgroundKeys.delete(connection.id);
    else playgroundKeys.set(connection.id, { key, pasted: true });
    loadPlayground(connection, document.getElementById('playground-area'));
  });
  return field('API key for the playground (kept in this page only)', input);
}

async function loadPlayground(connection, area) {
  const given = playgroundKeys.get(connection.id);
  const reply = await openApi(connection.id, given?.key);
  if (reply.ok) documents.set(connection.id, reply.body);
  const problem = reply.ok ? null : h('p', { class: 'error', id: 'openapi-error' },
    reply.status === 401 ? 'This connection needs a working API key: paste one above, or create one and use it.' : messageOf(reply));
  const known = documents.get(connection.id);
  area.replaceChildren(problem ?? '', known === undefined ? '' : playground(connection, known, given));
}
