// Errors in Google's JSON shape, for every refusal the emulator makes:
// `GET /v4/spreadsheets/nope` -> 404 {"error": {"code": 404, "message": "Requested entity was not found.", "status": "NOT_FOUND"}}.

/** HTTP status -> google.rpc.Code name, as Google's JSON error bodies spell it. */
export const STATUS_NAMES: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'NOT_IMPLEMENTED',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** The message Google sends with each status when nothing more specific applies. */
const DEFAULT_MESSAGES: Readonly<Record<number, string>> = {
  400: 'Request contains an invalid argument.',
  401: 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
  403: 'The caller does not have permission',
  404: 'Requested entity was not found.',
  429: "Quota exceeded for quota metric 'Requests' and limit 'Requests per minute' of service 'sheets.googleapis.com'.",
  500: 'Internal error encountered.',
  502: 'Bad Gateway',
  503: 'The service is currently unavailable.',
  504: 'The request timed out.',
};

/** A refusal: thrown inside handlers, turned into Google's error body by the router. */
export class GoogleError extends Error {
  readonly code: number;
  readonly details: readonly unknown[] | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: number, message?: string, options: { details?: readonly unknown[]; headers?: Record<string, string> } = {}) {
    super(message ?? DEFAULT_MESSAGES[code] ?? `HTTP ${code}`);
    this.code = code;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }

  get status(): string {
    return STATUS_NAMES[this.code] ?? (this.code >= 500 ? 'INTERNAL' : 'UNKNOWN');
  }

  toJSON(): { error: { code: number; message: string; status: string; details?: readonly unknown[] } } {
    const error = { code: this.code, message: this.message, status: this.status };
    return { error: this.details === undefined ? error : { ...error, details: this.details } };
  }
}

export const badRequest = (message: string): GoogleError => new GoogleError(400, message);
export const notFound = (): GoogleError => new GoogleError(404);
export const permissionDenied = (): GoogleError => new GoogleError(403);
