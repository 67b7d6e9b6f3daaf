// Documentation served by the server itself, for anyone (admin API on or off):
//   GET /_docs/crm              -> Swagger UI for the connection `crm` (its /sheets/crm/openapi.json;
//                                  a keyed connection asks for an X-Api-Key first, then "Authorize" has it)
//   GET /_docs/assets/<name>    -> the page's files: swagger-ui-bundle.js and swagger-ui.css from
//                                  node_modules/swagger-ui-dist (only those two), docs.js, docs.css
//   GET /_docs/project/         -> an index of the project's docs (README.md and docs/*.md)
//   GET /_docs/project/api.md   -> one of them, as text/plain
//   GET /favicon.ico            -> the icon (browsers ask for it on every page, the JSON ones too)
// Files are read on first use (Swagger UI's bundle is 1.7 MB), kept in memory, and answered only
// when their name is in the table (no path reaches another file). The Swagger UI page has its own
// Content-Security-Policy: scripts and styles from this origin only, requests to this origin only.
import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiError } from '../../lib/errors.ts';
import { noneMatchHits } from '../../lib/version.ts';
import { staticFile as dashboardFile, type StaticFile } from './dashboard-files.ts';
import { errorAnswer, type Answer } from './respond.ts';

export const DOCS_PREFIX = '/_docs/';
const DOCS_PAGE_FOLDER = fileURLToPath(new URL('../api-docs/', import.meta.url));
const DASHBOARD_FOLDER = fileURLToPath(new URL('../dashboard/', import.meta.url));
const REPOSITORY = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Swagger UI's bundle sets styles through the DOM (allowed by style-src 'self'), draws its icons
 * as inline SVG and shows the schema's examples; it loads nothing from elsewhere once
 * `validatorUrl` is off (docs.js). Only this origin's openapi.json and "Try it out" are fetched.
 */
export const DOCS_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";


/** A connection id as the admin API allows it: `/_docs/crm`. */
const CONNECTION_ID = /^[A-Za-z0-9_-]{1,100}$/;
/** A project doc's name: `api.md`, `README.md`. */
const DOC_NAME = /^[A-Za-z0-9_-]+\.md$/;

export interface ApiDocs {
  /** The answer for `/favicon.ico` or a path under `/_docs/`, or null when the path is not one of these. */
  answer(method: string, pathname: string, ifNoneMatch: string | null): Promise<Answer | null>;
}

/** Where swagger-ui-dist is installed (a runtime dependency). */
function swaggerFolder(): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

export function createApiDocs(): ApiDocs {
  let files: Promise<Map<string, StaticFile>> | undefined;
  const load = () => (files ??= loadFiles().catch((error: unknown) => {
    files = undefined; // tried again on the next request
    throw error;
  }));
  return {
    async answer(method, pathname, ifNoneMatch) {
      let name: string;
      if (pathname === '/favicon.ico') name = 'favicon.ico';
      else if (!pathname.startsWith(DOCS_PREFIX)) return null;
      else {
        const rest = pathname.slice(DOCS_PREFIX.length);
        if (CONNECTION_ID.test(rest)) name = 'page';
        else if (rest === 'project/' || rest === 'project') name = 'project/';
        else name = rest;
      }
      const file = (await load()).get(name);
      if (file === undefined) return errorAnswer(apiError('not_found', `No document at ${pathname.slice(0, 200)}: the API docs of a connection are at /_docs/{id}, the project's at /_docs/project/.`));
      if (method !== 'GET' && method !== 'HEAD') {
        return errorAnswer(apiError('method_not_allowed', `${method} is not allowed on ${pathname.slice(0, 200)}; use GET.`, { Allow: 'GET, HEAD' }));
      }
      if (ifNoneMatch !== null && noneMatchHits(ifNoneMatch, file.headers.ETag)) return { status: 304, headers: { ...file.headers }, body: '' };
      return { status: 200, headers: { ...file.headers }, body: file.body };
    },
  };
}

