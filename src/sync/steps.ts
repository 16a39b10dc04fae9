/**
 * Where a sync cycle's wall time goes, step by step (docs/operations.md, "Cycle steps"): logged with
 * the cycle's summary line, counted in `wsmirror_cycle_step_seconds_total` and returned by the
 * benchmark's tick. Cheap enough to be always on: two clock reads per timed call.
 */
export const CYCLE_STEPS = [
  /** GET /pipelines and their upsert, before the window. */
  'pipelines',
  /** Reading the saved window, watermark and floors at the start. */
  'state',
  /** The window's change-log pages: requests, parsing, validation (what no store step below holds). */
  'window-read',
  /** Storing a page's events, their users, and the history rows and gaps new events tell. */
  'events',
  /** Quarantine rows and the look-ups that decide them (invalid or reused events). */
  'quarantine',
  /** The mirrored versions read before marking, the dirty marks, the dirty count. */
  'dirty-marks',
  /** The window's position, late event and watermark (sync_state). */
  'window-state',
  /** Transactions' BEGIN, COMMIT and what follows a commit (SQLite: the WAL bound check). */
  'commit',
  /** Reading the dirty set and the mirror's newest listed records to plan the drain. */
  'drain-plan',
  /** The drain's list pages and reads by id: requests, parsing, validation. */
  'drain-read',
  /** Storing the records read (their rows, children, references and history), deletions (also those events tell), stored copies read back. */
  'records',
  /** Clearing the dirty marks of records read, counting stale reads. */
  'dirty-clear',
  /** The mirror's "current as of" after the drain. */
  'as-of',
  /** The incremental refresh of the rpt_ tables. */
  'report',
  /** Whether a drained record is newer than the watermark (the catch-up check). */
  'behind',
] as const;

export type CycleStep = (typeof CYCLE_STEPS)[number];

/** Milliseconds of wall time per step; every step present, 0 when it did not run. */
export type StepTimes = Record<CycleStep, number>;

export function emptyStepTimes(): StepTimes {
  return Object.fromEntries(CYCLE_STEPS.map((s) => [s, 0])) as StepTimes;
}

/**
 * Charges each moment of wall time to one step: the innermost open one (the last opened of those
 * still open). Steps nest (a store write inside the window's read) and may overlap in time (a
 * drain's batch commits while its reads go on); either way a moment counts once, so the steps sum
 * to the time some step was open, never more than the cycle's wall time. A moment with a
 * transaction open counts as the store's even while a request's answer is parsed beside it: on
 * SQLite the statements hold the event loop; on PostgreSQL the connection is the serial part.
 */
export class StepClock {
  readonly times: StepTimes;
  private readonly open: { step: CycleStep }[] = [];
  private since = 0;

  constructor(times: StepTimes = emptyStepTimes()) {
    this.times = times;
  }

  /** The step the present moment is charged to; null when none is open. */
  get current(): CycleStep | null {
    return this.open[this.open.length - 1]?.step ?? null;
  }

  async time<T>(step: CycleStep, work: () => Promise<T>): Promise<T> {
    const entry = { step };
    this.charge();
    this.open.push(entry);
    try {
      return await work();
    } finally {
      this.charge();
      this.open.splice(this.open.lastIndexOf(entry), 1);
    }
  }

  private charge(): void {
    const now = performance.now();
    const top = this.open[this.open.length - 1];
    if (top !== undefined) this.times[top.step] += now - this.since;
    this.since = now;
  }
}

/** Runs `work` as `step` on the cycle's clock; without one (a backfill, a test's context) just runs it. */
export function timed<T>(ctx: { readonly steps?: StepClock }, step: CycleStep, work: () => Promise<T>): Promise<T> {
  return ctx.steps ? ctx.steps.time(step, work) : work();
}

/** The steps that took time, rounded to the millisecond, for the cycle's log line. */
export function roundedSteps(times: StepTimes): Partial<Record<CycleStep, number>> {
  const out: Partial<Record<CycleStep, number>> = {};
  for (const step of CYCLE_STEPS) if (times[step] >= 0.5) out[step] = Math.round(times[step]);
  return out;
}
