// The dashboard: signs in with the admin token, then shows the connections (from
// GET /_admin/connections) in a sidebar and one connection at a time: its header (endpoint URL
// with a copy button, links to its openapi.json and API docs, what it is: access, writes, plan,
// usage) and its screens as tabs (Data, Keys, Usage, Webhooks, Playground, Settings; SCREENS
// below). Everything shown is built with dom.js (text nodes only). The location's hash keeps
// where the reader is: `/#connection=crm&screen=keys`, `/#new` (a new connection).
// A key just made (a new key, a rotation, a new closed connection's first key, a Google
// connection's first key) is shown once, with a copy button, until hidden or another connection
// is opened: the server never shows it again. Notices are toasts (notify.js); after an action,
// focus moves to what changed (the key just made, the list a key left, the connection opened).
import { admin, keyHeaders, messageOf, openApi, token } from './api.js';
import { button, copyButton, empty, field, h, loading, pending, when } from './dom.js';
import { googleSection } from './google.js';
import { gridSection } from './grid.js';
import { icon } from './icons.js';
import { toast } from './notify.js';
import { acceptDrops, uploadSection } from './upload.js';
import { playground } from './playground.js';
import { settingsSection } from './settings.js';
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
/** `{ connection, made }`: the key just made, in memory only, shown in its connection's Keys screen. */
let shownKey = null;
/** A CSS selector to focus once the next render is drawn: focus follows the action. */
let focusNext = null;
/** The same, for what a screen draws once its OpenAPI document is loaded (the playground's Send). */
let focusWhenLoaded = null;

/**
 * A connection's screens, in tab order: `render(connection, context)` returns the screen's
 * element (it may fill itself in later: a loading state first). `context`: `{ fail(text),
 * done(text), refresh(), playgroundKey(), document() }`. A screen in its own module (grid.js,
 * usage.js...) replaces its line here.
 */
const SCREENS = [
  { id: 'data', label: 'Data', icon: 'table', render: (connection, context) => dataScreen(connection, context) },
  { id: 'keys', label: 'Keys', icon: 'key', render: (connection) => keysSection(connection) },
  { id: 'usage', label: 'Usage', icon: 'chart', render: (connection) => usageSection(connection) },
  { id: 'webhooks', label: 'Webhooks', icon: 'webhook', render: (connection, context) => webhooksSection(connection, context.fail) },
  { id: 'playground', label: 'Playground', icon: 'play', render: (connection) => playgroundScreen(connection) },
  { id: 'settings', label: 'Settings', icon: 'settings', render: (connection, context) => settingsScreen(connection, context) },
];

async function start() {
  if (!token.get()) return signIn();
  drawHeader();
  let reply;
  try {
    reply = await admin('GET', '');
  } catch (error) {
    return unreachable(error);
  }
  if (reply.status === 401) {
    token.clear();
    return signIn('That admin token was not accepted.');
  }
  const hash = new URLSearchParams(location.hash.slice(1));
  if (hash.has('google-error')) {
    toast(`Google: ${hash.get('google-error')}`, { error: true });
    history.replaceState(null, '', '#new');
  }
  if (hash.has('connected')) {
    const id = hash.get('connected');
    const ticket = hash.get('new-key');
    // The ticket leaves the address bar (and the history) before it is used.
    history.replaceState(null, '', `#connection=${encodeURIComponent(id)}&screen=keys`);
    toast(`Connected the Google spreadsheet as "${id}".`);
    if (ticket) {
      const reply = await admin('POST', '/google/new-key', { ticket });
      if (reply.ok) keyMade(id, reply.body, true);
      else toast(`Connected "${id}", but its first key could not be shown (${messageOf(reply)})`, { error: true });
    }
  }
  await refresh();
}

/** Moves focus to what an action changed, once it is drawn. */
function focusOn(selector) {
  document.querySelector(selector)?.focus();
}

/** Marks the first screen drawn, for the browser test's time to first render. */
function rendered() {
  if (performance.getEntriesByName('sheetrest:first-render').length === 0) performance.mark('sheetrest:first-render');
  if (focusNext !== null) {
    const target = document.querySelector(focusNext);
    focusNext = null;
    target?.focus();
  }
}

