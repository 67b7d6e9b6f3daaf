// A connection's webhooks in the dashboard: the list (GET /_admin/connections/crm/webhooks),
// a form to add one (its secret shown once, with a copy button: the server never shows it
// again), delete, "Send test event" (POST .../ping: the receiver's status shown), and a
// webhook's recent deliveries (status, attempts, last answer, next try). Built with dom.js only.
import { admin, messageOf } from './api.js';
import { button, copyButton, empty, field, h, pending, when } from './dom.js';
import { toast } from './notify.js';

const EVENT_TYPES = ['rows.created', 'rows.updated', 'rows.deleted', 'tab.changed'];

/** `{ connection, name, secret }`: the secret just made, in memory only, until hidden. */
let shownSecret = null;

/** The section, filled once the webhooks are loaded; `fail(text)` shows an error notice. */
export function webhooksSection(connection, fail) {
  const area = h('div', { id: 'webhooks-area' }, h('p', { class: 'loading', role: 'status' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), 'Loading the webhooks…'));
  const section = h('div', {}, h('h3', { id: 'webhooks-heading', tabindex: '-1' }, `Webhooks of ${connection.id}`), area);
  if (shownSecret !== null && shownSecret.connection !== connection.id) shownSecret = null;
  void load(connection, area, fail);
  return section;
}

/** `focus`: a selector to focus once drawn (the secret's copy button after adding, the heading after deleting). */
async function load(connection, area, fail, focus) {
  const base = `/connections/${encodeURIComponent(connection.id)}/webhooks`;
  const reply = await admin('GET', base);
  if (!reply.ok) {
    area.replaceChildren(h('p', { class: 'error' }, messageOf(reply)));
    return;
  }
  const reload = (then) => load(connection, area, fail, then);
  const hooks = reply.body;
  const rows = hooks.map((hook) => {
    const path = `${base}/${encodeURIComponent(hook.name)}`;
    const result = h('span', { class: 'ping-result' });
    const deliveries = h('div', { class: 'deliveries' });
    const ping = button('Send test event', 'send', { class: 'ping' });
    ping.addEventListener('click', async () => {
      result.textContent = 'sending…';
      const answer = await pending(ping, () => admin('POST', `${path}/ping`));
      if (!answer.ok) return fail(messageOf(answer));
      const { status, error } = answer.body;
      result.className = `ping-result ${status >= 200 && status < 300 ? 'ok' : 'error'}`;
      result.textContent = status === 0 ? `no answer: ${error ?? 'unknown'}` : `the receiver answered ${status}`;
    });
    const show = button('Recent deliveries', 'inbox', { class: 'show-deliveries' });
    show.addEventListener('click', () => showDeliveries(path, deliveries, fail));
    const remove = hook.origin === 'admin' && connection.editable ? deleteButton(async () => {
      const answer = await admin('DELETE', path);
      if (!answer.ok) return fail(messageOf(answer));
      if (shownSecret?.name === hook.name) shownSecret = null;
      toast(`Deleted the webhook "${hook.name}" of "${connection.id}".`);
      await reload('#webhooks-heading');
    }) : null;
    return [
      h('tr', { class: 'webhook', 'data-name': hook.name },
        h('td', {}, h('code', {}, hook.name)), h('td', { class: 'webhook-url' }, hook.url),
        h('td', {}, hook.events === null ? 'every event' : hook.events.join(', ')),
        h('td', {}, hook.origin === 'config' ? '(config file)' : when(hook.created)),
        h('td', { class: 'actions' }, ping, show, remove, result)),
      h('tr', {}, h('td', { colspan: 5 }, deliveries)),
    ];
  });
  const list = rows.length === 0
    ? empty('webhooks-empty', 'webhook', `No webhooks: the changes of "${connection.id}" are POSTed nowhere. Add a receiver's URL below to be told of every write.`)
    : h('div', { class: 'table-wrap' }, h('table', { id: 'webhooks' }, h('thead', {}, h('tr', {}, ['Name', 'URL', 'Events', 'Created', 'Actions'].map((text) => h('th', { scope: 'col' }, text)))), h('tbody', {}, rows)));
  const secret = shownSecret?.connection === connection.id ? secretBox(shownSecret, () => {
    shownSecret = null;
    void reload('#webhooks-heading');
  }) : null;
  area.replaceChildren(secret ?? '', list, connection.editable ? addForm(base, connection, fail, reload) : h('p', {}, 'The config file\'s webhooks are changed in the file.'));
  if (focus) area.ownerDocument.querySelector(focus)?.focus();
}

