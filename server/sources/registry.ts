// Every source type the server knows, one line each: `{"type": "google", ...}` in a connection
// is checked, resolved, opened and offered by the descriptor whose `type` is "google". Config
// (schema.ts, config.ts), connections.ts, the admin API and the dashboard read this list; a new
// type is its folder with a descriptor.ts (source-type.ts says what one holds) plus a line here.
import type * as v from 'valibot';
import { fileSourceType, type FileSourceConfig } from './file/descriptor.ts';
import { googleSourceType, type GoogleSourceConfig, type ParsedGoogleSource } from './google/descriptor.ts';
import type { DashboardForm, SourceType } from './source-type.ts';

export type { FileSourceConfig, GoogleSourceConfig, ParsedGoogleSource };
export type { GoogleOAuthConfig } from './google/descriptor.ts';
export type { OpenContext, ReadSecret, ServerFile } from './source-type.ts';

export const SOURCE_TYPES = [
  fileSourceType,
  googleSourceType,
] as const;

type AnySourceType = (typeof SOURCE_TYPES)[number];

/** A connection's `source` as checked: `{ type: 'file', path: 'book.xlsx' }`, paths as written. */
export type ParsedSource = v.InferOutput<AnySourceType['schema']>;

/** A connection's `source` as the server uses it: paths absolute, secrets read. */
export type SourceConfig = Parameters<AnySourceType['open']>[0];

/**
 * The descriptor of `source`'s type. Its methods take that source: the type is chosen by
 * `source.type`, which the schema already held to one of SOURCE_TYPES.
 */
export function sourceTypeOf(source: ParsedSource | SourceConfig): SourceType<ParsedSource, SourceConfig> {
  const found = SOURCE_TYPES.find((each) => each.type === source.type);
  if (found === undefined) throw new Error(`no source type "${source.type}"`);
  // Each descriptor takes only its own sources; this one was chosen by the source's type.
  return found as unknown as SourceType<ParsedSource, SourceConfig>;
}

/** The dashboard's forms for a new connection, one per type that has one: `[{ type: 'file', title: 'New connection from a file', fields: [...] }]`. */
export function dashboardForms(): ({ readonly type: string } & DashboardForm)[] {
  return SOURCE_TYPES.flatMap((each) => ('dashboardForm' in each ? [{ type: each.type, ...each.dashboardForm }] : []));
}