/** The header's tools: the theme toggle and the project docs always, "Sign out" once signed in. */
function drawHeader() {
  const signedIn = Boolean(token.get());
  // replaceChildren shows a null as the text "null": only what is there.
  document.getElementById('who').replaceChildren(...[
    themeToggle(),
    h('a', { class: 'button quiet', href: '/_docs/project/', target: '_blank', rel: 'noopener', id: 'project-docs' }, icon('book'), h('span', { class: 'label' }, 'Docs')),
    signedIn ? button('Sign out', 'logout', { id: 'sign-out', class: 'quiet', onclick: () => { token.clear(); toast('Signed out: the admin token is forgotten in this tab.'); signIn(); } }) : null,
  ].filter((each) => each !== null));
}

const THEMES = ['system', 'light', 'dark'];
const THEME_ICONS = { system: 'monitor', light: 'sun', dark: 'moon' };

/** Cycles system -> light -> dark, kept in localStorage (theme.js applies it before the first paint). */
function themeToggle() {
  const current = document.documentElement.dataset.theme ?? 'system';
  const next = THEMES[(THEMES.indexOf(current) + 1) % THEMES.length];
  return button(`Theme: ${current}`, THEME_ICONS[current], {
    id: 'theme-toggle', class: 'quiet', title: `Switch to the ${next} theme`,
    onclick: () => {
      if (next === 'system') {
        delete document.documentElement.dataset.theme;
        localStorage.removeItem('sheetrest.theme');
      } else {
        document.documentElement.dataset.theme = next;
        localStorage.setItem('sheetrest.theme', next);
      }
      drawHeader();
      document.getElementById('theme-toggle').focus();
    },
  });
}

function signIn(message) {
  drawHeader();
  const input = h('input', { id: 'admin-token', type: 'password', autocomplete: 'off', required: true });
  const form = h('form', { class: 'card narrow', id: 'sign-in' },
    h('h2', {}, 'Sign in'),
    h('p', { id: 'sign-in-help' }, 'The admin token is the one the server was started with: SHEETREST_ADMIN_TOKEN, admin.token in the config, or the one ',
      h('code', {}, 'npm start -- --admin'), ' wrote to ', h('code', {}, '.sheetrest/admin-token'), '. It is kept in this tab only.'),
    field('Admin token', input),
    message ? h('p', { class: 'error', role: 'alert' }, icon('alert'), ' ', message) : null,
    button('Sign in', null, { type: 'submit', class: 'primary' }));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    token.set(input.value.trim());
    pending(form, start);
  });
  main.replaceChildren(form);
  rendered();
  input.focus();
}

/** The server could not be reached (stopped, or the network is down): say so, offer to try again. */
function unreachable(error) {
  const retry = button('Try again', 'rotate', { id: 'retry', class: 'primary', onclick: () => pending(retry, start) });
  main.replaceChildren(h('div', { class: 'card narrow', id: 'unreachable', role: 'alert' },
    h('h2', {}, 'The server cannot be reached'), h('p', {}, `The dashboard could not talk to ${location.origin} (${error.message}). Check that sheetrest is running, then try again.`), retry));
  rendered();
  retry.focus();
}

function where() {
  return new URLSearchParams(location.hash.slice(1));
}

function selectedId() {
  return where().get('connection');
}

async function refresh() {
  let list, googleReply, forms;
  try {
    [list, googleReply, forms] = await Promise.all([admin('GET', '/connections'), admin('GET', '/google'), sourceForms ?? loadSourceForms()]);
  } catch (error) {
    return unreachable(error);
  }
  if (list.status === 401) return signIn('The admin token is no longer accepted.');
  if (!list.ok) toast(`The connections could not be listed: ${messageOf(list)}`, { error: true });
  connections = list.ok ? list.body : [];
  google = googleReply.ok ? googleReply.body : null;
  sourceForms = forms;
  render();
}

