// Writes fixtures/xlsx-corpus/*.xlsx: `node test/helpers/make-xlsx-corpus.ts`. Workbooks shaped like
// the ones Excel and other libraries write, built from their XML parts directly (not through
// SheetJS), so the in-place writer's tests see what real files hold: styles with fonts, fills,
// borders and number formats, column widths, row heights, hidden rows, merges, an image, data
// validation, an Excel table, shared formulas, a chart sheet and an untouched second tab.
import { writeFileSync, mkdirSync } from 'node:fs';
import process from 'node:process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { replacedEntry, writeZip } from '../../server/sources/file/zip.ts';

const NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PR = 'http://schemas.openxmlformats.org/package/2006/relationships';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const CT = 'application/vnd.openxmlformats-officedocument';
const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';

/** A 1x1 PNG. */
const PNG = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0));

type Parts = Record<string, string | Uint8Array>;

function zip(parts: Parts): Uint8Array {
  // A fixed date (2024-03-01 12:00) so the fixtures are the same bytes on every run; names
  // flagged UTF-8 (0x800), as the committed fixtures were first written.
  const stamp = { flags: 0x800, time: 12 << 11, date: ((2024 - 1980) << 9) | (3 << 5) | 1, versionMadeBy: 20, internalAttributes: 0, externalAttributes: 0 };
  return writeZip(Object.entries(parts).map(([name, content]) => replacedEntry({ name, ...stamp }, content)));
}

function rels(list: readonly [id: string, type: string, target: string][]): string {
  return `${XML}<Relationships xmlns="${PR}">${list.map(([id, type, target]) => `<Relationship Id="${id}" Type="${REL}/${type}" Target="${target}"/>`).join('')}</Relationships>`;
}

