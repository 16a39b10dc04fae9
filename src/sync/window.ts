import { shiftIso } from '../util/time.js';
import type { LookbackState, WindowState } from './state.js';

/** Default of `tickOverlapSeconds` (config schema): what a tick re-reads before the watermark. */
export const DEFAULT_TICK_OVERLAP_SECONDS = 5;
/** Default of `fullLookbackEverySeconds` (config schema): how often a window re-reads the lookback. */
/**
 * 6 × the default lookback: a full window reads about this plus the lookback of log, so the
 * change log costs at most 1.17 × one read of every event, plus one request per tick.
 */
export const DEFAULT_FULL_LOOKBACK_EVERY_SECONDS = 1800;

export interface WindowConfig {
  lookbackSeconds: number;
  /** Default {@link DEFAULT_TICK_OVERLAP_SECONDS}. */
  tickOverlapSeconds?: number;
  /** Default {@link DEFAULT_FULL_LOOKBACK_EVERY_SECONDS}; 0 makes every window a full one. */
  fullLookbackEverySeconds?: number;
}

/**
 * The next window (docs/design.md §4.2, docs/sync.md "Windows and lookback"). A tick reads from
 * `watermark − tickOverlapSeconds`. A full window, due every `fullLookbackEverySeconds`, reads
 * from `anchor − lookbackSeconds`, where anchor is the watermark the previous full window started
 * from: an event that becomes visible after that window started, late by up to the lookback, has
 * `occurredAt ≥ anchor − lookback`, so this window reads it, however far the watermark moved in
 * between. Reading only `watermark − lookback` would miss such an event once the watermark has
 * moved more than lookback − lateness since it became visible.
 */
export function planWindow(watermark: string | null, lookback: LookbackState | null, config: WindowConfig, now: string): WindowState {
  if (watermark === null) return { since: null, cursor: null, maxOccurredAt: null, full: { startedAt: now, watermark: null } };
  if (!fullLookbackDue(lookback, config, now)) {
    const overlap = config.tickOverlapSeconds ?? DEFAULT_TICK_OVERLAP_SECONDS;
    return { since: shiftIso(watermark, -overlap * 1000), cursor: null, maxOccurredAt: watermark };
  }
  const from = lookback?.anchor != null && Date.parse(lookback.anchor) < Date.parse(watermark) ? lookback.anchor : watermark;
  return {
    since: shiftIso(from, -config.lookbackSeconds * 1000),
    cursor: null,
    maxOccurredAt: watermark,
    full: { startedAt: now, watermark },
  };
}

/**
 * A full window is due with no record of one (a new mirror, or one from before this state
 * existed), once the period has passed, or when the local clock went back past the last one
 * (rather than wait for it to catch up again).
 */
export function fullLookbackDue(lookback: LookbackState | null, config: WindowConfig, now: string): boolean {
  const every = config.fullLookbackEverySeconds ?? DEFAULT_FULL_LOOKBACK_EVERY_SECONDS;
  if (lookback === null || every === 0) return true;
  const elapsed = Date.parse(now) - Date.parse(lookback.lastFullAt);
  return !(elapsed >= 0 && elapsed < every * 1000);
}
