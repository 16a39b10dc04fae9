import type { ApiClient } from '../api/index.js';
import type { Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import type { Store } from '../store/index.js';
import type { AsOfState } from './state.js';
import type { StepClock } from './steps.js';
import type { RecordEntity, RecordType } from '../entities/index.js';

/** Everything a sync step needs; built once per command by the CLI. */
export interface SyncContext {
  readonly store: Store;
  readonly client: ApiClient;
  readonly logger: Logger;
  readonly config: Pick<Config, 'lookbackSeconds' | 'pageSize' | 'concurrency'> &
    Partial<
      Pick<
        Config,
        'stallTimeoutMs' | 'tickOverlapSeconds' | 'tickOverlapMinSeconds' | 'fullLookbackEverySeconds' | 'drainPlan' | 'dailyWindowDays'
      >
    >;
  /**
   * Graceful stop (first SIGTERM): checked between pages, so the page in flight commits and the
   * next start resumes at the persisted cursor. Hard aborts go through the client's own signal.
   */
  readonly stopSignal: AbortSignal;
  /** Wall clock for received_at / synced_at only; the watermark never comes from it. */
  readonly now: () => string;
  readonly hooks?: SyncHooks;
  /** Set by a cycle for its own steps: aborts their requests when the cycle stalls. */
  readonly cycleSignal?: AbortSignal;
  /** Set by a cycle for its own steps: called after every committed page or record. */
  readonly progress?: () => void;
  /** Set by a cycle for its own steps: where its wall time goes (src/sync/steps.ts). */
  readonly steps?: StepClock;
}

/** Observers for metrics and progress; all optional. */
export interface SyncHooks {
  onPage?(kind: 'events' | RecordEntity['plural'] | 'history', info: { items: number; invalid: number }): void;
  /**
   * After the commit that wrote what the re-read found. `occurredAt`: the newest event that marked
   * the record (the change the commit made visible); `entityId`: which record (GET /wait for it).
   */
  onRecord?(entityType: RecordType, outcome: RecordOutcome, occurredAt?: string, entityId?: string): void;
  /** A cycle recorded the mirror's "current as of" (committed): src/sync/as-of.ts. */
  onAsOf?(state: AsOfState): void;
}

/**
 * What became of a record the sync re-read. These are the values of the `outcome` label of
 * `wsmirror_records_total` and of the status page's records chart (docs/operations.md), so they do
 * not change: `fresh` is a current read, one whose updatedAt is at least as new as the newest event
 * that marked the record; `stale` an older read, tried again next cycle; `stale-accepted` a stale
 * read taken after a few tries; `deleted` a record the upstream no longer has; `quarantined` a
 * copy the store could not hold.
 */
export type RecordOutcome = 'fresh' | 'stale' | 'stale-accepted' | 'deleted' | 'quarantined';

export type { WindowState } from './state.js';

export function laterOf(a: string | null, b: string | null): string | null {
  if (a === null) return b;
  if (b === null) return a;
  return Date.parse(b) > Date.parse(a) ? b : a;
}
