// Loaded before the style sheet applies (a classic script in <head>, not a module): the theme
// chosen with the header's toggle, kept in localStorage, is set before the first paint, so a
// dark page never flashes light. No choice kept: the system's (prefers-color-scheme).
//   localStorage['sheetrest.theme'] = 'dark' -> <html data-theme="dark">
try {
  const chosen = localStorage.getItem('sheetrest.theme');
  if (chosen === 'light' || chosen === 'dark') document.documentElement.dataset.theme = chosen;
} catch {
  // storage refused (a privacy setting): the system's theme
}
