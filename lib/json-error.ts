// POST /sheets/demo with `{"Name": "Ann" "Age": 3}` -> "a ',' or '}' was expected at line 1,
// column 16". `JSON.parse` says what went wrong in words that differ by runtime and may quote
// the body (V8: `Unexpected token 'x', "{"key": "sk-..." is not valid JSON`), and the body may
// hold secrets. So an unparseable body is described here instead: what was expected, where,
// and never a character of the body. Only called once `JSON.parse` has refused a body.
// Iterative, with an explicit stack, so a body nested 100,000 deep cannot overflow it.

export interface JsonProblem {
  /** What was wrong, without quoting the body: "a ',' or ']' was expected". */
  readonly problem: string;
  /** 1-based line and column (in UTF-16 code units) of the first character that is wrong. */
  readonly line: number;
  readonly column: number;
}

/** Where and why `text` is not JSON; null when it is valid JSON (JSON.parse refused it for another reason). */
export function jsonProblem(text: string): JsonProblem | null {
  const scan = scanJson(text);
  return scan === null ? null : { problem: scan.problem, ...lineAndColumn(text, scan.at) };
}

interface Refusal {
  readonly problem: string;
  readonly at: number;
}

/** Open containers, innermost last: true for an object, false for an array. */
type Stack = boolean[];

function scanJson(text: string): Refusal | null {
  const stack: Stack = [];
  let at = skipSpace(text, 0);
  for (;;) {
    // A value is expected at `at`.
    const value = scanValue(text, at, stack);
    if (typeof value !== 'number') return value;
    at = skipSpace(text, value);
    // After a value: close containers, or a comma and the next value (and key, in an object).
    for (;;) {
      if (stack.length === 0) return at === text.length ? null : { problem: 'the JSON value ends but more text follows', at };
      const inObject = stack[stack.length - 1];
      const close = inObject ? '}' : ']';
      if (text[at] === close) {
        stack.pop();
        at = skipSpace(text, at + 1);
        continue;
      }
      if (text[at] !== ',') return refuse(text, at, `a ',' or '${close}' was expected`);
      at = skipSpace(text, at + 1);
      if (inObject) {
        const key = scanMember(text, at);
        if (typeof key !== 'number') return key;
        at = key;
      }
      break;
    }
  }
}

/** A value at `at`: the offset after a scalar, or after the opening of a container (pushed on the stack). */
function scanValue(text: string, at: number, stack: Stack): number | Refusal {
  for (;;) {
    const char = text[at];
    if (char === '[') {
      stack.push(false);
      at = skipSpace(text, at + 1);
      if (text[at] === ']') {
        stack.pop();
        return at + 1;
      }
      continue;
    }
    if (char === '{') {
      stack.push(true);
      at = skipSpace(text, at + 1);
      if (text[at] === '}') {
        stack.pop();
        return at + 1;
      }
      const key = scanMember(text, at);
      if (typeof key !== 'number') return key;
      at = key;
      continue;
    }
    if (char === '"') return scanString(text, at);
    for (const literal of ['true', 'false', 'null']) {
      if (text.startsWith(literal, at)) return at + literal.length;
    }
    NUMBER.lastIndex = at;
    if (NUMBER.exec(text) !== null) return NUMBER.lastIndex;
    return refuse(text, at, 'a value (an object, array, string, number, true, false or null) was expected');
  }
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** `"key":` and the space after it: the offset where the member's value starts. */
function scanMember(text: string, at: number): number | Refusal {
  if (text[at] !== '"') return refuse(text, at, 'a property name in double quotes was expected');
  const end = scanString(text, at);
  if (typeof end !== 'number') return end;
  at = skipSpace(text, end);
  if (text[at] !== ':') return refuse(text, at, "a ':' was expected after the property name");
  return skipSpace(text, at + 1);
}

const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);

function scanString(text: string, at: number): number | Refusal {
  for (let i = at + 1; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x22) return i + 1;
    if (code < 0x20) return { problem: 'a string holds an unescaped control character (a line break or tab must be written \\n or \\t)', at: i };
    if (code !== 0x5c) continue;
    const escape = text[i + 1];
    if (escape === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 5;
    else if (escape !== undefined && ESCAPES.has(escape)) i += 1;
    else return { problem: 'a string holds an invalid escape sequence', at: i };
  }
  return { problem: 'a string is not closed', at };
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && (text[at] === ' ' || text[at] === '\t' || text[at] === '\n' || text[at] === '\r')) at++;
  return at;
}

function refuse(text: string, at: number, problem: string): Refusal {
  return at >= text.length ? { problem: `the body ends where ${problem.replace(/ was expected$/, ' was still expected')}`, at } : { problem, at };
}

function lineAndColumn(text: string, at: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < at; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: at - lineStart + 1 };
}
