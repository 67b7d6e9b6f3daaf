// A connection's settings in the dashboard, each form one PATCH /_admin/connections/{id}
// (docs/admin-api.md): the plan with its allowance, period, operations and rate limit
// (`{"plan": {"name": "free", "requests": 10000, "rateLimit": {"requests": 60, "perSeconds": 10}}}`,
// or `{"plan": null}`), read-only / formulas / hidden tabs, and the source (a file's path, a
// Google spreadsheet's id). A config file's connection shows its settings and says where to
// change them. Built with dom.js only: names and values are text, never markup.
import { admin, messageOf } from './api.js';
import { field, h, select } from './dom.js';

const OPERATIONS = ['read', 'create', 'update', 'delete'];
const PERIODS = [['month', 'per month'], ['day', 'per day'], ['hour', 'per hour']];
const HIDDEN_TABS = [['serve', 'serve them'], ['hide', 'hide them']];

/**
 * The settings section of `connection` (as GET /_admin/connections/{id} shows it). `saved(text)`
 * is called after a change was saved (the page reloads the connection), `fail(text)` with the
 * server's message when it was refused.
 */
export function settingsSection(connection, { saved, fail }) {
  if (!connection.editable) {
    return h('div', { id: 'settings' }, h('h3', {}, `Settings of ${connection.id}`),
      h('p', { id: 'settings-config' }, `"${connection.id}" comes from the config file: change its plan, source and flags there, and restart the server.`));
  }
  const patch = async (body, what) => {
    const reply = await admin('PATCH', `/connections/${encodeURIComponent(connection.id)}`, body);
    if (!reply.ok) return fail(`${what} of "${connection.id}" not saved: ${messageOf(reply)}`);
    saved(`Saved the ${what} of "${connection.id}".`);
  };
  return h('div', { id: 'settings' },
    h('h3', {}, `Settings of ${connection.id}`),
    planForm(connection, patch),
    flagsForm(connection, patch),
    sourceForm(connection, patch));
}

/** The plan: none, or a name, an allowance per period (empty: no limit), the operations it allows and an optional rate limit. */
function planForm(connection, patch) {
  const plan = connection.plan;
  const none = h('input', { id: 'plan-none', type: 'checkbox', checked: plan === null });
  const name = h('input', { id: 'plan-name', value: plan?.name ?? '', placeholder: 'free' });
  const allowance = plan?.requests ?? plan?.monthlyRequests;
  const requests = h('input', { id: 'plan-requests', type: 'number', min: 0, step: 1, value: allowance ?? '', placeholder: 'no limit' });
  const period = select({ id: 'plan-period' }, PERIODS, plan?.period ?? 'month');
  const operations = OPERATIONS.map((operation) => h('input', { type: 'checkbox', id: `plan-op-${operation}`, value: operation, checked: (plan?.operations ?? OPERATIONS).includes(operation) }));
  const rateRequests = h('input', { id: 'plan-rate-requests', type: 'number', min: 1, step: 1, value: plan?.rateLimit?.requests ?? '', placeholder: 'none' });
  const rateSeconds = h('input', { id: 'plan-rate-seconds', type: 'number', min: 1, max: 86400, step: 1, value: plan?.rateLimit?.perSeconds ?? '', placeholder: '10' });
  const details = h('div', { id: 'plan-fields' },
    h('div', { class: 'inline' }, field('Plan name', name), field('Requests allowed', requests), field('Counted', period)),
    h('fieldset', { class: 'field settings-operations' }, h('legend', {}, 'Operations the plan allows'), operations.map((box) => h('label', {}, box, ` ${box.value}`))),
    h('div', { class: 'inline' }, field('Rate limit: requests', rateRequests), field('per seconds (per key, or per address when open)', rateSeconds)));
  const showDetails = () => { details.hidden = none.checked; };
  none.addEventListener('change', showDetails);
  showDetails();
  const form = h('form', { class: 'card', id: 'plan-form' },
    h('h4', {}, 'Plan and rate limit'),
    h('label', { class: 'check' }, none, ' no plan: unlimited, every operation, no rate limit'),
    details,
    h('button', { type: 'submit', id: 'plan-save' }, 'Save plan'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (none.checked) return patch({ plan: null }, 'plan');
    const body = {
      name: name.value.trim(),
      period: period.value,
      operations: operations.filter((box) => box.checked).map((box) => box.value),
      ...(requests.value === '' ? {} : { requests: Number(requests.value) }),
      // Both or neither: the server names what is missing when only one is given.
      ...(rateRequests.value === '' && rateSeconds.value === '' ? {} : { rateLimit: { requests: numberOrNothing(rateRequests.value), perSeconds: numberOrNothing(rateSeconds.value) } }),
    };
    return patch({ plan: body }, 'plan');
  });
  return form;
}

/** A number, or nothing: one rate-limit field left empty is left out, and the server names it as missing. */
function numberOrNothing(value) {
  return value === '' ? undefined : Number(value);
}

/** Read-only, formulas and hidden tabs. */
function flagsForm(connection, patch) {
  const readOnly = h('input', { id: 'set-readonly', type: 'checkbox', checked: connection.readOnly });
  const formulas = h('input', { id: 'set-formulas', type: 'checkbox', checked: connection.formulas });
  const hiddenTabs = select({ id: 'set-hidden-tabs' }, HIDDEN_TABS, connection.hiddenTabs);
  const form = h('form', { class: 'card', id: 'flags-form' },
    h('h4', {}, 'Writes and tabs'),
    h('label', { class: 'check' }, readOnly, ' read-only: refuse every write (403)'),
    h('label', { class: 'check' }, formulas, ' written text starting with = becomes a formula'),
    field('Tabs the workbook hides', hiddenTabs),
    h('button', { type: 'submit', id: 'flags-save' }, 'Save'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    patch({ readOnly: readOnly.checked, formulas: formulas.checked, hiddenTabs: hiddenTabs.value }, 'settings');
  });
  return form;
}

/**
 * The source: a file's path, or a Google spreadsheet's id. A source holding a secret (shown as
 * "[secret]": the server never shows it again) cannot be sent back as it is shown, so its
 * spreadsheet is changed through the admin API with its credentials.
 */
function sourceForm(connection, patch) {
  const source = connection.source ?? {};
  const title = h('h4', {}, 'Source');
  const now = h('p', {}, 'Now: ', h('code', { id: 'source-now' }, connection.description));
  if (JSON.stringify(source).includes('"[secret]"')) {
    return h('div', { class: 'card', id: 'source-form' }, title, now,
      h('p', { id: 'source-secret' }, 'This source holds credentials the server never shows again, so another spreadsheet is set with them through the admin API: PATCH /_admin/connections/{id} with the whole source (docs/admin-api.md).'));
  }
  const fieldName = source.type === 'google' ? 'spreadsheetId' : 'path';
  const input = h('input', { id: source.type === 'google' ? 'source-spreadsheet' : 'source-path', required: true, value: source[fieldName] ?? '' });
  const label = source.type === 'google' ? 'Spreadsheet id (from its address: /spreadsheets/d/<id>/)' : 'Workbook file (inside the admin file root)';
  const form = h('form', { class: 'card', id: 'source-form' }, title, now, field(label, input),
    h('p', {}, 'The source is reopened: requests meanwhile get 503 for a moment; if the new one cannot be opened nothing changes.'),
    h('button', { type: 'submit', id: 'source-save' }, 'Change source'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    patch({ source: { ...source, [fieldName]: input.value.trim() } }, 'source');
  });
  return form;
}
