import type { CursorState } from './cursor.js';
import type { Listed } from './model.js';
import { keyAt, pageBySnapshot, type RecencyIndex, type WriteLog } from './recency.js';
import type { World } from './world.js';

/** A ticket or deal list: its records, how a write is found since a snapshot, and who is in it. */
export interface ListSource<T extends Listed> {
  kind: 'tickets' | 'deals';
  index: RecencyIndex<T>;
  writes: WriteLog<T>;
  matches: (rec: T) => boolean;
  listable: (rec: T) => boolean;
  /** Takes records out of the list through the simulator's own writes (the `removeServedAtPage` fault). */
  remove: (recs: readonly T[]) => void;
}

/** Where the page after this one starts, to be encoded as its cursor. */
export type NextPosition = Omit<CursorState, 'kind' | 'filters'>;

export interface ListPage<T> {
  items: T[];
  next: NextPosition | null;
}

/**
 * One page of a ticket or deal list as the dialect pages it (`listPaging`): keyset pages keep a
 * snapshot of the list's order (recency.ts), offset pages count places in the list as it is now.
 * A cursor pages the way it was issued, so a dialect changed mid-listing never mixes the two.
 */
export function listPage<T extends Listed>(world: World, src: ListSource<T>, cursor: CursorState | null, limit: number): ListPage<T> {
  const page = cursor?.page ?? 1;
  removeServed(world, src, cursor, page);
  const offset = cursor === null ? (world.dialect.listPaging === 'offset' ? 0 : undefined) : cursor.offset;
  if (offset !== undefined) {
    const got = offsetPage(src, offset, limit);
    return { items: got.items, next: got.more ? { snapshot: 0, ms: 0, key: '', offset: offset + limit, page: page + 1 } : null };
  }
  const snapshot = cursor?.snapshot ?? world.seq;
  const got = pageBySnapshot({
    index: src.index,
    writes: src.writes,
    snapshotSeq: snapshot,
    after: cursor ? { ms: cursor.ms, id: cursor.key } : null,
    limit,
    matches: src.matches,
    listable: src.listable,
  });
  return { items: got.items, next: got.next ? { snapshot, ms: got.next.ms, key: got.next.id, page: page + 1 } : null };
}

/** The `limit` records from place `offset` of the list as it is now, newest-updated first. */
function offsetPage<T extends Listed>(src: ListSource<T>, offset: number, limit: number): { items: T[]; more: boolean } {
  const items: T[] = [];
  let place = 0;
  for (const rec of src.index.below(null)) {
    if (!src.listable(rec) || !src.matches(rec)) continue;
    if (place++ < offset) continue;
    if (items.length === limit) return { items, more: true };
    items.push(rec);
  }
  return { items, more: false };
}

const spent = new WeakMap<World, Set<ListSource<Listed>['kind']>>();

/** Arms the `removeServedAtPage` fault again for both list kinds (any change of the faults does). */
export function rearmRemoval(world: World): void {
  spent.delete(world);
}

/**
 * The `removeServedAtPage` fault: before the Nth page of a listing is computed, records its
 * earlier pages served leave the list, the newest of them first (a page-one record leaving is
 * the case that shifts the most). Once per list kind until re-armed.
 */
function removeServed<T extends Listed>(world: World, src: ListSource<T>, cursor: CursorState | null, page: number): void {
  const at = world.faults.removeServedAtPage;
  if (at < 2 || cursor === null || page !== at) return;
  const done = spent.get(world) ?? new Set();
  if (done.has(src.kind)) return;
  done.add(src.kind);
  spent.set(world, done);
  const served: T[] = [];
  const want = Math.floor(world.faults.removeServedCount);
  let place = 0;
  for (const rec of src.index.below(null)) {
    if (served.length >= want) break;
    if (!src.listable(rec) || !src.matches(rec)) continue;
    if (wasServed(rec, cursor, place++)) served.push(rec);
  }
  src.remove(served);
}

/** Whether a record at `place` of the list now was on a page before `cursor`. */
function wasServed(rec: Listed, cursor: CursorState, place: number): boolean {
  if (cursor.offset !== undefined) return place < cursor.offset;
  const ms = keyAt(rec, cursor.snapshot);
  if (ms === undefined) return false;
  return ms !== cursor.ms ? ms > cursor.ms : rec.id >= cursor.key;
}
