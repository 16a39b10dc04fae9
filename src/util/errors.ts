/**
 * Base of every error wsmirror raises on purpose. `code` is stable (documented, safe to match on);
 * `message` tells the user what happened and what to do.
 */
export class WsmirrorError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/**
 * An expected failure of a CLI command. Thrown anywhere below the CLI and turned into a one-line
 * message on stderr plus `process.exitCode` in exactly one place (src/cli/main.ts).
 */
export class ExitError extends WsmirrorError {
  readonly exitCode: number;

  constructor(exitCode: number, message: string, options?: { cause?: unknown; code?: string }) {
    super(options?.code ?? 'EXIT', message, options);
    this.exitCode = exitCode;
  }
}

/** Exit codes of docs/design.md §2. */
export const EXIT = {
  ok: 0,
  unexpected: 1,
  usage: 2,
  authRejected: 3,
  upstreamUnavailable: 4,
  drift: 5,
} as const;
