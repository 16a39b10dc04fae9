import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { RecordOutcome, RunStats } from '../sync/index.js';

/** Prometheus metrics of `run`; one registry per daemon so tests can run several. */
export class DaemonMetrics {
  readonly registry = new Registry();
  private readonly cycles = new Counter({ name: 'wsmirror_sync_cycles_total', help: 'Sync cycles by outcome', labelNames: ['outcome'], registers: [this.registry] });
  private readonly events = new Counter({ name: 'wsmirror_events_total', help: 'Change-log events read and new', labelNames: ['kind'], registers: [this.registry] });
  private readonly records = new Counter({ name: 'wsmirror_records_total', help: 'Records re-read, by outcome', labelNames: ['entity_type', 'outcome'], registers: [this.registry] });
  private readonly requests = new Counter({ name: 'wsmirror_requests_total', help: 'Upstream requests (every attempt)', registers: [this.registry] });
  private readonly retries = new Counter({ name: 'wsmirror_retries_total', help: 'Upstream retries', registers: [this.registry] });
  readonly lag = new Gauge({ name: 'wsmirror_lag_seconds', help: 'Newest upstream event minus the watermark, at the end of the last cycle', registers: [this.registry] });
  readonly dirty = new Gauge({ name: 'wsmirror_dirty_records', help: 'Records waiting to be re-read', registers: [this.registry] });
  readonly quarantined = new Gauge({ name: 'wsmirror_quarantined_records', help: 'Records in quarantine', registers: [this.registry] });
  readonly lastSuccess = new Gauge({ name: 'wsmirror_last_success_timestamp_seconds', help: 'End of the last successful cycle (unix seconds)', registers: [this.registry] });
  readonly leader = new Gauge({ name: 'wsmirror_is_writer', help: '1 when this process holds the writer lock, 0 in standby', registers: [this.registry] });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'wsmirror_process_' });
  }

  cycle(outcome: 'success' | 'failed' | 'aborted' | 'skipped', stats?: RunStats): void {
    this.cycles.inc({ outcome });
    if (!stats) return;
    this.events.inc({ kind: 'read' }, stats.eventsRead);
    this.events.inc({ kind: 'new' }, stats.eventsNew);
    this.requests.inc(stats.requests);
    this.retries.inc(stats.retries);
    if (outcome === 'success') this.lastSuccess.set(Date.now() / 1000);
  }

  record(entityType: string, outcome: RecordOutcome): void {
    this.records.inc({ entity_type: entityType, outcome });
  }
}
