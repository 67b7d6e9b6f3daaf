// The few formulas the emulator computes, so `=A2*B2` or `=SUM(C2:C9)` entered with USER_ENTERED
// reads back with a real effective value: + - * / ^ & and comparisons, numbers, "strings",
// TRUE/FALSE, same-sheet cell and range references, SUM AVERAGE MIN MAX COUNT CONCAT. Anything else
// evaluates to an ERROR value ("#ERROR!") that says the emulator does not compute it.
import { columnIndex } from './a1.ts';

export type FormulaError = { readonly type: string; readonly message: string };
export type Scalar = number | string | boolean | FormulaError | undefined;

/** Reads a referenced cell's effective value (undefined when empty). */
export type Lookup = (row: number, column: number) => Scalar;

const TOKEN = /\s*(?:(\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+)|("(?:[^"]|"")*")|(\$?[A-Za-z]{1,3}\$?\d+(?::\$?[A-Za-z]{1,3}\$?\d+)?)|([A-Za-z_][A-Za-z0-9_.]*)|(<>|<=|>=|[-+*/^&=<>(),:]))/y;
const FUNCTIONS = ['SUM', 'AVERAGE', 'MIN', 'MAX', 'COUNT', 'CONCAT'] as const;

class Unsupported extends Error {}

export const isError = (value: Scalar): value is FormulaError => typeof value === 'object';

export function evaluateFormula(formula: string, lookup: Lookup): Exclude<Scalar, undefined> {
  try {
    const parser = new Parser(formula.replace(/^=/, ''), lookup);
    const value = parser.expression();
    if (!parser.done()) throw new Unsupported();
    return value === undefined || Array.isArray(value) ? 0 : value;
  } catch (error) {
    if (!(error instanceof Unsupported)) throw error;
    return { type: 'ERROR', message: `The emulator does not evaluate this formula: ${formula}` };
  }
}

type Value = Scalar | Scalar[];

class Parser {
  private readonly tokens: string[] = [];
  private position = 0;
  private readonly lookup: Lookup;

  constructor(text: string, lookup: Lookup) {
    this.lookup = lookup;
    TOKEN.lastIndex = 0;
    while (TOKEN.lastIndex < text.trimEnd().length) {
      const match = TOKEN.exec(text);
      if (match === null) throw new Unsupported();
      this.tokens.push(match[0].trim());
    }
  }

  done(): boolean {
    return this.position === this.tokens.length;
  }

  private peek(): string | undefined {
    return this.tokens[this.position];
  }

  private take(expected?: string): string {
    const token = this.tokens[this.position++];
    if (token === undefined || (expected !== undefined && token.toUpperCase() !== expected)) throw new Unsupported();
    return token;
  }

