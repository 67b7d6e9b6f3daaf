// The dashboard's icons, all in this one file: each is a few SVG shapes on a 24x24 grid, stroked
// in the text's colour, built with DOM calls (no markup parsed, no icon font, nothing fetched).
//   icon('copy') -> <svg class="icon" aria-hidden="true" viewBox="0 0 24 24">…</svg>
// Decorative: the button or link it sits in carries the words.
const SVG = 'http://www.w3.org/2000/svg';

/** name -> shapes: a string is a path's `d`; an array is [tag, attributes]. */
const ICONS = {
  alert: [['circle', { cx: 12, cy: 12, r: 9.5 }], 'M12 7v6M12 16.5v.5'],
  book: ['M4 19.5A2.5 2.5 0 0 1 6.5 17H20V3H6.5A2.5 2.5 0 0 0 4 5.5zM4 19.5A2.5 2.5 0 0 0 6.5 22H20v-5'],
  chart: ['M3 3v18h18', 'M7 15l4-4 3 3 5-6'],
  check: ['M4 12.5l5 5L20 6.5'],
  copy: [['rect', { x: 9, y: 9, width: 12, height: 12, rx: 2 }], 'M5 15H4a1 1 0 0 1-1-1V4a1 1 0 0 1 1-1h10a1 1 0 0 1 1 1v1'],
  external: ['M14 3h7v7', 'M10 14 21 3', 'M19 14v5a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2V7a2 2 0 0 1 2-2h5'],
  eyeOff: ['M3 3l18 18', 'M10.6 6.1A10 10 0 0 1 12 6c6 0 10 6 10 6a17 17 0 0 1-3 3.5', 'M6.6 6.6C3.9 8.3 2 12 2 12s4 6 10 6a9 9 0 0 0 4.4-1.1'],
  file: ['M14 3H6a1 1 0 0 0-1 1v16a1 1 0 0 0 1 1h12a1 1 0 0 0 1-1V8z', 'M14 3v5h5', 'M9 13h6M9 17h6'],
  inbox: ['M22 12h-6l-2 3h-4l-2-3H2', 'M5.5 5h13L22 12v7a1 1 0 0 1-1 1H3a1 1 0 0 1-1-1v-7z'],
  key: [['circle', { cx: 15.5, cy: 8.5, r: 4.5 }], 'M12.3 11.7 3 21', 'M6 18l2.5 2.5', 'M8.5 15.5 11 18'],
  link: ['M10 13a5 5 0 0 0 7.5.5l3-3a5 5 0 0 0-7-7l-1.7 1.7', 'M14 11a5 5 0 0 0-7.5-.5l-3 3a5 5 0 0 0 7 7l1.7-1.7'],
  lock: [['rect', { x: 4, y: 11, width: 16, height: 10, rx: 2 }], 'M8 11V7a4 4 0 0 1 8 0v4'],
  unlock: [['rect', { x: 4, y: 11, width: 16, height: 10, rx: 2 }], 'M8 11V7a4 4 0 0 1 7.8-1.2'],
  logout: ['M9 21H5a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2h4', 'M16 17l5-5-5-5', 'M21 12H9'],
  monitor: [['rect', { x: 2, y: 4, width: 20, height: 13, rx: 2 }], 'M8 21h8M12 17v4'],
  moon: ['M21 12.8A9 9 0 1 1 11.2 3a7 7 0 0 0 9.8 9.8z'],
  play: ['M7 4v16l13-8z'],
  plus: ['M12 5v14M5 12h14'],
  rotate: ['M21 12a9 9 0 1 1-3-6.7', 'M21 3v6h-6'],
  send: ['M22 2 11 13', 'M22 2 15 22l-4-9-9-4z'],
  settings: ['M4 21v-7M4 10V3M12 21v-9M12 8V3M20 21v-5M20 12V3M1 14h6M9 8h6M17 16h6'],
  sun: [['circle', { cx: 12, cy: 12, r: 4 }], 'M12 2v2M12 20v2M4.9 4.9l1.4 1.4M17.7 17.7l1.4 1.4M2 12h2M20 12h2M4.9 19.1l1.4-1.4M17.7 6.3l1.4-1.4'],
  table: [['rect', { x: 3, y: 4, width: 18, height: 16, rx: 1.5 }], 'M3 9.5h18M3 15h18M9 4v16'],
  trash: ['M3 6h18', 'M8 6V4h8v2', 'M6 6l1 14h10l1-14'],
  upload: ['M12 16V4', 'M7 9l5-5 5 5', 'M4 20h16'],
  webhook: ['M13 2 4 14h7l-1 8 9-12h-7z'],
  x: ['M6 6l12 12M18 6 6 18'],
};

export const ICON_NAMES = Object.keys(ICONS);

/** The icon `name` as an inline SVG element, hidden from assistive technology. */
export function icon(name) {
  const shapes = ICONS[name];
  if (shapes === undefined) throw new Error(`No icon "${name}": the icons are ${ICON_NAMES.join(', ')}.`);
  const svg = document.createElementNS(SVG, 'svg');
  for (const [attribute, value] of Object.entries({ class: 'icon', viewBox: '0 0 24 24', 'aria-hidden': 'true', focusable: 'false', fill: 'none', stroke: 'currentColor', 'stroke-width': 2, 'stroke-linecap': 'round', 'stroke-linejoin': 'round' })) {
    svg.setAttribute(attribute, String(value));
  }
  for (const shape of shapes) {
    const [tag, attributes] = typeof shape === 'string' ? ['path', { d: shape }] : shape;
    const element = document.createElementNS(SVG, tag);
    for (const [attribute, value] of Object.entries(attributes)) element.setAttribute(attribute, String(value));
    svg.append(element);
  }
  return svg;
}
