import { setTimeout as delay } from 'node:timers/promises';
import type { Store } from '../store/index.js';

/** How many pages one transaction may hold: the backfill's lists and the change log (docs/sync.md). */
export interface PageGroupLimits {
  /** Pages per transaction at most. Default 10. */
  maxPages?: number;
  /** A page waits at most this long (ms) for its group to commit. Default 1000. */
  maxDelayMs?: number;
}

const DEFAULT_GROUP_PAGES = 10;
const DEFAULT_GROUP_DELAY_MS = 1000;

/**
 * SQLite commits a group of pages for much less than the pages one by one: a commit writes every
 * index page the transaction touched, and pages of records with random ids share most of theirs
 * (docs/sync.md, "Backfill" and "Change-log pages commit in groups"). PostgreSQL gains nothing
 * and, as its writes do not block the event loop, keeps the network busier with a commit per page
 * (L backfill 42-46 s per page, 44-49 s in groups of 10).
 */
export function pageGroupLimits(dialect: Store['dialect']): PageGroupLimits {
  return dialect === 'sqlite' ? {} : { maxPages: 1 };
}

/** The limits with their defaults filled in; at least one page per group. */
export function groupBounds(limits: PageGroupLimits): Required<PageGroupLimits> {
  return { maxPages: Math.max(1, limits.maxPages ?? DEFAULT_GROUP_PAGES), maxDelayMs: limits.maxDelayMs ?? DEFAULT_GROUP_DELAY_MS };
}

export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** A promise that never rejects, so a read can run ahead of the code that will look at it. */
export const settle = <T>(p: Promise<T>): Promise<Settled<T>> =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

/** Waits for `pending` until `deadline` (a performance.now() time); true when it settled first. */
export async function settledBefore(pending: Promise<unknown>, deadline: number): Promise<boolean> {
  const wait = new AbortController();
  const timeout = delay(Math.max(0, deadline - performance.now()), 'timeout' as const, { signal: wait.signal });
  const first = await Promise.race([pending.then(() => 'settled' as const), timeout]);
  wait.abort(); // the race has settled; the cancelled timer's rejection goes to it, unheard
  return first === 'settled';
}
