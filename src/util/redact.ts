/**
 * The one rule that keeps secrets (the API key, a database password in its plain and URL-encoded
 * forms, http.authToken, any bearer token) out of every log line, error, page and file. The
 * logger, the exit reporter, the API client's errors and the status page all scrub through it, so
 * a secret looks the same wherever it was hidden.
 */

/** What every scrubbed secret becomes. */
export const REDACTED = '[redacted]';
/** Shorter values are not scrubbed: replacing them would mangle ordinary text. */
const MIN_SECRET_LENGTH = 4;
/** A server or proxy may echo a bearer header for some other key (e.g. rotated): hide it too. */
const BEARER = /(Bearer\s+)[^\s"',;]+/gi;

/**
 * The secrets one process knows. `main` makes one per CLI invocation and the resources fill it as
 * the config is read; the API client makes its own for its key.
 */
export class SecretRedactor {
  readonly #values = new Set<string>();

  constructor(...values: (string | null | undefined)[]) {
    this.add(...values);
  }

  add(...values: (string | null | undefined)[]): void {
    for (const value of values) if (value && value.length >= MIN_SECRET_LENGTH) this.#values.add(value);
  }

  /** The values, longest first, so a secret that contains another is replaced whole. */
  get values(): readonly string[] {
    return [...this.#values].sort((a, b) => b.length - a.length);
  }

  redact(text: string): string {
    let out = text;
    for (const secret of this.values) out = out.split(secret).join(REDACTED);
    return out.replace(BEARER, `$1${REDACTED}`);
  }
}

/**
 * A plain copy of a thrown value with every string redacted. undici errors can hold the request
 * (headers included) on their own properties, so the original object is never kept as a cause.
 */
export function sanitizeCause(value: unknown, redactor: SecretRedactor, depth = 0): Error {
  if (!(value instanceof Error)) return new Error(redactor.redact(String(value)));
  const copy = new Error(redactor.redact(value.message));
  copy.name = value.name;
  copy.stack = value.stack === undefined ? undefined : redactor.redact(value.stack);
  const code = (value as { code?: unknown }).code;
  if (typeof code === 'string') (copy as Error & { code?: string }).code = code;
  if (value.cause !== undefined && depth < 5) copy.cause = sanitizeCause(value.cause, redactor, depth + 1);
  return copy;
}

/** Redacts every string inside a parsed JSON value (upstream error bodies, the status page). */
export function redactJson(value: unknown, redactor: SecretRedactor): unknown {
  if (typeof value === 'string') return redactor.redact(value);
  if (Array.isArray(value)) return value.map((v) => redactJson(v, redactor));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[redactor.redact(k)] = redactJson(v, redactor);
    return out;
  }
  return value;
}
