import type { ApiClient } from '../api/index.js';
import { emptyRecordSets, type RecordSets } from '../entities/index.js';
import { emptyStepTimes, type StepTimes } from './steps.js';

/** Figures of one command run, persisted in sync_runs and logged as the cycle's summary line. */
export interface RunStats {
  eventsRead: number;
  eventsNew: number;
  /**
   * New events older than the window's guaranteed overlap (docs/sync.md, "The overlap's cost"):
   * they became visible that late. Logged and counted in metrics, not stored in sync_runs.
   */
  eventsLate: number;
  recordsFetched: number;
  staleReads: number;
  staleAccepted: number;
  deleted: number;
  quarantined: number;
  /**
   * Reads of one record that failed after their retries while the workspace answered others: the
   * record stays dirty (docs/sync.md, "Hostile upstream"). Logged, not stored in sync_runs.
   */
  readFailures: number;
  requests: number;
  retries: number;
  /** Time spent refreshing the rpt_ tables at the end of the run. */
  reportRefreshMs: number;
  /** Records written by this run, for the incremental reporting refresh. */
  changed: RecordSets;
  /** Wall time per step of a sync cycle (src/sync/steps.ts); logged and counted in metrics, not stored in sync_runs. */
  steps: StepTimes;
  /**
   * Set by recordRun, which rewrites rpt_sync_health once the run is recorded as finished: the
   * reporting refresh inside the run then leaves that table to it (one rewrite per run, not two).
   */
  healthAfterRun?: boolean;
}

export function emptyStats(): RunStats {
  return {
    eventsRead: 0,
    eventsNew: 0,
    eventsLate: 0,
    recordsFetched: 0,
    staleReads: 0,
    staleAccepted: 0,
    deleted: 0,
    quarantined: 0,
    readFailures: 0,
    requests: 0,
    retries: 0,
    reportRefreshMs: 0,
    changed: emptyRecordSets(),
    steps: emptyStepTimes(),
  };
}

/** Requests and retries are the client's counters, measured as a difference over the run. */
export function requestMeter(client: ApiClient): (stats: RunStats) => void {
  const start = client.stats();
  return (stats) => {
    const end = client.stats();
    stats.requests = end.requests - start.requests;
    stats.retries = end.retries - start.retries;
  };
}
