// Builds elements without ever parsing markup: every string becomes a text node, so a column
// named `<img onerror=…>` or a cell value shows as the characters it is. No markup is ever parsed from a string.
//   h('button', { onclick: save, class: 'primary' }, 'Save') -> <button class="primary">Save</button>

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

/** A time from the admin API (ISO 8601 or null) as the reader's local time. */
export function when(iso) {
  return iso === null || iso === undefined ? '—' : new Date(iso).toLocaleString();
}

/**
 * A button that copies `text` (a key, a secret) to the clipboard; where there is no clipboard (a
 * page not served over https or localhost) it selects `shown`, the element showing it, for Ctrl+C.
 */
export function copyButton(id, text, shown) {
  const copy = h('button', { id, type: 'button' }, 'Copy');
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text);
      copy.textContent = 'Copied';
    } catch {
      const range = document.createRange();
      range.selectNodeContents(shown);
      getSelection()?.removeAllRanges();
      getSelection()?.addRange(range);
      copy.textContent = 'Selected: press Ctrl+C';
    }
  });
  return copy;
}