function render() {
  drawHeader();
  const asked = where();
  const creating = asked.has('new') || (connections.length === 0 && !asked.has('connection'));
  const chosen = creating ? undefined : connections.find((connection) => connection.id === selectedId()) ?? connections[0];
  main.replaceChildren(h('div', { class: 'shell' },
    h('nav', { class: 'sidebar', 'aria-labelledby': 'connections-heading' },
      h('div', { class: 'sidebar-head' },
        h('h2', { id: 'connections-heading', tabindex: '-1' }, 'Connections'),
        h('a', { class: 'button primary small', href: '#new', id: 'new-connection-link', 'aria-current': creating ? 'page' : null }, icon('plus'), h('span', { class: 'label' }, 'New'))),
      connections.length === 0 ? h('p', { class: 'muted', id: 'connections-empty' }, 'None yet.') :
        h('ul', { class: 'connections', id: 'connection-list' }, connections.map((connection) =>
          h('li', {}, h('a', { href: `#connection=${encodeURIComponent(connection.id)}`, 'aria-current': connection === chosen ? 'page' : null },
            icon(connection.open ? 'unlock' : 'lock'), h('span', { class: 'name' }, connection.id),
            connection.status === 'ok' ? null : h('span', { class: 'badge bad' }, connection.status)))))),
    h('div', { class: 'content' }, creating ? newConnectionScreen() : chosen === undefined ? missing() : detail(chosen))));
  // Opening a connection (or the new-connection screen) moves focus to its heading.
  main.querySelector('.sidebar').addEventListener('click', (event) => {
    const link = event.target.closest('a');
    if (link !== null && link.hash !== location.hash) focusNext = link.id === 'new-connection-link' ? '#new-heading' : '#connection-heading';
  });
  showChosenTab();
  rendered();
}

/** On a phone the tabs are one row that scrolls sideways: the chosen one is scrolled into it (the page itself does not move). */
function showChosenTab() {
  const list = main.querySelector('.tabs');
  const chosen = list?.querySelector('[aria-selected=true]');
  if (!chosen || list.scrollWidth <= list.clientWidth) return;
  const left = chosen.getBoundingClientRect().left - list.getBoundingClientRect().left + list.scrollLeft;
  if (left < list.scrollLeft || left + chosen.offsetWidth > list.scrollLeft + list.clientWidth) list.scrollLeft = left - (list.clientWidth - chosen.offsetWidth) / 2;
}

function missing() {
  return empty('connection-missing', 'inbox', `There is no connection "${selectedId()}". Pick one on the left, or create one.`);
}

/** The source types' forms; none (no "New connection" form) if they cannot be had. */
async function loadSourceForms() {
  const response = await fetch('/_dashboard/source-types.json');
  return response.ok ? response.json() : [];
}

function newConnectionScreen() {
  const forms = (sourceForms ?? []).map(newConnection);
  // Upload a workbook (dropped anywhere on this screen, or picked), or pick a Google spreadsheet, or name a file already on the server.
  const upload = uploadSection(async (created) => {
    if (created.newKey) keyMade(created.id, created.newKey, true);
    toast(created.newKey ? `Created "${created.id}" from the uploaded workbook, closed: its first key is shown once.` : `Created "${created.id}" from the uploaded workbook.`);
    history.pushState(null, '', `#connection=${encodeURIComponent(created.id)}&screen=${created.newKey ? 'keys' : 'data'}`);
    await refresh();
    focusOn(created.newKey ? '#copy-key' : '#connection-heading');
  }, (text) => toast(text, { error: true }));
  const screen = h('section', { class: 'new-connection', id: 'new-connection-screen', 'aria-labelledby': 'new-heading' },
    h('h2', { id: 'new-heading', tabindex: '-1' }, 'New connection'),
    connections.length === 0 ? h('p', { id: 'first-connection' }, 'No connection yet. A connection serves one workbook as a JSON API: create one from a file on the server',
      google === null ? '.' : ', or from a Google spreadsheet.') : h('p', {}, 'A new connection is closed: it gets a first key, shown once.'),
    h('div', { class: 'cards' }, upload.form, forms, googleSection(google, connections, (text) => toast(text, { error: true }))));
  acceptDrops(screen, upload.take);
  return screen;
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
    h('h3', {}, icon('file'), ' ', form.title),
    field('Id (in its URL: /sheets/{id})', id), inputs.map(([each, input]) => field(each.label, input)), h('label', { class: 'check' }, readOnly, ' read-only'),
    h('label', { class: 'check' }, open, ' open to everyone, no key (else it gets a first key, shown once)'),
    button('Create', 'plus', { type: 'submit', class: 'primary' }));
  element.addEventListener('submit', async (event) => {
    event.preventDefault();
    const source = { type: form.type, ...Object.fromEntries(inputs.map(([each, input]) => [each.name, input.value.trim()])) };
    const reply = await pending(element, () => admin('POST', '/connections', { id: id.value.trim(), source, readOnly: readOnly.checked, ...(open.checked ? { open: true } : {}) }));
    if (!reply.ok) return toast(messageOf(reply), { error: true });
    if (reply.body.newKey) keyMade(reply.body.id, reply.body.newKey, true);
    toast(reply.body.newKey ? `Created "${reply.body.id}", closed: its first key is shown once.` : `Created "${reply.body.id}", open to everyone.`);
    // No hashchange (pushState): the one render is refresh's, with the new connection listed.
    history.pushState(null, '', `#connection=${encodeURIComponent(reply.body.id)}&screen=${reply.body.newKey ? 'keys' : 'data'}`);
    await refresh();
    focusOn(reply.body.newKey ? '#copy-key' : '#connection-heading');
  });
  return element;
}

