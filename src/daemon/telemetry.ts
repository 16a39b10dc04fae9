import type { RequestEvent } from '../api/index.js';
import type { Store } from '../store/index.js';
import type { AsOfState, RecordOutcome, SyncHooks } from '../sync/index.js';
import { packageVersion } from '../util/version.js';
import { CycleLog } from './cycle-log.js';
import { HealthTracker, type CycleOutcome } from './health.js';
import { DaemonMetrics } from './metrics.js';
import type { StateFacts } from './state.js';
import { AsOfWaiters } from './wait.js';
import { RecordWaiters } from './record-wait.js';

/** Outcomes that make a change visible: the copy written is at least as new as its mark, or the record is gone. */
const VISIBLE_OUTCOMES: ReadonlySet<RecordOutcome> = new Set(['fresh', 'deleted']);

/** The window the backfill's rate is measured over, for its ETA. */
const RATE_WINDOW_MS = 60_000;

export interface TelemetryOptions {
  /**
   * The longest the client waits after a 429 before it tries again (config `retry.maxDelayMs`,
   * which also caps the "auto" pacer's pause); the state line's "rate-limited until" bound.
   * Default 60,000.
   */
  retryMaxDelayMs?: number;
  /** Clock for tests. Default Date.now. */
  now?: () => number;
  /** GET /wait callers held at once, of each kind (as-of, record). Default MAX_WAITERS (src/daemon/wait-bounds.ts). */
  maxWaiters?: number;
}

/**
 * What the daemon reports about itself: its metrics, its health state, the cycle log of the status
 * page, and the one progress signal they follow (every answered request and committed page or
 * record moves liveness and `wsmirror_last_progress_timestamp_seconds`). The mirror is attached
 * once it is open, so the file-size gauges read nothing before.
 */
export class DaemonTelemetry {
  readonly metrics: DaemonMetrics;
  readonly health: HealthTracker;
  readonly cycles: CycleLog;
  readonly version = packageVersion();
  /** Read-after-write callers of GET /wait, woken by the commit that records a new as-of. */
  readonly waiters: AsOfWaiters;
  /** Read-your-own-write callers of GET /wait for one record, woken by the commit that writes it. */
  readonly recordWaiters: RecordWaiters;
  #store: Store | null = null;
  #rateLimited: { since: number; last: number } | null = null;
  /** Backfill pages of the last minute: when, which list, how many records. */
  #pages: { at: number; list: string; n: number }[] = [];
  readonly #now: () => number;
  readonly #retryMaxDelayMs: number;

