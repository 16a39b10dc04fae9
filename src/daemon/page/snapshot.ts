import type { RecordOutcome } from '../../sync/index.js';
import type { LiveStatus, StatusReport } from '../status-report.js';

/** Rows of the cycle table. */
export const CYCLE_ROWS = 20;

/** One row of the cycle table: a cycle of this process, or an older sync_runs row. */
export interface CycleRow {
  startedAt: string;
  durationMs: number | null;
  kind: string;
  eventsRead: number | null;
  eventsNew: number | null;
  /** Records re-read by outcome; null for a run before this process started (sync_runs keeps only the total). */
  records: Record<RecordOutcome, number> | null;
  recordsTotal: number | null;
  /** Records a backfill copied from list pages. */
  copied: number;
  requests: number | null;
  retries: number | null;
  /** Answers 429; null where not recorded. */
  rateLimited: number | null;
  outcome: string;
  error: string | null;
}

/** Everything the status page shows, typed; renderPage turns it into HTML and nothing else. */
export interface PageSnapshot {
  generatedAt: string;
  live: LiveStatus;
  /** The mirror's side of the status; null when it could not be read (see mirrorError). */
  mirror: Omit<StatusReport, 'live'> | null;
  mirrorError: string | null;
  cycles: CycleRow[];
  /** Where the page sits, when another server serves it (a fleet worker, one page per workspace); absent: the daemon's own page. */
  frame?: PageFrame;
}

/** A page served under another's: its title, a link back up, a line above the state, and its own JSON. */
export interface PageFrame {
  title: string;
  up: { href: string; label: string };
  /** Shown above the state line (the fleet's own view of the workspace). */
  note: string;
  /** This page's JSON, in place of /status.json. */
  json: string;
}

/**
 * This process's cycles first (they know records by outcome and 429s), then sync_runs rows from
 * before it started, up to {@link CYCLE_ROWS}: the table survives a restart.
 */
export function cycleRows(live: LiveStatus, mirror: Omit<StatusReport, 'live'> | null): CycleRow[] {
  const rows: CycleRow[] = live.cycles.slice(0, CYCLE_ROWS).map((c) => ({
    startedAt: c.startedAt,
    durationMs: c.durationMs,
    kind: c.kind,
    eventsRead: c.eventsRead,
    eventsNew: c.eventsNew,
    records: c.records,
    recordsTotal: Object.values(c.records).reduce((a, b) => a + b, 0),
    copied: c.copied,
    requests: c.requests,
    retries: c.retries,
    rateLimited: c.rateLimited,
    outcome: c.outcome,
    error: c.error,
  }));
  const since = live.startedAt === null ? Infinity : Date.parse(live.startedAt);
  for (const run of mirror?.recentRuns ?? []) {
    if (rows.length >= CYCLE_ROWS) break;
    const started = run.started_at === null ? NaN : Date.parse(run.started_at);
    if (!(started < since)) continue;
    rows.push({
      startedAt: run.started_at ?? '',
      durationMs: run.finished_at === null ? null : Date.parse(run.finished_at) - started,
      // An idle row of continuous mode stands for many polls (sync_runs.cycles).
      kind: run.cycles > 1 ? `${run.kind} ×${run.cycles}` : run.kind,
      eventsRead: run.events_read,
      eventsNew: run.events_new,
      records: null,
      recordsTotal: run.records_fetched,
      copied: 0,
      requests: run.requests,
      retries: run.retries,
      rateLimited: null,
      outcome: run.outcome ?? 'running',
      error: run.error,
    });
  }
  return rows;
}
