import { WsmirrorError } from '../util/errors.js';
import type { InvalidItem } from './types.js';

/** What every upstream error carries besides its code and message. */
export interface ApiErrorDetails {
  /** HTTP status of the last attempt; null when no response arrived (network error, timeout). */
  status?: number | null;
  method?: string;
  /** Request path and query as sent. The API key is a header, so nothing secret is in here. */
  path?: string;
  /** Upstream error body: parsed JSON when it was JSON, else text truncated to a few KB. */
  body?: unknown;
  /** Attempts made, retries included. */
  attempts?: number;
  cause?: unknown;
}

/**
 * Base of every error the API client raises. `code` is stable; `message` says what to do.
 * Details are sanitised by the client before they get here (see src/util/redact.ts).
 */
export class ApiError extends WsmirrorError {
  readonly status: number | null;
  readonly method: string;
  readonly path: string;
  readonly body: unknown;
  readonly attempts: number;

  constructor(code: string, message: string, details: ApiErrorDetails = {}) {
    super(code, message, details.cause === undefined ? undefined : { cause: details.cause });
    this.status = details.status ?? null;
    this.method = details.method ?? 'GET';
    this.path = details.path ?? '';
    this.body = details.body;
    this.attempts = details.attempts ?? 1;
  }

  /** Structured form for pino and JSON output; the cause is summarised, never the raw object. */
  toJSON(): Record<string, unknown> {
    const cause =
      this.cause instanceof Error
        ? { name: this.cause.name, message: this.cause.message, code: (this.cause as { code?: unknown }).code }
        : undefined;
    return {
      name: this.name,
      code: this.code,
      message: this.message,
      status: this.status,
      method: this.method,
      path: this.path,
      attempts: this.attempts,
      body: this.body,
      ...(cause === undefined ? {} : { cause }),
    };
  }
}

/** 401/403: never retried; the CLI maps it to exit 3. */
export class AuthRejectedError extends ApiError {
  constructor(details: ApiErrorDetails) {
    super(
      'AUTH_REJECTED',
      `The workspace rejected the API key (${details.status ?? 401}) on ${details.method ?? 'GET'} ${details.path ?? ''}. Check WSMIRROR_API_KEY (or apiKey in the config) and that the key is still active.`,
      details,
    );
  }
}

/** 404 on a single-record read: the record is gone (the sync engine marks it deleted). */
export class NotFoundError extends ApiError {
  constructor(details: ApiErrorDetails) {
    super('NOT_FOUND', `The workspace has no record at ${details.path ?? ''} (404). It was probably deleted upstream.`, details);
  }
}

/** 429 on every attempt until the retry budget ran out. */
export class RateLimitedError extends ApiError {
  constructor(details: ApiErrorDetails) {
    super(
      'RATE_LIMITED',
      `The workspace kept answering 429 Too Many Requests to ${details.method ?? 'GET'} ${details.path ?? ''} after ${details.attempts ?? 1} attempts. Lower maxRequestsPerSecond or concurrency, or raise retry.maxAttempts, then run again.`,
      details,
    );
  }
}

/** 5xx, 408, network errors or timeouts on every attempt until the retry budget ran out. */
export class UpstreamUnavailableError extends ApiError {
  constructor(reason: string, details: ApiErrorDetails) {
    super(
      'UPSTREAM_UNAVAILABLE',
      `The workspace is unavailable: ${reason} on ${details.method ?? 'GET'} ${details.path ?? ''} after ${details.attempts ?? 1} attempts. Check baseUrl and the network, or try again later.`,
      details,
    );
  }
}

/** 400/404/410/422 on a request that carried a cursor: docs/design.md §4.2 restarts the window from S. */
export class CursorRejectedError extends ApiError {
  constructor(details: ApiErrorDetails) {
    super(
      'CURSOR_REJECTED',
      `The workspace rejected the page cursor (${details.status ?? '?'}) on ${details.path ?? ''}; it has probably expired. The window restarts from its start.`,
      details,
    );
  }
}

/** Any other 4xx: a request wsmirror should not have made; retrying cannot help. */
export class UpstreamRejectedError extends ApiError {
  constructor(details: ApiErrorDetails) {
    super(
      'UPSTREAM_REJECTED',
      `The workspace refused ${details.method ?? 'GET'} ${details.path ?? ''} with ${details.status ?? '?'}. This is likely a wsmirror bug or an unsupported server; report it with this message.`,
      details,
    );
  }
}

/** A 2xx whose body is not JSON or not the documented envelope: the whole response is unusable. */
export class InvalidResponseError extends ApiError {
  constructor(what: string, details: ApiErrorDetails) {
    super(
      'INVALID_RESPONSE',
      `The workspace sent an unusable response to ${details.method ?? 'GET'} ${details.path ?? ''}: ${what}. Check that baseUrl points at the workspace API (not a proxy or login page).`,
      details,
    );
  }
}

/** A single-record read whose body failed validation; the caller quarantines `raw`. */
export class InvalidRecordError extends ApiError {
  readonly entityType: InvalidItem['entityType'];
  readonly entityId: string | null;
  readonly reason: string;
  readonly raw: unknown;

  constructor(item: InvalidItem, details: ApiErrorDetails) {
    super(
      'INVALID_RECORD',
      `The workspace sent an invalid ${item.entityType} ${item.id ?? '(no id)'}: ${item.reason}. It is quarantined and retried on its next change.`,
      details,
    );
    this.entityType = item.entityType;
    this.entityId = item.id;
    this.reason = item.reason;
    this.raw = item.raw;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), entityType: this.entityType, entityId: this.entityId, reason: this.reason };
  }
}

/** A 2xx whose body is longer than maxResponseBytes: refused unread (docs/sync.md, "Hostile upstream"). */
export class ResponseTooLargeError extends ApiError {
  readonly limit: number;

  constructor(limit: number, details: ApiErrorDetails) {
    super(
      'RESPONSE_TOO_LARGE',
      `The workspace sent a response larger than maxResponseBytes (${limit} bytes) to ${details.method ?? 'GET'} ${details.path ?? ''}; it was refused unread. Raise maxResponseBytes if such responses are expected.`,
      details,
    );
    this.limit = limit;
  }
}

/**
 * The first list call answered 404, a redirect or HTML: baseUrl points at something that is not
 * the workspace API (a web page, a login proxy, a wrong path). A configuration problem, exit 2.
 */
export class NotWorkspaceApiError extends ApiError {
  constructor(what: string, details: ApiErrorDetails) {
    super(
      'NOT_WORKSPACE_API',
      `baseUrl does not point at the workspace API: ${details.method ?? 'GET'} ${details.path ?? ''} ${what}. Check baseUrl (WSMIRROR_BASE_URL): it must be the workspace address that serves /api/v1/events.`,
      details,
    );
  }
}

/** A listing whose cursors repeat or whose pages never end (docs/sync.md, "Hostile upstream"). */
export class PagingError extends ApiError {
  constructor(what: string, details: ApiErrorDetails) {
    super(
      'PAGING_RUNAWAY',
      `The workspace's paging of ${details.path ?? 'a list'} does not end: ${what}. The window was reset and the next cycle starts it afresh; if this repeats, the upstream's cursors are broken.`,
      details,
    );
  }
}