async function loadFiles(): Promise<Map<string, StaticFile>> {
  const files = new Map<string, StaticFile>();
  const swagger = swaggerFolder();
  const read = async (path: string) => new Uint8Array(await readFile(path));
  files.set('page', staticFile(await read(join(DOCS_PAGE_FOLDER, 'index.html')), 'text/html; charset=utf-8'));
  files.set('assets/docs.js', staticFile(await read(join(DOCS_PAGE_FOLDER, 'docs.js')), 'text/javascript; charset=utf-8'));
  files.set('assets/docs.css', staticFile(await read(join(DOCS_PAGE_FOLDER, 'docs.css')), 'text/css; charset=utf-8'));
  files.set('assets/swagger-ui-bundle.js', staticFile(withoutSourceMap(await read(join(swagger, 'swagger-ui-bundle.js'))), 'text/javascript; charset=utf-8'));
  files.set('assets/swagger-ui.css', staticFile(withoutSourceMap(await read(join(swagger, 'swagger-ui.css'))), 'text/css; charset=utf-8'));
  files.set('assets/favicon.svg', staticFile(await read(join(DASHBOARD_FOLDER, 'favicon.svg')), 'image/svg+xml'));
  files.set('favicon.ico', staticFile(await read(join(DASHBOARD_FOLDER, 'favicon.ico')), 'image/x-icon'));
  const docs = await projectDocs();
  for (const [name, text] of docs) files.set(`project/${name}`, staticFile(new TextEncoder().encode(text), 'text/plain; charset=utf-8'));
  files.set('project/', staticFile(new TextEncoder().encode(projectIndex(docs)), 'text/html; charset=utf-8'));
  return files;
}

/** README.md and docs/*.md, as they are in the installed copy (none when it ships without them). */
async function projectDocs(): Promise<Map<string, string>> {
  const docs = new Map<string, string>();
  const readText = async (path: string) => {
    try {
      return await readFile(path, 'utf8');
    } catch {
      return undefined;
    }
  };
  const readme = await readText(join(REPOSITORY, 'README.md'));
  if (readme !== undefined) docs.set('README.md', readme);
  let names: string[] = [];
  try {
    names = (await readdir(join(REPOSITORY, 'docs'), { withFileTypes: true })).filter((entry) => entry.isFile() && DOC_NAME.test(entry.name)).map((entry) => entry.name).sort();
  } catch {
    // no docs folder in this copy
  }
  for (const name of names) {
    const text = await readText(join(REPOSITORY, 'docs', name));
    if (text !== undefined && name !== 'README.md') docs.set(name, text);
  }
  return docs;
}

/** A plain page of links, each named by the document's first heading (escaped: it is text). */
function projectIndex(docs: ReadonlyMap<string, string>): string {
  const items = [...docs].map(([name, text]) => {
    const title = /^#\s+(.+)$/m.exec(text)?.[1] ?? name;
    return `<li><a href="/_docs/project/${name}">${escapeHtml(name)}</a>: ${escapeHtml(title)}</li>`;
  });
  return '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
    '<title>sheetrest documentation</title><link rel="icon" href="/_docs/assets/favicon.svg" type="image/svg+xml"><link rel="stylesheet" href="/_docs/assets/docs.css"></head>' +
    `<body class="project"><main><h1>sheetrest documentation</h1><p>The documents of this server's own version, as plain text.</p><ul>${items.join('')}</ul></main></body></html>\n`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** The `//# sourceMappingURL=` line points at a file not served: devtools would ask for it and get 404. */
function withoutSourceMap(body: Uint8Array): Uint8Array {
  // latin1: one character per byte, so lengths in characters are lengths in bytes.
  const tail = new TextDecoder('latin1').decode(body.subarray(Math.max(0, body.length - 200)));
  const at = tail.search(/\n?(\/\/# sourceMappingURL=|\/\*# sourceMappingURL=)[^\n]*\s*$/);
  return at === -1 ? body : body.subarray(0, body.length - (tail.length - at));
}

function staticFile(body: Uint8Array, type: string): StaticFile {
  return dashboardFile(body, type, DOCS_CONTENT_SECURITY_POLICY);
}
