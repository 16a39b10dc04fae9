export { runBackfill, type BackfillOptions, type BackfillState } from './backfill.js';
export { FIRST_LIST } from './backfill-phases.js';
export { MAX_LIST_PASSES, mayLeaveList } from './list-passes.js';
export { type RecordOutcome, type SyncContext, type SyncHooks } from './context.js';
export {
  isBackfilled,
  readBackfill,
  readLateEvent,
  readLastCycle,
  readLookback,
  readReadFloor,
  readWatermark,
  readSavedWindow,
  recordLastCycle,
  readAsOf,
  type AsOfState,
  STATE_VERSION,
  upgradeStoredState,
  type LastCycle,
  type LateEvent,
  type LookbackState,
  type WindowState,
} from './state.js';
export { runSyncCycle, type BehindReason, type CycleResult } from './cycle.js';
export { MID_WINDOW_DRAIN_THRESHOLD } from './window-read.js';
export {
  DEFAULT_FULL_LOOKBACK_EVERY_SECONDS,
  DEFAULT_TICK_OVERLAP_MIN_SECONDS,
  DEFAULT_TICK_OVERLAP_SECONDS,
  LATE_EVENT_HOLD_SECONDS,
  lateHoldEnd,
  lateLately,
  planWindow,
} from './window.js';
export { drainDirty, STALE_READS_ACCEPTED_AFTER } from './drain.js';
export { refreshPipelines } from './pipelines.js';
export { recordRun, type RecordRunOptions } from './runs.js';
export { emptyStats, type RunStats } from './stats.js';
export { CYCLE_STEPS, emptyStepTimes, StepClock, type CycleStep, type StepTimes } from './steps.js';
export { runVerify, type VerifyResult } from './verify.js';
export type { Drift } from './verify-drift.js';
export { repairTarget, type RepairResult, type RepairTarget } from './verify-repair.js';
export { CLOCK_TRUST_MS, FUTURE_TOLERANCE_MS, plausibleHead, UpstreamClockAheadError } from './plausible.js';
export { CycleStalledError, DEFAULT_STALL_TIMEOUT_MS } from './watchdog.js';
export { advanceAsOf, computeAsOf, guaranteedOverlapSeconds } from './as-of.js';
export { lagBetween, syncOnce, type CycleSummary } from './lag.js';
export { PRUNE_STEP_MS, pruneRetainedEvents } from './retention.js';
export { runResync, resyncLine, type RecordRef, type ResyncedRecord, type ResyncResult } from './resync.js';
export { backfillSinceLine, runBackfillSince, type BackfillSinceResult } from './backfill-since.js';
export { queueWriterRequest, serveWriterRequests, waitForWriterRequest, type WaitOptions, type WriterRequestKind } from './requests.js';
