// Engineering notation as Excel shows it: `##0.0E+0` puts exponents in multiples of three (the
// digits before the point), with one to three digits before it: 123.45 -> `123.5E+0`, 1234.5 ->
// `1.2E+3`, 0.012345 -> `12.3E-3`. SSF rounded 123.45 down (it divides by a power of ten first).
export interface Engineering {
  /** The digits before the point, and so the step between exponents. */
  readonly period: number;
  readonly decimals: number;
  readonly point: boolean;
  readonly e: string;
  readonly plus: boolean;
  readonly exponentDigits: number;
}

const ENGINEERING = /^\s*([#0]+)(\.(0*))?([eE])([+-])(0+)\s*$/;

export function engineeringOf(codes: string): Engineering | null {
  const match = ENGINEERING.exec(codes);
  // `0.00E+00` has no `#`: plain scientific notation, which SSF shows right.
  if (match === null || !match[1].includes('#') || match[1].length < 2) return null;
  return { period: match[1].length, decimals: (match[3] ?? '').length, point: match[2] !== undefined, e: match[4], plus: match[5] === '+', exponentDigits: match[6].length };
}

/**
 * Rounds half away from zero on the decimal value, as Excel does: the 15 significant digits
 * Excel keeps of 123.45 (a double just above 123.45) are `123450000000000`, so `123.5E+0`.
 */
export function showEngineering(format: Engineering, value: number): string {
  const zeros = '0'.repeat(format.decimals);
  if (value === 0 || !Number.isFinite(value)) return `0${format.point ? `.${zeros}` : ''}${format.e}${format.plus ? '+' : ''}${'0'.repeat(format.exponentDigits)}`;
  const [mantissa, exponentText] = value.toExponential(14).split('e');
  let digits = mantissa.replace('.', '').replace(/0+$/, '');
  let exponent = Number(exponentText);
  for (;;) {
    const shift = Math.floor(exponent / format.period) * format.period;
    const whole = exponent - shift + 1;
    const kept = roundDigits(digits, whole + format.decimals);
    // 999.96 rounds to 1000.0: one digit more, so the exponent steps up and the point moves.
    if (kept.length > whole + format.decimals) {
      digits = kept;
      exponent += 1;
      continue;
    }
    const padded = kept.padEnd(whole + format.decimals, '0');
    const sign = shift < 0 ? '-' : format.plus ? '+' : '';
    const fraction = format.point ? `.${padded.slice(whole)}` : '';
    return `${padded.slice(0, whole)}${fraction}${format.e}${sign}${String(Math.abs(shift)).padStart(format.exponentDigits, '0')}`;
  }
}

/** The first `count` digits of a digit string, rounded half up on the next one (one longer on a carry out). */
function roundDigits(digits: string, count: number): string {
  if (digits.length <= count) return digits;
  const kept = digits.slice(0, count);
  if (digits.charCodeAt(count) < 53 /* '5' */) return kept;
  const carried = (BigInt(kept || '0') + 1n).toString();
  return kept === '' ? carried : carried.padStart(kept.length, '0');
}
