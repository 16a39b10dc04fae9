import type { Listed } from './model.js';

/** Position in a newest-updated-first list: (updatedAtMs, id), compared descending. */
export interface Position {
  ms: number;
  id: string;
}

/** Negative when a sorts before b in ascending (oldest first) order. */
function cmp(aMs: number, aId: string, bMs: number, bId: string): number {
  if (aMs !== bMs) return aMs - bMs;
  return aId < bId ? -1 : aId > bId ? 1 : 0;
}

/**
 * Listed records kept sorted by their current (updatedAtMs, id). A write removes the record
 * under its old key and re-inserts it under the new one; since the clock only moves forward, the
 * re-insert lands at (or next to) the end, so writes stay cheap even with 50,000 records.
 */
export class RecencyIndex<T extends Listed> {
  private items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  load(records: T[]): void {
    this.items = records.slice().sort((a, b) => cmp(a.updatedAtMs, a.id, b.updatedAtMs, b.id));
  }

  /** Index of the first item whose key is >= (ms, id). */
  private lowerBound(ms: number, id: string): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const it = this.items[mid] as T;
      if (cmp(it.updatedAtMs, it.id, ms, id) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  insert(rec: T): void {
    let i = this.items.length;
    // Fast path: a new write is the newest record.
    while (i > 0) {
      const prev = this.items[i - 1] as T;
      if (cmp(prev.updatedAtMs, prev.id, rec.updatedAtMs, rec.id) <= 0) break;
      i--;
      if (this.items.length - i > 64) {
        i = this.lowerBound(rec.updatedAtMs, rec.id);
        break;
      }
    }
    this.items.splice(i, 0, rec);
  }

  /** Must be called before the record's updatedAtMs changes. */
  remove(rec: T): void {
    const i = this.lowerBound(rec.updatedAtMs, rec.id);
    if (this.items[i] === rec) this.items.splice(i, 1);
  }

  /** Records strictly below `pos` (all when null), newest first. */
  *below(pos: Position | null): Generator<T> {
    let i = pos === null ? this.items.length - 1 : this.lowerBound(pos.ms, pos.id) - 1;
    for (; i >= 0; i--) yield this.items[i] as T;
  }

  /** Every record, newest first. */
  newestFirst(): T[] {
    return this.items.slice().reverse();
  }
}

/** Which records were written at which sequence number, to find those changed since a snapshot. */
export class WriteLog<T> {
  private readonly seqs: number[] = [];
  private readonly recs: T[] = [];

  add(seq: number, rec: T): void {
    this.seqs.push(seq);
    this.recs.push(rec);
  }

  /** Distinct records written after `seq`. */
  since(seq: number): Set<T> {
    let lo = 0;
    let hi = this.seqs.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.seqs[mid] as number) <= seq) lo = mid + 1;
      else hi = mid;
    }
    const out = new Set<T>();
    for (let i = lo; i < this.recs.length; i++) out.add(this.recs[i] as T);
    return out;
  }
}

/** The record's updatedAtMs as of snapshot `seq`, or undefined if it did not exist then. */
export function keyAt(rec: Listed, seq: number): number | undefined {
  const h = rec.keyHistory;
  for (let i = h.length - 2; i >= 0; i -= 2) {
    if ((h[i] as number) <= seq) return h[i + 1];
  }
  return undefined;
}

function lastSeq(rec: Listed): number {
  return rec.keyHistory[rec.keyHistory.length - 2] as number;
}

export interface SnapshotPage<T> {
  items: T[];
  /** Position of the last item, when more items follow. */
  next: Position | null;
}

/**
 * One page of a newest-updated-first list as it was ordered at `snapshotSeq`, serving current
 * versions. Records written after the snapshot keep the place they had at the snapshot, so a
 * client paging from the first page to the last sees every record that existed at the first
 * page exactly once (unless it left the list), however many writes happen in between.
 */
export function pageBySnapshot<T extends Listed>(args: {
  index: RecencyIndex<T>;
  writes: WriteLog<T>;
  snapshotSeq: number;
  after: Position | null;
  limit: number;
  matches: (rec: T) => boolean;
  listable: (rec: T) => boolean;
}): SnapshotPage<T> {
  const { snapshotSeq, after, limit, matches, listable } = args;
  const changed: { rec: T; ms: number }[] = [];
  for (const rec of args.writes.since(snapshotSeq)) {
    const ms = keyAt(rec, snapshotSeq);
    if (ms === undefined || !listable(rec) || !matches(rec)) continue;
    if (after !== null && cmp(ms, rec.id, after.ms, after.id) >= 0) continue;
    changed.push({ rec, ms });
  }
  changed.sort((a, b) => cmp(b.ms, b.rec.id, a.ms, a.rec.id));

  const picked: { rec: T; ms: number }[] = [];
  let c = 0;
  const walker = args.index.below(after);
  let pending = nextUnchanged();
  while (picked.length <= limit) {
    const fromChanged = changed[c];
    if (pending === undefined && fromChanged === undefined) break;
    if (
      fromChanged !== undefined &&
      (pending === undefined || cmp(fromChanged.ms, fromChanged.rec.id, pending.updatedAtMs, pending.id) > 0)
    ) {
      picked.push(fromChanged);
      c++;
    } else if (pending !== undefined) {
      picked.push({ rec: pending, ms: pending.updatedAtMs });
      pending = nextUnchanged();
    }
  }
  const more = picked.length > limit;
  const items = picked.slice(0, limit);
  const last = items[items.length - 1];
  return { items: items.map((p) => p.rec), next: more && last ? { ms: last.ms, id: last.rec.id } : null };

  function nextUnchanged(): T | undefined {
    for (;;) {
      const r = walker.next();
      if (r.done) return undefined;
      const rec = r.value;
      // Records written since the snapshot are placed by their snapshot key (the `changed` list).
      if (lastSeq(rec) > snapshotSeq) continue;
      if (matches(rec)) return rec;
    }
  }
}