// A plan's period as the plan line says it: "free (10000 monthly limit)". The usage view names
// the current span after the period: `"month": "2026-11"`, `"day": "2026-11-23"`.
const PERIOD_WORDS = { month: 'monthly', day: 'daily', hour: 'hourly' };

function detail(connection) {
  const usage = connection.usage;
  const period = connection.plan?.period ?? 'month';
  const asked = where().get('screen');
  const screen = SCREENS.find((each) => each.id === asked) ?? SCREENS[0];
  const context = {
    fail: (text) => toast(text, { error: true }),
    done: (text) => toast(text),
    refresh,
    playgroundKey: () => playgroundKeys.get(connection.id),
  };
  const endpoint = new URL(`/sheets/${encodeURIComponent(connection.id)}`, location.origin).href;
  const endpointText = h('code', { id: 'endpoint', title: endpoint }, endpoint);
  const badges = [
    connection.open ? h('span', { class: 'badge warn' }, icon('unlock'), 'open') : h('span', { class: 'badge good' }, icon('lock'), 'closed'),
    connection.writable ? null : h('span', { class: 'badge' }, 'read-only'),
    connection.status === 'ok' ? null : h('span', { class: 'badge bad' }, icon('alert'), connection.status),
    connection.origin === 'config' ? h('span', { class: 'badge' }, 'config file') : null,
  ];
  const tabs = SCREENS.map((each) => h('a', {
    role: 'tab', id: `tab-${each.id}`, href: `#connection=${encodeURIComponent(connection.id)}&screen=${each.id}`,
    'aria-selected': each === screen ? 'true' : 'false', 'aria-controls': 'screen', tabindex: each === screen ? '0' : '-1',
  }, icon(each.icon), h('span', {}, each.label)));
  const tablist = h('div', { class: 'tabs', role: 'tablist', 'aria-label': `Screens of ${connection.id}` }, tabs);
  tablist.addEventListener('keydown', (event) => moveBetweenTabs(event, tabs));
  tablist.addEventListener('click', (event) => {
    if (event.target.closest('a')?.hash !== location.hash) focusNext = '[role=tab][aria-selected=true]';
  });
  // The facts: open on a wide screen, a line to open on a phone (below 48 rem), where the header
  // would otherwise push the screens below the fold; a reader's own choice is kept across renders.
  const facts = h('details', { class: 'facts-details', id: 'facts', open: factsOpen ?? matchMedia(WIDE).matches },
    h('summary', {}, `About ${connection.id}: source, access, plan, usage`),
    h('dl', { class: 'facts' },
      fact('Source', h('dd', {}, connection.description)),
      fact('Status', h('dd', {}, connection.status, connection.problem ? `: ${connection.problem}` : '')),
      fact('Access', h('dd', { id: 'access' }, accessOf(connection))),
      fact('Writes', h('dd', { id: 'writable' }, connection.writable ? 'allowed' : 'read-only')),
      fact('Plan', h('dd', { id: 'plan' }, connection.plan ? `${connection.plan.name} (${usage.limit ?? 'no'} ${PERIOD_WORDS[period] ?? period} limit)` : 'none')),
      fact('Usage', h('dd', { id: 'usage' }, usageText(connection, usage)))));
  facts.addEventListener('toggle', () => { if (facts.isConnected) factsOpen = facts.open; });
  // The header's usage is this render's; it is read again now (a screen switch) and after the
  // page's own requests to the connection (usageChanged), so it agrees with the Usage screen.
  void refreshUsage(connection.id);
  return h('section', { class: 'detail', id: 'detail', 'aria-labelledby': 'connection-heading', 'data-connection': connection.id },
    h('div', { class: 'detail-head' },
      h('h2', { id: 'connection-heading', tabindex: '-1' }, connection.id, ' ', badges),
      h('div', { class: 'endpoint' }, icon('link'), h('span', { class: 'endpoint-label muted' }, 'Endpoint'), endpointText, copyButton('copy-endpoint', endpoint, endpointText, `the endpoint URL of ${connection.id}`)),
      h('p', { class: 'links' },
        h('a', { id: 'openapi-link', href: `/sheets/${encodeURIComponent(connection.id)}/openapi.json`, target: '_blank', rel: 'noopener' }, icon('file'), 'openapi.json'),
        h('a', { id: 'api-docs-link', href: `/_docs/${encodeURIComponent(connection.id)}`, target: '_blank', rel: 'noopener' }, icon('book'), 'API docs (Swagger UI)'),
        h('a', { class: 'project-docs-link', href: '/_docs/project/', target: '_blank', rel: 'noopener' }, icon('external'), 'sheetrest docs')),
      facts),
    tablist,
    h('div', { class: 'screen', id: 'screen', role: 'tabpanel', 'aria-labelledby': `tab-${screen.id}`, 'data-screen': screen.id }, screen.render(connection, context)));
}

