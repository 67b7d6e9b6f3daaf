// "Connect a Google spreadsheet": asks the server for Google's sign-in address
// (POST /_admin/google/authorize with the new connection's id and the spreadsheet's URL or id)
// and goes there. Google sends the browser back to /_admin/google/callback, which makes the
// connection (closed, with a first key) and returns here with `#connected=<id>&new-key=<ticket>`
// (or `#google-error=<why>`); app.js trades the ticket for the key, shown once.
import { admin, messageOf } from './api.js';
import { button, field, h } from './dom.js';
import { icon } from './icons.js';

export function googleSection(google, connections, fail) {
  if (google === null) return null;
  const id = h('input', { id: 'google-id', required: true, pattern: '[A-Za-z0-9_\\-]+', placeholder: 'people' });
  const spreadsheet = h('input', { id: 'google-spreadsheet', required: true, placeholder: 'https://docs.google.com/spreadsheets/d/…' });
  const form = h('form', { class: 'card', id: 'google-connect' },
    h('h3', {}, icon('table'), ' Connect a Google spreadsheet'),
    h('p', {}, 'You sign in with Google; the connection can write if your account can edit the spreadsheet, and is read-only otherwise.'),
    field('Id', id), field('Spreadsheet URL or id', spreadsheet),
    button('Sign in with Google', 'external', { type: 'submit', class: 'primary' }));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (connections.some((connection) => connection.id === id.value.trim())) return fail(`There is already a connection "${id.value.trim()}".`);
    const reply = await admin('POST', '/google/authorize', { id: id.value.trim(), spreadsheet: spreadsheet.value.trim() });
    if (!reply.ok) return fail(messageOf(reply));
    location.assign(reply.body.url);
  });
  return form;
}
