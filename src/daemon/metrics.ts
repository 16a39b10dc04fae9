import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RequestEvent } from '../api/index.js';
import { CYCLE_STEPS, type RecordOutcome, type RunStats } from '../sync/index.js';
import { RECORD_OUTCOMES } from './cycle-log.js';
import { FreshnessMetrics } from './freshness.js';
import { BACKFILL_ORDER, entityOf, RECORD_ENTITIES, type RecordType } from '../entities/index.js';

/** Where the SQLite sizes come from; null for PostgreSQL (the gauges then stay absent). */
export type FileSizes = () => { database: number; wal: number } | null;

/**
 * Prometheus metrics of `run`, one registry per daemon so tests can run several. Request, record,
 * event and backfill figures move as the work happens (per answered request, per committed page or
 * record), not when a cycle ends; docs/operations.md lists every metric.
 */
export class DaemonMetrics {
  readonly registry = new Registry();
  private readonly r = [this.registry];
  /** `wsmirror_current_as_of_timestamp_seconds` and `wsmirror_change_visible_seconds`. */
  readonly freshness = new FreshnessMetrics(this.registry);
  private readonly cycles = new Counter({
    name: 'wsmirror_sync_cycles_total',
    help: 'Cycles by outcome (success, failed, aborted, skipped)',
    labelNames: ['outcome'],
    registers: this.r,
  });
  private readonly events = new Counter({
    name: 'wsmirror_events_total',
    help: 'Change-log events read (per page), new to the mirror (per cycle), and new ones later than the guaranteed tick overlap (late, per cycle)',
    labelNames: ['kind'],
    registers: this.r,
  });
  private readonly records = new Counter({
    name: 'wsmirror_records_total',
    help: 'Records re-read, by entity type and outcome',
    labelNames: ['entity_type', 'outcome'],
    registers: this.r,
  });
  private readonly requests = new Counter({
    name: 'wsmirror_requests_total',
    help: 'Upstream request attempts, by endpoint and status class',
    labelNames: ['endpoint', 'status_class'],
    registers: this.r,
  });
  private readonly retries = new Counter({
    name: 'wsmirror_retries_total',
    help: 'Upstream attempts that were retries of an earlier one',
    registers: this.r,
  });
  private readonly duration = new Histogram({
    name: 'wsmirror_cycle_duration_seconds',
    help: 'Duration of finished cycles, by kind (backfill, sync, reconcile)',
    labelNames: ['kind'],
    buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600, 14400],
    registers: this.r,
  });
  private readonly steps = new Counter({
    name: 'wsmirror_cycle_step_seconds_total',
    help: "Wall time of sync cycles by step (src/sync/steps.ts): where a cycle's time goes",
    labelNames: ['step'],
    registers: this.r,
  });
  readonly backfillDone = new Gauge({
    name: 'wsmirror_backfill_records',
    help: 'Records copied so far by the backfill, per list',
    labelNames: ['list'],
    registers: this.r,
  });
  readonly backfillEstimate = new Gauge({
    name: 'wsmirror_backfill_total_estimate',
    help: "Expected records per list where the upstream tells (deals: the sum of the pipelines' dealCount)",
    labelNames: ['list'],
    registers: this.r,
  });
  readonly backfilling = new Gauge({ name: 'wsmirror_backfill_in_progress', help: '1 while the backfill runs', registers: this.r });
  readonly lag = new Gauge({
    name: 'wsmirror_lag_seconds',
    help: 'Newest upstream event minus the watermark, at the end of the last cycle',
    registers: this.r,
  });
  readonly clockSkew = new Gauge({
    name: 'wsmirror_upstream_clock_skew_seconds',
    help: "The workspace's clock (the Date header of its last answer) minus this machine's; beyond ±300 s the local clock bounds event times",
    registers: this.r,
  });
  readonly dirty = new Gauge({ name: 'wsmirror_dirty_records', help: 'Records waiting to be re-read', registers: this.r });
  readonly quarantined = new Gauge({ name: 'wsmirror_quarantined_records', help: 'Records in quarantine', registers: this.r });
  readonly lastSuccess = new Gauge({
    name: 'wsmirror_last_success_timestamp_seconds',
    help: 'End of the last successful cycle (unix seconds)',
    registers: this.r,
  });
  readonly lastProgress = new Gauge({
    name: 'wsmirror_last_progress_timestamp_seconds',
    help: 'Last answered request or committed page/record (unix seconds)',
    registers: this.r,
  });
  readonly leader = new Gauge({
    name: 'wsmirror_is_writer',
    help: '1 when this process holds the writer lock, 0 in standby',
    registers: this.r,
  });
  readonly checkpoints = new Counter({
    name: 'wsmirror_wal_checkpoints_total',
    help: 'SQLite WAL checkpoints after a cycle, by result (complete, busy)',
    labelNames: ['result'],
    registers: this.r,
  });
  readonly verifyDrift = new Gauge({
    name: 'wsmirror_verify_drift_records',
    help: 'Differences the last reconcile of this process found between the mirror and the upstream (it re-read them)',
    registers: this.r,
  });
  /** The last reconcile this process ran, for the status page. */
  lastVerify: { at: string; drift: number; repaired: number } | null = null;
  readonly eventsPruned = new Counter({
    name: 'wsmirror_events_pruned_total',
    help: 'Change-log events deleted by the retention setting',
    registers: this.r,
  });

  /**
   * @param fileSizes where the SQLite sizes come from.
   * @param onCycleStats told the figures of every cycle counted with them (the status page's cycle log).
   */
  constructor(
    fileSizes?: FileSizes,
    private readonly onCycleStats?: (stats: RunStats) => void,
  ) {
    collectDefaultMetrics({ register: this.registry, prefix: 'wsmirror_process_' });
    // Every labelled series starts at 0, so dashboards and alerts see it before the first event.
    for (const outcome of ['success', 'failed', 'aborted', 'skipped']) this.cycles.inc({ outcome }, 0);
    for (const kind of ['read', 'new', 'late']) this.events.inc({ kind }, 0);
    for (const { metricLabel: entityType } of RECORD_ENTITIES) {
      for (const outcome of RECORD_OUTCOMES) this.records.inc({ entity_type: entityType, outcome }, 0);
    }
    for (const list of [...BACKFILL_ORDER.map((e) => e.plural), 'events']) this.backfillDone.set({ list }, 0);
    for (const result of ['complete', 'busy']) this.checkpoints.inc({ result }, 0);
    for (const kind of ['backfill', 'sync', 'reconcile']) this.duration.zero({ kind });
    for (const step of CYCLE_STEPS) this.steps.inc({ step }, 0);
    new Gauge({
      name: 'wsmirror_sqlite_bytes',
      help: 'Size of the SQLite mirror files, by file (database, wal)',
      labelNames: ['file'],
      registers: this.r,
      collect() {
        const sizes = fileSizes?.() ?? null;
        if (!sizes) return;
        this.set({ file: 'database' }, sizes.database);
        this.set({ file: 'wal' }, sizes.wal);
      },
    });
  }

  /** Called by the API client after every attempt. */
  request(e: RequestEvent): void {
    const endpoint = endpointOf(e.path);
    const statusClass = e.status === null ? 'error' : `${Math.floor(e.status / 100)}xx`;
    this.requests.inc({ endpoint, status_class: statusClass });
    if (e.attempt > 1) this.retries.inc();
    if (e.clockSkewMs !== undefined) this.clockSkew.set(e.clockSkewMs / 1000);
  }

  eventsRead(n: number): void {
    this.events.inc({ kind: 'read' }, n);
  }

  cycle(outcome: 'success' | 'failed' | 'aborted' | 'skipped', stats?: RunStats): void {
    this.cycles.inc({ outcome });
    if (!stats) return;
    this.onCycleStats?.(stats);
    this.events.inc({ kind: 'new' }, stats.eventsNew);
    this.events.inc({ kind: 'late' }, stats.eventsLate);
    for (const step of CYCLE_STEPS) this.steps.inc({ step }, stats.steps[step] / 1000);
    if (outcome === 'success') this.lastSuccess.set(Date.now() / 1000);
  }

  /** A finished reconcile (`verify --repair`): how many differences it found and re-read. */
  verified(result: { drift: readonly unknown[]; repaired: number }): void {
    this.verifyDrift.set(result.drift.length);
    this.lastVerify = { at: new Date().toISOString(), drift: result.drift.length, repaired: result.repaired };
  }

  observeDuration(kind: string, seconds: number): void {
    this.duration.observe({ kind }, seconds);
  }

  record(entityType: RecordType, outcome: RecordOutcome): void {
    this.records.inc({ entity_type: entityOf(entityType).metricLabel, outcome });
  }
}

/**
 * `/api/v1/tickets/t_12/messages?cursor=..` → `tickets/:id/messages`: ids and query strings would
 * give every record its own time series.
 */
export function endpointOf(path: string): string {
  const segments = path
    .split('?')[0]!
    .split('/')
    .filter((s) => s.length > 0);
  const v1 = segments.lastIndexOf('v1');
  const rest = v1 >= 0 ? segments.slice(v1 + 1) : segments;
  return rest.map((s, i) => (i % 2 === 1 ? ':id' : s)).join('/') || '/';
}