/** Wide enough for the facts to show at once (style.css's phone layout is below 48 rem). */
const WIDE = '(min-width: 48rem)';
/** The facts' open state as the reader left it (null: as the screen's width says). */
let factsOpen = null;
matchMedia(WIDE).addEventListener('change', (event) => {
  factsOpen = null;
  const shown = document.getElementById('facts');
  if (shown !== null) shown.open = event.matches;
});

/** This period's usage as the header says it: "3 requests in 2026-11, 17 of 20 left; resets Dec 1, 2026, 12:00 AM". */
function usageText(connection, usage) {
  const period = connection.plan?.period ?? 'month';
  return `${usage.requests} ${usage.requests === 1 ? 'request' : 'requests'} in ${usage[period]}${usage.limit === null ? '' : `, ${usage.remaining} of ${usage.limit} left`}; resets ${when(usage.resetAt)}`;
}

/** Shows `usage` (GET /_admin/connections/{id}/usage) in the header, when `id`'s header is the one shown. */
function showUsage(id, usage) {
  const connection = connections.find((each) => each.id === id);
  if (connection === undefined) return;
  connection.usage = usage;
  const shown = document.getElementById('detail');
  if (shown?.dataset.connection === id) shown.querySelector('#usage').textContent = usageText(connection, usage);
}

/** Reads the connection's usage again and shows it in the header (its count may have moved since the list was read). */
async function refreshUsage(id) {
  const reply = await admin('GET', `/connections/${encodeURIComponent(id)}/usage`).catch(() => null);
  if (reply?.ok) showUsage(id, reply.body);
}

function fact(term, definition) {
  return h('div', {}, h('dt', {}, term), definition);
}

/** Arrow keys, Home and End move between the tabs (and open the one reached), as WAI-ARIA's tabs pattern says. */
function moveBetweenTabs(event, tabs) {
  const at = tabs.indexOf(document.activeElement);
  if (at === -1) return;
  const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: tabs.length - 1 }[event.key];
  if (to === undefined) return;
  event.preventDefault();
  const next = tabs[(to + tabs.length) % tabs.length];
  focusNext = `#${next.id}`;
  location.hash = new URL(next.href).hash;
}

function accessOf(connection) {
  if (connection.open) return `open: anyone who can reach the server${connection.writable ? ', writes included' : ' can read'}`;
  return connection.keys.length === 0 ? 'closed, with no usable key: every request is refused' : 'closed: a key is needed';
}

/** Shows `made` once in its connection's Keys screen; `use`: the playground sends it at once. */
function keyMade(connectionId, made, use) {
  shownKey = { connection: connectionId, made };
  if (use) playgroundKeys.set(connectionId, { key: made.key, pasted: false });
}

