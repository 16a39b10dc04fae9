/**
 * How far upstream times may lie ahead of a clock and still be believed (docs/sync.md, "Hostile
 * upstream"). Shared by the sync (events, the watermark, skips by `updatedAt`) and the store (a
 * stored copy that supersedes an older one), so one bound holds everywhere.
 */

/**
 * How far an upstream `Date` header may lie from the local clock, either way, and still be taken
 * as the upstream's clock. Five minutes: machines kept by NTP agree within a second, and a clock
 * further off than this is a broken one (Kerberos allows the same skew). Beyond it the local clock
 * stands in wherever the sync bounds upstream times.
 */
export const CLOCK_TRUST_MS = 300_000;

/**
 * How far an event's occurredAt may lie beyond the clock that bounds it and still move the
 * watermark. Smaller than the default lookback (300 s), so an accepted event slightly ahead of the
 * clock can never push the next window's start past events that happen after it.
 */
export const FUTURE_TOLERANCE_MS = 60_000;

/**
 * The furthest an upstream time can plausibly lie ahead of the local clock: a trusted upstream
 * clock at most {@link CLOCK_TRUST_MS} ahead, plus {@link FUTURE_TOLERANCE_MS}. The watermark never
 * passes the local clock by more; a record's `updatedAt` beyond it decides no skip.
 */
export const MAX_AHEAD_OF_LOCAL_MS = CLOCK_TRUST_MS + FUTURE_TOLERANCE_MS;

/**
 * Whether an upstream time (ms) is plausible against the local clock (ms): not more than
 * {@link MAX_AHEAD_OF_LOCAL_MS} ahead of it. NaN on either side is not plausible.
 */
export function plausibleAgainstLocal(upstreamMs: number, localMs: number): boolean {
  return upstreamMs - localMs <= MAX_AHEAD_OF_LOCAL_MS;
}