function addForm(base, connection, fail, reload) {
  const url = h('input', { id: 'webhook-url', type: 'url', required: true, placeholder: 'https://hooks.example.com/sheets' });
  const name = h('input', { id: 'webhook-name', pattern: '[A-Za-z0-9_\\-]{1,64}', placeholder: 'hook-1' });
  const events = EVENT_TYPES.map((type) => h('input', { type: 'checkbox', class: 'webhook-event', value: type, checked: true }));
  const form = h('form', { class: 'card inline', id: 'new-webhook-form', 'aria-labelledby': 'new-webhook-heading' },
    h('h4', { id: 'new-webhook-heading' }, `Add a webhook to ${connection.id}`),
    field('URL', url), field('Name', name),
    h('fieldset', { class: 'field', id: 'webhook-events' }, h('legend', {}, 'Events'), events.map((box) => h('label', { class: 'check' }, box, ` ${box.value}`))),
    button('Add webhook', 'plus', { type: 'submit', class: 'primary' }));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const chosen = events.filter((box) => box.checked).map((box) => box.value);
    if (chosen.length === 0) return fail('Choose at least one event type.');
    const body = {
      url: url.value.trim(),
      ...(name.value.trim() === '' ? {} : { name: name.value.trim() }),
      ...(chosen.length === EVENT_TYPES.length ? {} : { events: chosen }),
    };
    const reply = await pending(form, () => admin('POST', base, body));
    if (!reply.ok) return fail(messageOf(reply));
    shownSecret = { connection: connection.id, name: reply.body.name, secret: reply.body.secret };
    toast(`Added the webhook "${reply.body.name}" to "${connection.id}": its signing secret is shown once.`);
    await reload('#copy-webhook-secret');
  });
  return form;
}

async function showDeliveries(path, into, fail) {
  const reply = await admin('GET', `${path}/deliveries`);
  if (!reply.ok) return fail(messageOf(reply));
  if (reply.body.length === 0) {
    into.replaceChildren(h('p', { class: 'deliveries-empty muted' }, 'No deliveries since the server started: a write to the connection, or "Send test event", makes one.'));
    return;
  }
  into.replaceChildren(h('div', { class: 'table-wrap' }, h('table', { class: 'deliveries-table' },
    h('thead', {}, h('tr', {}, ['Event', 'Type', 'Status', 'Attempts', 'Last answer', 'Next try'].map((text) => h('th', {}, text)))),
    h('tbody', {}, reply.body.map((delivery) => h('tr', { class: `delivery ${delivery.status}` },
      h('td', {}, h('code', {}, delivery.eventId)), h('td', {}, delivery.type),
      h('td', { class: 'delivery-status' }, delivery.status), h('td', { class: 'delivery-attempts' }, String(delivery.attempts)),
      h('td', {}, delivery.lastStatus === null ? '—' : delivery.lastStatus === 0 ? `none${delivery.lastError ? ` (${delivery.lastError})` : ''}` : String(delivery.lastStatus)),
      h('td', {}, when(delivery.nextTry))))))));
}

/** A button that asks once more before it deletes. */
function deleteButton(act) {
  const control = button('Delete', 'trash', { class: 'danger delete-webhook' });
  control.addEventListener('click', () => {
    if (control.dataset.armed === '1') return pending(control, act);
    control.dataset.armed = '1';
    control.querySelector('.label').textContent = 'Really delete?';
  });
  return control;
}

/** The secret just made, once, with a copy button. */
function secretBox(shown, hide) {
  const value = h('code', { id: 'new-webhook-secret' }, shown.secret);
  const copy = copyButton('copy-webhook-secret', shown.secret, value);
  return h('div', { class: 'card secret', id: 'new-webhook', role: 'status' },
    h('p', { class: 'warning' }, `The signing secret of the webhook "${shown.name}" is shown only now: your receiver checks Sheetrest-Signature with it. Copy it; it will not be shown again.`),
    h('p', { class: 'secret-value' }, value),
    h('p', { class: 'buttons' }, copy, button('I have copied it: hide it', 'eyeOff', { id: 'hide-webhook-secret', onclick: hide })));
}