/** A button that asks once more before it acts: no confirm() dialogs. */
function twoStep(label, iconName, again, act, { class: extra = '' } = {}) {
  const control = button(label, iconName, { class: `danger ${extra}`.trim() });
  control.addEventListener('click', () => {
    if (control.dataset.armed === '1') return pending(control, act);
    control.dataset.armed = '1';
    control.querySelector('.label').textContent = again;
  });
  // Leaving the question unanswered (focus elsewhere, Escape) takes it back: no armed button waits for a stray click.
  const disarm = () => {
    if (control.dataset.armed !== '1' || control.getAttribute('aria-busy') === 'true') return;
    delete control.dataset.armed;
    control.querySelector('.label').textContent = label;
  };
  control.addEventListener('blur', disarm);
  control.addEventListener('keydown', (event) => { if (event.key === 'Escape') disarm(); });
  return control;
}

// ---- Data ----------------------------------------------------------------------------------

/** The tabs and their columns, from the OpenAPI document (a grid of the rows plugs in here: grid.js). */
function dataScreen(connection) {
  const area = h('div', { id: 'data-area' }, loading('Loading the tabs and columns…'));
  void withDocument(connection, area, (document_) => {
    const tabs = document_['x-sheetrest'].tabs;
    if (tabs.length === 0) return empty('tabs-empty', 'table', 'The workbook has no tabs: add a sheet with a header row, and it shows here.');
    return columnsTable(tabs);
  });
  return h('div', {},
    connection.status === 'ok' ? gridSection(connection, () => credentialFor(connection)) : null,
    h('h3', {}, 'Tabs and columns'), area);
}

/** The headers the grid (and any request of the page to a connection) authenticates with: the playground's key. */
function credentialFor(connection) {
  return keyHeaders(playgroundKeys.get(connection.id)?.key);
}

