// .ods files shaped like LibreOffice's, written XML by hand so the tests do not depend on any
// writer sheetrest uses: styles, column widths, a hidden row, a merge with a covered cell that
// holds text, booleans, dates with fractional seconds, percentages, currency, a second table no
// write touches; and a 2 KB hostile file declaring billions of cells.
// `node test/helpers/make-ods-fixtures.ts` writes them to fixtures/ods/.
import { writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { replacedEntry, writeZip } from '../../server/sources/file/zip.ts';

const NS = [
  'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"',
  'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"',
  'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"',
  'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"',
  'xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"',
  'xmlns:number="urn:oasis:names:tc:opendocument:xmlns:datastyle:1.0"',
  'xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0"',
  'xmlns:of="urn:oasis:names:tc:opendocument:xmlns:of:1.2"',
  'xmlns:calcext="urn:org:documentfoundation:names:experimental:calc:xmlns:calcext:1.0"',
].join(' ');

const MANIFEST = `<?xml version="1.0" encoding="UTF-8"?>
<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3">
 <manifest:file-entry manifest:full-path="/" manifest:version="1.3" manifest:media-type="application/vnd.oasis.opendocument.spreadsheet"/>
 <manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>
 <manifest:file-entry manifest:full-path="styles.xml" manifest:media-type="text/xml"/>
 <manifest:file-entry manifest:full-path="meta.xml" manifest:media-type="text/xml"/>
 <manifest:file-entry manifest:full-path="settings.xml" manifest:media-type="text/xml"/>
</manifest:manifest>`;

const META = `<?xml version="1.0" encoding="UTF-8"?>
<office:document-meta ${NS} office:version="1.3"><office:meta><meta:generator>LibreOffice/7.6.4.1$Linux_X86_64 LibreOffice_project/e19e193f88cd6c0525a17fb7a176ed8e6a3e2aa1</meta:generator></office:meta></office:document-meta>`;

const SETTINGS = `<?xml version="1.0" encoding="UTF-8"?>
<office:document-settings xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:config="urn:oasis:names:tc:opendocument:xmlns:config:1.0" office:version="1.3"><office:settings><config:config-item-set config:name="ooo:view-settings"><config:config-item config:name="VisibleAreaTop" config:type="int">0</config:config-item></config:config-item-set></office:settings></office:document-settings>`;

const STYLES = `<?xml version="1.0" encoding="UTF-8"?>
<office:document-styles ${NS} office:version="1.3"><office:styles><style:default-style style:family="table-cell"><style:paragraph-properties style:tab-stop-distance="0.5in"/></style:default-style><number:number-style style:name="N0"><number:number number:min-integer-digits="1"/></number:number-style><style:style style:name="Default" style:family="table-cell"/><style:style style:name="Heading" style:family="table-cell" style:parent-style-name="Default"><style:text-properties fo:font-weight="bold"/></style:style></office:styles></office:document-styles>`;

/** The People table's cells worth checking, by name, as LibreOffice 7.6 writes them. */
export const PEOPLE_CELLS = {
  amount: '<table:table-cell table:style-name="ce2" office:value-type="float" office:value="1.5" calcext:value-type="float"><text:p>1.5</text:p></table:table-cell>',
  paid: '<table:table-cell table:style-name="ce6" office:value-type="boolean" office:boolean-value="false" calcext:value-type="boolean"><text:p>FALSE</text:p></table:table-cell>',
  when: '<table:table-cell table:style-name="ce3" office:value-type="date" office:date-value="2024-03-01T09:30:00.123" calcext:value-type="date"><text:p>2024-03-01 09:30:00.123</text:p></table:table-cell>',
  share: '<table:table-cell table:style-name="ce4" office:value-type="percentage" office:value="0.125" calcext:value-type="percentage"><text:p>12.50%</text:p></table:table-cell>',
  price: '<table:table-cell table:style-name="ce5" office:value-type="currency" office:currency="USD" office:value="1234.5" calcext:value-type="currency"><text:p>$1,234.50</text:p></table:table-cell>',
  note: '<table:table-cell office:value-type="string" calcext:value-type="string"><text:p>two words<text:s/></text:p></table:table-cell>',
  merged: '<table:table-cell table:number-columns-spanned="2" table:number-rows-spanned="1" office:value-type="string" calcext:value-type="string"><text:p>merged</text:p></table:table-cell><table:covered-table-cell office:value-type="string" calcext:value-type="string"><text:p>hidden by the merge</text:p></table:covered-table-cell>',
};

const HEADER = ['Name', 'Amount', 'Paid', 'When', 'Share', 'Price', 'Note', 'M1', 'M2']
  .map((name) => `<table:table-cell table:style-name="ce1" office:value-type="string" calcext:value-type="string"><text:p>${name}</text:p></table:table-cell>`).join('');

function person(name: string, cells: string, attributes = ' table:style-name="ro1"'): string {
  return `<table:table-row${attributes}><table:table-cell office:value-type="string" calcext:value-type="string"><text:p>${name}</text:p></table:table-cell>${cells}<table:table-cell table:number-columns-repeated="1015"/></table:table-row>`;
}

const C = PEOPLE_CELLS;

const CONTENT = `<?xml version="1.0" encoding="UTF-8"?>
<office:document-content ${NS} office:version="1.3"><office:automatic-styles><style:style style:name="co1" style:family="table-column"><style:table-column-properties fo:break-before="auto" style:column-width="1.2in"/></style:style><style:style style:name="co2" style:family="table-column"><style:table-column-properties fo:break-before="auto" style:column-width="0.889in"/></style:style><style:style style:name="ro1" style:family="table-row"><style:table-row-properties style:row-height="0.178in" fo:break-before="auto" style:use-optimal-row-height="true"/></style:style><style:style style:name="ro2" style:family="table-row"><style:table-row-properties style:row-height="0.3in" fo:break-before="auto" style:use-optimal-row-height="false"/></style:style><style:style style:name="ta1" style:family="table" style:master-page-name="Default"><style:table-properties table:display="true" style:writing-mode="lr-tb"/></style:style><number:number-style style:name="N2"><number:number number:decimal-places="1" number:min-decimal-places="1" number:min-integer-digits="1"/></number:number-style><number:date-style style:name="N3"><number:year number:style="long"/><number:text>-</number:text><number:month number:style="long"/><number:text>-</number:text><number:day number:style="long"/><number:text> </number:text><number:hours number:style="long"/><number:text>:</number:text><number:minutes number:style="long"/><number:text>:</number:text><number:seconds number:style="long" number:decimal-places="3"/></number:date-style><number:percentage-style style:name="N4"><number:number number:decimal-places="2" number:min-decimal-places="2" number:min-integer-digits="1"/><number:text>%</number:text></number:percentage-style><number:currency-style style:name="N5"><number:currency-symbol number:language="en" number:country="US">$</number:currency-symbol><number:number number:decimal-places="2" number:min-decimal-places="2" number:min-integer-digits="1" number:grouping="true"/></number:currency-style><number:boolean-style style:name="N6"><number:boolean/></number:boolean-style><style:style style:name="ce1" style:family="table-cell" style:parent-style-name="Heading"/><style:style style:name="ce2" style:family="table-cell" style:parent-style-name="Default" style:data-style-name="N2"><style:table-cell-properties fo:background-color="#ffff00"/></style:style><style:style style:name="ce3" style:family="table-cell" style:parent-style-name="Default" style:data-style-name="N3"/><style:style style:name="ce4" style:family="table-cell" style:parent-style-name="Default" style:data-style-name="N4"/><style:style style:name="ce5" style:family="table-cell" style:parent-style-name="Default" style:data-style-name="N5"/><style:style style:name="ce6" style:family="table-cell" style:parent-style-name="Default" style:data-style-name="N6"/></office:automatic-styles><office:body><office:spreadsheet><table:calculation-settings table:automatic-find-labels="false"/><table:table table:name="People" table:style-name="ta1"><table:table-column table:style-name="co1" table:default-cell-style-name="Default"/><table:table-column table:style-name="co2" table:number-columns-repeated="8" table:default-cell-style-name="Default"/><table:table-column table:style-name="co2" table:number-columns-repeated="1015" table:default-cell-style-name="Default"/><table:table-row table:style-name="ro2">${HEADER}<table:table-cell table:number-columns-repeated="1015"/></table:table-row>${person('Ann', C.amount + C.paid + C.when + C.share + C.price + C.note + C.merged)}${person('Bob', C.amount + C.paid + C.when + C.share + C.price + '<table:table-cell office:value-type="string" calcext:value-type="string"><text:p>line one</text:p><text:p>tab<text:tab/>and&#13;return<text:line-break/>end</text:p></table:table-cell><table:table-cell table:number-columns-repeated="2"/>', ' table:style-name="ro1" table:visibility="collapse"')}${person('Same', C.amount + '<table:table-cell table:number-columns-repeated="7"/>', ' table:style-name="ro1" table:number-rows-repeated="2"')}${person('Cy', '<table:table-cell table:style-name="ce2" office:value-type="float" office:value="2" calcext:value-type="float"><text:p>2.0</text:p></table:table-cell><table:table-cell table:style-name="ce6" office:value-type="boolean" office:boolean-value="true" calcext:value-type="boolean"><text:p>TRUE</text:p></table:table-cell><table:table-cell table:style-name="ce3" office:value-type="date" office:date-value="1899-12-30T00:00:00.5" calcext:value-type="date"><text:p>1899-12-30 00:00:00.500</text:p></table:table-cell><table:table-cell table:number-columns-repeated="5"/>')}<table:table-row table:style-name="ro1" table:number-rows-repeated="1048570"><table:table-cell table:number-columns-repeated="1024"/></table:table-row></table:table><table:table table:name="Untouched" table:style-name="ta1"><table:table-column table:style-name="co1" table:number-columns-repeated="2" table:default-cell-style-name="Default"/><table:table-row table:style-name="ro1"><table:table-cell table:style-name="ce1" office:value-type="string" calcext:value-type="string"><text:p>Key</text:p></table:table-cell><table:table-cell table:style-name="ce1" office:value-type="string" calcext:value-type="string"><text:p>Value</text:p></table:table-cell></table:table-row><table:table-row table:style-name="ro1"><table:table-cell office:value-type="string" calcext:value-type="string"><text:p>half</text:p></table:table-cell>${C.amount}</table:table-row><table:table-row table:style-name="ro1"><table:table-cell office:value-type="string" calcext:value-type="string"><text:p>no</text:p></table:table-cell>${C.paid}</table:table-row></table:table><table:named-expressions/></office:spreadsheet></office:body></office:document-content>`;

/** A package as LibreOffice lays it out: mimetype first and stored, the XML parts deflated. */
export function odsPackage(content: string, extra: Record<string, string> = {}): Uint8Array {
  const encode = (text: string) => new TextEncoder().encode(text);
  const mimetype = encode('application/vnd.oasis.opendocument.spreadsheet');
  const stamp = { time: 0x4a40, date: 0x5861 };
  const entries = [
    replacedEntry({ name: 'mimetype', ...stamp }, mimetype, 0),
    ...Object.entries({ 'meta.xml': META, 'settings.xml': SETTINGS, 'content.xml': content, 'styles.xml': STYLES, 'META-INF/manifest.xml': MANIFEST, ...extra })
      .map(([name, text]) => replacedEntry({ name, ...stamp }, text)),
  ];
  return writeZip(entries);
}

/** The People and Untouched tables described above. */
export function thirdPartyOds(): Uint8Array {
  return odsPackage(CONTENT, { 'Thumbnails/thumbnail.png': '\u0089PNG not really' });
}

/** 2 KB (most of it the package's other parts) declaring a million rows of 16,384 filled cells. */
export function hostileOds(): Uint8Array {
  const content = `<?xml version="1.0" encoding="UTF-8"?>
<office:document-content ${NS}><office:body><office:spreadsheet><table:table table:name="Boom"><table:table-row table:number-rows-repeated="1048576"><table:table-cell table:number-columns-repeated="16384" office:value-type="float" office:value="1"><text:p>1</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet></office:body></office:document-content>`;
  return odsPackage(content);
}

if (import.meta.main || process.argv[1]?.endsWith('make-ods-fixtures.ts')) {
  const dir = join(import.meta.dirname ?? '.', '..', 'fixtures', 'ods');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'third-party.ods'), thirdPartyOds());
  await writeFile(join(dir, 'hostile-repeats.ods'), hostileOds());
}