  /**
   * @param schedule the sync's croner pattern (readiness allows three of its ticks).
   * @param stallTimeoutMs liveness fails after this long without progress in a cycle.
   */
  constructor(schedule: string, stallTimeoutMs: number, options: TelemetryOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#retryMaxDelayMs = options.retryMaxDelayMs ?? 60_000;
    this.waiters = new AsOfWaiters(options.maxWaiters);
    this.recordWaiters = new RecordWaiters(options.maxWaiters);
    this.cycles = new CycleLog(this.#now);
    this.metrics = new DaemonMetrics(
      () => this.#store?.fileSizes() ?? null,
      (stats) => this.cycles.eventsNew(stats.eventsNew),
    );
    this.health = new HealthTracker(schedule, stallTimeoutMs, this.#now);
    this.health.onCycle = {
      started: (kind) => this.cycles.begin(kind),
      ended: (outcome) => this.#cycleEnded(outcome),
      split: (finished, next) => {
        const current = this.cycles.current;
        if (!current) return;
        current.kind = finished;
        this.cycles.end({ outcome: 'success', error: null, lagSeconds: null });
        this.cycles.begin(next);
      },
    };
  }

  attach(store: Store): void {
    this.#store = store;
    this.recordWaiters.attach((type, id) => store.recordState(type, id));
  }

  progress(): void {
    this.health.progress();
    this.metrics.lastProgress.set(this.#now() / 1000);
  }

  /** Every request attempt as it ends; only an answered one (2xx) counts as progress. */
  request(e: RequestEvent): void {
    this.metrics.request(e);
    this.cycles.request(e);
    const now = this.#now();
    if (e.status === 429) this.#rateLimited = { since: this.#rateLimited?.since ?? now, last: now };
    else if (e.status !== null) this.#rateLimited = null;
    if (e.status !== null && e.status >= 200 && e.status < 300) this.progress();
  }

  /** Holding the writer lock (or not): the leader gauge and the health role follow. */
  leader(held: boolean): void {
    this.metrics.leader.set(held ? 1 : 0);
    if (held && this.health.state.role !== 'stopping') this.health.state.role = 'writer';
  }

  hooks(): SyncHooks {
    return {
      onRecord: (type, outcome, occurredAt, entityId) => {
        if (entityId !== undefined) this.recordWaiters.committed(type, entityId);
        this.metrics.record(type, outcome);
        if (occurredAt !== undefined && VISIBLE_OUTCOMES.has(outcome)) this.metrics.freshness.changeVisible(type, occurredAt, this.#now());
        this.cycles.record(outcome);
        this.progress();
      },
      onPage: (kind, info) => {
        const events = kind === 'events' ? info.items + info.invalid : kind === 'history' ? info.items : 0;
        if (events > 0) {
          this.metrics.eventsRead(events);
          this.cycles.eventsRead(events);
        }
        if (this.health.state.backfill !== null && kind !== 'events') this.#backfillPage(kind === 'history' ? 'events' : kind, info.items);
        this.progress();
      },
      onAsOf: (state) => this.asOfKnown(state),
    };
  }

  /** The mirror's "current as of": recorded by a cycle, or read from the mirror at start. */
  asOfKnown(state: AsOfState | null): void {
    const asOf = state?.asOf ?? null;
    this.health.state.currentAsOf = asOf;
    this.metrics.freshness.asOfChanged(asOf);
    this.waiters.advance(asOf);
    // A backstop for records written without a per-record commit hook (a backfill's pages).
    this.recordWaiters.recheckAll();
  }

  /** The facts of the state line, as this process knows them now. */
  stateFacts(): StateFacts {
    const s = this.health.state;
    const now = this.#now();
    const live = this.health.liveness();
    const limited = this.#rateLimited;
    const until = limited ? limited.last + this.#retryMaxDelayMs : 0;
    return {
      now,
      role: s.role,
      runningSince: s.cycleStartedAt,
      backfill: s.backfill ? { ...s.backfill, ratePerSecond: this.#backfillRates(now) } : null,
      rateLimited: limited && until >= now ? { since: iso(limited.since), until: iso(until) } : null,
      failures: s.lastError !== null ? { consecutive: s.consecutiveFailures, lastError: s.lastError } : null,
      problem: live.ok ? null : String(live.body.reason),
      lastSuccessAt: s.lastSuccessAt,
      lagSeconds: s.lagSeconds,
    };
  }

  #cycleEnded(outcome: CycleOutcome): void {
    const stopping = this.health.state.role === 'stopping';
    const kind = this.cycles.current?.kind;
    this.#rateLimited = null;
    this.cycles.end({
      outcome: !outcome.ok ? 'failed' : stopping ? 'aborted' : 'success',
      error: outcome.ok ? null : outcome.error,
      // A reconcile measures no lag, and one stopped early may not have reached its sync.
      lagSeconds: outcome.ok && !stopping && kind !== 'reconcile' ? this.health.state.lagSeconds : null,
    });
  }

  #backfillPage(list: string, n: number): void {
    const now = this.#now();
    this.cycles.copied(n);
    this.#pages.push({ at: now, list, n });
    while (this.#pages.length > 0 && this.#pages[0]!.at < now - RATE_WINDOW_MS) this.#pages.shift();
  }

  /** Records per second per list over the last minute; a list needs two pages to have a rate. */
  #backfillRates(now: number): Record<string, number> {
    const out: Record<string, number> = {};
    const byList = new Map<string, { first: number; last: number; n: number; pages: number }>();
    for (const p of this.#pages) {
      if (p.at < now - RATE_WINDOW_MS) continue;
      const b = byList.get(p.list) ?? { first: p.at, last: p.at, n: 0, pages: 0 };
      b.last = p.at;
      b.pages++;
      // The first page's records arrived before the window's first instant: not counted.
      if (b.pages > 1) b.n += p.n;
      byList.set(p.list, b);
    }
    for (const [list, b] of byList) if (b.pages > 1 && b.last > b.first) out[list] = (b.n * 1000) / (b.last - b.first);
    return out;
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