function columnsTable(tabs) {
  return h('div', { class: 'table-wrap' }, h('table', { id: 'tabs' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Tab'), h('th', { scope: 'col' }, 'Columns'))),
    h('tbody', {}, tabs.map((tab) => h('tr', {}, h('th', { scope: 'row' }, tab.name), h('td', {}, tab.columns.length === 0 ? h('span', { class: 'muted' }, 'no columns: the first row names them') : tab.columns.map((column) => h('code', { class: 'column' }, column))))))));
}

/** Loads the connection's OpenAPI document (with the playground's key) into `area` through `draw`; a 401 says what to do. */
async function withDocument(connection, area, draw) {
  const given = playgroundKeys.get(connection.id);
  let reply;
  try {
    reply = await openApi(connection.id, given?.key);
  } catch (error) {
    area.replaceChildren(h('p', { class: 'error', role: 'alert' }, `The OpenAPI document could not be loaded: ${error.message}`));
    return;
  }
  if (reply.ok) documents.set(connection.id, reply.body);
  const known = documents.get(connection.id);
  const problem = reply.ok ? null : h('p', { class: 'error', id: 'openapi-error' }, icon('alert'), ' ',
    reply.status === 401 ? `"${connection.id}" needs a working API key: create one in Keys and press "Use in the playground", or paste one in the Playground.` : messageOf(reply));
  area.replaceChildren(problem ?? '', known === undefined ? '' : draw(known));
  if (focusWhenLoaded !== null) {
    focusOn(focusWhenLoaded);
    focusWhenLoaded = null;
  }
}

// ---- Keys ----------------------------------------------------------------------------------

function keysSection(connection) {
  const base = `/connections/${encodeURIComponent(connection.id)}/keys`;
  const shown = h('div', { id: 'new-key-area' }, shownKey?.connection === connection.id ? keyBox(shownKey.made, connection) : null);
  const rows = connection.keys.map((key) => h('tr', {},
    h('td', {}, key.prefix ? h('code', {}, `${key.prefix}…`) : '(config file)'), h('td', { class: 'key-operations' }, operationsText(key)),
    h('td', { class: 'key-tabs' }, key.tabs ? key.tabs.join(', ') : 'all'), h('td', { class: key.name ? null : 'muted' }, key.name ?? 'no name'),
    h('td', { class: 'when' }, when(key.created)), h('td', { class: 'when' }, key.expires ? `ends ${when(key.expires)}` : key.expiresAt ? `expires ${when(key.expiresAt)}` : 'never'),
    h('td', {}, key.id === null || !connection.editable ? null : h('div', { class: 'actions' },
      key.expires ? null : button('Rotate', 'rotate', { class: 'small', onclick: async (event) => {
        const reply = await pending(event.currentTarget, () => admin('POST', `${base}/${key.id}/rotate`, {}));
        if (!reply.ok) return toast(messageOf(reply), { error: true });
        keyMade(connection.id, reply.body, false);
        toast(`Rotated ${key.prefix}… of "${connection.id}": the new key is shown once; the old one works for a day.`);
        await refresh();
        focusOn('#copy-key');
      } }),
      twoStep('Revoke', 'trash', revokeQuestion(connection, key), async () => {
        const reply = await admin('DELETE', `${base}/${key.id}`);
        if (!reply.ok) return toast(messageOf(reply), { error: true });
        toast(`Revoked ${key.prefix}…${key.name ? ` (${key.name})` : ''} of "${connection.id}".`);
        await refresh();
        focusOn('#keys-heading');
      }, { class: 'small' }),
    ))));
  // What the key may do (a web form's key: create only), where (some tabs) and until when.
  const operations = OPERATIONS.map((operation) => h('input', { type: 'checkbox', id: `key-op-${operation}`, value: operation, checked: true }));
  const tabs = h('input', { id: 'key-tabs', placeholder: 'all tabs (or: Orders, Customers)' });
  const expires = h('input', { id: 'key-expires', type: 'datetime-local' });
  const name = h('input', { id: 'key-name', maxlength: 100, placeholder: 'a label' });
  const form = h('form', { class: 'card inline', id: 'new-key-form', 'aria-labelledby': 'new-key-heading' },
    h('h4', { id: 'new-key-heading' }, `Create a key for ${connection.id}`),
    h('fieldset', { class: 'field', id: 'key-operations' }, h('legend', {}, 'May'), operations.map((box) => h('label', { class: 'check' }, box, ` ${box.value}`))),
    field('Tabs', tabs), field('Expires (your time)', expires), field('Name', name), button('Create key', 'plus', { type: 'submit', class: 'primary' }));
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
    const reply = await pending(form, () => admin('POST', base, body));
    if (!reply.ok) return toast(messageOf(reply), { error: true });
    keyMade(connection.id, reply.body, false);
    toast(`Made a key${body.name ? ` "${body.name}"` : ''} for "${connection.id}": it is shown once.`);
    await refresh();
    focusOn('#copy-key');
  });
  // Each cell names its column, for the phone's layout (style.css shows a key as a card there).
  for (const row of rows) [...row.children].forEach((cell, column) => { cell.dataset.label = KEY_COLUMNS[column]; });
  const emptyText = connection.open
    ? 'No keys: this connection is open, anyone who can reach the server can read and write. Create a key below to close it to everyone without one.'
    : 'No usable key: this connection refuses every request. Create a key below to use it.';
  return h('div', {},
    h('h3', { id: 'keys-heading', tabindex: '-1' }, `Keys of ${connection.id}`),
    shown,
    rows.length === 0 ? empty('keys-empty', 'key', emptyText) :
      h('div', { class: 'table-wrap' }, h('table', { id: 'keys' }, h('thead', {}, h('tr', {}, KEY_COLUMNS.map((text) => h('th', { scope: 'col' }, text)))), h('tbody', {}, rows))),
    connection.editable ? form : h('p', { class: 'muted' }, 'The config file\'s keys are changed in the file.'),
    connection.editable && !connection.open && rows.length === 0 ? h('p', {}, openButton(connection)) : null);
}

const OPERATIONS = ['read', 'create', 'update', 'delete'];
const KEY_COLUMNS = ['Key', 'May', 'Tabs', 'Name', 'Created', 'Ends', 'Actions'];

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
  return twoStep('Open to everyone', 'unlock', 'Really open it to everyone, writes included, with no key?', async () => {
    const reply = await admin('PATCH', `/connections/${encodeURIComponent(connection.id)}`, { open: true });
    if (!reply.ok) return toast(messageOf(reply), { error: true });
    toast(`"${connection.id}" is open to everyone.`);
    await refresh();
    focusOn('#access');
  });
}

