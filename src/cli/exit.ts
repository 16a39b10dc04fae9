import { inspect } from 'node:util';
import { EXIT, ExitError, WsmirrorError } from '../util/errors.js';
import type { SecretRedactor } from '../util/redact.js';

/**
 * The one place where an error becomes an exit code and a sentence on stderr. Library code throws
 * typed errors with stable codes; this table decides what each means for the command line.
 */
const EXIT_BY_CODE: Record<string, number> = {
  CONFIG_INVALID: EXIT.usage,
  LOCK_HELD: EXIT.usage,
  NOT_BACKFILLED: EXIT.usage,
  DIALECT_UNSUPPORTED: EXIT.usage,
  OPEN_FAILED: EXIT.usage,
  MIGRATION_PENDING: EXIT.usage,
  NO_MIRROR: EXIT.usage,
  // baseUrl answers 404, a redirect or HTML: it points at something other than the workspace API.
  NOT_WORKSPACE_API: EXIT.usage,
  PORT_IN_USE: EXIT.usage,
  SCHEMA_NEWER: EXIT.usage,
  // A queued writer request the writer could not take: its process is older than the asking one.
  NO_REQUEST_QUEUE: EXIT.usage,
  UNKNOWN_REQUEST: EXIT.usage,
  USAGE: EXIT.usage,
  CLIENT_CLOSED: EXIT.unexpected,
  AUTH_REJECTED: EXIT.authRejected,
  AUTH_REJECTED_ON_RECORD: EXIT.authRejected,
  UPSTREAM_UNAVAILABLE: EXIT.upstreamUnavailable,
  RATE_LIMITED: EXIT.upstreamUnavailable,
  // The upstream answered, but unusably: the cycle fails and the next one retries (docs/sync.md).
  INVALID_RESPONSE: EXIT.upstreamUnavailable,
  RESPONSE_TOO_LARGE: EXIT.upstreamUnavailable,
  PAGING_RUNAWAY: EXIT.upstreamUnavailable,
  CYCLE_STALLED: EXIT.upstreamUnavailable,
  // The workspace stamps its events with a clock far ahead of ours: fix a clock, then retry.
  UPSTREAM_CLOCK_AHEAD: EXIT.upstreamUnavailable,
  // A list call refused (4xx), a cursor rejected again after three restarts, a 404 or an invalid
  // body where a record must exist: the upstream is unusable for now, not wsmirror's input.
  UPSTREAM_REJECTED: EXIT.upstreamUnavailable,
  CURSOR_REJECTED: EXIT.upstreamUnavailable,
  // A backfill list lost copied records in every pass of a run (src/sync/list-passes.ts): run it again.
  LIST_UNSETTLED: EXIT.upstreamUnavailable,
  NOT_FOUND: EXIT.upstreamUnavailable,
  INVALID_RECORD: EXIT.upstreamUnavailable,
  DRIFT: EXIT.drift,
};

export function toExitError(err: unknown): ExitError {
  if (err instanceof ExitError) return err;
  if (err instanceof WsmirrorError) {
    const exitCode = EXIT_BY_CODE[err.code] ?? EXIT.unexpected;
    return new ExitError(exitCode, err.message, { cause: err, code: err.code });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new ExitError(
    EXIT.unexpected,
    `Unexpected failure: ${message}. This is a bug or an environment problem; rerun with --log-level debug and report it.`,
    { cause: err },
  );
}

/** One plain sentence (or a short list for config problems) on stderr, never the API key. */
export function reportExit(err: ExitError, redactor: SecretRedactor): void {
  // Messages may quote upstream text; the sentence stays a sentence, not a dump.
  const text = err.message.length > 4096 ? `${err.message.slice(0, 4096)}…(cut)` : err.message;
  process.stderr.write(`wsmirror: ${redactor.redact(text)}\n`);
  if (process.env.WSMIRROR_DEBUG_ERRORS === '1' && err.cause) {
    // inspect() shows a cause that is not an Error (a plain object, say) instead of `[object Object]`.
    const detail = err.cause instanceof Error ? (err.cause.stack ?? String(err.cause)) : inspect(err.cause);
    process.stderr.write(`${redactor.redact(detail)}\n`);
  }
}
