// Swagger UI for one connection: `/_docs/crm` shows `/sheets/crm/openapi.json`. An open
// connection's document loads at once; a keyed one answers 401, so the page asks for an API key,
// loads the document with it and authorizes Swagger UI with it ("Try it out" sends X-Api-Key;
// "Authorize" shows it and can change it). The key stays in this page's memory only.
// Built with DOM calls only: nothing from the server is parsed as markup here.
const id = decodeURIComponent(location.pathname.slice('/_docs/'.length));
const documentUrl = `/sheets/${encodeURIComponent(id)}/openapi.json`;
const status = document.getElementById('docs-status');

document.title = `${id}: API docs · sheetrest`;
document.getElementById('docs-title').textContent = `API docs of "${id}"`;
document.getElementById('openapi-link').href = documentUrl;

function element(tag, attributes = {}, ...children) {
  const made = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) made.setAttribute(name, value);
  made.append(...children);
  return made;
}

async function load(key) {
  const response = await fetch(documentUrl, { headers: key ? { 'X-Api-Key': key } : {}, cache: 'no-store' });
  const text = await response.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = { message: text };
  }
  if (response.ok) return show(body, key);
  if (response.status === 401 || response.status === 403) return askForKey(key === undefined ? null : body.message ?? `The server answered ${response.status}.`);
  status.replaceChildren(element('p', { class: 'problem', role: 'alert' }, body.message ?? `The server answered ${response.status}.`));
}

function askForKey(problem) {
  const input = element('input', { id: 'docs-key', type: 'password', autocomplete: 'off', required: '' });
  const form = element('form', { id: 'docs-key-form', class: 'key-form' },
    element('p', {}, `"${id}" needs an API key to read its OpenAPI document. The key stays in this page only; "Try it out" then sends it as X-Api-Key.`),
    element('label', { for: 'docs-key' }, 'API key'), input,
    element('button', { type: 'submit' }, 'Show the docs'));
  if (problem) form.append(element('p', { class: 'problem', role: 'alert' }, problem));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    status.replaceChildren(element('p', {}, 'Loading the OpenAPI document…'));
    load(input.value.trim());
  });
  status.replaceChildren(form);
  input.focus();
}

function show(spec, key) {
  status.replaceChildren();
  const ui = window.SwaggerUIBundle({
    spec,
    dom_id: '#swagger-ui',
    deepLinking: true,
    // No badge from validator.swagger.io: the page talks to this server only.
    validatorUrl: null,
    defaultModelsExpandDepth: 0,
    persistAuthorization: false,
    onComplete: () => {
      if (key) ui.preauthorizeApiKey('apiKey', key);
    },
  });
  window.ui = ui;
}

load(undefined);