  expression(): Value {
    const left = this.concat();
    const op = this.peek();
    if (op === undefined || !['=', '<>', '<', '<=', '>', '>='].includes(op)) return left;
    this.take();
    const [a, b] = [scalar(left), scalar(this.concat())];
    if (isError(a)) return a;
    if (isError(b)) return b;
    const [x, y] = [a ?? 0, b ?? 0];
    const order = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0) : typeof x === 'number' ? -1 : 1;
    return { '=': order === 0, '<>': order !== 0, '<': order < 0, '<=': order <= 0, '>': order > 0, '>=': order >= 0 }[op];
  }

  private concat(): Value {
    let left = this.additive();
    while (this.peek() === '&') {
      this.take();
      const [a, b] = [scalar(left), scalar(this.additive())];
      left = isError(a) ? a : isError(b) ? b : text(a) + text(b);
    }
    return left;
  }

  private additive(): Value {
    let left = this.term();
    while (this.peek() === '+' || this.peek() === '-') {
      const op = this.take();
      left = arithmetic(left, this.term(), op === '+' ? (a, b) => a + b : (a, b) => a - b);
    }
    return left;
  }

  private term(): Value {
    let left = this.unary();
    while (this.peek() === '*' || this.peek() === '/') {
      const op = this.take();
      const right = this.unary();
      if (op === '/' && number(scalar(right)) === 0) left = { type: 'DIV_BY_ZERO', message: 'Function DIVIDE parameter 2 cannot be zero.' };
      else left = arithmetic(left, right, op === '*' ? (a, b) => a * b : (a, b) => a / b);
    }
    return left;
  }

  private unary(): Value {
    if (this.peek() === '-') return this.take(), arithmetic(0, this.unary(), (a, b) => a - b);
    if (this.peek() === '+') return this.take(), this.unary();
    let left = this.primary();
    while (this.peek() === '^') left = (this.take(), arithmetic(left, this.primary(), (a, b) => a ** b));
    return left;
  }

  private primary(): Value {
    const token = this.take();
    if (token === '(') {
      const value = this.expression();
      this.take(')');
      return value;
    }
    if (/^[\d.]/.test(token)) return Number(token);
    if (token.startsWith('"')) return token.slice(1, -1).replaceAll('""', '"');
    if (/^\$?[A-Za-z]{1,3}\$?\d+(:|$)/.test(token)) return this.reference(token.replaceAll('$', ''));
    const name = token.toUpperCase();
    if (name === 'TRUE' || name === 'FALSE') {
      if (this.peek() === '(') this.take('('), this.take(')');
      return name === 'TRUE';
    }
    if (!(FUNCTIONS as readonly string[]).includes(name)) throw new Unsupported();
    this.take('(');
    const args: Scalar[] = [];
    while (this.peek() !== ')') {
      const value = this.expression();
      args.push(...(Array.isArray(value) ? value : [value]));
      if (this.peek() === ',') this.take();
      else break;
    }
    this.take(')');
    return aggregate(name as (typeof FUNCTIONS)[number], args);
  }

  private reference(ref: string): Value {
    const cells = ref.split(':').map((part) => {
      const match = /^([A-Za-z]+)(\d+)$/.exec(part);
      if (match === null) throw new Unsupported();
      return { row: Number(match[2]) - 1, column: columnIndex(match[1]) };
    });
    if (cells.length === 1) return this.lookup(cells[0].row, cells[0].column);
    const [from, to] = cells;
    const values: Scalar[] = [];
    for (let r = Math.min(from.row, to.row); r <= Math.max(from.row, to.row); r++) {
      for (let c = Math.min(from.column, to.column); c <= Math.max(from.column, to.column); c++) values.push(this.lookup(r, c));
    }
    return values;
  }
}

function scalar(value: Value): Scalar {
  if (!Array.isArray(value)) return value;
  return value.length === 1 ? value[0] : { type: 'VALUE', message: 'An array value could not be found.' };
}

function number(value: Scalar): number | undefined {
  if (value === undefined) return 0;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return undefined;
}

function text(value: Scalar): string {
  if (value === undefined) return '';
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  return String(value);
}

function arithmetic(left: Value, right: Value, op: (a: number, b: number) => number): Scalar {
  const [a, b] = [scalar(left), scalar(right)];
  if (isError(a)) return a;
  if (isError(b)) return b;
  const [x, y] = [number(a), number(b)];
  if (x === undefined || y === undefined) {
    return { type: 'VALUE', message: `Function ${op.name || 'operator'} expects number values. But '${text(x === undefined ? a : b)}' is a text and cannot be coerced to a number.` };
  }
  return op(x, y);
}

function aggregate(name: (typeof FUNCTIONS)[number], args: readonly Scalar[]): Scalar {
  const error = args.find(isError);
  if (error !== undefined) return error;
  if (name === 'CONCAT') return args.map(text).join('');
  // Ranges skip text and empty cells, as spreadsheet aggregates do.
  const numbers = args.filter((value): value is number => typeof value === 'number');
  if (name === 'COUNT') return numbers.length;
  if (name === 'SUM') return numbers.reduce((sum, value) => sum + value, 0);
  if (name === 'MIN') return numbers.length === 0 ? 0 : Math.min(...numbers);
  if (name === 'MAX') return numbers.length === 0 ? 0 : Math.max(...numbers);
  if (numbers.length === 0) return { type: 'DIV_BY_ZERO', message: 'Evaluation of function AVERAGE caused a divide by zero error.' };
  return numbers.reduce((sum, value) => sum + value, 0) / numbers.length;
}
