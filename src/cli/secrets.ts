const REDACTED = '[redacted]';
/** Shorter values are not scrubbed: replacing them would mangle ordinary text. */
const MIN_SECRET_LENGTH = 4;

/**
 * The secrets of one CLI invocation (the API key, a database password in its plain and URL-encoded
 * forms) and the one rule that scrubs them: the logger and the top-level exit reporter both use it.
 * `main` makes one per invocation and the resources fill it as the config is read.
 */
export class SecretRedactor {
  readonly #values = new Set<string>();

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
    return out;
  }
}
