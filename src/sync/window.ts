import { shiftIso } from '../util/time.js';
import type { LookbackState, WindowState } from './state.js';

/** Default of `tickOverlapSeconds` (config schema): what a tick re-reads before the watermark. */
export const DEFAULT_TICK_OVERLAP_SECONDS = 5;
/**
 * Default of `tickOverlapMinSeconds` (config schema): the part of the overlap a tick re-reads even
 * when that costs a change-log request of its own. The rest of the overlap is read only as far as
 * the pages the tick needs anyway reach, unless a late event was seen lately (below). 1 s keeps a
 * busy tick within the request budget at 29 events/s on a 5-second schedule (docs/sync.md, "The
 * overlap's cost").
 */
export const DEFAULT_TICK_OVERLAP_MIN_SECONDS = 1;
/**
 * After a window reads an event that became visible later than the guaranteed overlap reaches,
 * ticks re-read the whole `tickOverlapSeconds` for this long (local clock): lateness seen once is
 * likely to recur, and then the overlap pays for itself. An hour spans two full windows at the
 * default `fullLookbackEverySeconds`, so a workspace that keeps showing such events keeps the
 * whole overlap.
 */
export const LATE_EVENT_HOLD_SECONDS = 3600;
/**
 * Default of `fullLookbackEverySeconds` (config schema): how often a window re-reads the lookback.
 * 6 × the default lookback: a full window reads about this plus the lookback of log, so the
 * change log costs at most 1.17 × one read of every event, plus one request per tick.
 */
export const DEFAULT_FULL_LOOKBACK_EVERY_SECONDS = 1800;
/**
 * How far ahead of the local clock an upstream `Date` header may lie and still serve as a read
 * floor. An honest one is behind the upstream's clock (HTTP dates drop the milliseconds), so this
 * only has to cover the offset between the two clocks; a Date further ahead could make a tick skip
 * part of its overlap, so it is not trusted (docs/sync.md, "Windows and lookback").
 */
export const READ_FLOOR_AHEAD_MS = 2_000;
/** How far behind the local clock a `Date` header may lie and still serve as a read floor. */
export const READ_FLOOR_BEHIND_MS = 60_000;

export interface WindowConfig {
  lookbackSeconds: number;
  /** Default {@link DEFAULT_TICK_OVERLAP_SECONDS}. */
  tickOverlapSeconds?: number;
  /** Default {@link DEFAULT_TICK_OVERLAP_MIN_SECONDS}; at most `tickOverlapSeconds` takes effect. */
  tickOverlapMinSeconds?: number;
  /** Default {@link DEFAULT_FULL_LOOKBACK_EVERY_SECONDS}; 0 makes every window a full one. */
  fullLookbackEverySeconds?: number;
}

/**
 * Read floors (upstream times, from `Date` headers) that bound when windows read the log; see
 * {@link tickSince}. Both must have passed {@link trustedReadFloor}.
 */
export interface ReadFloors {
  /** The floor of the window that set the watermark (stored with it); null when unknown. */
  previous: string | null;
  /** This cycle's: the `Date` of an answer received before the new window's first request. */
  current: string | null;
}

/**
 * The next window (docs/design.md §4.2, docs/sync.md "Windows and lookback"). A tick reads from
 * {@link tickSince}. A full window, due every `fullLookbackEverySeconds`, reads from
 * `anchor − lookbackSeconds`, where anchor is the watermark the previous full window started
 * from: an event that becomes visible after that window started, late by up to the lookback, has
 * `occurredAt ≥ anchor − lookback`, so this window reads it, however far the watermark moved in
 * between. Reading only `watermark − lookback` would miss such an event once the watermark has
 * moved more than lookback − lateness since it became visible. Every window carries this cycle's
 * read floor, which its last page stores with the watermark for the next plan.
 */
export function planWindow(
  watermark: string | null,
  lookback: LookbackState | null,
  config: WindowConfig,
  now: string,
  floors: ReadFloors = { previous: null, current: null },
  lateSeenAt: string | null = null,
): WindowState {
  const readFloor = floors.current;
  if (watermark === null) return { since: null, cursor: null, maxOccurredAt: null, readFloor, full: { startedAt: now, watermark: null } };
  const overlap = config.tickOverlapSeconds ?? DEFAULT_TICK_OVERLAP_SECONDS;
  const guaranteed = shiftIso(watermark, -Math.min(config.tickOverlapMinSeconds ?? DEFAULT_TICK_OVERLAP_MIN_SECONDS, overlap) * 1000);
  if (!fullLookbackDue(lookback, config, now)) {
    const since = tickSince(watermark, overlap, floors);
    const cut = Date.parse(guaranteed) > Date.parse(since) && !lateLately(lateSeenAt, now);
    return { since, cursor: null, maxOccurredAt: watermark, readFloor, lateBefore: guaranteed, ...(cut ? { reach: guaranteed } : {}) };
  }
  const from = lookback?.anchor != null && Date.parse(lookback.anchor) < Date.parse(watermark) ? lookback.anchor : watermark;
  return {
    since: shiftIso(from, -config.lookbackSeconds * 1000),
    cursor: null,
    maxOccurredAt: watermark,
    readFloor,
    full: { startedAt: now, watermark },
    lateBefore: guaranteed,
  };
}

