import type { RecordOutcome } from '../sync/index.js';

export const RECORD_OUTCOMES: readonly RecordOutcome[] = ['fresh', 'stale', 'stale-accepted', 'deleted', 'quarantined'];

const DAY_MS = 86_400_000;
/** Cycles kept one by one; past this the charts draw ten-minute buckets (as many over 24 hours). */
export const DETAIL_CYCLES = 144;
const CYCLE_BUCKET_MS = 600_000;
const SLOT_MS = 10_000;
/** At most this many points per chart, so the page stays small (under 100 KB) whatever the schedule. */
const MAX_POINTS = 144;

/** One finished cycle of `run` (a sync, which may have begun with the backfill, or a reconcile). */
export interface CycleEntry {
  startedAt: string;
  durationMs: number;
  kind: string;
  outcome: 'success' | 'failed' | 'aborted';
  error: string | null;
  eventsRead: number;
  eventsNew: number;
  /** Records the backfill copied from list pages in this cycle. */
  copied: number;
  /** Records re-read, by outcome. */
  records: Record<RecordOutcome, number>;
  requests: number;
  retries: number;
  /** Answers with status 429. */
  rateLimited: number;
  /** Lag at the cycle's end; null when it did not measure one (a failed cycle, a reconcile). */
  lagSeconds: number | null;
}

/** One point of the per-cycle charts: a cycle, or every cycle of a bucket. */
export interface CyclePoint {
  at: string;
  cycles: number;
  failed: number;
  /** The cycle's lag, or the largest of the bucket's; null when none was measured. */
  lagSeconds: number | null;
  records: Record<RecordOutcome, number>;
}

export interface ChartData {
  /** The charts' time axis: the last 24 hours, or since the process started when that is later. */
  from: string;
  to: string;
  /** Null: one point per cycle; else the seconds each point spans. */
  cycleBucketSeconds: number | null;
  cycles: CyclePoint[];
  requestBucketSeconds: number;
  /** Request attempts per minute averaged over each bucket, and the 429s in it. */
  requests: { at: string; perMinute: number; rateLimited: number }[];
}

interface Slot {
  requests: number;
  rateLimited: number;
}

const zeroRecords = (): Record<RecordOutcome, number> => ({ fresh: 0, stale: 0, 'stale-accepted': 0, deleted: 0, quarantined: 0 });

/**
 * The daemon's memory of the last 24 hours, bounded whatever the schedule: the last
 * {@link DETAIL_CYCLES} cycles one by one, every cycle summed into ten-minute buckets, and
 * request attempts in ten-second slots. The status page's charts and cycle table read it.
 */
export class CycleLog {
  readonly startedAt: number;
  #current: (CycleEntry & { t0: number }) | null = null;
  readonly #detail: CycleEntry[] = [];
  #evicted = false;
  readonly #buckets = new Map<number, CyclePoint>();
  readonly #slots = new Map<number, Slot>();

  constructor(private readonly now: () => number = Date.now) {
    this.startedAt = now();
  }

