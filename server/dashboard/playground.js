// A request builder for one connection, built from its OpenAPI document: the tabs and columns
// come from `x-sheetrest`, the methods of each path shape from `paths`, the `_format` values
// from the `format` parameter's enum. Conditions take every operator of `/query`, `_or` groups
// and `_case`; reads take `_select`; `/aggregate` takes `_agg` and `_group`
// (`/sheets/crm/aggregate?_group=Stage&_agg=count(),sum(Value)`). It sends the request from the
// page (with the key given, else the admin token) and shows the status, headers and answer, and the same
// request as a curl command.
import { send } from './api.js';
import { copyButton, field, h, select } from './dom.js';
import { icon } from './icons.js';

const SHAPES = [
  ['rows', 'all rows'],
  ['index', 'one row: /{n}'],
  ['slice', 'rows a to b: /{a}:{b}'],
  ['filter', 'filter: /{Column}/{Value}'],
  ['search', 'search: /search'],
  ['query', 'query: /query'],
  ['aggregate', 'aggregate: /aggregate'],
];
const SUFFIXES = { rows: '', index: '/{position}', slice: '/{position}', filter: '/{column}/{value}', search: '/search', query: '/query', aggregate: '/aggregate' };
const OPERATORS = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'between', 'in', 'nin', 'contains', 'startswith', 'endswith', 'empty', 'filled'];
/** Operators that take no value: `Notes=__empty()`. */
const NO_VALUE = new Set(['empty', 'filled']);
/** The shapes whose requests take conditions, `_or` groups and `_case`. */
const CONDITIONS = new Set(['search', 'query', 'aggregate']);
const HTTP_METHODS = ['get', 'post', 'patch', 'put', 'delete'];

