import { setMaxListeners } from 'node:events';
import { WsmirrorError } from '../util/errors.js';

/**
 * The default of config `stallTimeoutMs`: longer than a single request can take with the default
 * retry budget (6 attempts of at most 30 s, 5 waits of at most 60 s = 480 s), so it fires only
 * when the retry budget itself cannot explain the silence (docs/sync.md, "Hostile upstream").
 */
export const DEFAULT_STALL_TIMEOUT_MS = 600_000;

export class CycleStalledError extends WsmirrorError {
  constructor(ms: number) {
    super(
      'CYCLE_STALLED',
      `The sync cycle committed no page and no record for ${Math.round(ms / 1000)} s (stallTimeoutMs) and was stopped; the watermark is unchanged and the next cycle resumes. Check the workspace's health, or raise stallTimeoutMs if it is merely slow.`,
    );
  }
}

/**
 * Fails a cycle that makes no progress: `signal` aborts with a CycleStalledError once `ms` pass
 * without a call to `progress()`. Every request of the cycle listens to the signal.
 */
export class ProgressWatchdog {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly ms: number) {
    // Every request of the cycle listens while in flight (and removes its listener when done,
    // util/signals.ts): `concurrency` drain reads and a list page or a change-log page.
    // Past 10 Node would print a leak warning that is not one.
    setMaxListeners(0, this.controller.signal);
    this.progress();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  progress(): void {
    if (this.controller.signal.aborted) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.controller.abort(new CycleStalledError(this.ms)), this.ms);
    this.timer.unref();
  }

  /** Throws the stall error if it fired (work that ignored the signal still ends the cycle). */
  check(): void {
    if (this.controller.signal.aborted) throw this.controller.signal.reason;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
