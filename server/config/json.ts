// Parses the config file's JSON and, when it is broken, says where: `line 4, column 9: expected
// a field name in double quotes`. The runtime's own JSON.parse message is not used because it
// differs between Node, Deno and Bun, often has no position, and V8 quotes the text around the
// mistake, which in a config file may be an API key.

export class JsonSyntaxError extends Error {
  readonly line: number;
  readonly column: number;
  constructor(line: number, column: number, problem: string) {
    super(`line ${line}, column ${column}: ${problem}`);
    this.name = 'JsonSyntaxError';
    this.line = line;
    this.column = column;
  }
}

/** JSON.parse, but a syntax error becomes a JsonSyntaxError with line and column and no quoted text. */
export function parseJsonText(text: string): unknown {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text; // editors on Windows add a BOM
  try {
    return JSON.parse(body);
  } catch {
    const { offset, problem } = locateJsonError(body);
    const before = body.slice(0, offset);
    const line = before.split('\n').length;
    const column = offset - (before.lastIndexOf('\n') + 1) + 1;
    throw new JsonSyntaxError(line, column, problem);
  }
}

class Stop {
  readonly offset: number;
  readonly problem: string;
  constructor(offset: number, problem: string) {
    this.offset = offset;
    this.problem = problem;
  }
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);

/** Finds the first syntax error of text that JSON.parse refused; a small recursive-descent scan. */
export function locateJsonError(text: string): { offset: number; problem: string } {
  let at = 0;
  const fail = (problem: string, offset = at): never => {
    throw new Stop(offset, problem);
  };
  const skipSpace = (): void => {
    while (at < text.length && ' \t\n\r'.includes(text[at])) at++;
  };
  const unexpected = (problem = `unexpected character ${JSON.stringify(text[at])}`): never => {
    if (at >= text.length) return fail('unexpected end of file');
    if (text[at] === '/') return fail('JSON has no comments');
    if (text[at] === "'") return fail('strings need double quotes');
    return fail(problem);
  };
  const string = (): void => {
    const start = at++;
    for (;;) {
      if (at >= text.length) fail('string not closed', start);
      const char = text[at];
      if (char === '"') return void at++;
      if (char < ' ') fail('a line break or tab inside a string must be escaped (\\n, \\t)');
      if (char === '\\') {
        const next = text[at + 1];
        if (next === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(at + 2, at + 6))) at += 6;
        else if (next !== undefined && ESCAPES.has(next)) at += 2;
        else fail('invalid escape in string');
      } else at++;
    }
  };
  const value = (): void => {
    skipSpace();
    const char = text[at];
    if (char === '{') return members('}', () => {
      if (text[at] !== '"') unexpected('expected a field name in double quotes');
      string();
      skipSpace();
      if (text[at] !== ':') fail('expected ":" after the field name');
      at++;
      value();
    });
    if (char === '[') return members(']', value);
    if (char === '"') return string();
    if (char === '-' || (char >= '0' && char <= '9')) {
      NUMBER.lastIndex = at;
      if (!NUMBER.test(text)) fail('invalid number');
      at = NUMBER.lastIndex;
      return;
    }
    for (const word of ['true', 'false', 'null']) {
      if (text.startsWith(word, at)) return void (at += word.length);
    }
    unexpected();
  };
  const members = (close: string, member: () => void): void => {
    at++;
    skipSpace();
    if (text[at] === close) return void at++;
    for (;;) {
      skipSpace();
      member();
      skipSpace();
      if (text[at] === close) return void at++;
      if (text[at] !== ',') {
        if (at >= text.length) fail('unexpected end of file');
        fail(`expected "," or "${close}"`);
      }
      const comma = at++;
      skipSpace();
      if (text[at] === close) fail(`a comma before "${close}" is not allowed in JSON`, comma);
    }
  };
  try {
    value();
    skipSpace();
    if (at < text.length) fail('unexpected text after the end of the JSON value');
  } catch (error) {
    if (error instanceof Stop) return { offset: error.offset, problem: error.problem };
    throw error;
  }
  // JSON.parse refused text this scan accepts (should not happen); point at the start.
  return { offset: 0, problem: 'not valid JSON' };
}
