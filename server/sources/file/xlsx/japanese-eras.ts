// Japanese eras: 44197 in `[$-411]ggge"年"m"月"d"日"` reads `令和3年1月1日`. `g` is the era's
// initial in Latin letters, `gg` its first character, `ggg` (or more) its name; `e` the year of
// the era, `ee` (or more) two digits, as Excel documents them and SpreadJS lists them
// (developer.mescius.com/spreadjs/docs/features/culture/eraformat). Eras from the day each
// began; serial 1 is 1900, in Meiji 33.
import { serialToIso } from '../dates.ts';

/** `gannen` (`[$-ja-JP-x-gannen]`) shows an era's first year as 元 instead of 1. */
export type EraYears = 'numeric' | 'gannen';

const ERAS: readonly { start: string; name: string; initial: string; latin: string }[] = [
  { start: '2019-05-01', name: '令和', initial: '令', latin: 'R' },
  { start: '1989-01-08', name: '平成', initial: '平', latin: 'H' },
  { start: '1926-12-25', name: '昭和', initial: '昭', latin: 'S' },
  { start: '1912-07-30', name: '大正', initial: '大', latin: 'T' },
  { start: '1868-09-08', name: '明治', initial: '明', latin: 'M' },
];

/** Whether a section names the Japanese locale: `[$-411]` (an LCID whose language is 0x0411), `[$-ja-JP]`, `[$-ja-JP-x-gannen]`. */
export function japaneseLocale(section: string): EraYears | null {
  for (const [, tag] of section.matchAll(/\[\$[^\]-]*-([^\]]+)\]/g)) {
    if (/^ja-jp-x-gannen$/i.test(tag)) return 'gannen';
    if (/^ja(?:-jp)?$/i.test(tag)) return 'numeric';
    if (/^[0-9a-f]+$/i.test(tag) && (Number.parseInt(tag, 16) & 0xffff) === 0x0411) return 'numeric';
  }
  return null;
}

/** The section with its era codes replaced by the era of the date, as quoted text. */
export function withJapaneseEra(section: string, years: EraYears, serial: number, date1904: boolean): string {
  const iso = serialToIso(serial, date1904).slice(0, 10);
  const era = ERAS.find((candidate) => iso >= candidate.start) ?? ERAS[ERAS.length - 1];
  const number = Number(iso.slice(0, 4)) - Number(era.start.slice(0, 4)) + 1;
  const year = number === 1 && years === 'gannen' ? '元' : String(number);
  let out = '';
  for (let i = 0; i < section.length; i++) {
    const char = section[i];
    if (char === '\\') {
      out += section.slice(i, i + 2);
      i++;
    } else if (char === '"' || char === '[') {
      const end = closingAt(section, i, char === '"' ? '"' : ']');
      // A bare locale tag (`[$-411]`) has done its work; SSF shows one as `$` in a section left without date codes.
      if (!/^\[\$-[^\]]*\]$/.test(section.slice(i, end + 1))) out += section.slice(i, end + 1);
      i = end;
    } else if (char === 'g' || char === 'G' || char === 'e' || char === 'E') {
      let end = i;
      while (end < section.length && section[end].toLowerCase() === char.toLowerCase()) end++;
      const run = end - i;
      const text = char.toLowerCase() === 'g' ? (run === 1 ? era.latin : run === 2 ? era.initial : era.name) : run === 1 ? year : year.padStart(2, '0');
      out += `"${text}"`;
      i = end - 1;
    } else if (char === '.' && section[i + 1] !== '0') {
      // `[$-411]ge.m.d` (H31.4.30): SSF takes a bare point for a decimal point, `.0` being fractional seconds.
      out += '\\.';
    } else out += char;
  }
  return out;
}

function closingAt(section: string, from: number, char: string): number {
  const at = section.indexOf(char, from + 1);
  return at === -1 ? section.length : at;
}