function contentTypes(overrides: readonly [part: string, type: string][]): string {
  return (
    `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/>' +
    overrides.map(([part, type]) => `<Override PartName="/${part}" ContentType="${type}"/>`).join('') +
    '</Types>'
  );
}

const DOC_PROPS: Parts = {
  'docProps/app.xml': `${XML}<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties"><Application>Microsoft Excel</Application></Properties>`,
  'docProps/core.xml': `${XML}<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:creator>corpus</dc:creator></cp:coreProperties>`,
};

const ROOT_RELS = rels([
  ['rId1', 'officeDocument', 'xl/workbook.xml'],
  ['rId2', 'extended-properties', 'docProps/app.xml'],
]);

const STYLES =
  `${XML}<styleSheet xmlns="${NS}">` +
  '<numFmts count="2"><numFmt numFmtId="164" formatCode="&quot;$&quot;#,##0.00"/><numFmt numFmtId="165" formatCode="yyyy\\-mm\\-dd"/></numFmts>' +
  '<fonts count="2"><font><sz val="11"/><name val="Calibri"/></font><font><b/><sz val="11"/><name val="Calibri"/></font></fonts>' +
  '<fills count="3"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill><fill><patternFill patternType="solid"><fgColor rgb="FFFFFF00"/></patternFill></fill></fills>' +
  '<borders count="2"><border><left/><right/><top/><bottom/><diagonal/></border><border><left style="thin"/><right style="thin"/><top style="thin"/><bottom style="thin"/><diagonal/></border></borders>' +
  '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>' +
  '<cellXfs count="6">' +
  '<xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>' +
  '<xf numFmtId="0" fontId="1" fillId="2" borderId="1" xfId="0" applyFont="1" applyFill="1" applyBorder="1"/>' +
  '<xf numFmtId="164" fontId="0" fillId="0" borderId="1" xfId="0" applyNumberFormat="1" applyBorder="1"/>' +
  '<xf numFmtId="165" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>' +
  '<xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0" applyAlignment="1"><alignment wrapText="1" vertical="top"/></xf>' +
  '<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/>' +
  '</cellXfs><cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>';

const STRINGS = ['Name', 'Amount', 'Joined', 'Active', 'Double', 'Ann', 'Bob', 'Cy', 'Dee', 'Merged note', 'Topic', 'Detail', 'Kept as it is', 'Hidden row'];

function sharedStrings(): string {
  return `${XML}<sst xmlns="${NS}" count="${STRINGS.length}" uniqueCount="${STRINGS.length}">${STRINGS.map((text) => `<si><t>${text}</t></si>`).join('')}</sst>`;
}

const s = (text: string) => `t="s"><v>${STRINGS.indexOf(text)}</v>`;

/** People: the tab the tests write. Row 2 is tall, row 4 hidden; E holds a shared formula. */
const PEOPLE =
  `${XML}<worksheet xmlns="${NS}" xmlns:r="${R}"><dimension ref="A1:H5"/>` +
  '<sheetViews><sheetView tabSelected="1" workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/></sheetView></sheetViews>' +
  '<sheetFormatPr defaultRowHeight="15"/>' +
  '<cols><col min="1" max="1" width="20.7109375" customWidth="1"/><col min="2" max="2" width="14" style="2" customWidth="1"/><col min="3" max="3" width="12.5" style="3" customWidth="1"/></cols>' +
  '<sheetData>' +
  `<row r="1" spans="1:5"><c r="A1" s="1" ${s('Name')}</c><c r="B1" s="1" ${s('Amount')}</c><c r="C1" s="1" ${s('Joined')}</c><c r="D1" s="1" ${s('Active')}</c><c r="E1" s="1" ${s('Double')}</c></row>` +
  `<row r="2" spans="1:8" ht="24" customHeight="1"><c r="A2" ${s('Ann')}</c><c r="B2" s="2"><v>1200.5</v></c><c r="C2" s="3"><v>45352</v></c><c r="D2" t="b"><v>1</v></c><c r="E2" s="2"><f t="shared" ref="E2:E5" si="0">B2*2</f><v>2401</v></c><c r="G2" s="4" ${s('Merged note')}</c></row>` +
  `<row r="3" spans="1:5"><c r="A3" ${s('Bob')}</c><c r="B3" s="2"><v>99</v></c><c r="C3" s="3"><v>45000</v></c><c r="D3" t="b"><v>0</v></c><c r="E3" s="2"><f t="shared" si="0"/><v>198</v></c></row>` +
  `<row r="4" spans="1:5" hidden="1"><c r="A4" ${s('Cy')}</c><c r="B4" s="2"><v>15</v></c><c r="C4" s="3"><v>44000</v></c><c r="D4" t="b"><v>1</v></c><c r="E4" s="2"><f t="shared" si="0"/><v>30</v></c></row>` +
  `<row r="5" spans="1:5"><c r="A5" ${s('Dee')}</c><c r="B5" s="2"><v>7.25</v></c><c r="C5" s="3"><v>45500</v></c><c r="D5" t="b"><v>0</v></c><c r="E5" s="2"><f t="shared" si="0"/><v>14.5</v></c></row>` +
  '</sheetData>' +
  '<mergeCells count="1"><mergeCell ref="G2:H3"/></mergeCells>' +
  '<dataValidations count="1"><dataValidation type="decimal" operator="greaterThanOrEqual" allowBlank="1" showErrorMessage="1" sqref="B2:B100"><formula1>0</formula1></dataValidation></dataValidations>' +
  '<pageMargins left="0.7" right="0.7" top="0.75" bottom="0.75" header="0.3" footer="0.3"/>' +
  '<drawing r:id="rId1"/><tableParts count="1"><tablePart r:id="rId2"/></tableParts></worksheet>';

/** Notes: a tab no test writes; it must come back byte for byte. */
const NOTES =
  `${XML}<worksheet xmlns="${NS}" xmlns:r="${R}"><dimension ref="A1:B4"/><sheetViews><sheetView workbookViewId="0"/></sheetViews><sheetFormatPr defaultRowHeight="15"/>` +
  '<cols><col min="1" max="1" width="30" customWidth="1"/><col min="2" max="2" width="45" customWidth="1"/></cols><sheetData>' +
  `<row r="1"><c r="A1" s="5" ${s('Topic')}</c><c r="B1" s="5" ${s('Detail')}</c></row>` +
  `<row r="2" ht="40" customHeight="1"><c r="A2" s="4" ${s('Kept as it is')}</c><c r="B2" s="2"><v>12.5</v></c></row>` +
  `<row r="3" hidden="1"><c r="A3" ${s('Hidden row')}</c></row>` +
  `<row r="4"><c r="A4" s="1" ${s('Merged note')}</c></row>` +
  '</sheetData><mergeCells count="1"><mergeCell ref="A4:B4"/></mergeCells><pageMargins left="0.7" right="0.7" top="0.75" bottom="0.75" header="0.3" footer="0.3"/></worksheet>';

const PEOPLE_DRAWING =
  `${XML}<xdr:wsDr xmlns:xdr="http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="${R}">` +
  '<xdr:oneCellAnchor><xdr:from><xdr:col>9</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>1</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:from><xdr:ext cx="952500" cy="952500"/>' +
  '<xdr:pic><xdr:nvPicPr><xdr:cNvPr id="2" name="Logo"/><xdr:cNvPicPr/></xdr:nvPicPr><xdr:blipFill><a:blip r:embed="rId1"/><a:stretch><a:fillRect/></a:stretch></xdr:blipFill>' +
  '<xdr:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="952500" cy="952500"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></xdr:spPr></xdr:pic><xdr:clientData/></xdr:oneCellAnchor></xdr:wsDr>';

const TABLE =
  `${XML}<table xmlns="${NS}" id="1" name="PeopleTable" displayName="PeopleTable" ref="A1:E5" totalsRowShown="0"><autoFilter ref="A1:E5"/>` +
  '<tableColumns count="5"><tableColumn id="1" name="Name"/><tableColumn id="2" name="Amount"/><tableColumn id="3" name="Joined"/><tableColumn id="4" name="Active"/><tableColumn id="5" name="Double"/></tableColumns>' +
  '<tableStyleInfo name="TableStyleMedium2" showFirstColumn="0" showLastColumn="0" showRowStripes="1" showColumnStripes="0"/></table>';

const CHART =
  `${XML}<c:chartSpace xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="${R}"><c:chart><c:plotArea><c:layout/>` +
  '<c:barChart><c:barDir val="col"/><c:grouping val="clustered"/><c:ser><c:idx val="0"/><c:order val="0"/><c:cat><c:strRef><c:f>People!$A$2:$A$5</c:f></c:strRef></c:cat><c:val><c:numRef><c:f>People!$B$2:$B$5</c:f></c:numRef></c:val></c:ser>' +
  '<c:axId val="1"/><c:axId val="2"/></c:barChart><c:catAx><c:axId val="1"/><c:scaling><c:orientation val="minMax"/></c:scaling><c:delete val="0"/><c:axPos val="b"/><c:crossAx val="2"/></c:catAx>' +
  '<c:valAx><c:axId val="2"/><c:scaling><c:orientation val="minMax"/></c:scaling><c:delete val="0"/><c:axPos val="l"/><c:crossAx val="1"/></c:valAx></c:plotArea></c:chart></c:chartSpace>';

const CHART_DRAWING =
  `${XML}<xdr:wsDr xmlns:xdr="http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="${R}">` +
  '<xdr:absoluteAnchor><xdr:pos x="0" y="0"/><xdr:ext cx="8666400" cy="6299200"/><xdr:graphicFrame macro=""><xdr:nvGraphicFramePr><xdr:cNvPr id="2" name="Chart 1"/><xdr:cNvGraphicFramePr/></xdr:nvGraphicFramePr>' +
  '<xdr:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/></xdr:xfrm><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/chart"><c:chart xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" r:id="rId1"/></a:graphicData></a:graphic></xdr:graphicFrame><xdr:clientData/></xdr:absoluteAnchor></xdr:wsDr>';

/** Styles, an image, a table, validation, merges, a chart sheet and an untouched tab. */
export function styledBook(): Uint8Array {
  return zip({
    '[Content_Types].xml': contentTypes([
      ['xl/workbook.xml', `${CT}.spreadsheetml.sheet.main+xml`],
      ['xl/worksheets/sheet1.xml', `${CT}.spreadsheetml.worksheet+xml`],
      ['xl/worksheets/sheet2.xml', `${CT}.spreadsheetml.worksheet+xml`],
      ['xl/chartsheets/sheet1.xml', `${CT}.spreadsheetml.chartsheet+xml`],
      ['xl/styles.xml', `${CT}.spreadsheetml.styles+xml`],
      ['xl/sharedStrings.xml', `${CT}.spreadsheetml.sharedStrings+xml`],
      ['xl/drawings/drawing1.xml', `${CT}.drawing+xml`],
      ['xl/drawings/drawing2.xml', `${CT}.drawing+xml`],
      ['xl/charts/chart1.xml', `${CT}.drawingml.chart+xml`],
      ['xl/tables/table1.xml', `${CT}.spreadsheetml.table+xml`],
      ['docProps/app.xml', `${CT}.extended-properties+xml`],
      ['docProps/core.xml', 'application/vnd.openxmlformats-package.core-properties+xml'],
    ]),
    '_rels/.rels': ROOT_RELS,
    ...DOC_PROPS,
    'xl/workbook.xml': `${XML}<workbook xmlns="${NS}" xmlns:r="${R}"><bookViews><workbookView activeTab="0"/></bookViews><sheets><sheet name="People" sheetId="1" r:id="rId1"/><sheet name="Notes" sheetId="2" r:id="rId2"/><sheet name="Chart" sheetId="3" r:id="rId3"/></sheets><calcPr calcId="191029"/></workbook>`,
    'xl/_rels/workbook.xml.rels': rels([
      ['rId1', 'worksheet', 'worksheets/sheet1.xml'],
      ['rId2', 'worksheet', 'worksheets/sheet2.xml'],
      ['rId3', 'chartsheet', 'chartsheets/sheet1.xml'],
      ['rId4', 'styles', 'styles.xml'],
      ['rId5', 'sharedStrings', 'sharedStrings.xml'],
    ]),
    'xl/styles.xml': STYLES,
    'xl/sharedStrings.xml': sharedStrings(),
    'xl/worksheets/sheet1.xml': PEOPLE,
    'xl/worksheets/_rels/sheet1.xml.rels': rels([
      ['rId1', 'drawing', '../drawings/drawing1.xml'],
      ['rId2', 'table', '../tables/table1.xml'],
    ]),
    'xl/worksheets/sheet2.xml': NOTES,
    'xl/drawings/drawing1.xml': PEOPLE_DRAWING,
    'xl/drawings/_rels/drawing1.xml.rels': rels([['rId1', 'image', '../media/image1.png']]),
    'xl/media/image1.png': PNG,
    'xl/tables/table1.xml': TABLE,
    'xl/chartsheets/sheet1.xml': `${XML}<chartsheet xmlns="${NS}" xmlns:r="${R}"><sheetViews><sheetView workbookViewId="0" zoomToFit="1"/></sheetViews><drawing r:id="rId1"/></chartsheet>`,
    'xl/chartsheets/_rels/sheet1.xml.rels': rels([['rId1', 'drawing', '../drawings/drawing2.xml']]),
    'xl/drawings/drawing2.xml': CHART_DRAWING,
    'xl/drawings/_rels/drawing2.xml.rels': rels([['rId1', 'chart', '../charts/chart1.xml']]),
    'xl/charts/chart1.xml': CHART,
  });
}

/** One worksheet from its `<sheetData>` rows, as the smallest valid package holds it. */
export function plainBook(sheetXml: string, sheetName = 'Data'): Uint8Array {
  return zip({
    '[Content_Types].xml': contentTypes([
      ['xl/workbook.xml', `${CT}.spreadsheetml.sheet.main+xml`],
      ['xl/worksheets/sheet1.xml', `${CT}.spreadsheetml.worksheet+xml`],
      ['xl/styles.xml', `${CT}.spreadsheetml.styles+xml`],
    ]),
    '_rels/.rels': rels([['rId1', 'officeDocument', 'xl/workbook.xml']]),
    'xl/workbook.xml': `${XML}<workbook xmlns="${NS}" xmlns:r="${R}"><sheets><sheet name="${sheetName}" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    'xl/_rels/workbook.xml.rels': rels([
      ['rId1', 'worksheet', 'worksheets/sheet1.xml'],
      ['rId2', 'styles', 'styles.xml'],
    ]),
    'xl/styles.xml': STYLES,
    'xl/worksheets/sheet1.xml': sheetXml,
  });
}

/**
 * A dense sheet with a missing row (rows 1, 2 and 4): SheetJS 0.20.3 throws "Cannot read
 * properties of undefined (reading '0')" when asked to write such a sheet back (issue 8).
 */
export function gapBook(): Uint8Array {
  return plainBook(
    `${XML}<worksheet xmlns="${NS}"><dimension ref="A1:B4"/><sheetData>` +
      '<row r="1"><c r="A1" t="inlineStr"><is><t>Name</t></is></c><c r="B1" t="inlineStr"><is><t>Age</t></is></c></row>' +
      '<row r="2"><c r="A2" t="inlineStr"><is><t>Ann</t></is></c><c r="B2"><v>30</v></c></row>' +
      '<row r="4"><c r="A4" t="inlineStr"><is><t>Cy</t></is></c><c r="B4"><v>41</v></c></row>' +
      '</sheetData></worksheet>',
  );
}

/** Namespace-prefixed XML without `r` attributes or `<dimension>`, as some .NET writers produce. */
export function prefixedBook(): Uint8Array {
  return plainBook(
    `${XML}<x:worksheet xmlns:x="${NS}"><x:sheetData>` +
      '<x:row><x:c t="inlineStr"><x:is><x:t>Name</x:t></x:is></x:c><x:c t="inlineStr"><x:is><x:t>Age</x:t></x:is></x:c></x:row>' +
      '<x:row><x:c t="inlineStr"><x:is><x:t>Ann</x:t></x:is></x:c><x:c s="2"><x:v>30</x:v></x:c></x:row>' +
      '<x:row><x:c t="inlineStr"><x:is><x:t>Bob</x:t></x:is></x:c><x:c s="2"><x:v>25</x:v></x:c></x:row>' +
      '</x:sheetData></x:worksheet>',
  );
}

export const CORPUS: Readonly<Record<string, () => Uint8Array>> = {
  'styled.xlsx': styledBook,
  'gap.xlsx': gapBook,
  'prefixed.xlsx': prefixedBook,
};

export const CORPUS_DIR = fileURLToPath(new URL('../../fixtures/xlsx-corpus/', import.meta.url));

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  mkdirSync(CORPUS_DIR, { recursive: true });
  for (const [name, build] of Object.entries(CORPUS)) writeFileSync(CORPUS_DIR + name, build());
  console.log(`wrote ${Object.keys(CORPUS).length} workbooks to ${CORPUS_DIR}`);
}
