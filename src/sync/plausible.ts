import type { Page, WorkspaceEvent } from '../api/index.js';

/**
 * How far an event's occurredAt may lie beyond the upstream's own clock (its `Date` header) and
 * still move the watermark (docs/sync.md, "Hostile upstream"). Smaller than the default lookback
 * (300 s), so an accepted event slightly ahead of the clock can never push the next window's
 * start past events that happen after it.
 */
export const FUTURE_TOLERANCE_MS = 60_000;

/**
 * The latest occurredAt a page can plausibly hold: the upstream's clock plus the tolerance. When
 * the upstream sends no usable Date header, the local clock stands in (it bounds, never sets, the
 * watermark).
 */
export function plausibleLimit(page: Pick<Page<unknown>, 'serverDate'>, now: string): number {
  const clock = page.serverDate ? Date.parse(page.serverDate) : Date.parse(now);
  return clock + FUTURE_TOLERANCE_MS;
}

export function isPlausible(event: Pick<WorkspaceEvent, 'occurredAt'>, limitMs: number): boolean {
  return Date.parse(event.occurredAt) <= limitMs;
}

/**
 * The newest plausible event of a newest-first page (for the lag figure), or null when the page
 * holds none; `unknown` is true when the page held events but none was plausible.
 */
export function plausibleHead(page: Page<WorkspaceEvent>, now: string): { head: string | null; unknown: boolean } {
  const limit = plausibleLimit(page, now);
  let head: string | null = null;
  for (const e of page.items) {
    if (!isPlausible(e, limit)) continue;
    if (head === null || Date.parse(e.occurredAt) > Date.parse(head)) head = e.occurredAt;
  }
  return { head, unknown: head === null && page.items.length + page.invalid.length > 0 };
}