/** `given`: the key to send, `{ key, pasted }` (undefined: none); curl shows it only when pasted. */
export function playground(connection, document_, given) {
  const key = given?.key;
  const shownKey = given?.pasted ? key : undefined;
  const described = document_['x-sheetrest'];
  const formats = document_.components?.parameters?.format?.schema?.enum ?? ['records'];
  const tabs = described.tabs;
  if (tabs.length === 0) return h('p', { class: 'empty' }, 'The workbook has no tabs: add a sheet with a header row, then reload.');

  const controls = {
    tab: select({ id: 'pg-tab' }, tabs.map((tab, index) => [String(index), tab.name]), '0'),
    shape: select({ id: 'pg-shape' }, SHAPES, 'rows'),
    method: h('select', { id: 'pg-method' }),
    index: h('input', { id: 'pg-index', type: 'number', min: 0, value: 0 }),
    start: h('input', { id: 'pg-start', type: 'number', min: 0, value: 0 }),
    end: h('input', { id: 'pg-end', type: 'number', min: 0, placeholder: 'to the end' }),
    column: h('select', { id: 'pg-column' }),
    value: h('input', { id: 'pg-value', placeholder: 'a value; * for any characters: Jo*' }),
    conditions: h('div', { id: 'pg-conditions' }),
    caseSensitive: h('input', { id: 'pg-case', type: 'checkbox' }),
    agg: h('input', { id: 'pg-agg', value: 'count()' }),
    group: h('input', { id: 'pg-group' }),
    selectColumns: h('input', { id: 'pg-select' }),
    limit: h('input', { id: 'pg-limit', type: 'number', min: 0 }),
    offset: h('input', { id: 'pg-offset', type: 'number', min: 0 }),
    sort: h('input', { id: 'pg-sort' }),
    format: select({ id: 'pg-format' }, formats, 'records'),
    raw: h('input', { id: 'pg-raw', type: 'checkbox' }),
    body: h('textarea', { id: 'pg-body', rows: 4, spellcheck: 'false' }),
  };
  const curl = h('pre', { id: 'pg-curl', class: 'code' });
  const result = h('div', { id: 'pg-result' });
  const shapeFields = h('div', { class: 'inline' });
  const readFields = h('div', { class: 'inline' },
    field('_select', controls.selectColumns), field('_limit', controls.limit), field('_offset', controls.offset), field('_sort', controls.sort), field('_format', controls.format), h('label', { class: 'check' }, controls.raw, ' _raw'));
  const bodyField = field('JSON body', controls.body);

  const tab = () => tabs[Number(controls.tab.value)];
  const shape = () => controls.shape.value;
  const conditionRows = [];
  /** `_or` groups: each a list of condition rows, of which one must hold. */
  const orGroups = [];

  const conditionRow = (prefix) => ({ column: select({ class: `${prefix}-column` }, tab().columns), operator: select({ class: `${prefix}-op` }, OPERATORS, 'eq'), value: h('input', { class: `${prefix}-value` }) });

  function addCondition() {
    conditionRows.push(conditionRow('pg-cond'));
    layout();
  }

  function addOrGroup() {
    orGroups.push([conditionRow('pg-or'), conditionRow('pg-or')]);
    layout();
  }

  /** The methods the document lists for this tab and shape (a read-only connection lists no writes). */
  function methods() {
    const item = document_.paths[tab().path + SUFFIXES[shape()]] ?? {};
    // `/{position}` reads a slice, but its writes narrow `position` to one row.
    const takes = (operation) => shape() !== 'slice' || !(operation.parameters ?? []).some((parameter) => parameter.name === 'position' && parameter.schema?.type === 'integer');
    return HTTP_METHODS.filter((method) => item[method] !== undefined && takes(item[method])).map((method) => method.toUpperCase());
  }

  let laidOut = '';
  let laying = false;

  function layout() {
    // Moving a focused field out of the page blurs it, which fires `change`, which calls here again.
    if (laying) return;
    laying = true;
    try {
      lay();
    } finally {
      laying = false;
    }
  }

  function lay() {
    const allowed = methods();
    const chosen = allowed.includes(controls.method.value) ? controls.method.value : allowed[0];
    controls.method.replaceChildren(...allowed.map((method) => h('option', { value: method, selected: method === chosen }, method)));
    const columns = tab().columns;
    if (!columns.includes(controls.column.value)) controls.column.replaceChildren(...columns.map((column) => h('option', { value: column }, column)));
    hintColumns(columns);
    // Rebuilt only when the shape or the conditions change: typing must not move the field typed in
    // (and building the fields moves the controls into them).
    const now = `${shape()} ${conditionRows.length} ${orGroups.map((group) => group.length).join(',')} ${controls.tab.value}`;
    if (now !== laidOut) {
      const parts = {
        index: () => [field('Row', controls.index)],
        slice: () => [field('From', controls.start), field('To (exclusive)', controls.end)],
        filter: () => [field('Column', controls.column), field('Value', controls.value)],
        search: () => conditionFields(false),
        query: () => conditionFields(true),
        aggregate: () => [h('div', { class: 'inline' }, field('_agg', controls.agg), field('_group', controls.group)), ...conditionFields(true)],
        rows: () => [],
      }[shape()];
      shapeFields.replaceChildren(...parts());
    }
    laidOut = now;
    // /search has no operators: an `__empty` picked on /query must not leave its value off there.
    for (const row of [...conditionRows, ...orGroups.flat()]) row.value.disabled = shape() !== 'search' && NO_VALUE.has(row.operator.value);
    const writing = controls.method.value !== 'GET';
    readFields.hidden = writing;
    bodyField.hidden = !['POST', 'PATCH', 'PUT'].includes(controls.method.value);
    if (!bodyField.hidden && controls.body.value.trim() === '') controls.body.value = JSON.stringify(Object.fromEntries(columns.map((column) => [column, ''])), null, 2);
    curl.textContent = curlOf(build(), shownKey, key !== undefined ? 'key' : !connection.open);
  }

  /** The hints name the chosen tab's own columns: `_select` "Lead,Stage", `_sort` "Lead,-Stage", `_agg` "count(),sum(Value)". */
  function hintColumns(columns) {
    // A column whose name holds a comma cannot be listed there, so it is not offered as an example.
    const named = columns.filter((column) => !column.includes(','));
    const first = named[0] ?? 'Name';
    const second = named[1] ?? first;
    const last = named.at(-1) ?? first;
    controls.selectColumns.placeholder = first === second ? first : `${first},${second}`;
    controls.sort.placeholder = first === second ? `-${first}` : `${first},-${second}`;
    controls.group.placeholder = first;
    controls.agg.placeholder = `count(),sum(${last}),avg(${last})`;
  }

  function conditionFields(withOperator) {
    const rowFields = (rows, row, index, withOperator) => h('div', { class: 'inline' },
      field('Column', row.column), withOperator ? field('Operator', row.operator) : null, field('Value', row.value),
      h('button', { type: 'button', onclick: () => { rows.splice(index, 1); layout(); } }, 'Remove'));
    const groups = orGroups.map((group, index) => h('fieldset', { class: 'pg-or-group' },
      h('legend', {}, `_or group ${index + 1}: at least one holds`),
      group.map((row, at) => rowFields(group, row, at, withOperator)),
      h('button', { type: 'button', class: 'pg-or-add-condition', onclick: () => { group.push(conditionRow('pg-or')); layout(); } }, 'Add to this group'),
      h('button', { type: 'button', onclick: () => { orGroups.splice(index, 1); layout(); } }, 'Remove the group')));
    return [h('div', { class: 'conditions' }, conditionRows.map((row, index) => rowFields(conditionRows, row, index, withOperator))),
      h('button', { type: 'button', id: 'pg-add-condition', onclick: addCondition }, 'Add a condition'), ' ',
      h('button', { type: 'button', id: 'pg-add-or', onclick: addOrGroup }, 'Add an _or group'),
      ...groups,
      h('label', { class: 'check' }, controls.caseSensitive, ' _case=sensitive')];
  }

  /** The request the form describes: method, URL (relative to this server) and body. */
  function build() {
    const method = controls.method.value;
    let path = tab().path;
    const query = new URLSearchParams();
    switch (shape()) {
      case 'index': path += `/${Number(controls.index.value) || 0}`; break;
      case 'slice': path += `/${Number(controls.start.value) || 0}:${controls.end.value === '' ? '' : Number(controls.end.value)}`; break;
      case 'filter': path += `/${encodeURIComponent(controls.column.value)}/${encodeURIComponent(controls.value.value)}`; break;
      case 'search':
      case 'query':
      case 'aggregate': {
        path += `/${shape()}`;
        if (shape() === 'aggregate') {
          if (controls.agg.value.trim() !== '') query.set('_agg', controls.agg.value.trim());
          if (controls.group.value.trim() !== '') query.set('_group', controls.group.value.trim());
        }
        for (const row of conditionRows) query.append(row.column.value, shape() === 'search' ? row.value.value : operation(row));
        // `;` separates a group's conditions: a literal one is `\;`.
        const escaped = (text) => text.replaceAll(';', '\\;');
        for (const group of orGroups) {
          // On /search an item is Column=pattern, as its own conditions: an operator call would be literal text there.
          if (group.length > 0) query.append('_or', group.map((row) => `${escaped(row.column.value)}=${escaped(shape() === 'search' ? row.value.value : operation(row))}`).join(';'));
        }
        if (controls.caseSensitive.checked) query.set('_case', 'sensitive');
        break;
      }
    }
    if (method === 'GET') {
      if (controls.selectColumns.value.trim() !== '') query.set('_select', controls.selectColumns.value.trim());
      if (controls.limit.value !== '') query.set('_limit', controls.limit.value);
      if (controls.offset.value !== '') query.set('_offset', controls.offset.value);
      if (controls.sort.value.trim() !== '') query.set('_sort', controls.sort.value.trim());
      if (controls.format.value !== 'records') query.set('_format', controls.format.value);
      if (controls.raw.checked) query.set('_raw', '1');
    }
    const search = query.toString();
    const body = bodyField.hidden ? undefined : controls.body.value;
    return { method, url: search === '' ? path : `${path}?${search}`, body };
  }

  /** `__gt(20)`, `__in(Oslo,Lima)`, `__empty()`. */
  function operation(row) {
    return `__${row.operator.value}(${NO_VALUE.has(row.operator.value) ? '' : row.value.value})`;
  }

  async function run(event) {
    event.preventDefault();
    const request = build();
    result.replaceChildren(h('p', { class: 'loading', role: 'status' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), 'Sending…'));
    let answer;
    try {
      answer = await send({ ...request, key });
    } catch (error) {
      result.replaceChildren(h('p', { class: 'error' }, `The request failed: ${error.message}`));
      return;
    }
    result.replaceChildren(
      h('p', { id: 'pg-status', class: answer.status < 400 ? 'ok' : 'error' }, `${answer.status} ${answer.statusText}`, h('small', {}, ` in ${answer.ms} ms`)),
      h('details', {}, h('summary', {}, 'Headers'), h('pre', { id: 'pg-headers', class: 'code' }, answer.headers.map(([name, value]) => `${name}: ${value}`).join('\n'))),
      h('pre', { id: 'pg-answer', class: 'code answer' }, pretty(answer.text)));
  }

  const form = h('form', { class: 'card playground', id: 'playground' },
    h('div', { class: 'inline' }, field('Tab', controls.tab), field('Path', controls.shape), field('Method', controls.method)),
    shapeFields, readFields, bodyField,
    h('button', { type: 'submit', class: 'primary', id: 'pg-send' }, icon('send'), 'Send'),
    h('div', { class: 'curl-head' }, h('h4', { id: 'pg-curl-heading' }, 'The same request with curl'), copyButton('copy-curl', () => curl.textContent, curl, 'the curl command')), curl, result);
  form.addEventListener('submit', run);
  form.addEventListener('input', layout);
  form.addEventListener('change', layout);
  layout();
  return form;
}

/**
 * The request as a shell command, sent as the page sends it: with the key pasted, else
 * `$SHEETREST_KEY` for a key made here; with no key on a closed connection, the admin token
 * (`$SHEETREST_ADMIN_TOKEN`). `keyed`: 'key' when a key made here is sent, true for a closed
 * connection sent the admin token, false for an open one.
 */
export function curlOf({ method, url, body }, key, keyed) {
  const parts = ['curl -i'];
  if (method !== 'GET') parts.push(`-X ${method}`);
  parts.push(quote(new URL(url, location.origin).href));
  if (key) parts.push(`-H ${quote(`X-Api-Key: ${key}`)}`);
  else if (keyed === 'key') parts.push('-H "X-Api-Key: $SHEETREST_KEY"');
  else if (keyed) parts.push('-H "Authorization: Bearer $SHEETREST_ADMIN_TOKEN"');
  if (body !== undefined) parts.push("-H 'Content-Type: application/json'", `--data-binary ${quote(body)}`);
  return parts.join(' \\\n  ');
}

/** Single-quoted for a POSIX shell: nothing inside is expanded. */
function quote(text) {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
