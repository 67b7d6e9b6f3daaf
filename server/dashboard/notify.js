// Notices ("toasts") that go away by themselves: `toast('Created "crm".')` shows a line in the
// corner's live region (role=status, aria-live=polite, so a screen reader reads it once) for a
// few seconds; an error stays longer. Hovering or focusing one keeps it; "Dismiss" removes it.
// Text only, naming things by their names (the connection, the key's prefix, the webhook).
import { h } from './dom.js';
import { icon } from './icons.js';

const SHOWN_MS = 6_000;
const ERROR_SHOWN_MS = 12_000;

function region() {
  let element = document.getElementById('toasts');
  if (element === null) {
    element = h('div', { id: 'toasts', class: 'toasts', role: 'status', 'aria-live': 'polite' });
    document.body.append(element);
  }
  return element;
}

/** Shows `text` for a while; `error`: styled and kept longer. Returns the notice's element. */
export function toast(text, { error = false } = {}) {
  const dismiss = h('button', { type: 'button', class: 'icon-button', 'aria-label': 'Dismiss' }, icon('x'));
  const item = h('div', { class: `toast ${error ? 'toast-error' : 'toast-ok'}` }, icon(error ? 'alert' : 'check'), h('p', {}, text), dismiss);
  let timer;
  const remove = () => {
    clearTimeout(timer);
    item.remove();
  };
  const wait = () => {
    clearTimeout(timer);
    timer = setTimeout(remove, error ? ERROR_SHOWN_MS : SHOWN_MS);
  };
  dismiss.addEventListener('click', remove);
  // Kept while the pointer moves onto it, not merely because it appeared under a resting pointer
  // (it shows where the forms' buttons are: a toast under the button just pressed would stay for good).
  item.addEventListener('mousemove', (event) => {
    if (event.movementX !== 0 || event.movementY !== 0) clearTimeout(timer);
  });
  item.addEventListener('mouseleave', wait);
  item.addEventListener('focusin', () => clearTimeout(timer));
  item.addEventListener('focusout', wait);
  region().append(item);
  wait();
  return item;
}
