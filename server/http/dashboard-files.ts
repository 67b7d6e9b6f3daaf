// The dashboard's static files (server/dashboard/: plain ES modules, CSS and one HTML page, no
// build step), served from memory: `GET /` -> index.html, `GET /_dashboard/app.js` -> the module.
// The folder is read once at start into a table of names; a request is answered only when its
// path is a name in that table, so `/_dashboard/../config.json` or `%2e%2e%2f` can never reach
// a file outside the folder (nothing is looked up on disk per request). Every answer carries a
// strict Content-Security-Policy (the page loads only its own scripts and styles, talks only to
// its own origin), nosniff, and `Cache-Control: no-cache` with an ETag (a reload costs 304s).
// One file is made at start instead: `source-types.json`, the new-connection forms of the source
// types (server/sources/registry.ts), so the page asks for whatever fields each type needs.
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiError } from '../../lib/errors.ts';
import { JSON_CONTENT_TYPE } from '../../lib/headers.ts';
import { noneMatchHits } from '../../lib/version.ts';
import { dashboardForms } from '../sources/registry.ts';
import { errorAnswer, type Answer } from './respond.ts';

/** Where the dashboard's files live, beside this module. */
export const DASHBOARD_FOLDER = fileURLToPath(new URL('../dashboard/', import.meta.url));

/** Under this prefix the page loads its modules and styles; `/` is the page itself. */
export const DASHBOARD_PREFIX = '/_dashboard/';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
};

/**
 * Nothing inline, nothing from elsewhere: a value from a spreadsheet that slipped into the page
 * as markup could still not run. `connect-src 'self'`: the playground calls this server only.
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** A file served from memory: its bytes and its headers (type, revalidation, the security headers). */
export interface StaticFile {
  readonly body: Uint8Array;
  readonly headers: Readonly<Record<string, string>>;
}

export interface Dashboard {
  /** The answer for a path (`/` or `/_dashboard/<name>`), or null when it is not the dashboard's. */
  answer(method: string, pathname: string, ifNoneMatch: string | null): Answer | null;
}

/** Reads every file of `folder` (not its sub-folders) whose type is known; others are never served. Adds `source-types.json`. */
export async function loadDashboard(folder = DASHBOARD_FOLDER): Promise<Dashboard> {
  const files = new Map<string, StaticFile>();
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const type = CONTENT_TYPES[extname(entry.name)];
    if (!entry.isFile() || type === undefined) continue;
    files.set(entry.name, staticFile(new Uint8Array(await readFile(join(folder, entry.name))), type));
  }
  files.set(SOURCE_TYPES_FILE, staticFile(new TextEncoder().encode(JSON.stringify(dashboardForms())), JSON_CONTENT_TYPE));
  for (const [name, path] of Object.entries(PACKAGE_FILES)) {
    // A package left out of the install (a trimmed deployment): the page does without (usage.js shows tables).
    const body = await readFile(fileURLToPath(new URL(`../../node_modules/${path}`, import.meta.url))).catch(() => null);
    if (body !== null) files.set(name, staticFile(new Uint8Array(body), CONTENT_TYPES[extname(name)]));
  }
  return dashboardOf(files);
}

/**
 * Files of npm packages the page uses, served from node_modules under fixed names (no build
 * step, nothing from elsewhere): `/_dashboard/vendor/uplot.js` is uPlot's ES module (the usage
 * chart, usage.js), `vendor/uplot.css` its style sheet. Only these names: a request never names
 * a path in node_modules. Read once at start, with the same headers as the page's own files.
 */
export const PACKAGE_FILES: Readonly<Record<string, string>> = {
  'vendor/uplot.js': 'uplot/dist/uPlot.esm.js',
  'vendor/uplot.css': 'uplot/dist/uPlot.min.css',
};

/**
 * The file made at start, not read from the folder: `[{"type":"file","title":"New connection
 * from a file","fields":[...]}]`. JSON fetched by app.js rather than a module it imports, so the
 * folder's modules import only files that exist (deno check follows them).
 */
export const SOURCE_TYPES_FILE = 'source-types.json';

/** `body` as a file revalidated by its hash (`ETag`), under `policy` (the dashboard's CSP unless another page's). */
export function staticFile(body: Uint8Array, type: string, policy = CONTENT_SECURITY_POLICY): StaticFile {
  const tag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  return {
    body,
    headers: {
      'Content-Type': type, 'Cache-Control': 'no-cache', ETag: tag,
      'Content-Security-Policy': policy, 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer', 'X-Frame-Options': 'DENY',
    },
  };
}

function dashboardOf(files: ReadonlyMap<string, StaticFile>): Dashboard {
  return {
    answer(method, pathname, ifNoneMatch) {
      let name: string;
      if (pathname === '/') name = 'index.html';
      else if (pathname.startsWith(DASHBOARD_PREFIX)) name = pathname.slice(DASHBOARD_PREFIX.length);
      else return null;
      // The raw path is compared as it came: `%2e%2e` or `a/b` simply names no file.
      const file = files.get(name);
      if (file === undefined || name === '') return errorAnswer(apiError('not_found', `No dashboard file at ${pathname.slice(0, 200)}.`));
      if (method !== 'GET' && method !== 'HEAD') {
        return errorAnswer(apiError('method_not_allowed', `${method} is not allowed on ${pathname.slice(0, 200)}; use GET.`, { Allow: 'GET, HEAD' }));
      }
      if (ifNoneMatch !== null && noneMatchHits(ifNoneMatch, file.headers.ETag)) return { status: 304, headers: { ...file.headers }, body: '' };
      return { status: 200, headers: { ...file.headers }, body: file.body };
    },
  };
}
