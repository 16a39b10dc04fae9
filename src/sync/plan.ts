import { entityOf, type RecordType } from '../entities/index.js';
import type { DirtyEntry, ListedCopy } from '../store/index.js';

/** `drainPlan` (docs/sync.md, "Drain"): let the cost model choose, or force one plan. */
export type DrainPlanSetting = 'auto' | 'list' | 'record';

/** How one drain round reads the dirty records of one entity type. */
export interface TypePlan {
  entityType: RecordType;
  /** Found by paging the newest-first list (newest mark first); those not found get a GET. */
  viaList: DirtyEntry[];
  /** Read by id: tickets whose messages may have changed, and marks too deep in the list to pay. */
  viaRecord: DirtyEntry[];
  /** The oldest mark in viaList (ISO): paging stops below it. Null when viaList is empty. */
  listDownTo: string | null;
  /** Estimated list pages down to listDownTo. */
  estimatedPages: number;
  /** Requests of this plan as estimated (pages + reads by id), and of reading every record by id. */
  estimatedRequests: number;
  recordRequests: number;
}

/**
 * The cost model (docs/sync.md, "Drain"). Reading by id costs one request per record. Paging the
 * list costs one request per page and carries every record above the deepest mark it reaches,
 * so the k newest list-able marks cost pages(k) instead of k reads. pages(k) is estimated from
 * the mirror: the records above a mark are those the mirror last saw updated at or after it,
 * together with the dirty records marked at or after it (changed upstream since). The plan
 * takes the k with the fewest requests; a tie keeps reading by id (no list page for nothing).
 * `newest` are the mirror's live records newest first (listedSince) down to the oldest mark, or
 * a prefix of them (`newestComplete` false): a mark below the prefix counts as too deep to list.
 * Estimated pages may be Infinity (too deep); with setting 'list' such marks are listed anyway.
 */
export function planType(
  entityType: RecordType,
  entries: readonly DirtyEntry[],
  newest: readonly ListedCopy[],
  newestComplete: boolean,
  pageSize: number,
  setting: DrainPlanSetting,
): TypePlan {
  // What the list item lacks (a ticket's messages) only the read by id shows.
  const entity = entityOf(entityType);
  const mustRead = entries.filter((e) => !entity.listable(e));
  const listable = entries.filter((e) => entity.listable(e)).sort((a, b) => Date.parse(b.occurredAt) - Date.parse(a.occurredAt));
  const recordRequests = entries.length;
  if (setting === 'record' || listable.length === 0) return onlyByRecord(entityType, entries);

  const rank = rankOf(entries, newest, newestComplete);
  const pagesFor = (k: number) => Math.max(1, Math.ceil(rank(Date.parse(listable[k - 1]!.occurredAt)) / pageSize));
  let bestK = 0;
  let bestCost = listable.length;
  for (let k = 1; k <= listable.length; k++) {
    const cost = pagesFor(k) + (listable.length - k);
    if (cost < bestCost) {
      bestK = k;
      bestCost = cost;
    }
  }
  if (setting === 'list') bestK = listable.length;
  if (bestK === 0) return onlyByRecord(entityType, entries);
  const bestPages = pagesFor(bestK);
  const viaList = listable.slice(0, bestK);
  return {
    entityType,
    viaList,
    viaRecord: [...mustRead, ...listable.slice(bestK)],
    listDownTo: viaList[viaList.length - 1]!.occurredAt,
    estimatedPages: bestPages,
    estimatedRequests: mustRead.length + bestPages + (listable.length - bestK),
    recordRequests,
  };
}

function onlyByRecord(entityType: RecordType, entries: readonly DirtyEntry[]): TypePlan {
  return {
    entityType,
    viaList: [],
    viaRecord: [...entries],
    listDownTo: null,
    estimatedPages: 0,
    estimatedRequests: entries.length,
    recordRequests: entries.length,
  };
}

/**
 * rank(ms): how many records the upstream's list shows updated at or after ms, estimated as the
 * records whose newer of (mirrored updatedAt, dirty mark) is at or after ms. A record the
 * upstream has since hidden or deleted is over-counted, which only makes the list look dearer.
 */
function rankOf(entries: readonly DirtyEntry[], newest: readonly ListedCopy[], complete: boolean): (ms: number) => number {
  const latest = new Map<string, number>();
  for (const c of newest) latest.set(c.id, Date.parse(c.updatedAt));
  const floor = complete || newest.length === 0 ? -Infinity : Date.parse(newest[newest.length - 1]!.updatedAt);
  for (const e of entries) latest.set(e.entityId, Math.max(latest.get(e.entityId) ?? -Infinity, Date.parse(e.occurredAt)));
  const times = [...latest.values()].sort((a, b) => b - a);
  return (ms) => {
    if (ms < floor) return Infinity;
    // The count of times >= ms, by binary search in the descending array.
    let lo = 0;
    let hi = times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (times[mid]! >= ms) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** Mirrored records read to rank marks: beyond it a mark counts as too deep to list. */
const MAX_RANKING_ROWS = 50_000;

/**
 * How many mirrored records the ranking needs: a list plan never pays beyond one page per
 * list-able mark, so deeper records cannot change the choice.
 */
export function rankingDepth(listable: number, pageSize: number): number {
  return Math.min(MAX_RANKING_ROWS, listable * pageSize);
}
