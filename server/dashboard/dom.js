// Builds elements without ever parsing markup: every string becomes a text node, so a column
// named `<img onerror=…>` or a cell value shows as the characters it is. No markup is ever parsed from a string.
//   h('button', { onclick: save, class: 'primary' }, 'Save') -> <button class="primary">Save</button>
import { icon } from './icons.js';

/** An element with attributes (functions under `on…` become listeners) and children (strings are text). */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) {
      // Only listeners: a handler given as text would be code (and CSP refuses it anyway).
      if (typeof value === 'function') element.addEventListener(name.slice(2), value);
    } else if (name === 'value') element.value = String(value);
    else if (name === 'checked') element.checked = Boolean(value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(element, child);
    else element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** A labelled form field: h('label', {}, text, control). */
export function field(text, control) {
  return h('label', { class: 'field' }, h('span', {}, text), control);
}

/** `<select>` of plain strings (or [value, text] pairs). */
export function select(attributes, options, selected) {
  return h('select', attributes, options.map((option) => {
    const [value, text] = Array.isArray(option) ? option : [option, option];
    return h('option', { value, selected: value === selected }, text);
  }));
}

/** A time from the admin API (ISO 8601 or null) as the reader's local time, to the minute: `Nov 26, 2026, 11:04 PM`. */
export function when(iso) {
  return iso === null || iso === undefined ? '—' : new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** A button with an icon before its words: button('Create key', 'plus', { type: 'submit', class: 'primary' }). */
export function button(text, iconName, attributes = {}) {
  return h('button', { type: 'button', ...attributes }, iconName ? icon(iconName) : null, h('span', { class: 'label' }, text));
}

/**
 * A button that copies `text` (a key, a secret, a URL) to the clipboard; where there is no
 * clipboard (a page not served over https or localhost) it selects `shown`, the element showing
 * it, for Ctrl+C. `what` names the thing for a screen reader: "Copy the endpoint URL". `text` may
 * be a function, read at the click (the playground's curl changes as the form does).
 */
export function copyButton(id, text, shown, what) {
  const copy = button('Copy', 'copy', { id, class: 'copy', ...(what ? { 'aria-label': `Copy ${what}` } : {}) });
  const label = copy.querySelector('.label');
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(typeof text === 'function' ? text() : text);
      label.textContent = 'Copied';
    } catch {
      const range = document.createRange();
      range.selectNodeContents(shown);
      getSelection()?.removeAllRanges();
      getSelection()?.addRange(range);
      label.textContent = 'Selected: press Ctrl+C';
    }
    if (copy.hasAttribute('aria-label')) copy.setAttribute('aria-label', `${label.textContent}: ${what}`);
    // Where the label is hidden to save room (the endpoint's on a phone), the outcome shows.
    copy.dataset.copied = '';
  });
  return copy;
}

/**
 * Runs `task` with `control` (a button or a form) marked busy and its buttons disabled, so a
 * second click cannot send twice and the wait is visible: `pending(form, () => admin(...))`.
 */
export async function pending(control, task) {
  const buttons = control instanceof HTMLFormElement ? [...control.querySelectorAll('button')] : [control];
  control.setAttribute('aria-busy', 'true');
  for (const each of buttons) each.disabled = true;
  try {
    return await task();
  } finally {
    control.removeAttribute('aria-busy');
    for (const each of buttons) each.disabled = false;
  }
}

/** An empty state: what is missing and what to do about it, with an optional action. */
export function empty(id, iconName, text, action) {
  return h('div', { class: 'empty', id }, icon(iconName), h('p', {}, text), action ?? null);
}

/** A loading state: a spinner and what is loading. */
export function loading(text) {
  return h('p', { class: 'loading', role: 'status' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), text);
}
