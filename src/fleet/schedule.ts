import { Cron } from 'croner';
import { nextPollDelay } from '../daemon/index.js';
import type { Config } from '../config/index.js';

/** A rejected key is tried again this long after: not hot, yet a rotated key is picked up unaided. */
export const KEY_REJECTED_RETRY_MS = 10 * 60_000;
/** Longest pause after slices that failed in a row (doubling from 5 s). */
export const MAX_FAILURE_BACKOFF_MS = 5 * 60_000;

/** What a finished slice tells the scheduler. */
export interface SliceResult {
  ok: boolean;
  /** The backfill is unfinished: the next slice continues it. */
  backfilling: boolean;
  /** The upstream is known to be ahead (the cycle stopped at its bound, or was behind). */
  behind: boolean;
  /** The slice's work: a backfill's requests are never charged to the idle spacing (src/daemon/continuous.ts). */
  kind?: 'backfill' | 'sync' | 'reconcile';
  /** The sync re-read its full lookback window, charged as the ordinary poll it replaces (nextPollDelay). */
  fullLookback: boolean;
  eventsNew: number;
  requests: number;
  elapsedMs: number;
  failuresInARow: number;
  errorCode: string | null;
  ratePerSecond: number;
}

/**
 * Milliseconds until the workspace's next slice. A backfill and a workspace behind go on at once
 * (at the back of the queue: slices run first-come first-served, one priority); a cron schedule
 * waits for its next tick; "continuous" spaces polls by the daemon's own rule (nextPollDelay); a
 * failure backs off, and a rejected key waits KEY_REJECTED_RETRY_MS.
 */
export function nextSliceDelay(config: Config, r: SliceResult, now = new Date()): number {
  if (r.errorCode === 'AUTH_REJECTED' || r.errorCode === 'KEY_UNAVAILABLE') return KEY_REJECTED_RETRY_MS;
  if (!r.ok) return Math.min(MAX_FAILURE_BACKOFF_MS, 5000 * 2 ** Math.max(0, r.failuresInARow - 1));
  // The slice that finishes a backfill is followed at once by its catch-up sync, as in `run`.
  if (r.backfilling || r.behind || r.kind === 'backfill') return 0;
  if (config.schedule === 'continuous') {
    const outcome = { ok: true, requests: r.requests, fullLookback: r.fullLookback, eventsNew: r.eventsNew, behind: r.behind };
    return nextPollDelay(outcome, r.elapsedMs, 0, {
      minPollIntervalMs: config.minPollIntervalMs,
      ratePerSecond: r.ratePerSecond,
      everyWindowFull: config.fullLookbackEverySeconds === 0,
    });
  }
  const next = new Cron(config.schedule, { paused: true }).nextRun(now);
  return next ? Math.max(0, next.getTime() - now.getTime()) : 60_000;
}

/**
 * Whether the nightly reconcile (`reconcileSchedule`, as `run`'s) has ticked since `since` (the
 * last successful reconcile, or when the workspace was added): a fleet catches up one missed
 * while no worker ran, never several.
 */
export function reconcileDue(schedule: string, since: Date, now = new Date()): boolean {
  const next = new Cron(schedule, { paused: true }).nextRun(since);
  return next !== null && next.getTime() <= now.getTime();
}
