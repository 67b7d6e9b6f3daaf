// GET /sheets/demo/Name/jo*n -> rows whose displayed Name is "John", "Jonathan"... in any case.
// A pattern is compiled once per request into a test on case-folded text: `*` matches any run
// of characters, nothing else is special.

export type Matcher = (folded: string) => boolean;

/** Unicode lower case, the one case folding used for matching and text comparison. */
export function fold(text: string): string {
  return text.toLowerCase();
}

/** A test of folded text; with `caseSensitive`, of the text as written (`_case=sensitive`). */
export function compileMatcher(pattern: string, caseSensitive = false): Matcher {
  const parts = (caseSensitive ? pattern : fold(pattern)).split('*');
  if (parts.length === 1) {
    const [whole] = parts;
    return (folded) => folded === whole;
  }
  const first = parts[0];
  const last = parts[parts.length - 1];
  const middle = parts.slice(1, -1).filter((part) => part !== '');
  if (middle.length === 0) {
    // `*`, `Jo*`, `*son`, `J*n`: no scan needed beyond the two ends.
    const minimum = first.length + last.length;
    return (folded) => folded.length >= minimum && folded.startsWith(first) && folded.endsWith(last);
  }
  if (first === '' && last === '' && middle.length === 1) {
    const [needle] = middle;
    return (folded) => folded.includes(needle);
  }
  return (folded) => {
    if (folded.length < first.length + last.length || !folded.startsWith(first) || !folded.endsWith(last)) return false;
    let from = first.length;
    const end = folded.length - last.length;
    for (const part of middle) {
      const at = folded.indexOf(part, from);
      if (at === -1 || at + part.length > end) return false;
      from = at + part.length;
    }
    return true;
  };
}

/** The folded value a pattern without `*` must equal, or null for a wildcard pattern. */
export function exactValue(pattern: string): string | null {
  return pattern.includes('*') ? null : fold(pattern);
}

/** The folded text a `*text*` pattern must contain, or null for any other pattern. */
export function containedText(pattern: string): string | null {
  const parts = fold(pattern).split('*');
  return parts.length === 3 && parts[0] === '' && parts[2] === '' && parts[1] !== '' ? parts[1] : null;
}
