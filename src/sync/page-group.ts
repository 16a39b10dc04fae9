import { setTimeout as delay } from 'node:timers/promises';
import type { Store } from '../store/index.js';

/** How many pages one transaction may hold: the backfill's lists (pageGroupLimits) and the change log (logGroupLimits); docs/sync.md. */
export interface PageGroupLimits {
  /** Pages per transaction at most. Default 10. */
  maxPages?: number;
  /** A page waits at most this long (ms) for its group to commit. Default 1000. */
  maxDelayMs?: number;
  /** Pages read ahead of the group being written, at most (src/sync/page-reader.ts). Default 1. */
  aheadPages?: number;
}

const DEFAULT_GROUP_PAGES = 10;
const DEFAULT_GROUP_DELAY_MS = 1000;
const DEFAULT_AHEAD_PAGES = 1;
/** Pages read ahead while a group of pages commits (bench/README.md, "Fifteenth pass"). */
const GROUP_AHEAD_PAGES = 3;

/**
 * A backfill's list pages commit in groups where the database makes a group much cheaper than its pages one by one
 * (the dialect capability `commitsPagesInGroups`, src/store/dialect.ts), else one per commit.
 * While a group commits, the backfill (copyList) reads the next pages ahead: three (an L SQLite
 * backfill shorter in seven of eight pairs than with one, by 18 % at the median). A page per
 * commit reads one ahead: more measured no faster there and cost wsmirror more CPU
 * (bench/README.md, "Fifteenth pass").
 */
export function pageGroupLimits(store: Pick<Store, 'capabilities'>): PageGroupLimits {
  return store.capabilities.commitsPagesInGroups ? { aheadPages: GROUP_AHEAD_PAGES } : { maxPages: 1 };
}

/**
 * Change-log pages commit in groups on every database (docs/sync.md, "Change-log pages commit in
 * groups"): a group's events are stored together (src/sync/event-page.ts), so a group costs a few
 * statements where its pages one by one cost a few each; on PostgreSQL, where each is a round trip
 * to the server, a tick after 2,000 writes at S made about 1,100 statements with a page per
 * commit. The pages themselves are read one after another (each cursor comes from the page before).
 */
export function logGroupLimits(): PageGroupLimits {
  return {};
}

/** The limits with their defaults filled in; at least one page per group. */
export function groupBounds(limits: PageGroupLimits): Required<PageGroupLimits> {
  return {
    maxPages: Math.max(1, limits.maxPages ?? DEFAULT_GROUP_PAGES),
    maxDelayMs: limits.maxDelayMs ?? DEFAULT_GROUP_DELAY_MS,
    aheadPages: Math.max(1, limits.aheadPages ?? DEFAULT_AHEAD_PAGES),
  };
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