  begin(kind: string): void {
    const t0 = this.now();
    this.#current = {
      t0,
      startedAt: new Date(t0).toISOString(),
      durationMs: 0,
      kind,
      outcome: 'success',
      error: null,
      eventsRead: 0,
      eventsNew: 0,
      copied: 0,
      records: zeroRecords(),
      requests: 0,
      retries: 0,
      rateLimited: 0,
      lagSeconds: null,
    };
  }

  /** The cycle running now, as far as it got; null between cycles. */
  get current(): CycleEntry | null {
    return this.#current;
  }

  request(e: { status: number | null; attempt: number }): void {
    const key = Math.floor(this.now() / SLOT_MS);
    const slot = this.#slots.get(key) ?? { requests: 0, rateLimited: 0 };
    slot.requests++;
    if (e.status === 429) slot.rateLimited++;
    this.#slots.set(key, slot);
    prune(this.#slots, key - DAY_MS / SLOT_MS);
    const c = this.#current;
    if (!c) return;
    c.requests++;
    if (e.attempt > 1) c.retries++;
    if (e.status === 429) c.rateLimited++;
  }

  record(outcome: RecordOutcome): void {
    if (this.#current) this.#current.records[outcome]++;
  }

  eventsRead(n: number): void {
    if (this.#current) this.#current.eventsRead += n;
  }

  eventsNew(n: number): void {
    if (this.#current) this.#current.eventsNew += n;
  }

  /** Records copied by a backfill page; the cycle is then a backfill. */
  copied(n: number): void {
    if (!this.#current) return;
    this.#current.copied += n;
    if (this.#current.kind === 'sync') this.#current.kind = 'backfill';
  }

  end(outcome: { outcome: CycleEntry['outcome']; error: string | null; lagSeconds: number | null }): void {
    const c = this.#current;
    if (!c) return;
    this.#current = null;
    const { t0, ...entry } = c;
    Object.assign(entry, outcome, { durationMs: this.now() - t0 });
    this.#detail.push(entry);
    if (this.#detail.length > DETAIL_CYCLES) {
      this.#detail.shift();
      this.#evicted = true;
    }
    const key = Math.floor(t0 / CYCLE_BUCKET_MS);
    const bucket = this.#buckets.get(key) ?? {
      at: new Date(key * CYCLE_BUCKET_MS).toISOString(),
      cycles: 0,
      failed: 0,
      lagSeconds: null,
      records: zeroRecords(),
    };
    addTo(bucket, entry);
    this.#buckets.set(key, bucket);
    prune(this.#buckets, key - DAY_MS / CYCLE_BUCKET_MS);
  }

  /** The newest `n` finished cycles, newest first. */
  recent(n: number): CycleEntry[] {
    return this.#detail.slice(-n).reverse();
  }

  chartData(): ChartData {
    const to = this.now();
    const from = Math.max(to - DAY_MS, this.startedAt);
    const oldest = this.#detail[0];
    const detailed = !this.#evicted || (oldest !== undefined && Date.parse(oldest.startedAt) <= from);
    const cycles = detailed
      ? this.#detail
          .filter((c) => Date.parse(c.startedAt) >= from)
          .map((c) => {
            const point: CyclePoint = { at: c.startedAt, cycles: 0, failed: 0, lagSeconds: null, records: zeroRecords() };
            addTo(point, c);
            return point;
          })
      : [...this.#buckets.entries()].filter(([key]) => (key + 1) * CYCLE_BUCKET_MS > from).map(([, b]) => b);
    const span = Math.max(SLOT_MS, to - from);
    const bucketMs = Math.max(SLOT_MS, Math.ceil(span / MAX_POINTS / SLOT_MS) * SLOT_MS);
    return {
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
      cycleBucketSeconds: detailed ? null : CYCLE_BUCKET_MS / 1000,
      cycles,
      requestBucketSeconds: bucketMs / 1000,
      requests: this.#requestBuckets(from, to, bucketMs),
    };
  }

  #requestBuckets(from: number, to: number, bucketMs: number): ChartData['requests'] {
    const first = Math.floor(from / bucketMs);
    const out: ChartData['requests'] = [];
    for (let b = first; b * bucketMs < to; b++) out.push({ at: new Date(b * bucketMs).toISOString(), perMinute: 0, rateLimited: 0 });
    for (const [key, slot] of this.#slots) {
      if ((key + 1) * SLOT_MS <= from) continue;
      const point = out[Math.floor((key * SLOT_MS) / bucketMs) - first];
      if (!point) continue;
      point.perMinute += slot.requests;
      point.rateLimited += slot.rateLimited;
    }
    for (const p of out) {
      const start = Date.parse(p.at);
      // The bucket still filling counts only the time it has run, so its rate is not understated.
      const seconds = Math.max(1, (Math.min(to, start + bucketMs) - Math.max(start, Math.floor(from / SLOT_MS) * SLOT_MS)) / 1000);
      p.perMinute = Math.round((p.perMinute * 600) / seconds) / 10;
    }
    return out;
  }
}

function addTo(point: CyclePoint, c: CycleEntry): void {
  point.cycles++;
  if (c.outcome === 'failed') point.failed++;
  if (c.lagSeconds !== null) point.lagSeconds = Math.max(point.lagSeconds ?? 0, c.lagSeconds);
  for (const o of RECORD_OUTCOMES) point.records[o] += c.records[o];
}

/** Drops the oldest keys below `min`; keys arrive in increasing order, so they are at the front. */
function prune<V>(map: Map<number, V>, min: number): void {
  for (const key of map.keys()) {
    if (key >= min) return;
    map.delete(key);
  }
}
