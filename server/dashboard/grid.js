// A connection's tab as a grid, read and written through the connection's own API, as any client
// would: a page is `GET /sheets/crm/tabs/Leads?_format=split&_limit=100&_offset=0&_sort=-Stage`
// (split keeps each row's data index, which writes address), the filter box is `/search`, an
// edit is `PATCH /sheets/crm/tabs/Leads/7` with `If-Match`, a new row a `POST`, a removal a
// `DELETE /sheets/crm/tabs/Leads/7` with `If-Match`.
//
// If-Match: the page's tab tag ("t…") while the page is as read. After a write of ours the tab
// tag is stale (our own write changed the tab), so the next write first reads its row
// (`GET .../7`: its row tag "r…" and its cells), checks that the cell (or, for a removal, the row)
// still shows what the grid showed, and sends the row tag. Either way a change by someone else
// since the page was read is a 412 or a mismatch, shown as "changed meanwhile" with the value
// typed and a reload button: nothing typed is dropped silently.
//
// Keyboard (role="grid", one cell in the tab order): arrows move, Home/End go to a row's ends,
// Enter (or F2, or a double click) edits, Enter saves, Escape cancels, Tab saves and moves to the
// next cell (Shift+Tab: the previous); Tab outside an edit leaves the grid.
import { requestMade } from './api.js';
import { h } from './dom.js';
import { icon } from './icons.js';

const PAGE = 100;
/** Per connection: the tab, page, sort and filter, so a redraw of the page (a notice) keeps the place. */
const places = new Map();

/**
 * `credential()`: the headers that authenticate a request to the connection (`{ 'X-Api-Key': key }`
 * or `{}`): the one place to change if the admin token comes to suffice.
 */
