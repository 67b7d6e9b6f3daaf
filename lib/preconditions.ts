// The engine's part of HTTP caching and safe concurrent writes: the ETag of a read's answer, the
// 304 a matching `If-None-Match` gets, and the 412 a write gets when its `If-Match` no longer
// names the tab (or, for a row addressed by index, the row) it would change. The validators are
// content hashes (version.ts); the request part of an ETag is the parsed request, so two URLs
// that ask the same thing in different words may differ, but two different answers never share one.
import { apiError, type ApiError } from './errors.ts';
import { plainReadOf, type EngineOptions, type ParsedRequest, type ReadParameters, type Target } from './parse-request.ts';
import type { Table } from './table.ts';
import { entityTags, etag, noneMatchHits, rowVersion, tabVersion, validatorOf, workbookVersion } from './version.ts';
import type { Tab, Workbook } from './workbook.ts';

/** What a read's answer is a function of, besides the rows: the request and the options that shape reads. */
function requestKey(tab: string | null, target: Target, read: ReadParameters, options: EngineOptions): string {
  const key: unknown[] = [tab, target, read.limit, read.offset, read.raw, read.format, read.sort, options.hiddenTabs ?? 'serve'];
  // Added only when given, so that the tags of reads without `_select` or a key's tabs stay what they were.
  if (read.select !== null) key.push(read.select);
  // A key's tabs decide the first tab and the tab list.
  if (options.visibleTabs !== undefined) key.push(options.visibleTabs);
  return JSON.stringify(key);
}

/** The ETag of a read of a tab's rows (a row by index gets the row's own validator). */
export function readTag(tab: Tab, table: Table, request: ParsedRequest, options: EngineOptions): string {
  const key = requestKey(request.tab, request.target, request.read, options);
  if (request.target.kind === 'index') return etag('r', rowVersion(tab, table.headerRow + 1 + request.target.index), key);
  return etag('t', tabVersion(tab), key);
}

/** The ETag of `/tabs`. */
export function tabsTag(workbook: Workbook, request: ParsedRequest, options: EngineOptions): string {
  return etag('w', workbookVersion(workbook), requestKey(request.tab, request.target, request.read, options));
}

/**
 * The ETag a write answers with: the one a plain GET of the same path now gets, the row's for a
 * PATCH or PUT by index (so the next write to that row can send it in If-Match), else the tab's
 * (a GET of the tab's rows).
 */
export function writeTag(tab: Tab, table: Table, request: ParsedRequest, options: EngineOptions): string {
  const { target } = request;
  if (target.kind === 'index' && request.action !== 'delete' && target.index < table.rowCount) {
    return etag('r', rowVersion(tab, table.headerRow + 1 + target.index), requestKey(request.tab, target, plainReadOf(target), options));
  }
  const rows: Target = { kind: 'rows' };
  return etag('t', tabVersion(tab), requestKey(request.tab, rows, plainReadOf(rows), options));
}

/**
 * Whether a read's `If-None-Match` names its answer. A tag of ours names one request on one
 * content, which was answered 200 when the tag was made; `*` is decided by the caller once the
 * answer is known to exist.
 */
export function notModified(request: ParsedRequest, tag: string): boolean {
  return request.ifNoneMatch !== undefined && request.ifNoneMatch.trim() !== '*' && noneMatchHits(request.ifNoneMatch, tag);
}

/** `If-None-Match: *` (any current answer): checked after the read found one. */
export function matchesAny(request: ParsedRequest): boolean {
  return request.ifNoneMatch !== undefined && request.ifNoneMatch.trim() === '*';
}

/**
 * A write's `If-Match` (RFC 9110 13.1.1, strong comparison): null when it holds, else the 412.
 * A tab tag matches the tab's current content; a row tag, only on a write to that row by index,
 * the row's; `*` that the addressed row (or the tab) exists.
 */
export function ifMatchRefusal(tab: Tab, table: Table, request: ParsedRequest): ApiError | null {
  if (request.ifMatch === undefined) return null;
  const { target } = request;
  const row = target.kind === 'index' && target.index < table.rowCount ? table.headerRow + 1 + target.index : null;
  const tags = entityTags(request.ifMatch);
  if (tags === '*') {
    if (target.kind !== 'index' || row !== null) return null;
    return apiError('precondition_failed', `If-Match: * asks for row ${target.index} to exist, and the tab "${tab.name}" has no such row; nothing was written.`);
  }
  for (const tag of tags) {
    const validator = validatorOf(tag);
    if (validator === null) continue;
    if (validator.kind === 't' && validator.version === tabVersion(tab)) return null;
    if (validator.kind === 'r' && row !== null && validator.version === rowVersion(tab, row)) return null;
  }
  const what = row !== null ? `row ${(target as { index: number }).index} of the tab "${tab.name}"` : `the tab "${tab.name}"`;
  return apiError('precondition_failed', `If-Match names no current version of ${what}: it changed since it was read (or the ETag is not one this server gave for it); read it again and retry. Nothing was written.`);
}
