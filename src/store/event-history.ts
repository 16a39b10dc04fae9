import type { Kysely } from 'kysely';
import type { MirrorDatabase } from './schema.js';
import { clipText } from '../api/index.js';
import type { EventChange } from './history.js';
import { readEvent } from './event-reading.js';
import { trackedFields } from './tracked-fields.js';
import { isRecordType, type RecordType } from '../entities/index.js';
import { chunks } from './values.js';
import { stageKey } from '../entities/pipeline.js';

type Db = Kysely<MirrorDatabase>;

/** A stored event as events.ts has converted it (occurredAt in the stored form). */
export interface StoredEvent {
  id: string;
  type: string | null;
  entityType: string | null;
  entityId: string | null;
  payload: unknown;
  at: string;
}

/** A change-log event that may hide a change of a tracked field it cannot be read as (docs/sync.md, "History"). */
export interface HistoryGap {
  kind: RecordType;
  entityId: string;
  eventId: string;
  eventType: string | null;
  /** The event's occurredAt, in the stored form. */
  at: string;
  /** The tracked fields it may hide. */
  fields: string[];
  /** A sentence naming the event type, id and time, the fields and what could not be read. */
  reason: string;
}

/**
 * The history rows and the gaps the given (new) events tell, each event read by `readEvent`
 * (event-reading.ts). A deal's stage move also tells its status when the two stages' categories
 * differ (won / lost / open, from the stages table), because upstream derives a deal's status
 * from its stage and logs no event of its own for it.
 */
export async function historyFromEvents(db: Db, events: readonly StoredEvent[]): Promise<{ changes: EventChange[]; gaps: HistoryGap[] }> {
  const changes: EventChange[] = [];
  const gaps: HistoryGap[] = [];
  const stageMoves: EventChange[] = [];
  for (const e of events) {
    if (e.entityId === null || !isRecordType(e.entityType)) continue;
    const kind: RecordType = e.entityType;
    const reading = readEvent(kind, e.type, e.payload);
    const told = new Set(reading.changes.map((c) => c.field));
    for (const c of reading.changes) {
      const change = { kind, eventId: e.id, entityId: e.entityId, ...c, at: e.at };
      changes.push(change);
      // A field that follows this one (a deal's status, its stage) and was not told is derived below.
      if (trackedFields(kind).some((f) => f.follows === c.field && !told.has(f.field))) stageMoves.push(change);
    }
    if (reading.unreadable !== null) {
      const { fields, why } = reading.unreadable;
      const reason = `${e.type ?? '(no type)'} event ${e.id} at ${e.at} may hide a change of ${fields.join(', ')}: ${why}`;
      gaps.push({ kind, entityId: e.entityId, eventId: e.id, eventType: e.type, at: e.at, fields, reason: clipText(reason, 1000) });
    }
  }
  if (stageMoves.length > 0) changes.push(...(await statusFromStageMoves(db, stageMoves)));
  return { changes, gaps };
}

/**
 * A stage id names a stage of the deal's own pipeline: two pipelines may share one (migration
 * 0700_owner_keyed_children). The deal's pipeline comes from the mirror; a deal it does not hold
 * yet takes the stage of that id only when a single pipeline has one, and otherwise the move tells
 * no status (the re-read observes it).
 */
async function statusFromStageMoves(db: Db, moves: readonly EventChange[]): Promise<EventChange[]> {
  const ids = [...new Set(moves.flatMap((m) => [m.from, m.to]).filter((v): v is string => v !== null))];
  const dealIds = [...new Set(moves.map((m) => m.entityId))];
  const stages = [];
  for (const batch of chunks(ids, 500)) {
    stages.push(...(await db.selectFrom('stages').select(['pipeline_id', 'id', 'is_won', 'is_lost']).where('id', 'in', batch).execute()));
  }
  const pipelineOf = new Map<string, string>();
  for (const batch of chunks(dealIds, 500)) {
    const rows = await db.selectFrom('deals').select(['id', 'pipeline_id']).where('id', 'in', batch).execute();
    for (const r of rows) if (r.pipeline_id !== null) pipelineOf.set(r.id, r.pipeline_id);
  }
  const category = new Map<string, string>();
  const pipelinesOf = new Map<string, string[]>();
  for (const s of stages) {
    const c = Number(s.is_won) === 1 || s.is_won === true ? 'won' : Number(s.is_lost) === 1 || s.is_lost === true ? 'lost' : 'open';
    category.set(stageKey(s.pipeline_id, s.id), c);
    pipelinesOf.set(s.id, [...(pipelinesOf.get(s.id) ?? []), s.pipeline_id]);
  }
  const categoryOf = (dealId: string, stageId: string | null): string | undefined => {
    if (stageId === null) return undefined;
    const only = pipelinesOf.get(stageId);
    const pipeline = pipelineOf.get(dealId) ?? (only?.length === 1 ? only[0] : undefined);
    return pipeline === undefined ? undefined : category.get(stageKey(pipeline, stageId));
  };
  const out: EventChange[] = [];
  for (const m of moves) {
    const from = categoryOf(m.entityId, m.from);
    const to = categoryOf(m.entityId, m.to);
    // An unknown stage tells nothing; the next re-read observes the status if it changed.
    if (from === undefined || to === undefined || from === to) continue;
    out.push({ ...m, field: 'status', from, to });
  }
  return out;
}

/**
 * Gaps for events that reuse an id the mirror holds for another event (docs/sync.md, "Hostile
 * upstream", "Identities"): such an event is quarantined, not stored, so a tracked change it tells
 * reaches no history row; its record's history says so. One that tells no tracked change adds none.
 */
export function reusedIdGaps(events: readonly StoredEvent[]): HistoryGap[] {
  const gaps: HistoryGap[] = [];
  for (const e of events) {
    if (e.entityId === null || !isRecordType(e.entityType)) continue;
    const reading = readEvent(e.entityType, e.type, e.payload);
    const fields = [...new Set([...reading.changes.map((c) => c.field), ...(reading.unreadable?.fields ?? [])])];
    if (fields.length === 0) continue;
    const reason = `${e.type ?? '(no type)'} event ${e.id} at ${e.at} reuses the id of another event the mirror holds, so its change of ${fields.join(', ')} is not in the history`;
    gaps.push({
      kind: e.entityType,
      entityId: e.entityId,
      eventId: e.id,
      eventType: e.type,
      at: e.at,
      fields,
      reason: clipText(reason, 1000),
    });
  }
  return gaps;
}
