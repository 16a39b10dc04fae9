import type { WorkspaceEvent } from '../api/index.js';

export interface DirtyMark {
  entityType: 'ticket' | 'deal';
  entityId: string;
  occurredAt: string;
}

/** Events of tickets and deals collapse into one mark per record, with its newest occurredAt. */
export function dirtyMarks(events: readonly WorkspaceEvent[]): DirtyMark[] {
  const byKey = new Map<string, DirtyMark>();
  for (const e of events) {
    if (e.entityType !== 'ticket' && e.entityType !== 'deal') continue;
    const key = `${e.entityType}:${e.entityId}`;
    const prev = byKey.get(key);
    if (!prev || Date.parse(e.occurredAt) > Date.parse(prev.occurredAt)) {
      byKey.set(key, { entityType: e.entityType, entityId: e.entityId, occurredAt: e.occurredAt });
    }
  }
  return [...byKey.values()];
}
