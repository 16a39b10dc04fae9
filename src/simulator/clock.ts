/**
 * The simulated clock: real elapsed time since start (unless `realTime` is false), plus whatever
 * tests advanced it by. It never goes backwards, so updatedAt and event order follow write order.
 */
export class SimClock {
  private readonly realStart = performance.now();
  private advancedMs = 0;
  private lastMs: number;
  private frozenAt: number | null = null;

  /** @param realTime false: only advance() moves the clock, so a test's timing is its own steps. Default true. */
  constructor(
    private readonly startMs: number,
    private readonly realTime = true,
  ) {
    this.lastMs = startMs;
  }

  nowMs(): number {
    if (this.frozenAt !== null) return this.frozenAt;
    const elapsed = this.realTime ? performance.now() - this.realStart : 0;
    const ms = Math.floor(this.startMs + elapsed + this.advancedMs);
    if (ms > this.lastMs) this.lastMs = ms;
    return this.lastMs;
  }

  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('advanceClock needs a non-negative number of ms');
    this.advancedMs += ms;
    if (this.frozenAt !== null) this.frozenAt += Math.floor(ms);
  }

  /** Runs `fn` with time standing still, so every write inside shares one millisecond. */
  frozen<T>(fn: () => T): T {
    if (this.frozenAt !== null) return fn();
    this.frozenAt = this.nowMs();
    try {
      return fn();
    } finally {
      this.frozenAt = null;
    }
  }
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
