import type { Store, SyncRunRow } from '../store/index.js';
import {
  lateHoldEnd,
  readBackfill,
  readAsOf,
  readLastCycle,
  readLateEvent,
  readWatermark,
  readSavedWindow,
  type AsOfState,
  type LastCycle,
  type LateEvent,
} from '../sync/index.js';
import { fromDbTimestamp } from '../util/time.js';
import { readWidenedColumns, type WidenedColumnRow } from '../report/index.js';
import type { ChartData, CycleEntry } from './cycle-log.js';
import type { Role } from './health.js';
import { asOfField, describeState, type DaemonState, type StateFacts } from './state.js';

/** A sync_runs row, its timestamps in ISO form. */
export type RunRow = Omit<SyncRunRow, 'started_at' | 'finished_at'> & {
  started_at: string | null;
  finished_at: string | null;
};

/** Rows of the run table the status reads: the newest, bounded by the primary key. */
export const RECENT_RUNS = 20;
/** Quarantined records listed one by one (newest first; the counts cover all of them). */
export const NEWEST_QUARANTINED = 20;

/**
 * What `wsmirror status --json` prints and the daemon's `/status.json` serves: one collector
 * ({@link collectStatus}) for both, so they never drift apart.
 */
export interface StatusReport {
  database: string;
  backfill: { phase: string; copied: Record<string, number>; estimate: Record<string, number> } | null;
  watermark: string | null;
  windowInProgress: boolean;
  /**
   * The workspace's head and lag, and its clock: `clockSkewSeconds` is its Date header minus the
   * local clock (null without a usable Date), `clockTrusted` false when that lies beyond the
   * tolerance and the local clock bounds event times instead (docs/sync.md, "Hostile upstream").
   */
  upstream: {
    head: string | null;
    lagSeconds: number | null;
    clockSkewSeconds?: number | null;
    clockTrusted?: boolean;
    error?: string;
  } | null;
  /**
   * The last event a window read later than the guaranteed tick overlap reaches (docs/sync.md,
   * "The overlap's cost"), and until when ticks re-read the whole overlap because of it.
   */
  lateEvent: (LateEvent & { wholeOverlapUntil: string }) | null;
  /**
   * Secondary indexes a first SQLite backfill dropped and builds at its end (docs/sync.md,
   * "Backfill"); queries on those tables run without them until then. Empty otherwise.
   */
  deferredIndexes: string[];
  /** What the last finished cycle saw: its head and lag, known even when the upstream cannot be asked now. */
  lastCycle: LastCycle | null;
  /**
   * The mirror's "current as of" as the last complete cycle recorded it (docs/design.md §4.11):
   * every change up to `asOf` visible within the guaranteed overlap is in the mirror or quarantined.
   */
  currentAsOf: AsOfState | null;
  /** The latest sync_runs row. */
  lastRun: RunRow | null;
  /** The newest sync_runs rows (at most {@link RECENT_RUNS}), newest first. */
  recentRuns: RunRow[];
  /** The last `verify --repair` or nightly reconcile run. */
  lastVerify: RunRow | null;
  lastSuccessAt: string | null;
  /** Rows per table; absent when the caller asked for bounded reads only (the status page). */
  counts?: Record<string, number>;
  dirty: number;
  /** SQLite: bytes of the mirror and its WAL (the running writer checkpoints the WAL after each cycle). */
  storage: { databaseBytes: number; walBytes: number } | null;
  /** The events table: how far back it reaches, and the retention the writer applies. */
  events: { oldest: string | null; retentionDays: number };
  quarantined: { entityType: string; entityId: string; reason: string; lastSeenAt: string }[];
  /** Quarantined rows per entity type (`event` included), all of them, not only the 20 listed. */
  quarantinedByType: Record<string, number>;
  /**
   * Custom field columns widened to text because a value did not fit their type (docs/schema.md,
   * "Custom fields as columns"), oldest first. Absent in reports of older versions.
   */
  widenedColumns?: WidenedColumnRow[];
  /** What the process keeping the mirror says about itself; see {@link LiveStatus}. */
  live: LiveStatus;
}

/**
 * The keeper's own view. From the daemon (its memory: role, state, this process's cycles and
 * charts) or, when `wsmirror status` reaches no daemon, derived from the mirror's tables.
 */
export interface LiveStatus {
  source: 'daemon' | 'mirror';
  state: DaemonState;
  role: Role | null;
  version: string | null;
  startedAt: string | null;
  uptimeSeconds: number | null;
  freshness: {
    /** Newest upstream event minus the watermark at the end of the last cycle. */
    lagSeconds: number | null;
    lastSuccessAt: string | null;
    watermark: string | null;
    /**
     * The upstream instant up to which every change is in the mirror; absent until the sync
     * records one. The status page shows it as "current as of" when present (docs/operations.md,
     * "The status page").
     */
    currentAsOf?: string;
  };
  /** This process's cycles, newest first (at most 20). */
  cycles: CycleEntry[];
  charts: ChartData | null;
  /** The client's request ceiling per minute (the fixed rate, or the "auto" hard ceiling). */
  requestCeilingPerMinute: number | null;
  /** The last reconcile this process ran, with the differences it found. */
  verify: { at: string; drift: number; repaired: number } | null;
}

export interface CollectOptions {
  retentionDays: number;
  /** The upstream's head as the caller asked it; null when not asked. */
  upstream: StatusReport['upstream'];
  /** Count every table's rows (unbounded work; `status` does, the status page does not). */
  rowCounts: boolean;
}