export function gridSection(connection, credential) {
  const place = places.get(connection.id) ?? { tab: null, offset: 0, sort: null, filter: '' };
  places.set(connection.id, place);
  const base = `/sheets/${encodeURIComponent(connection.id)}`;
  const writable = connection.writable;
  const area = h('div', { id: 'grid-area' }, h('p', {}, 'Loading the tabs…'));
  // Says what is shown: "Rows of Leads" (the tab picker below changes it).
  const heading = h('h3', { id: 'grid-heading' }, `Rows of ${connection.id}`);
  const status = h('p', { id: 'grid-status', role: 'status' });
  const problem = h('div', { id: 'grid-problem', role: 'alert' });
  let page = null;
  let fresh = false;
  let active = { row: 0, col: 0 };
  let editing = null;
  let saving = Promise.resolve();
  const opened = performance.now();
  let firstDrawn = false;

  async function call(method, path, { body, ifMatch } = {}) {
    const headers = { ...credential() };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (ifMatch) headers['If-Match'] = ifMatch;
    const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' });
    const text = await response.text();
    requestMade();
    let parsed = null;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      parsed = text;
    }
    return { status: response.status, ok: response.ok, headers: response.headers, body: parsed };
  }

  const tabPath = () => `${base}/tabs/${encodeURIComponent(place.tab)}`;
  const said = (reply) => reply.body?.message ?? `The server answered ${reply.status}.`;

  async function start() {
    const reply = await call('GET', `${base}/tabs`);
    if (reply.status === 401) return area.replaceChildren(h('p', { id: 'grid-needs-key' }, `"${connection.id}" needs a working API key to show its data: paste one in "API key for the playground" below, or create a key and press "Use in the playground".`));
    if (!reply.ok) return area.replaceChildren(h('p', { class: 'error' }, said(reply)));
    const tabs = reply.body.map((tab) => tab.name);
    if (tabs.length === 0) return area.replaceChildren(h('p', {}, `The workbook of "${connection.id}" has no tabs.`));
    if (!tabs.includes(place.tab)) Object.assign(place, { tab: tabs[0], offset: 0, sort: null, filter: '' });
    heading.textContent = `Rows of ${place.tab}`;
    const chooser = h('select', { id: 'grid-tab' }, tabs.map((tab) => h('option', { value: tab, selected: tab === place.tab }, tab)));
    chooser.addEventListener('change', () => {
      Object.assign(place, { tab: chooser.value, offset: 0, sort: null, filter: '' });
      heading.textContent = `Rows of ${place.tab}`;
      filter.value = '';
      load();
    });
    const filter = h('input', { id: 'grid-filter', type: 'search', value: place.filter, placeholder: 'text, or Column=pattern', 'aria-describedby': 'grid-filter-help' });
    let timer;
    filter.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        place.filter = filter.value.trim();
        place.offset = 0;
        load();
      }, 300);
    });
    area.replaceChildren(...[
      h('div', { class: 'inline' },
        h('label', { class: 'field' }, h('span', {}, 'Tab'), chooser),
        h('label', { class: 'field grid-filter' }, h('span', {}, 'Filter'), filter)),
      h('p', { id: 'grid-filter-help', class: 'hint' }, 'Filters with /search: text is looked for anywhere in any column (an _or group of Column=*text*); Column=pattern matches one column, * standing for any characters (Jo*, *son). Case is ignored.'),
      // The number beside each row is the API's (what a write addresses), not the sheet's: said once, here.
      h('p', { id: 'grid-index-help', class: 'hint' }, 'Index: the row\'s number in the API, from 0, as in ', h('code', { id: 'grid-index-example' }, `${base}/tabs/…/0`), '; in the sheet it is row index + 2 (row 1 holds the headers).'),
      writable ? null : h('p', { id: 'grid-read-only' }, `Read-only: ${connection.readOnly ? `"${connection.id}" is set read-only` : `the source of "${connection.id}" cannot be written`}, so its cells cannot be edited here.`),
      problem, h('div', { id: 'grid-table' }), status].filter((each) => each !== null));
    await load();
  }

  /** The URL of the page as `place` says: /search when filtering. */
  function pageUrl() {
    const query = new URLSearchParams({ _format: 'split', _limit: String(PAGE), _offset: String(place.offset) });
    if (place.sort) query.set('_sort', `${place.sort.desc ? '-' : ''}${place.sort.column}`);
    let path = tabPath();
    if (place.filter !== '') {
      path += '/search';
      const one = /^([^=]+)=(.*)$/.exec(place.filter);
      if (one !== null && page?.columns.includes(one[1].trim())) query.set(one[1].trim(), one[2]);
      else {
        // `;` ends an item of the group: a literal one is `\;`.
        const text = place.filter.replaceAll(';', '\\;');
        const columns = (page?.columns ?? []).filter((column) => !column.includes('='));
        if (columns.length > 0) query.set('_or', columns.map((column) => `${column.replaceAll(';', '\\;')}=*${text}*`).join(';'));
      }
    }
    return `${path}?${query}`;
  }

  async function load() {
    const hadFocus = area.contains(document.activeElement) && document.activeElement?.closest?.('table') !== null;
    // The columns are known once a page is read: the first read of a filtered tab finds them first.
    if (place.filter !== '' && (page === null || page.tab !== place.tab)) {
      const first = await call('GET', `${tabPath()}?_format=split&_limit=0`);
      if (first.ok) page = { tab: place.tab, columns: first.body.columns, index: [], data: [], tag: null, total: 0 };
    }
    const reply = await call('GET', pageUrl());
    if (!reply.ok) {
      problem.replaceChildren(h('p', { class: 'error' }, reply.status === 401 ? `"${connection.id}" needs a working API key: paste one below.` : said(reply)));
      return;
    }
    problem.replaceChildren();
    page = { tab: place.tab, ...reply.body, tag: reply.headers.get('etag'), total: Number(reply.headers.get('x-total-count') ?? reply.body.data.length) };
    fresh = true;
    editing = null;
    active = { row: Math.min(active.row, Math.max(page.data.length - 1, 0)), col: Math.min(active.col, Math.max(page.columns.length - 1, 0)) };
    draw();
    if (hadFocus) focusActive();
    if (!firstDrawn) {
      firstDrawn = true;
      performance.measure('sheetrest:grid-first-page', { start: opened, end: performance.now() });
    }
  }

  function draw() {
    const table = area.querySelector('#grid-table');
    const { columns, index, data, total } = page;
    const header = h('tr', { 'aria-rowindex': 1 },
      h('th', { scope: 'col', id: 'grid-index-heading', title: 'The row\'s index in the API, from 0' }, 'Index'),
      columns.map((column) => {
        const sorted = place.sort?.column === column ? (place.sort.desc ? 'descending' : 'ascending') : null;
        return h('th', { scope: 'col', 'aria-sort': sorted ?? 'none' },
          h('button', { type: 'button', class: 'grid-sort', onclick: () => sortBy(column) }, column, sorted === null ? '' : sorted === 'ascending' ? ' ▲' : ' ▼'));
      }),
      writable ? h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Remove')) : null);
    const rows = data.map((cells, r) => h('tr', { 'aria-rowindex': place.offset + r + 2, 'data-index': index[r] },
      h('th', { scope: 'row' }, index[r]),
      cells.map((value, c) => h('td', { tabindex: r === active.row && c === active.col ? 0 : -1, 'data-row': r, 'data-col': c }, value)),
      writable ? h('td', {}, removeButton(r)) : null));
    const empty = data.length === 0 ? h('p', { id: 'grid-empty', class: 'empty' }, place.filter !== '' ? `No row of "${place.tab}" matches "${place.filter}". Clear the filter to see every row.` : `"${place.tab}" has no rows yet${writable ? ': add one below.' : '.'}`) : null;
    area.querySelector('#grid-index-example').textContent = `${tabPath()}/${index[0] ?? 0}`;
    const grid = h('table', { class: 'grid', role: 'grid', id: 'grid', 'aria-labelledby': 'grid-heading', 'aria-describedby': 'grid-index-help', 'aria-rowcount': total + 1, 'aria-readonly': writable ? null : 'true' },
      h('thead', {}, header), h('tbody', {}, rows));
    grid.addEventListener('keydown', onKey);
    grid.addEventListener('dblclick', (event) => {
      const cell = event.target.closest('td[data-col]');
      if (cell) edit(Number(cell.dataset.row), Number(cell.dataset.col));
    });
    grid.addEventListener('click', (event) => {
      const cell = event.target.closest('td[data-col]');
      if (cell && editing === null) move(Number(cell.dataset.row), Number(cell.dataset.col));
    });
    const last = page.total === 0 ? 0 : Math.min(place.offset + data.length, total);
    const pager = h('div', { class: 'inline grid-pager' },
      h('button', { type: 'button', id: 'grid-prev', disabled: place.offset === 0, onclick: () => turn(-PAGE) }, 'Previous page'),
      h('span', { id: 'grid-range' }, total === 0 ? '0 rows' : `Rows ${place.offset + 1} to ${last} of ${total}`),
      h('button', { type: 'button', id: 'grid-next', disabled: place.offset + PAGE >= total, onclick: () => turn(PAGE) }, 'Next page'));
    // replaceChildren would show a null as the text "null": only what is there.
    table.replaceChildren(...[h('div', { class: 'grid-scroll' }, grid), empty, pager, writable ? addForm(columns) : null].filter((each) => each !== null));
  }

  function sortBy(column) {
    place.sort = place.sort?.column !== column ? { column, desc: false } : place.sort.desc ? null : { column, desc: true };
    place.offset = 0;
    status.textContent = place.sort ? `Sorted by ${column}, ${place.sort.desc ? 'descending' : 'ascending'}.` : 'In sheet order.';
    load();
  }

  function turn(by) {
    place.offset = Math.max(0, place.offset + by);
    active.row = 0;
    load();
  }

  function cellAt(row, col) {
    return area.querySelector(`td[data-row="${row}"][data-col="${col}"]`);
  }

  function focusActive() {
    cellAt(active.row, active.col)?.focus();
  }

  function move(row, col) {
    if (page.data.length === 0) return;
    const r = Math.max(0, Math.min(row, page.data.length - 1));
    const c = Math.max(0, Math.min(col, page.columns.length - 1));
    cellAt(active.row, active.col)?.setAttribute('tabindex', '-1');
    active = { row: r, col: c };
    const cell = cellAt(r, c);
    cell?.setAttribute('tabindex', '0');
    cell?.focus();
  }

  function onKey(event) {
    if (editing !== null) return;
    const cell = event.target.closest?.('td[data-col]');
    if (!cell) return;
    const { row, col } = active;
    const moves = { ArrowUp: [row - 1, col], ArrowDown: [row + 1, col], ArrowLeft: [row, col - 1], ArrowRight: [row, col + 1], Home: [row, 0], End: [row, page.columns.length - 1] };
    if (moves[event.key]) {
      event.preventDefault();
      move(...moves[event.key]);
    } else if (event.key === 'Enter' || event.key === 'F2') {
      event.preventDefault();
      edit(row, col);
    }
  }

  function edit(row, col) {
    if (!writable || editing !== null) return;
    move(row, col);
    const cell = cellAt(row, col);
    const before = page.data[row][col];
    const input = h('input', { class: 'grid-input', value: before, 'aria-label': `${page.columns[col]} of the row at index ${page.index[row]}` });
    editing = { row, col, input };
    cell.replaceChildren(input);
    input.focus();
    input.select();
    let done = false;
    const finish = (save, then) => {
      if (done) return;
      done = true;
      editing = null;
      const value = input.value;
      cell.replaceChildren(save ? value : before);
      if (save && value !== before) {
        page.data[row][col] = value;
        cell.classList.add('grid-saving');
        queue(() => saveCell(row, col, before, value, cell));
      }
      then?.();
    };
    input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') {
        event.preventDefault();
        finish(true, () => focusActive());
      } else if (event.key === 'Escape') {
        event.preventDefault();
        finish(false, () => focusActive());
      } else if (event.key === 'Tab') {
        event.preventDefault();
        const next = col + (event.shiftKey ? -1 : 1);
        finish(true, () => (next >= 0 && next < page.columns.length ? move(row, next) : move(row + (event.shiftKey ? -1 : 1), event.shiftKey ? page.columns.length - 1 : 0)));
      }
    });
    // Clicking elsewhere keeps what was typed: it is saved, as Enter would.
    input.addEventListener('blur', () => finish(true));
  }

  /** Writes go one at a time, in the order made: each may need the tag the one before left stale. */
  function queue(write) {
    saving = saving.then(write).catch((error) => conflict(`A write did not reach the server (${error.message}); reload to see what the sheet holds.`));
  }

  /** The tag to send for a write to data row `index`, with a check that `unchanged(row)` holds; or why not. */
  async function tagFor(index, unchanged) {
    if (fresh) return { tag: page.tag };
    const reply = await call('GET', `${tabPath()}/${index}`);
    if (!reply.ok) return { problem: said(reply) };
    const [row] = reply.body;
    return unchanged(row) ? { tag: reply.headers.get('etag') } : { problem: 'it changed meanwhile' };
  }

  async function saveCell(row, col, before, value, cell) {
    const index = page.index[row];
    const column = page.columns[col];
    const shown = page;
    const { tag, problem: why } = await tagFor(index, (current) => current[column] === before);
    const reply = why ? null : await call('PATCH', `${tabPath()}/${index}`, { body: { [column]: value }, ifMatch: tag });
    cell.classList.remove('grid-saving');
    if (reply?.ok) {
      fresh = false;
      // The row as the sheet now displays it (a typed 3.50 may show as 3.5).
      if (page === shown) page.data[row] = page.columns.map((name) => reply.body[0]?.[name] ?? page.data[row][page.columns.indexOf(name)]);
      if (cell.isConnected && editing?.input.parentElement !== cell) cell.textContent = page.data[row][col];
      status.textContent = `Saved ${column} of the row at index ${index}.`;
      return;
    }
    if (page === shown) page.data[row][col] = before;
    if (cell.isConnected) cell.textContent = before;
    const changed = why === 'it changed meanwhile' || reply?.status === 412;
    conflict(changed ? `The row at index ${index} of "${place.tab}" changed meanwhile, so your ${column} "${value}" was not saved. Reload to see the row as it is now, then edit it again.` : `Your ${column} "${value}" for the row at index ${index} was not saved: ${why ?? said(reply)}`);
  }

  function conflict(text) {
    problem.replaceChildren(h('div', { class: 'callout callout-bad', id: 'grid-conflict' }, icon('alert'), h('p', {}, text), h('button', { type: 'button', id: 'grid-reload', onclick: () => load().then(focusActive) }, icon('rotate'), 'Reload')));
    problem.querySelector('#grid-reload').focus();
  }

  function removeButton(row) {
    const index = page.index[row];
    const button = h('button', { type: 'button', class: 'danger small grid-remove', 'aria-label': `Remove the row at index ${index}` }, 'Remove');
    button.addEventListener('click', () => {
      if (button.dataset.armed !== '1') {
        button.dataset.armed = '1';
        button.textContent = `Really remove index ${index}?`;
        button.setAttribute('aria-label', `Really remove the row at index ${index}? The rows below move up.`);
        return;
      }
      queue(async () => {
        const shownRow = page.data[row];
        const { tag, problem: why } = await tagFor(index, (current) => page.columns.every((column, c) => current[column] === shownRow[c]));
        const reply = why ? null : await call('DELETE', `${tabPath()}/${index}`, { ifMatch: tag });
        if (reply?.ok) {
          status.textContent = `Removed the row at index ${index} of "${place.tab}".`;
          await load();
          focusActive();
          return;
        }
        const changed = why === 'it changed meanwhile' || reply?.status === 412;
        conflict(changed ? `The row at index ${index} of "${place.tab}" changed meanwhile, so it was not removed. Reload to see it as it is now.` : `The row at index ${index} was not removed: ${why ?? said(reply)}`);
      });
    });
    return button;
  }

  function addForm(columns) {
    const inputs = columns.map((column) => h('input', { 'data-column': column }));
    const form = h('form', { id: 'grid-add', class: 'card' },
      h('h4', {}, `Add a row to "${place.tab}"`),
      h('div', { class: 'inline' }, inputs.map((input, c) => h('label', { class: 'field' }, h('span', {}, columns[c]), input))),
      h('button', { type: 'submit' }, icon('plus'), 'Add row'));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const row = Object.fromEntries(inputs.filter((input) => input.value !== '').map((input) => [input.dataset.column, input.value]));
      if (Object.keys(row).length === 0) {
        problem.replaceChildren(h('p', { class: 'error' }, 'Fill in at least one column to add a row.'));
        inputs[0]?.focus();
        return;
      }
      const reply = await call('POST', tabPath(), { body: row });
      if (!reply.ok) return problem.replaceChildren(h('p', { class: 'error' }, `The row was not added: ${said(reply)}`));
      status.textContent = `Added a row at the end of "${place.tab}".`;
      // The new row is the last: show the page holding it (in sheet order, unfiltered).
      Object.assign(place, { sort: null, filter: '' });
      const filter = area.querySelector('#grid-filter');
      if (filter) filter.value = '';
      const count = await call('GET', `${tabPath()}?_limit=0`);
      const total = Number(count.headers.get('x-total-count') ?? 1);
      place.offset = Math.max(0, Math.floor((total - 1) / PAGE) * PAGE);
      await load();
      document.getElementById('grid-add')?.querySelector('input')?.focus();
    });
    return form;
  }

  start();
  return h('div', { class: 'grid-section' }, heading, area);
}
