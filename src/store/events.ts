import type { Kysely } from 'kysely';
import type { WorkspaceEvent } from '../api/index.js';
import type { MirrorDatabase } from './schema.js';
import { upsertUsers } from './refs.js';
import { writeEventHistory } from './history.js';
import { historyFromEvents } from './event-history.js';
import { writeHistoryGaps } from './history-gaps.js';
import { chunks, json, requiredTs, str, uniqueBy } from './values.js';

type Db = Kysely<MirrorDatabase>;

/** What storing a page of events did. */
export interface InsertedEvents {
  /** Ids of the events new to the mirror. */
  newIds: Set<string>;
  /**
   * Tickets and deals whose history the new events changed (a history row or a gap): their
   * reporting rows must be refreshed even when the record itself is not re-read.
   */
  historyOf: { tickets: Set<string>; deals: Set<string> };
}

/**
 * Stores change-log events, deduplicated by id. Only events new to the mirror feed ticket_history,
 * deal_history and history_gaps, so a lookback re-read never writes history twice.
 */
export async function insertEvents(db: Db, events: readonly WorkspaceEvent[], receivedAt: string): Promise<InsertedEvents> {
  // Convert everything first: a junk occurredAt must fail before any write.
  const rows = uniqueBy(events, (e) => String(e.id)).map((e) => ({
    id: String(e.id),
    type: str(e.type),
    entity_type: str(e.entityType),
    entity_id: str(e.entityId),
    payload_json: json(e.payload ?? null),
    actor_id: e.actor?.id != null ? String(e.actor.id) : null,
    occurred_at: requiredTs(e.occurredAt, `event ${String(e.id)} occurredAt`),
    received_at: receivedAt,
    raw_json: json(e),
  }));
  const newIds = new Set<string>();
  const historyOf = { tickets: new Set<string>(), deals: new Set<string>() };
  if (rows.length === 0) return { newIds, historyOf };
  const payloads = new Map(events.map((e) => [String(e.id), e.payload as unknown]));

  await upsertUsers(
    db,
    events.map((e) => e.actor),
  );
  for (const batch of chunks(rows, 100)) {
    const inserted = await db
      .insertInto('events')
      .values(batch)
      .onConflict((oc) => oc.column('id').doNothing())
      .returning('id')
      .execute();
    for (const r of inserted) newIds.add(r.id);
  }

  // Only events new to the mirror tell history, so a lookback re-read never writes it twice.
  const fresh = rows
    .filter((r) => newIds.has(r.id))
    .map((r) => ({
      id: r.id,
      type: r.type,
      entityType: r.entity_type,
      entityId: r.entity_id,
      payload: payloads.get(r.id),
      at: r.occurred_at,
    }));
  const { changes, gaps } = await historyFromEvents(db, fresh);
  for (const batch of chunks(changes, 100)) await writeEventHistory(db, batch);
  await writeHistoryGaps(db, gaps);
  for (const x of [...changes, ...gaps]) (x.kind === 'ticket' ? historyOf.tickets : historyOf.deals).add(x.entityId);
  return { newIds, historyOf };
}
