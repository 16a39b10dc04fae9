/**
 * The API key must never leave the process through a log line, an error message, an error's JSON
 * or a cause chain. Everything the client puts into an error goes through one of these.
 */

export const REDACTED = '[REDACTED]';

export type Redactor = (text: string) => string;

export function makeRedactor(secret: string): Redactor {
  return (text: string) => {
    let out = text;
    if (secret.length > 0) out = out.split(secret).join(REDACTED);
    // A server or proxy may echo a bearer header for some other key (e.g. rotated): hide it too.
    return out.replace(/(Bearer\s+)[^\s"',;]+/gi, `$1${REDACTED}`);
  };
}

/**
 * A plain copy of a thrown value with every string redacted. undici errors can hold the request
 * (headers included) on their own properties, so the original object is never kept as a cause.
 */
export function sanitizeCause(value: unknown, redact: Redactor, depth = 0): Error {
  if (!(value instanceof Error)) return new Error(redact(String(value)));
  const copy = new Error(redact(value.message));
  copy.name = value.name;
  copy.stack = value.stack === undefined ? undefined : redact(value.stack);
  const code = (value as { code?: unknown }).code;
  if (typeof code === 'string') (copy as Error & { code?: string }).code = code;
  if (value.cause !== undefined && depth < 5) copy.cause = sanitizeCause(value.cause, redact, depth + 1);
  return copy;
}

/** Redacts every string inside a parsed JSON value (for upstream error bodies). */
export function redactJson(value: unknown, redact: Redactor): unknown {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map((v) => redactJson(v, redact));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[redact(k)] = redactJson(v, redact);
    return out;
  }
  return value;
}
