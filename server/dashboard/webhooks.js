// A connection's webhooks in the dashboard: the list (GET /_admin/connections/crm/webhooks),
// a form to add one (its secret shown once, with a copy button: the server never shows it
// again), delete, "Send test event" (POST .../ping: the receiver's status shown), and a
// webhook's recent deliveries (status, attempts, last answer, next try). Built with dom.js only.
import { admin, messageOf } from './api.js';
import { copyButton, field, h, when } from './dom.js';

const EVENT_TYPES = ['rows.created', 'rows.updated', 'rows.deleted', 'tab.changed'];

/** `{ connection, name, secret }`: the secret just made, in memory only, until hidden. */
let shownSecret = null;

/** The section, filled once the webhooks are loaded; `fail(text)` shows an error notice. */
export function webhooksSection(connection, fail) {
  const area = h('div', { id: 'webhooks-area' }, h('p', {}, 'Loading the webhooks…'));
  const section = h('div', {}, h('h3', {}, 'Webhooks'), area);
  if (shownSecret !== null && shownSecret.connection !== connection.id) shownSecret = null;
  void load(connection, area, fail);
  return section;
}

async function load(connection, area, fail) {
  const base = `/connections/${encodeURIComponent(connection.id)}/webhooks`;
  const reply = await admin('GET', base);
  if (!reply.ok) {
    area.replaceChildren(h('p', { class: 'error' }, messageOf(reply)));
    return;
  }
  const reload = () => load(connection, area, fail);
  const hooks = reply.body;
  const rows = hooks.map((hook) => {
    const path = `${base}/${encodeURIComponent(hook.name)}`;
    const result = h('span', { class: 'ping-result' });
    const deliveries = h('div', { class: 'deliveries' });
    const ping = h('button', { type: 'button', class: 'ping' }, 'Send test event');
    ping.addEventListener('click', async () => {
      result.textContent = 'sending…';
      const answer = await admin('POST', `${path}/ping`);
      if (!answer.ok) return fail(messageOf(answer));
      const { status, error } = answer.body;
      result.className = `ping-result ${status >= 200 && status < 300 ? 'ok' : 'error'}`;
      result.textContent = status === 0 ? `no answer: ${error ?? 'unknown'}` : `the receiver answered ${status}`;
    });
    const show = h('button', { type: 'button', class: 'show-deliveries' }, 'Recent deliveries');
    show.addEventListener('click', () => showDeliveries(path, deliveries, fail));
    const remove = hook.origin === 'admin' && connection.editable ? deleteButton(async () => {
      const answer = await admin('DELETE', path);
      if (!answer.ok) return fail(messageOf(answer));
      if (shownSecret?.name === hook.name) shownSecret = null;
      await reload();
    }) : null;
    return [
      h('tr', { class: 'webhook', 'data-name': hook.name },
        h('td', {}, h('code', {}, hook.name)), h('td', { class: 'webhook-url' }, hook.url),
        h('td', {}, hook.events === null ? 'every event' : hook.events.join(', ')),
        h('td', {}, hook.origin === 'config' ? '(config file)' : when(hook.created)),
        h('td', {}, ping, ' ', show, ' ', remove, ' ', result)),
      h('tr', {}, h('td', { colspan: 5 }, deliveries)),
    ];
  });
  const list = rows.length === 0
    ? h('p', { id: 'webhooks-empty' }, 'No webhooks: the connection\'s changes are POSTed nowhere.')
    : h('table', { id: 'webhooks' }, h('thead', {}, h('tr', {}, ['Name', 'URL', 'Events', 'Created', ''].map((text) => h('th', {}, text)))), h('tbody', {}, rows));
  const secret = shownSecret?.connection === connection.id ? secretBox(shownSecret, () => {
    shownSecret = null;
    void reload();
  }) : null;
  area.replaceChildren(list, connection.editable ? addForm(base, connection, fail, reload) : h('p', {}, 'The config file\'s webhooks are changed in the file.'), secret ?? '');
}

function addForm(base, connection, fail, reload) {
  const url = h('input', { id: 'webhook-url', type: 'url', required: true, placeholder: 'https://hooks.example.com/sheets' });
  const name = h('input', { id: 'webhook-name', pattern: '[A-Za-z0-9_\\-]{1,64}', placeholder: 'hook-1' });
  const events = EVENT_TYPES.map((type) => h('input', { type: 'checkbox', class: 'webhook-event', value: type, checked: true }));
  const form = h('form', { class: 'inline', id: 'new-webhook-form' },
    field('URL', url), field('Name', name),
    h('fieldset', { class: 'field', id: 'webhook-events' }, h('legend', {}, 'Events'), events.map((box) => h('label', {}, box, ` ${box.value}`))),
    h('button', { type: 'submit' }, 'Add webhook'));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const chosen = events.filter((box) => box.checked).map((box) => box.value);
    if (chosen.length === 0) return fail('Choose at least one event type.');
    const body = {
      url: url.value.trim(),
      ...(name.value.trim() === '' ? {} : { name: name.value.trim() }),
      ...(chosen.length === EVENT_TYPES.length ? {} : { events: chosen }),
    };
    const reply = await admin('POST', base, body);
    if (!reply.ok) return fail(messageOf(reply));
    shownSecret = { connection: connection.id, name: reply.body.name, secret: reply.body.secret };
    await reload();
  });
  return form;
}

async function showDeliveries(path, into, fail) {
  const reply = await admin('GET', `${path}/deliveries`);
  if (!reply.ok) return fail(messageOf(reply));
  if (reply.body.length === 0) {
    into.replaceChildren(h('p', { class: 'deliveries-empty' }, 'No deliveries since the server started.'));
    return;
  }
  into.replaceChildren(h('table', { class: 'deliveries-table' },
    h('thead', {}, h('tr', {}, ['Event', 'Type', 'Status', 'Attempts', 'Last answer', 'Next try'].map((text) => h('th', {}, text)))),
    h('tbody', {}, reply.body.map((delivery) => h('tr', { class: `delivery ${delivery.status}` },
      h('td', {}, h('code', {}, delivery.eventId)), h('td', {}, delivery.type),
      h('td', { class: 'delivery-status' }, delivery.status), h('td', { class: 'delivery-attempts' }, String(delivery.attempts)),
      h('td', {}, delivery.lastStatus === null ? '—' : delivery.lastStatus === 0 ? `none${delivery.lastError ? ` (${delivery.lastError})` : ''}` : String(delivery.lastStatus)),
      h('td', {}, when(delivery.nextTry)))))));
}

/** A button that asks once more before it deletes. */
function deleteButton(act) {
  const button = h('button', { type: 'button', class: 'danger delete-webhook' }, 'Delete');
  button.addEventListener('click', () => {
    if (button.dataset.armed === '1') return act();
    button.dataset.armed = '1';
    button.textContent = 'Really delete?';
  });
  return button;
}

/** The secret just made, once, with a copy button. */
function secretBox(shown, hide) {
  const value = h('code', { id: 'new-webhook-secret' }, shown.secret);
  const copy = copyButton('copy-webhook-secret', shown.secret, value);
  return h('div', { class: 'card secret', id: 'new-webhook', role: 'status' },
    h('p', { class: 'warning' }, `The signing secret of the webhook "${shown.name}" is shown only now: your receiver checks Sheetrest-Signature with it. Copy it; it will not be shown again.`),
    h('p', {}, value),
    h('p', {}, copy, ' ', h('button', { id: 'hide-webhook-secret', type: 'button', onclick: hide }, 'I have copied it: hide it')));
}