/**
 * Whether a window read a late event (one older than its `lateBefore`) within the last
 * {@link LATE_EVENT_HOLD_SECONDS}. A local clock that went back before that time counts as lately.
 */
export function lateLately(lateSeenAt: string | null, now: string): boolean {
  if (lateSeenAt === null) return false;
  const elapsed = Date.parse(now) - Date.parse(lateSeenAt);
  return !(elapsed >= LATE_EVENT_HOLD_SECONDS * 1000);
}

/** When the hold of {@link lateLately} ends for a late event seen at `lateSeenAt` (local clock). */
export function lateHoldEnd(lateSeenAt: string): string {
  return new Date(Date.parse(lateSeenAt) + LATE_EVENT_HOLD_SECONDS * 1000).toISOString();
}

/**
 * Whether a tick may end at this page, before the log's end: the window has a `reach` (the
 * guaranteed overlap, {@link planWindow}), every page so far came newest first, and
 * this one's oldest event lies before the reach. The newest-first order is what makes the pages
 * not yet read older still; a page out of that order makes the window read to its end.
 */
export function reachedBelow(reach: string | undefined, occurredAts: readonly string[], inOrder: boolean): boolean {
  if (reach === undefined || !inOrder || occurredAts.length === 0) return false;
  return Date.parse(occurredAts[occurredAts.length - 1] as string) < Date.parse(reach);
}

/**
 * Whether `occurredAts` (one page) runs newest first and starts no later than the previous
 * page's oldest (`previousOldest`, null on the window's first page read by this process).
 */
export function newestFirst(occurredAts: readonly string[], previousOldest: string | null): boolean {
  let prev = previousOldest === null ? Infinity : Date.parse(previousOldest);
  for (const at of occurredAts) {
    const t = Date.parse(at);
    if (!(t <= prev)) return false;
    prev = t;
  }
  return true;
}

/**
 * A tick's start: `max(watermark − o, min(watermark, F − o))`, o the overlap, F the previous
 * window's read floor. The overlap exists for an event the previous window missed because it was
 * not yet visible where the window read; it became visible after the window's first request,
 * which the upstream answered after F, and it is late by at most o, so its `occurredAt` is past
 * F − o. Busy, the watermark is about F and this is the plain `watermark − o`; idle, F − o passes
 * the watermark and a tick reads from the watermark alone: one request, where re-reading the last
 * o seconds of a burst would take more. Never later than the watermark, never earlier than the
 * plain overlap. The upstream clock going back (this cycle's floor before the previous one) means
 * F may lie ahead of the clock the events are stamped with: the plain overlap then.
 */
export function tickSince(watermark: string, overlapSeconds: number, floors: ReadFloors): string {
  const plain = shiftIso(watermark, -overlapSeconds * 1000);
  const { previous, current } = floors;
  if (previous === null || current === null || Date.parse(current) < Date.parse(previous)) return plain;
  const fromFloor = Date.parse(previous) - overlapSeconds * 1000;
  if (fromFloor <= Date.parse(plain)) return plain;
  return fromFloor >= Date.parse(watermark) ? watermark : new Date(fromFloor).toISOString();
}

/**
 * The `Date` of an upstream answer as a read floor, or null when there is none or it lies too far
 * from the local clock (ahead by more than {@link READ_FLOOR_AHEAD_MS}, behind by more than
 * {@link READ_FLOOR_BEHIND_MS}): the window then starts at the plain overlap.
 */
export function trustedReadFloor(date: string | null | undefined, now: string): string | null {
  if (date === null || date === undefined) return null;
  const at = Date.parse(date);
  const local = Date.parse(now);
  if (!Number.isFinite(at) || !Number.isFinite(local)) return null;
  if (at - local > READ_FLOOR_AHEAD_MS || local - at > READ_FLOOR_BEHIND_MS) return null;
  return new Date(at).toISOString();
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