/** Everything but `live`, read from the mirror with bounded queries (plus the row counts when asked). */
export async function collectStatus(store: Store, options: CollectOptions): Promise<Omit<StatusReport, 'live'>> {
  const backfill = await readBackfill(store);
  const late = await readLateEvent(store);
  const deferred = await store.deferredIndexes();
  const runs = (await store.recentRuns(50)).map(runRow);
  const lastSuccess = runs.find((r) => r.outcome === 'success') ?? null;
  const quarantine = await store.newestQuarantined(NEWEST_QUARANTINED);
  const sizes = store.fileSizes();
  return {
    // The store's label names the database without its password.
    database: store.label,
    backfill: backfill
      ? { phase: backfill.phase, copied: backfill.copied, estimate: backfill.phase === 'done' ? {} : await dealEstimate(store) }
      : null,
    watermark: await readWatermark(store),
    windowInProgress: (await readSavedWindow(store)) !== null,
    lateEvent: late ? { ...late, wholeOverlapUntil: lateHoldEnd(late.seenAt) } : null,
    deferredIndexes: deferred.map((i) => i.name),
    upstream: options.upstream,
    lastCycle: await readLastCycle(store),
    currentAsOf: await readAsOf(store),
    lastRun: runs[0] ?? null,
    recentRuns: runs.slice(0, RECENT_RUNS),
    lastVerify: await lastVerify(store),
    lastSuccessAt: lastSuccess ? lastSuccess.finished_at : null,
    ...(options.rowCounts ? { counts: await store.counts() } : {}),
    dirty: await store.dirtyCount(),
    quarantinedByType: await store.quarantinedByType(),
    storage: sizes ? { databaseBytes: sizes.database, walBytes: sizes.wal } : null,
    events: { oldest: fromDbTimestamp(await store.oldestEventAt()), retentionDays: options.retentionDays },
    widenedColumns: await readWidenedColumns(store),
    quarantined: quarantine.map((q) => ({
      entityType: q.entity_type,
      entityId: q.entity_id,
      reason: q.reason,
      lastSeenAt: fromDbTimestamp(q.last_seen_at) ?? '',
    })),
  };
}

/**
 * The state line's facts as the mirror's tables tell them, for `status` when no daemon answers:
 * an unfinished run is running (or was killed), failed runs in a row are failing. The role and a
 * rate limit are a process's memory and stay unknown.
 */
export function mirrorFacts(r: Omit<StatusReport, 'live'>, now: number): StateFacts {
  const running = r.recentRuns[0]?.outcome === 'running' ? r.recentRuns[0] : null;
  const finished = r.recentRuns.filter((run) => run.outcome !== 'running');
  let consecutive = 0;
  while (finished[consecutive]?.outcome === 'failed') consecutive++;
  return {
    now,
    role: null,
    runningSince: running?.started_at ?? null,
    backfill: r.backfill && r.backfill.phase !== 'done' ? { ...r.backfill, ratePerSecond: {} } : null,
    rateLimited: null,
    failures: consecutive > 0 ? { consecutive, lastError: finished[0]!.error ?? 'no error recorded' } : null,
    problem: null,
    lastSuccessAt: r.lastSuccessAt,
    lagSeconds: r.lastCycle?.lagSeconds ?? null,
  };
}

/**
 * The keeper's view when no daemon's memory is at hand (`wsmirror status` with no daemon
 * answering, a fleet worker's page of one workspace): the state as the mirror's tables tell it.
 * `problem` is a failure the caller knows of that the tables do not show (a fleet's revoked key).
 */
export function mirrorLive(mirror: Omit<StatusReport, 'live'> | null, problem: string | null = null): LiveStatus {
  const now = Date.now();
  const known: StateFacts = mirror
    ? mirrorFacts(mirror, now)
    : {
        now,
        role: null,
        runningSince: null,
        backfill: null,
        rateLimited: null,
        failures: null,
        problem: null,
        lastSuccessAt: null,
        lagSeconds: null,
      };
  const facts = { ...known, problem };
  return {
    source: 'mirror',
    state: describeState(facts),
    role: null,
    version: null,
    startedAt: null,
    uptimeSeconds: null,
    freshness: {
      lagSeconds: facts.lagSeconds,
      lastSuccessAt: facts.lastSuccessAt,
      watermark: mirror?.watermark ?? null,
      ...asOfField(mirror?.currentAsOf?.asOf),
    },
    cycles: [],
    charts: null,
    requestCeilingPerMinute: null,
    verify: null,
  };
}

function runRow(row: SyncRunRow): RunRow {
  // ISO in the report, as the watermark and upstream head are, whatever form the store keeps.
  return { ...row, started_at: fromDbTimestamp(row.started_at), finished_at: fromDbTimestamp(row.finished_at) };
}

/** Two index lookups (sync_runs (kind, started_at)): the newest of each kind that verifies. */
async function lastVerify(store: Store): Promise<RunRow | null> {
  const rows = [];
  for (const kind of ['verify', 'reconcile']) {
    const row = await store.lastRunOf(kind);
    if (row) rows.push(runRow(row));
  }
  rows.sort((a, b) => Date.parse(b.started_at ?? '') - Date.parse(a.started_at ?? ''));
  return rows[0] ?? null;
}

/** The upstream gives no list totals; the pipelines' dealCount sums to the deals a backfill will copy. */
async function dealEstimate(store: Store): Promise<Record<string, number>> {
  const n = await store.listedDealCount();
  return n > 0 ? { deals: n } : {};
}
