import type { Page, WorkspaceEvent } from '../api/index.js';
import type { Logger } from '../log/index.js';
import { WsmirrorError } from '../util/errors.js';
import { CLOCK_TRUST_MS, FUTURE_TOLERANCE_MS } from '../util/clock-bounds.js';

export { CLOCK_TRUST_MS, FUTURE_TOLERANCE_MS, MAX_AHEAD_OF_LOCAL_MS } from '../util/clock-bounds.js';

/**
 * The clock that bounds an answer's times (docs/sync.md, "Hostile upstream"): the upstream's own
 * (its `Date` header) when it lies within {@link CLOCK_TRUST_MS} of the local clock, else the
 * local clock. A `Date` of 2100 or 1970 is a broken clock, not the time.
 */
export interface BoundingClock {
  /** The clock's time, ms. */
  at: number;
  /** True when the upstream's Date is used; false when the local clock stands in. */
  trusted: boolean;
  /** The upstream's Date minus the local clock, ms; null when the answer carried no usable Date. */
  skewMs: number | null;
  /** The Date header as sent (ISO), null when absent or junk. */
  date: string | null;
}

export function boundingClock(serverDate: string | null | undefined, now: string): BoundingClock {
  const local = Date.parse(now);
  const date = serverDate ?? null;
  const at = date === null ? Number.NaN : Date.parse(date);
  if (!Number.isFinite(at)) return { at: local, trusted: false, skewMs: null, date: null };
  const skewMs = at - local;
  return Math.abs(skewMs) <= CLOCK_TRUST_MS ? { at, trusted: true, skewMs, date } : { at: local, trusted: false, skewMs, date };
}

/**
 * The latest occurredAt a page can plausibly hold: its bounding clock plus the tolerance. The
 * local clock bounds, never sets, the watermark: the watermark is always an event's own time.
 */
export function plausibleLimit(page: Pick<Page<unknown>, 'serverDate'>, now: string): number {
  return boundingClock(page.serverDate, now).at + FUTURE_TOLERANCE_MS;
}

export function isPlausible(event: Pick<WorkspaceEvent, 'occurredAt'>, limitMs: number): boolean {
  return Date.parse(event.occurredAt) <= limitMs;
}

/** The clock a reason names: "the upstream's clock (Date header …)" or "the local clock (…)". */
export function clockName(clock: BoundingClock, now: string): string {
  if (clock.trusted) return `the upstream's clock (Date header ${clock.date})`;
  if (clock.date === null) return `the local clock (${now}; the upstream sent no usable Date header)`;
  return `the local clock (${now}; the upstream's Date header ${clock.date} is ${skewText(clock.skewMs!)}, beyond the ${CLOCK_TRUST_MS / 1000} s it may differ by)`;
}

/** "1234 s ahead of the local clock" / "5 s behind the local clock". */
export function skewText(skewMs: number): string {
  const s = Math.round(Math.abs(skewMs) / 1000);
  return `${s} s ${skewMs >= 0 ? 'ahead of' : 'behind'} the local clock`;
}

/**
 * Logs, at most once per call site's lifetime (a cycle, a backfill), that the upstream's clock is
 * too far from the local one to bound event times, so the local clock does.
 */
export class ClockWarning {
  private warned = false;

  constructor(private readonly logger: Pick<Logger, 'warn'>) {}

  observe(clock: BoundingClock): void {
    if (this.warned || clock.trusted || clock.skewMs === null) return;
    this.warned = true;
    this.logger.warn(
      { upstreamDate: clock.date, clockSkewSeconds: Math.round(clock.skewMs / 1000), toleranceSeconds: CLOCK_TRUST_MS / 1000 },
      `the upstream's clock (Date header) is ${skewText(clock.skewMs)}, beyond the ${CLOCK_TRUST_MS / 1000} s tolerance; the local clock bounds event times instead (check the workspace's or this machine's clock)`,
    );
  }
}

/**
 * Whether an event rejected against the local clock says more about the upstream's clock than
 * about the event: the upstream's Date lies ahead of the local clock beyond the trust tolerance and
 * the event is recent by that Date (within the tolerance of it). An upstream whose clock runs
 * ahead stamps every new event that way, so each would be quarantined and the watermark never
 * move; the cycle stops instead ({@link UpstreamClockAheadError}). An event far before its own
 * Date (2099 under a Date of 2100) is just a bad event, quarantined like any other.
 */
export function stampedByClockAhead(clock: BoundingClock, occurredAt: string): boolean {
  if (clock.trusted || clock.skewMs === null || clock.skewMs <= CLOCK_TRUST_MS || clock.date === null) return false;
  return Date.parse(occurredAt) >= Date.parse(clock.date) - CLOCK_TRUST_MS;
}

/**
 * The upstream stamps its events with a clock too far ahead of the local one to bound them: stops
 * the cycle (exit 4) rather than quarantine every new event and report success.
 */
export class UpstreamClockAheadError extends WsmirrorError {
  constructor(clock: BoundingClock, event: Pick<WorkspaceEvent, 'id' | 'occurredAt'>) {
    super(
      'UPSTREAM_CLOCK_AHEAD',
      `The workspace's clock (its Date header ${clock.date}) is ${skewText(clock.skewMs ?? 0)}, beyond the ${CLOCK_TRUST_MS / 1000} s tolerance, and its events are stamped by it (event ${JSON.stringify(event.id.slice(0, 120))} at ${event.occurredAt}), so wsmirror cannot tell a plausible event from one in the future; nothing of this window was stored and the watermark is unchanged. Correct the clock of the workspace or of this machine (NTP); the next sync retries.`,
    );
  }
}

/**
 * The newest plausible event of a newest-first page (for the lag figure), or null when the page
 * holds none; `unknown` is true when the page held events but none was plausible, `clockAhead`
 * the first event an upstream clock running ahead explains (stampedByClockAhead), else null.
 */
export function plausibleHead(
  page: Page<WorkspaceEvent>,
  now: string,
): { head: string | null; unknown: boolean; clock: BoundingClock; clockAhead: WorkspaceEvent | null } {
  const clock = boundingClock(page.serverDate, now);
  const limit = clock.at + FUTURE_TOLERANCE_MS;
  let head: string | null = null;
  let clockAhead: WorkspaceEvent | null = null;
  for (const e of page.items) {
    if (!isPlausible(e, limit)) {
      if (clockAhead === null && stampedByClockAhead(clock, e.occurredAt)) clockAhead = e;
      continue;
    }
    if (head === null || Date.parse(e.occurredAt) > Date.parse(head)) head = e.occurredAt;
  }
  return { head, unknown: head === null && page.items.length + page.invalid.length > 0, clock, clockAhead };
}
