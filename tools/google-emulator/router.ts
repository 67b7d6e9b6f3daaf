// From a request to Google's answer: which method a path names, who calls, quota, permission,
// then the method itself. `POST /v4/spreadsheets/{id}/values/Sheet1!A1:append` -> values.append,
// a write: checked against the write quota and the caller's 'writer' grant.
import { authorize, principalKey } from './auth.ts';
import { consentRoute } from './consent.ts';
import { badRequest, GoogleError } from './errors.ts';
import { applyFieldMask, parseFieldMask } from './fields.ts';
import type { ApiRequest, ApiResponse, State } from './exchange.ts';
import type { Bucket } from './quota.ts';
import { batchUpdate, getSpreadsheet, wantsGridData } from './spreadsheet-api.ts';
import { cloneSpreadsheet, findSpreadsheet } from './store.ts';
import { appendValues, batchGetValues, batchUpdateValues, clearValues, getValues, updateValues, type Call } from './values-api.ts';

interface Method {
  /** Which quota it counts against; Drive's is not emulated. */
  readonly bucket: Bucket | 'drive';
  readonly spreadsheetId: string;
  readonly run: (call: Call) => unknown;
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=UTF-8' };

export function route(state: State, request: ApiRequest): ApiResponse {
  try {
    const consent = consentRoute(state, request);
    if (consent !== undefined) return consent;
    if (request.path === '/token' && request.method === 'POST') {
      const { status, body } = state.credentials.tokens.grant(formOrJson(request.body));
      return { status, headers: JSON_HEADERS, body: JSON.stringify(body) };
    }
    const method = findMethod(request) ?? driveMethod(request);
    if (method === undefined) throw new GoogleError(404, 'Method not found.');
    const principal = state.credentials.principal(request.authorization, request.query);
    // Drive has quotas of its own, far larger than the Sheets API's: not counted here.
    if (method.bucket !== 'drive') state.quota.take(method.bucket, principalKey(principal));
    const stored = findSpreadsheet(state.spreadsheets, method.spreadsheetId);
    authorize(principal, stored, method.bucket === 'write' ? 'writer' : 'reader', method.bucket === 'drive' ? DRIVE_READ_SCOPES : undefined);
    const body = parseBody(request.body);
    // Writes run on a copy that replaces the spreadsheet only when the whole call succeeded.
    const spreadsheet = method.bucket === 'write' ? cloneSpreadsheet(stored) : stored;
    const result = method.run({ spreadsheet, query: request.query, body });
    if (method.bucket === 'write') {
      // Every change moves Drive's modifiedTime forward, even two in one millisecond.
      spreadsheet.modifiedTime = Math.max(Date.now(), stored.modifiedTime + 1);
      state.spreadsheets.set(spreadsheet.spreadsheetId, spreadsheet);
    }
    const fields = request.query.get('fields');
    const answer = fields === null || fields === '' ? result : applyFieldMask(result, parseFieldMask(fields));
    return { status: 200, headers: JSON_HEADERS, body: JSON.stringify(answer) };
  } catch (error) {
    return errorResponse(error);
  }
}

export function errorResponse(error: unknown): ApiResponse {
  if (error instanceof GoogleError) return { status: error.code, headers: { ...JSON_HEADERS, ...error.headers }, body: JSON.stringify(error.toJSON()) };
  console.error('google-emulator: internal error', error);
  return errorResponse(new GoogleError(500));
}

function findMethod({ method, path }: ApiRequest): Method | undefined {
  const segments = path.split('/').map(decodeSegment);
  if (segments[1] !== 'v4' || segments[2] !== 'spreadsheets' || segments[3] === undefined) return undefined;
  const [head, ...rest] = segments.slice(3);
  const [spreadsheetId, verb] = splitVerb(head, ['batchUpdate']);
  // An id never holds a colon: `abc:copyTo` is a method the emulator does not have.
  if (spreadsheetId.includes(':')) return undefined;
  const read = (run: (call: Call) => unknown): Method => ({ bucket: 'read', spreadsheetId, run });
  const write = (run: (call: Call) => unknown): Method => ({ bucket: 'write', spreadsheetId, run });
  if (rest.length === 0) {
    if (method === 'GET' && verb === undefined) return read((call) => getSpreadsheet(call, wantsGridData(call.query)));
    if (method === 'POST' && verb === 'batchUpdate') return write(batchUpdate);
    return undefined;
  }
  if (verb !== undefined) return undefined;
  if (rest.length === 1) {
    if (method === 'GET' && rest[0] === 'values:batchGet') return read(batchGetValues);
    if (method === 'POST' && rest[0] === 'values:batchUpdate') return write(batchUpdateValues);
    return undefined;
  }
  if (rest.length !== 2 || rest[0] !== 'values') return undefined;
  const [range, rangeVerb] = splitVerb(rest[1], ['append', 'clear']);
  if (method === 'GET' && rangeVerb === undefined) return read((call) => getValues(call, range));
  if (method === 'PUT' && rangeVerb === undefined) return write((call) => updateValues(call, range));
  if (method === 'POST' && rangeVerb === 'append') return write((call) => appendValues(call, range));
  if (method === 'POST' && rangeVerb === 'clear') return write((call) => clearValues(call, range));
  return undefined;
}

/** Scopes that let a token read a file's metadata through Drive (the Sheets scopes do not). */
const DRIVE_READ_SCOPES = new Set([
  'https://www.googleapis.com/auth/drive',
  'https://www.googleapis.com/auth/drive.readonly',
  'https://www.googleapis.com/auth/drive.file',
  'https://www.googleapis.com/auth/drive.metadata',
  'https://www.googleapis.com/auth/drive.metadata.readonly',
]);

/**
 * Drive v3 `files.get` of a spreadsheet's metadata: `GET /drive/v3/files/{id}?fields=modifiedTime`
 * -> `{"modifiedTime": "2026-11-23T23:59:01.123Z"}` (with `fields` left out: id, name, mimeType, kind).
 */
function driveMethod({ method, path }: ApiRequest): Method | undefined {
  const match = /^\/drive\/v3\/files\/([^/:]+)$/.exec(path);
  if (match === null || method !== 'GET') return undefined;
  const spreadsheetId = decodeSegment(match[1]);
  return {
    bucket: 'drive',
    spreadsheetId,
    run: ({ spreadsheet }) => ({
      kind: 'drive#file',
      id: spreadsheet.spreadsheetId,
      name: spreadsheet.title,
      mimeType: 'application/vnd.google-apps.spreadsheet',
      modifiedTime: new Date(spreadsheet.modifiedTime).toISOString(),
    }),
  };
}

/** `abc:batchUpdate` -> ['abc', 'batchUpdate']; a range keeps its colons unless it ends in one of `verbs`. */
function splitVerb(segment: string, verbs: readonly string[]): [string, string | undefined] {
  for (const verb of verbs) if (segment.endsWith(`:${verb}`)) return [segment.slice(0, -verb.length - 1), verb];
  return [segment, undefined];
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function parseBody(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  try {
    const body: unknown = JSON.parse(text);
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) return body as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw badRequest('Invalid JSON payload received. Expected a JSON object.');
}

/** The token endpoint takes a form (as OAuth clients send it) or, leniently, JSON. */
function formOrJson(text: string): URLSearchParams {
  if (!text.trim().startsWith('{')) return new URLSearchParams(text);
  try {
    return new URLSearchParams(Object.entries(JSON.parse(text) as Record<string, unknown>).map(([key, value]) => [key, String(value)]));
  } catch {
    return new URLSearchParams();
  }
}