/** The key just made, once: with a copy button, and a warning that it will not be shown again. */
function keyBox(made, connection) {
  const value = h('code', { id: 'new-key-value' }, made.key);
  const copy = copyButton('copy-key', made.key, value);
  return h('div', { class: 'card secret', id: 'new-key', role: 'status' },
    h('p', { class: 'warning', id: 'new-key-warning' }, icon('alert'), ` The new key of "${connection.id}" is shown only now: copy it and keep it safe. It will not be shown again; if it is lost, make a new one.`),
    h('p', { class: 'secret-value' }, value),
    h('p', { class: 'buttons' },
      copy,
      button('Use in the playground', 'play', { id: 'use-key', onclick: () => {
        playgroundKeys.set(connection.id, { key: made.key, pasted: false });
        focusWhenLoaded = '#pg-send';
        location.hash = `connection=${encodeURIComponent(connection.id)}&screen=playground`;
      } }),
      button('I have copied it: hide it', 'eyeOff', { id: 'hide-key', onclick: () => { shownKey = null; focusNext = '#keys-heading'; render(); } })));
}

// ---- Playground ----------------------------------------------------------------------------

function playgroundScreen(connection) {
  const area = h('div', { id: 'playground-area' }, loading('Loading the OpenAPI document…'));
  void loadPlayground(connection, area);
  return h('div', {}, h('h3', {}, `Playground of ${connection.id}`), keyField(connection), area);
}

function keyField(connection) {
  const given = playgroundKeys.get(connection.id);
  const input = h('input', {
    id: 'playground-key', type: given?.pasted === false ? 'password' : 'text', autocomplete: 'off',
    // Without a key the page sends the admin token (Authorization: Bearer), which reads any connection, uncounted.
    placeholder: 'optional: without one, the admin token is used (not counted)', value: given?.key ?? '',
  });
  input.addEventListener('change', () => {
    const key = input.value.trim();
    if (key === '') playgroundKeys.delete(connection.id);
    else playgroundKeys.set(connection.id, { key, pasted: true });
    loadPlayground(connection, document.getElementById('playground-area'));
  });
  return field('API key for the playground (kept in this page only; leave empty to use the admin token)', input);
}

function loadPlayground(connection, area) {
  return withDocument(connection, area, (document_) => playground(connection, document_, playgroundKeys.get(connection.id)));
}

// ---- Settings ------------------------------------------------------------------------------

/** What can be changed about the connection as a whole (plan, read-only, rate limits plug in here); deleting it. */
function settingsScreen(connection, context) {
  return h('div', {},
    // Its own heading, and for a config file's connection where to change it.
    settingsSection(connection, { saved: async (text) => { context.done(text); await refresh(); }, fail: context.fail }),
    connection.editable ? h('div', { class: 'card danger-zone' },
      h('h4', {}, 'Delete the connection'),
      h('p', {}, `Its keys stop working and its URL answers 404. The workbook itself is not touched.`),
      removeButton(connection)) : null);
}

function removeButton(connection) {
  return twoStep('Delete connection', 'trash', `Really delete "${connection.id}"?`, async () => {
    const reply = await admin('DELETE', `/connections/${encodeURIComponent(connection.id)}`);
    if (!reply.ok) return toast(messageOf(reply), { error: true });
    toast(`Deleted "${connection.id}".`);
    focusNext = '#connections-heading';
    history.replaceState(null, '', location.pathname);
    await refresh();
  });
}

// Started last: every constant above is set by then.
start();
// The page's own requests to a connection (the grid's, the playground's) and the Usage screen's
// reading keep the header's usage line current: one reading for a burst of requests.
let usageTimer;
addEventListener('sheetrest:request', () => {
  clearTimeout(usageTimer);
  usageTimer = setTimeout(() => {
    const shown = document.getElementById('detail')?.dataset.connection;
    if (shown !== undefined) void refreshUsage(shown);
  }, 150);
});
addEventListener('sheetrest:usage', (event) => showUsage(event.detail.connection, event.detail.usage));
addEventListener('hashchange', () => {
  if (shownKey !== null && selectedId() !== shownKey.connection) shownKey = null;
  if (token.get() && sourceForms !== null) render();
});
