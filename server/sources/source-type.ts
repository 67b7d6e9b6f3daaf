// What the server knows of one kind of source, in one place: `{"type": "file", "path":
// "book.xlsx"}` is checked by the file type's schema, has its path made absolute against the
// config file's folder, opens as a FileSource, and is made in the dashboard from a form asking
// for the workbook's path (server/sources/file/descriptor.ts). registry.ts lists every type;
// config, connections, the admin API and the dashboard read that list, never a type by name.
import type * as v from 'valibot';
import type { ParsedSecret } from '../config/fields.ts';
import type { Secret } from '../config/secret.ts';
import type { Logger } from '../log.ts';
import type { SharedBudget } from './google/budget.ts';
import type { SpreadsheetCoordination } from './google/shared-spreadsheet.ts';
import type { EventSink, ReceiptSink, Source } from './source.ts';

/** Reads a `{ "env": "NAME" }` secret (or takes a written one); `field` names it in the error. */
export type ReadSecret = (value: ParsedSecret, field: string) => Secret;

/** What opening a source may use besides its own settings (server/connections.ts). */
export interface OpenContext {
  /** The connection's `readOnly`, or every connection's when the state folder's disk was full at start. */
  readonly readOnly: boolean;
  /** The state folder: journals and their locks. */
  readonly stateDir: string;
  readonly log: Logger;
  /** Where the Idempotency-Keys journaled with writes go, when they are kept in the state folder. */
  readonly receipts: ReceiptSink | undefined;
  /** Where the change-feed events journaled with writes go: the connection's webhook outbox in the state folder (none with Redis). */
  readonly events?: EventSink;
  /** Several instances sharing state through Redis (server/shared-store.ts); absent: this one alone. */
  readonly shared: SharedWithSources | undefined;
}

/**
 * What a source may use of the state several instances share through Redis: the part of
 * server/shared-store.ts's SharedStore that sources need (Google's budget and its spreadsheets'
 * versions and leases), declared here so that sources import nothing above them.
 */
export interface SharedWithSources {
  readonly budget: SharedBudget;
  spreadsheet(key: string, log: (message: string) => void): SpreadsheetCoordination;
}

/** A file on this server that a source reads, for the admin API to hold inside admin.fileRoot. */
export interface ServerFile {
  readonly path: string;
  /** As an answer names it: `source.path`. */
  readonly field: string;
  /** Why no file of that name can be opened, before looking at it (an unknown extension); null: none. */
  readonly problem: string | null;
}

/** The dashboard's form for a new connection of this type (server/dashboard/app.js). */
export interface DashboardForm {
  /** `New connection from a file` */
  readonly title: string;
  /** The source's fields the form asks for, each a text input whose trimmed value is sent as is. */
  readonly fields: readonly { readonly name: string; readonly label: string; readonly placeholder: string }[];
}

/**
 * One source type. `TParsed` is its object as sheetrest.json (or an admin request) holds it
 * after checking; `TConfig` as the server uses it (paths absolute, secrets read).
 */
export interface SourceType<TParsed extends { readonly type: string }, TConfig extends { readonly type: string }> {
  /** The `"type"` that selects it. */
  readonly type: TParsed['type'];
  /** Its object in sheetrest.json: a strict valibot object (server/config/fields.ts) with `type` as a literal. */
  readonly schema: v.GenericSchema<unknown, TParsed>;
  /** Every field name its schema knows, nested ones too, to suggest `spreadsheetId` for `spreadsheetid`. */
  readonly fieldNames: readonly string[];
  /** Its fields that hold a secret, nested ones too: the admin API shows their text as "[secret]" (server/admin/views.ts). */
  readonly secretFields: readonly string[];
  /** Its relative paths made absolute against `base` (the config file's folder, or admin.fileRoot); secrets as written. */
  absolutePaths(source: TParsed, base: string): TParsed;
  /** As the server uses it: paths absolute against `base`, secrets read; `field` (`connections[0].source`) names them in errors. */
  resolve(source: TParsed, base: string, readSecret: ReadSecret, field: string): TConfig;
  /**
   * The file on this server it serves and writes, which no two writing connections may share
   * (they would overwrite each other's writes), with its field (`path`); undefined: none.
   */
  servedFile(source: TParsed | TConfig): { readonly path: string; readonly field: string } | undefined;
  /**
   * Whether several instances serve one source of this type at once (a spreadsheet in the
   * cloud, unlike a file, which one instance serves), so that with Redis its connections keep
   * their Idempotency-Keys there rather than in the state folder.
   */
  readonly sharedByInstances: boolean;
  /** Opens it; imports its module only now, so a server without this type never loads it. */
  open(source: TConfig, context: OpenContext): Promise<Source>;

  // ---- what the admin API holds it to (server/admin/admission.ts) ----------------------------

  /** The URLs it would send requests (and credentials) to, each with its field: `[["source.rootUrl", "https://..."]]`. */
  endpoints(source: TParsed, field: string): readonly (readonly [string, string | undefined])[];
  /**
   * Why it would use the server's own credentials, worded for the refusal when
   * admin.allowServerCredentials is off; null when it carries its own (or needs none).
   */
  serverCredentials(source: TParsed): string | null;
  /** The server file it reads (a workbook, a key file), held to admin.fileRoot; null: none. */
  serverFile(source: TParsed, field: string): ServerFile | null;

  /** The dashboard's form for a new connection of this type; absent: the dashboard makes none (Google has its own sign-in flow). */
  readonly dashboardForm?: DashboardForm;
}
