import { Cron } from 'croner';

export type Role = 'standby' | 'writer' | 'stopping';

export interface BackfillProgress {
  phase: string;
  copied: Record<string, number>;
  /** Expected totals per list where the upstream tells (deals). */
  estimate: Record<string, number>;
}

/** What /healthz and /readyz answer; every field is also in their JSON bodies. */
export interface HealthSnapshot {
  role: Role;
  lastSuccessAt: string | null;
  consecutiveFailures: number;
  lagSeconds: number | null;
  lastError: string | null;
  /** ISO start of the cycle running now, null between cycles. */
  cycleStartedAt: string | null;
  lastProgressAt: string | null;
  lockLost: boolean;
  backfill: BackfillProgress | null;
  /** Cycles in a row that failed because the sync could not move (see UNHEALTHY_AFTER_FAILURES). */
  consecutiveStuck: number;
  /** The mirror's "current as of" (docs/design.md §4.11); null while unknown. */
  currentAsOf: string | null;
}

/**
 * Failures that mean the sync itself cannot move (a listing that never ends, a cycle with no
 * progress), as opposed to an upstream that is down: this many in a row fail liveness.
 */
export const UNHEALTHY_AFTER_FAILURES = 3;
const STUCK_CODES = new Set(['PAGING_RUNAWAY', 'CYCLE_STALLED']);

export type CycleOutcome = { ok: true } | { ok: false; error: string; code?: string };

export interface Verdict {
  ok: boolean;
  body: Record<string, unknown>;
}

/**
 * The daemon's state as the health endpoints see it. The run loop and the sync hooks write it;
 * liveness and readiness are pure functions of it and the clock, so tests can check every case.
 */
export class HealthTracker {
  readonly state: HealthSnapshot = {
    role: 'standby',
    lastSuccessAt: null,
    consecutiveFailures: 0,
    lagSeconds: null,
    lastError: null,
    cycleStartedAt: null,
    lastProgressAt: null,
    lockLost: false,
    backfill: null,
    consecutiveStuck: 0,
    currentAsOf: null,
  };
  private readonly tickMs: number;
  /** Told when a cycle starts and ends (the status page's cycle log). */
  onCycle: { started(kind: string): void; ended(outcome: CycleOutcome): void; split?(finished: string, next: string): void } | null = null;

  /**
   * @param schedule croner pattern of the sync; readiness allows three of its ticks since the last success.
   * @param stallMs liveness fails when a running cycle makes no progress for this long (config `stallTimeoutMs`).
   */
  constructor(
    schedule: string,
    readonly stallMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tickMs = tickInterval(schedule);
  }

  /** @param kind `sync` (which begins with the backfill while one is unfinished) or `reconcile`. */
  cycleStarted(kind = 'sync'): void {
    this.state.cycleStartedAt = new Date(this.now()).toISOString();
    this.onCycle?.started(kind);
  }

  /**
   * The part of the cycle just done is a run of its own (the backfill before its catch-up sync):
   * the status page lists it apart, as `sync_runs` does.
   */
  cycleSplit(finished: string, next: string): void {
    this.onCycle?.split?.(finished, next);
  }

  cycleEnded(outcome: CycleOutcome): void {
    this.state.cycleStartedAt = null;
    if (outcome.ok) {
      this.state.consecutiveFailures = 0;
      this.state.consecutiveStuck = 0;
      this.state.lastError = null;
      this.state.lastSuccessAt = new Date(this.now()).toISOString();
    } else {
      this.state.consecutiveFailures++;
      this.state.consecutiveStuck = outcome.code !== undefined && STUCK_CODES.has(outcome.code) ? this.state.consecutiveStuck + 1 : 0;
      this.state.lastError = outcome.error;
    }
    this.onCycle?.ended(outcome);
  }

  /** An answered request or a committed page or record. */
  progress(): void {
    this.state.lastProgressAt = new Date(this.now()).toISOString();
  }

  /** Milliseconds the running cycle has gone without progress (0 between cycles). */
  stalledMs(): number {
    if (this.state.cycleStartedAt === null) return 0;
    const since = Math.max(Date.parse(this.state.cycleStartedAt), this.state.lastProgressAt ? Date.parse(this.state.lastProgressAt) : 0);
    return Math.max(0, this.now() - since);
  }

  liveness(): Verdict {
    const s = this.state;
    const stalled = this.stalledMs();
    let problem: string | null = null;
    if (s.lockLost) problem = 'the writer lock was lost; this process stops writing and should be restarted';
    else if (stalled > this.stallMs)
      problem = `the running cycle has made no progress for ${Math.round(stalled / 1000)} s (bound ${Math.round(this.stallMs / 1000)} s)`;
    else if (s.consecutiveStuck >= UNHEALTHY_AFTER_FAILURES)
      problem = `the last ${s.consecutiveStuck} cycles made no progress (a listing that never ends or a stalled cycle): ${s.lastError ?? ''}`;
    return { ok: problem === null, body: { status: problem === null ? 'ok' : 'unhealthy', ...(problem ? { reason: problem } : {}), ...s } };
  }

  readiness(): Verdict {
    const s = this.state;
    const live = this.liveness();
    if (!live.ok) return { ok: false, body: { status: 'not ready', reason: live.body.reason, ...s } };
    if (s.role === 'stopping') return { ok: false, body: { status: 'not ready', reason: 'stopping', ...s } };
    if (s.role === 'standby') return { ok: true, body: { status: 'standby', ...s } };
    if (s.backfill !== null) return { ok: false, body: { status: 'not ready', reason: 'backfilling', progress: s.backfill, ...s } };
    const boundMs = 3 * this.tickMs;
    if (s.lastSuccessAt !== null && this.now() - Date.parse(s.lastSuccessAt) <= boundMs)
      return { ok: true, body: { status: 'ready', ...s } };
    const reason =
      s.lastSuccessAt === null
        ? s.lastError
          ? `the cycles fail: ${s.lastError}`
          : 'no cycle has succeeded yet'
        : `the last successful cycle ended more than three schedule ticks (${Math.round(boundMs / 1000)} s) ago${s.lastError ? `; the cycles fail: ${s.lastError}` : ''}`;
    return { ok: false, body: { status: 'not ready', reason, ...s } };
  }
}

/** Milliseconds between two consecutive ticks of a croner pattern (the next two runs from now). */
export function tickInterval(schedule: string): number {
  // Cycles follow each other; a busy one may take as long as a default tick's (docs/design.md §4.10).
  if (schedule === 'continuous') return 30_000;
  const job = new Cron(schedule, { paused: true });
  try {
    const [a, b] = job.nextRuns(2);
    return a && b ? Math.max(1000, b.getTime() - a.getTime()) : 60_000;
  } finally {
    job.stop();
  }
}
