import { Gauge, Histogram, type Registry } from 'prom-client';
import { entityOf, RECORD_ENTITIES, type RecordType } from '../entities/index.js';

/**
 * Freshness as users feel it (docs/operations.md, "Metrics"): the mirror's "current as of"
 * (docs/design.md §4.11) and, per entity type, the delay from a change upstream to the commit that
 * made it visible in the mirror.
 */
export class FreshnessMetrics {
  private readonly asOf: Gauge;
  private readonly visible: Histogram;

  constructor(registry: Registry) {
    this.asOf = new Gauge({
      name: 'wsmirror_current_as_of_timestamp_seconds',
      help: 'The upstream instant up to which every change is in the mirror (unix seconds); NaN while unknown',
      registers: [registry],
    });
    this.asOf.set(Number.NaN);
    this.visible = new Histogram({
      name: 'wsmirror_change_visible_seconds',
      help: "Delay from a change's upstream occurredAt (the newest event that marked the record) to the commit that wrote the record, by entity type",
      labelNames: ['entity_type'],
      buckets: [0.25, 0.5, 1, 2, 3, 5, 10, 30, 60, 300, 1800, 3600],
      registers: [registry],
    });
    // Every entity type's series exists from the start (empty), as for the other labelled
    // metrics: a dashboard and an alert see 0 observations, not a missing metric.
    for (const { metricLabel } of RECORD_ENTITIES) this.visible.zero({ entity_type: metricLabel });
  }

  /** Unknown is NaN, never the last value or 0 (an alert must see that nothing is claimed). */
  asOfChanged(asOf: string | null): void {
    const at = asOf === null ? Number.NaN : Date.parse(asOf) / 1000;
    this.asOf.set(Number.isFinite(at) ? at : Number.NaN);
  }

  /**
   * A record's write committed, making the change at `occurredAt` visible. The delay is measured
   * against this machine's clock; a workspace clock ahead of it would make it negative: 0 then.
   */
  changeVisible(entityType: RecordType, occurredAt: string, nowMs: number): void {
    const at = Date.parse(occurredAt);
    if (!Number.isFinite(at)) return;
    this.visible.observe({ entity_type: entityOf(entityType).metricLabel }, Math.max(0, (nowMs - at) / 1000));
  }
}
