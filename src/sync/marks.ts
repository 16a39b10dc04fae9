import type { WorkspaceEvent } from '../api/index.js';
import { entityOf, isRecordType } from '../entities/index.js';
import type { DirtyMark } from '../store/index.js';

export type { DirtyMark } from '../store/index.js';

/** Whether the event may change what its record's list item does not carry (RecordEntity.touchesUnlisted). */
export function touchesUnlisted(event: Pick<WorkspaceEvent, 'type' | 'entityType'>): boolean {
  return isRecordType(event.entityType) && entityOf(event.entityType).touchesUnlisted(event.type);
}

/**
 * Events of mirrored records collapse into one mark per record, with its newest occurredAt; a
 * ticket's mark reads its messages when any of its events may have touched them.
 */
export function dirtyMarks(events: readonly WorkspaceEvent[]): DirtyMark[] {
  const byKey = new Map<string, DirtyMark>();
  for (const e of events) {
    if (!isRecordType(e.entityType)) continue;
    const key = `${e.entityType}:${e.entityId}`;
    const prev = byKey.get(key);
    const readUnlisted = (prev?.readUnlisted ?? false) || touchesUnlisted(e);
    const occurredAt = !prev || Date.parse(e.occurredAt) > Date.parse(prev.occurredAt) ? e.occurredAt : prev.occurredAt;
    byKey.set(key, { entityType: e.entityType, entityId: e.entityId, occurredAt, readUnlisted });
  }
  return [...byKey.values()];
}
