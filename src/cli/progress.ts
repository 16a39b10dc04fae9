import type { Logger } from '../log/index.js';

/**
 * Backfill progress: a redrawn line on a TTY, a log line every few seconds otherwise (so
 * container logs show movement without one line per page).
 */
export class Progress {
  private readonly started = Date.now();
  private lastLog = 0;
  private drawn = false;

  constructor(
    private readonly logger: Logger,
    private readonly tty: boolean = Boolean(process.stderr.isTTY),
    private readonly everyMs = 5_000,
  ) {}

  update(phase: string, copied: Record<string, number>): void {
    const elapsedS = (Date.now() - this.started) / 1000;
    const total = Object.values(copied).reduce((a, b) => a + b, 0);
    const rate = elapsedS > 0 ? total / elapsedS : 0;
    if (this.tty) {
      const parts = Object.entries(copied)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
      process.stderr.write(`\r\x1b[2K${phase}: ${parts} · ${rate.toFixed(0)} records/s · ${elapsedS.toFixed(1)} s`);
      this.drawn = true;
      return;
    }
    const now = Date.now();
    if (now - this.lastLog < this.everyMs) return;
    this.lastLog = now;
    this.logger.info({ phase, ...copied, recordsPerSecond: Math.round(rate), elapsedS: Math.round(elapsedS) }, 'backfill progress');
  }

  done(): void {
    if (this.drawn) process.stderr.write('\n');
  }
}
