// A1 notation, as the Sheets API reads and writes it: `'Sales 2024'!A2:F` -> sheet "Sales 2024",
// rows 2.., columns A..F; and back: the same range clamped to a 1000-row grid -> `'Sales 2024'!A2:F1000`.
// Indexes are 0-based, ends exclusive (like GridRange); an absent bound means "to the grid's edge".

export interface A1Range {
  /** The sheet title, or undefined for "the first sheet" (`A1:B2` alone). */
  readonly sheet: string | undefined;
  /** Set when the text had no `!` but also reads as cells (`B2`): a sheet of that title wins. */
  readonly orSheet?: string;
  /** Both ends given (`A1:B2`): writes must fit inside. `A1`, `A1:B` and `Sheet1` only say where to start. */
  readonly bounded?: boolean;
  readonly startRow?: number;
  readonly endRow?: number;
  readonly startColumn?: number;
  readonly endColumn?: number;
}

/** A range with every bound known, after clamping to a sheet's grid. */
export interface GridBox {
  readonly startRow: number;
  readonly endRow: number;
  readonly startColumn: number;
  readonly endColumn: number;
}

const ENDPOINT = /^([A-Za-z]{0,3})(\d*)$/;
const CELLS = /^[A-Za-z]{0,3}\d*(:[A-Za-z]{0,3}\d*)?$/;

/** Parses a range, or returns undefined when it is not A1 notation. */
export function parseA1(text: string): A1Range | undefined {
  const { sheet, cells } = splitSheet(text.trim());
  if (sheet === null) return undefined;
  if (cells === undefined) return { sheet };
  // Without `!`, `A1:B2` is a range on the first sheet, `Sheet1` a whole sheet.
  if (sheet === undefined && !(CELLS.test(cells) && /\d|:/.test(cells))) return { sheet: cells };
  const [first, second] = cells.split(':');
  const start = endpoint(first);
  const end = second === undefined ? start : endpoint(second);
  if (start === undefined || end === undefined) return undefined;
  if (second === undefined && (start.column === undefined || start.row === undefined)) return undefined;
  const range: A1Range = {
    sheet,
    ...(sheet === undefined ? { orSheet: cells } : {}),
    bounded: second !== undefined && end.row !== undefined && end.column !== undefined,
    startRow: start.row,
    endRow: end.row === undefined ? undefined : end.row + 1,
    startColumn: start.column,
    endColumn: end.column === undefined ? undefined : end.column + 1,
  };
  // `A:B` and `1:2` leave the other dimension whole; `A2:B` runs to the last row.
  if (range.startRow !== undefined && range.endRow !== undefined && range.endRow <= range.startRow) return undefined;
  if (range.startColumn !== undefined && range.endColumn !== undefined && range.endColumn <= range.startColumn) return undefined;
  return range;
}

function splitSheet(text: string): { sheet: string | undefined | null; cells: string | undefined } {
  if (text.startsWith("'")) {
    let name = '';
    for (let i = 1; i < text.length; i++) {
      if (text[i] !== "'") {
        name += text[i];
      } else if (text[i + 1] === "'") {
        name += "'";
        i++;
      } else {
        const rest = text.slice(i + 1);
        if (rest === '') return { sheet: name, cells: undefined };
        if (!rest.startsWith('!')) return { sheet: null, cells: undefined };
        return { sheet: name, cells: rest.slice(1) };
      }
    }
    return { sheet: null, cells: undefined };
  }
  const bang = text.lastIndexOf('!');
  if (bang === -1) return { sheet: undefined, cells: text };
  return { sheet: text.slice(0, bang), cells: text.slice(bang + 1) };
}

function endpoint(text: string): { row: number | undefined; column: number | undefined } | undefined {
  const match = ENDPOINT.exec(text);
  if (match === null || text === '') return undefined;
  const row = match[2] === '' ? undefined : Number(match[2]) - 1;
  if (row !== undefined && row < 0) return undefined;
  return { row, column: match[1] === '' ? undefined : columnIndex(match[1]) };
}

/** `A` -> 0, `Z` -> 25, `AA` -> 26. */
export function columnIndex(letters: string): number {
  let index = 0;
  for (const letter of letters.toUpperCase()) index = index * 26 + (letter.charCodeAt(0) - 64);
  return index - 1;
}

/** 0 -> `A`, 26 -> `AA`. */
export function columnLetters(index: number): string {
  let letters = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  return letters;
}

/** The sheet title as Google prints it in a range: quoted unless it is a plain identifier. */
export function quoteSheet(title: string): string {
  const plain = /^[A-Za-z_][A-Za-z0-9_]*$/.test(title) && !/^[A-Za-z]{1,3}\d+$/.test(title);
  return plain ? title : `'${title.replaceAll("'", "''")}'`;
}

/** `Sheet1!A1:C3`, or `Sheet1!B2` for a single cell. */
export function formatA1(title: string, box: GridBox): string {
  const start = `${columnLetters(box.startColumn)}${box.startRow + 1}`;
  const end = `${columnLetters(box.endColumn - 1)}${box.endRow}`;
  const single = box.endRow - box.startRow === 1 && box.endColumn - box.startColumn === 1;
  return `${quoteSheet(title)}!${single ? start : `${start}:${end}`}`;
}
