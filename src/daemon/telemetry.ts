import type { RequestEvent } from '../api/index.js';
import type { Store } from '../store/index.js';
import type { SyncHooks } from '../sync/index.js';
import { HealthTracker } from './health.js';
import { DaemonMetrics } from './metrics.js';

/**
 * What the daemon reports about itself: its metrics, its health state, and the one progress
 * signal both follow (every answered request and committed page or record moves liveness and
 * `wsmirror_last_progress_timestamp_seconds`). The mirror is attached once it is open, so the
 * file-size gauges read nothing before.
 */
export class DaemonTelemetry {
  readonly metrics: DaemonMetrics;
  readonly health: HealthTracker;
  #store: Store | null = null;

  /**
   * @param schedule the sync's croner pattern (readiness allows three of its ticks).
   * @param stallTimeoutMs liveness fails after this long without progress in a cycle.
   */
  constructor(schedule: string, stallTimeoutMs: number) {
    this.metrics = new DaemonMetrics(() => this.#store?.fileSizes() ?? null);
    this.health = new HealthTracker(schedule, stallTimeoutMs);
  }

  attach(store: Store): void {
    this.#store = store;
  }

  progress(): void {
    this.health.progress();
    this.metrics.lastProgress.set(Date.now() / 1000);
  }

  /** Every request attempt as it ends; only an answered one (2xx) counts as progress. */
  request(e: RequestEvent): void {
    this.metrics.request(e);
    if (e.status !== null && e.status >= 200 && e.status < 300) this.progress();
  }

  /** Holding the writer lock (or not): the leader gauge and the health role follow. */
  leader(held: boolean): void {
    this.metrics.leader.set(held ? 1 : 0);
    if (held && this.health.state.role !== 'stopping') this.health.state.role = 'writer';
  }

  hooks(): SyncHooks {
    return {
      onRecord: (type, outcome) => {
        this.metrics.record(type, outcome);
        this.progress();
      },
      onPage: (kind, info) => {
        if (kind === 'events') this.metrics.eventsRead(info.items + info.invalid);
        if (kind === 'history') this.metrics.eventsRead(info.items);
        this.progress();
      },
    };
  }
}
