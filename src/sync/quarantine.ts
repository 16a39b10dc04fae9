import { MAX_ID_CHARS, type InvalidItem } from '../api/index.js';
import { cleanText, type Store, type StoreTx } from '../store/index.js';
import type { DirtyMark } from './marks.js';
import { isRecordType } from '../entities/index.js';

/** Records of a page that failed validation go to quarantine; the rest of the page syncs (docs/sync.md, "Bad data"). */
export async function quarantineInvalid(tx: StoreTx, items: readonly InvalidItem[], at: string): Promise<void> {
  for (const item of items) {
    await tx.quarantine({ entityType: item.entityType, entityId: item.id, reason: item.reason, raw: item.raw }, at);
  }
}

/** An event kept out of the events table: invalid, or beyond the upstream's clock. */
export interface RejectedEvent {
  id: string | null;
  reason: string;
  raw: unknown;
}

/**
 * A mark that any read satisfies: a rejected event's time cannot be trusted, but it still says
 * that its record changed, so the record is re-read once instead of silently missing the change.
 */
const ANY_READ = '1970-01-01T00:00:00.000Z';

/**
 * Quarantines rejected events (entity type `event`) and returns a dirty mark for each ticket or
 * deal such an event names the first time it is seen, so the change it announced is still read.
 */
export async function quarantineEvents(
  tx: StoreTx,
  rejected: readonly RejectedEvent[],
  seenBefore: ReadonlySet<string>,
  at: string,
): Promise<DirtyMark[]> {
  const marks: DirtyMark[] = [];
  for (const r of rejected) {
    await tx.quarantine({ entityType: 'event', entityId: r.id, reason: r.reason, raw: r.raw }, at);
    if (r.id !== null && seenBefore.has(quarantineKey(r.id))) continue;
    const raw = r.raw as { entityType?: unknown; entityId?: unknown } | null;
    const type = raw?.entityType;
    const id = raw?.entityId;
    if (
      isRecordType(type) &&
      typeof id === 'string' &&
      id.length > 0 &&
      id.length <= MAX_ID_CHARS &&
      // An id the store would have to clean is another id, and no request path can carry it.
      cleanText(id) === id
    ) {
      marks.push({ entityType: type, entityId: id, occurredAt: ANY_READ });
    }
  }
  return marks;
}

/** Ids (as the quarantine stores them) of events already quarantined. */
export async function quarantinedEventIds(store: Store, ids: readonly string[]): Promise<Set<string>> {
  return store.quarantinedIds('event', ids.map(quarantineKey));
}

/** An id as the quarantine stores it: U+0000 and lone surrogates replaced, as in every text column. */
export function quarantineKey(id: string): string {
  return cleanText(id);
}
