// Every error code of the HTTP contract with its status, and the one error value the engine
// answers with: `{"error": "unknown_column", "message": "..."}`. The codes after the contract's
// own (marked below) are the shell's additions, listed in docs/decisions.md.

export const ERRORS = {
  invalid_json: 400,
  invalid_body: 400,
  invalid_parameter: 400,
  unknown_column: 400,
  invalid_operator: 400,
  // Additions to the contract's catalogue (docs/decisions.md, "Errors the contract does not name"):
  /** A Host header that is not a host[:port]. */
  invalid_host: 400,
  not_authenticated: 401,
  authentication_failed: 401,
  throttle: 402,
  write_error: 403,
  permission_denied: 403,
  /** A write from a browser origin that the connection's CORS list does not name. */
  origin_not_allowed: 403,
  /** A Host that is not in the allowed hosts (DNS rebinding). */
  host_not_allowed: 403,
  not_found: 404,
  tab_not_found: 404,
  row_not_found: 404,
  method_not_allowed: 405,
  /**
   * A write that clashes with what the tab holds (version 2 of the contract): an upsert's key or a
   * row id that two rows hold, an id already taken, a tab missing its configured id column. Also
   * an admin API change that clashes with what exists: a connection id or a file already served,
   * a key already rotated.
   */
  conflict: 409,
  /** The body did not arrive within the request timeout. */
  request_timeout: 408,
  /** An `If-Match` that no longer matches the tab (or the row) a write addresses: nothing written. */
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  /** An `Idempotency-Key` seen before with another request (method, path or body). */
  idempotency_key_reused: 422,
  rate_limited: 429,
  /** The request line and headers are longer than the server reads (16 KiB by default). */
  headers_too_large: 431,
  internal_error: 500,
  upstream_error: 502,
  upstream_unavailable: 503,
  upstream_timeout: 504,
  /** The disk (or the state folder's file system) is full: nothing was written. */
  insufficient_storage: 507,
} as const;

export type ErrorCode = keyof typeof ERRORS;

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERRORS, code);
}

/** A refusal the client can act on. Returned as a value by the engine, thrown only by the shell. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Headers the error carries (`Allow` on 405, `Retry-After` on 429 and 503). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = ERRORS[code];
    this.headers = headers;
  }

  toJSON(): { error: ErrorCode; message: string } {
    return { error: this.code, message: this.message };
  }
}

export function apiError(code: ErrorCode, message: string, headers?: Record<string, string>): ApiError {
  return new ApiError(code, message, headers);
}

export function isApiError(value: unknown): value is ApiError {
  return value instanceof ApiError;
}
