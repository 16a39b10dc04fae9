import type pg from 'pg';
import { Gauge, Histogram, Registry } from 'prom-client';
import { QUEUE_SCHEMA } from './config.js';
import { queueDepth } from './queue.js';
import { readQueueGarbage } from './queue-garbage.js';
import type { FleetStatus } from './status.js';

/**
 * /metrics of a fleet worker. Per workspace (label `workspace`): lag, staleness, failing and
 * requests: 4 series each, so 1,000 workspaces make 4,000 series (docs/fleet.md). The figures per
 * workspace come from the fleet table at scrape time, so every worker reports the whole fleet alike.
 */
export class FleetMetrics {
  readonly registry = new Registry();
  private readonly lag = this.gauge('wsmirror_fleet_workspace_lag_seconds', 'lag behind the upstream at the last sync (NaN: unknown)', [
    'workspace',
  ]);
  private readonly staleness = this.gauge('wsmirror_fleet_workspace_staleness_seconds', 'seconds since the last successful slice', [
    'workspace',
  ]);
  private readonly failing = this.gauge(
    'wsmirror_fleet_workspace_failing',
    '1 while the last slice failed (the error is on the fleet page)',
    ['workspace'],
  );
  private readonly requests = this.gauge('wsmirror_fleet_workspace_requests_total', 'upstream requests made for this workspace', [
    'workspace',
  ]);
  private readonly queue = this.gauge('wsmirror_fleet_queue_slices', 'slices in the queue by state (ready, deferred, active, retry)', [
    'state',
  ]);
  private readonly workers = this.gauge('wsmirror_fleet_workers', 'workers seen in the last 30 s');
  private readonly queueDead = this.gauge(
    'wsmirror_fleet_queue_dead_rows',
    "dead rows in the job queue's tables, and where autovacuum would vacuum them (kind: dead, budget)",
    ['table', 'kind'],
  );
  readonly sliceDuration = new Histogram({
    name: 'wsmirror_fleet_slice_duration_seconds',
    help: 'slices this worker ran, by kind',
    labelNames: ['kind', 'result'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60],
    registers: [this.registry],
  });

  private gauge<L extends string>(name: string, help: string, labelNames: L[] = []): Gauge<L> {
    return new Gauge({ name, help, labelNames, registers: [this.registry] });
  }

  async render(status: FleetStatus, pool: pg.Pool): Promise<string> {
    for (const g of [this.lag, this.staleness, this.failing, this.requests]) g.reset();
    for (const w of status.workspaces) {
      const labels = { workspace: w.id };
      this.lag.set(labels, w.lagSeconds ?? Number.NaN);
      this.staleness.set(labels, w.stalenessSeconds ?? Number.NaN);
      this.failing.set(labels, w.lastError ? 1 : 0);
      this.requests.set(labels, w.requestsTotal);
    }
    const depth = await queueDepth(pool);
    for (const [state, n] of Object.entries(depth)) this.queue.set({ state }, n);
    this.workers.set(status.workers);
    this.queueDead.reset();
    for (const t of await readQueueGarbage(pool, QUEUE_SCHEMA)) {
      this.queueDead.set({ table: t.table, kind: 'dead' }, t.dead);
      this.queueDead.set({ table: t.table, kind: 'budget' }, Math.round(t.budget));
    }
    return this.registry.metrics();
  }
}
