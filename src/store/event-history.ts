import type { Kysely } from 'kysely';
import type { MirrorDatabase } from './schema.js';
import { clipText } from '../api/index.js';
import type { EventChange } from './history.js';
import { readEvent } from './event-reading.js';
import type { TrackedKind } from './tracked-fields.js';
import { chunks } from './values.js';

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
  kind: TrackedKind;
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
    if (e.entityId === null || (e.entityType !== 'ticket' && e.entityType !== 'deal')) continue;
    const kind: TrackedKind = e.entityType;
    const reading = readEvent(kind, e.type, e.payload);
    const statusTold = reading.changes.some((c) => c.field === 'status');
    for (const c of reading.changes) {
      const change = { kind, eventId: e.id, entityId: e.entityId, ...c, at: e.at };
      changes.push(change);
      if (kind === 'deal' && c.field === 'stage_id' && !statusTold) stageMoves.push(change);
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

async function statusFromStageMoves(db: Db, moves: readonly EventChange[]): Promise<EventChange[]> {
  const ids = [...new Set(moves.flatMap((m) => [m.from, m.to]).filter((v): v is string => v !== null))];
  const stages = [];
  for (const batch of chunks(ids, 500)) {
    stages.push(...(await db.selectFrom('stages').select(['id', 'is_won', 'is_lost']).where('id', 'in', batch).execute()));
  }
  const category = new Map(
    stages.map((s) => [
      s.id,
      Number(s.is_won) === 1 || s.is_won === true ? 'won' : Number(s.is_lost) === 1 || s.is_lost === true ? 'lost' : 'open',
    ]),
  );
  const out: EventChange[] = [];
  for (const m of moves) {
    const from = m.from === null ? undefined : category.get(m.from);
    const to = m.to === null ? undefined : category.get(m.to);
    // An unknown stage tells nothing; the next re-read observes the status if it changed.
    if (from === undefined || to === undefined || from === to) continue;
    out.push({ ...m, field: 'status', from, to });
  }
  return out;
}
