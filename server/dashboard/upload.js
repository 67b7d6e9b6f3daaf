// "Upload a workbook": a file dropped on the connections screen (or picked) is stored in the
// server's admin.fileRoot with `PUT /_admin/files/{name}` (the body is the file), then made a
// connection with `POST /_admin/connections` from the path that answer gives: closed, with a
// first key that app.js shows once. Both are admin API calls anyone can make with curl
// (docs/admin-api.md, "Uploading a workbook").
import { admin, messageOf, token } from './api.js';
import { field, h } from './dom.js';
import { icon } from './icons.js';

const KINDS = /\.(xlsx|xlsm|ods|csv)$/i;

/** `Données 2024.xlsx` -> `Donnees-2024`: the id the server would give the file in single-file mode. */
export function idFor(name) {
  const id = name.replace(/\.[^.]*$/, '').normalize('NFKD').replace(/[\u0300-\u036f]/g, '').replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 100);
  return id === '' ? 'sheet' : id;
}

/**
 * The form, and `take(file)`, which hands it a file dropped anywhere on the connections screen.
 * `created(reply)`: the new connection's answer (with `newKey`); `fail(text)`: a notice.
 */
export function uploadSection(created, fail) {
  let file = null;
  const picker = h('input', { id: 'upload-file', type: 'file', accept: '.xlsx,.xlsm,.ods,.csv', class: 'visually-hidden' });
  const chosen = h('span', { id: 'upload-chosen' }, 'No file chosen yet.');
  const zone = h('label', { class: 'drop-zone', id: 'upload-zone', for: 'upload-file' },
    icon('upload'), h('span', {}, 'Drop a workbook here (.xlsx, .xlsm, .ods, .csv), or click to pick one.'), chosen);
  const id = h('input', { id: 'upload-id', required: true, pattern: '[A-Za-z0-9_\\-]+', placeholder: 'crm' });
  const readOnly = h('input', { id: 'upload-readonly', type: 'checkbox' });
  const replace = h('input', { id: 'upload-replace', type: 'checkbox' });
  const send = h('button', { type: 'submit', class: 'primary', id: 'upload-send' }, 'Upload and create');
  const form = h('form', { class: 'card', id: 'upload' },
    h('h3', {}, icon('upload'), 'Upload a workbook'),
    h('p', {}, 'The file is stored on the server (in admin.fileRoot) and served as a new connection, closed, with one key shown once.'),
    picker, zone, field('Id', id),
    h('label', { class: 'check' }, readOnly, ' read-only'),
    h('label', { class: 'check' }, replace, ' replace a file of the same name on the server'),
    send);

  function take(given) {
    if (!KINDS.test(given.name)) return fail(`"${given.name}" is not a workbook sheetrest reads: use a .xlsx, .xlsm, .ods or .csv file.`);
    file = given;
    chosen.textContent = `${given.name} (${given.size.toLocaleString()} bytes)`;
    if (id.value.trim() === '') id.value = idFor(given.name);
    id.focus();
  }

  picker.addEventListener('change', () => picker.files?.[0] && take(picker.files[0]));
  for (const [type, on] of [['dragover', true], ['dragleave', false]]) {
    zone.addEventListener(type, (event) => {
      event.preventDefault();
      zone.classList.toggle('dragging', on);
    });
  }
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (file === null) {
      fail('Choose a workbook first: drop it on the box, or click the box to pick it.');
      return zone.focus();
    }
    send.disabled = true;
    send.textContent = `Uploading ${file.name}…`;
    try {
      const path = `/_admin/files/${encodeURIComponent(file.name)}${replace.checked ? '?replace=true' : ''}`;
      const response = await fetch(path, { method: 'PUT', headers: { Authorization: `Bearer ${token.get() ?? ''}`, 'Content-Type': 'application/octet-stream' }, body: file });
      const stored = { ok: response.ok, status: response.status, body: await response.json().catch(() => null) };
      if (!stored.ok) return fail(`${file.name} was not uploaded: ${messageOf(stored)}`);
      const reply = await admin('POST', '/connections', { id: id.value.trim(), source: { type: 'file', path: stored.body.path }, readOnly: readOnly.checked });
      if (!reply.ok) return fail(`${file.name} is stored on the server, but the connection was not created: ${messageOf(reply)}`);
      await created(reply.body);
    } finally {
      send.disabled = false;
      send.textContent = 'Upload and create';
    }
  });
  return { form, take };
}

/** Lets `element` take a workbook dropped anywhere on it. */
export function acceptDrops(element, take) {
  element.addEventListener('dragover', (event) => {
    if ([...(event.dataTransfer?.types ?? [])].includes('Files')) event.preventDefault();
  });
  element.addEventListener('drop', (event) => {
    const dropped = event.dataTransfer?.files?.[0];
    if (!dropped) return;
    event.preventDefault();
    element.querySelector('#upload-zone')?.classList.remove('dragging');
    take(dropped);
  });
}
