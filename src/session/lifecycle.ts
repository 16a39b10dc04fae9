import { EXIT } from '../util/errors.js';

/**
 * A second SIGTERM/SIGINT while a writer stops gracefully: exit now. Every page and record that
 * committed is in the database, and the persisted cursors let the next start resume.
 */
export function exitAtOnce(signal: string): never {
  process.stderr.write(`wsmirror: stopped at once on a second ${signal}; committed work is kept and the next start resumes.\n`);
  process.exit(EXIT.unexpected);
}

/**
 * One run loop, one pair of controllers: `stop` is the graceful stop (first SIGTERM/SIGINT: no new
 * work, the page in flight commits), `abort` cancels requests in flight (second signal or the
 * grace timeout). Resources are released in reverse order of acquisition.
 */
export class Lifecycle {
  readonly stop = new AbortController();
  readonly abort = new AbortController();
  private readonly cleanups: Array<() => Promise<void> | void> = [];
  private signals = 0;
  private graceTimer: NodeJS.Timeout | null = null;

  /** Registers a release step; they run last-in, first-out. */
  defer(cleanup: () => Promise<void> | void): void {
    this.cleanups.push(cleanup);
  }

  /**
   * Listens for SIGTERM/SIGINT. `graceMs` bounds the graceful stop; `onForce` runs on a second
   * signal (the CLI exits at once from there: committed work is safe in the database).
   */
  handleSignals(options: { graceMs: number; onFirst?: (signal: string) => void; onForce: (signal: string) => void }): void {
    const handler = (signal: NodeJS.Signals) => {
      this.signals++;
      if (this.signals === 1) {
        options.onFirst?.(signal);
        this.stop.abort(new Error(`stopping on ${signal}`));
        this.graceTimer = setTimeout(() => this.abort.abort(new Error('graceful stop timed out')), options.graceMs);
        this.graceTimer.unref();
      } else {
        this.abort.abort(new Error(`stopped at once on a second ${signal}`));
        options.onForce(signal);
      }
    };
    process.on('SIGTERM', handler);
    process.on('SIGINT', handler);
    this.defer(() => {
      process.off('SIGTERM', handler);
      process.off('SIGINT', handler);
      if (this.graceTimer) clearTimeout(this.graceTimer);
    });
  }

  async close(): Promise<void> {
    // Boxed, so whatever the first cleanup threw is rethrown as it was, even a falsy value.
    let first: { err: unknown } | null = null;
    while (this.cleanups.length > 0) {
      const cleanup = this.cleanups.pop()!;
      try {
        await cleanup();
      } catch (err) {
        first ??= { err };
      }
    }
    if (first) throw first.err;
  }
}
