import type { Kysely } from 'kysely';
import type { WorkspaceEvent } from '../api/index.js';
import type { MirrorDatabase } from './schema.js';
import { upsertUsers } from './refs.js';
import { writeStatusEvents, type StatusEventRow } from './history.js';
import { chunks, json, requiredTs, str, uniqueBy } from './values.js';

type Db = Kysely<MirrorDatabase>;

/**
 * Stores change-log events, deduplicated by id. Only events new to the mirror feed ticket_history,
 * so a lookback re-read never writes history twice.
 */
export async function insertEvents(
  db: Db,
  events: readonly WorkspaceEvent[],
  receivedAt: string,
): Promise<{ newIds: Set<string> }> {
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
  if (rows.length === 0) return { newIds };

  await upsertUsers(db, events.map((e) => e.actor));
  for (const batch of chunks(rows, 100)) {
    const inserted = await db
      .insertInto('events')
      .values(batch)
      .onConflict((oc) => oc.column('id').doNothing())
      .returning('id')
      .execute();
    for (const r of inserted) newIds.add(r.id);
  }

  const status: StatusEventRow[] = [];
  for (const [i, e] of uniqueBy(events, (e) => String(e.id)).entries()) {
    const row = rows[i]!;
    if (!newIds.has(row.id) || e.type !== 'ticket.status_changed' || row.entity_id === null) continue;
    const p = e.payload;
    if (p && typeof p.from === 'string' && typeof p.to === 'string') {
      status.push({ eventId: row.id, ticketId: row.entity_id, from: p.from, to: p.to, at: row.occurred_at });
    }
  }
  for (const batch of chunks(status, 100)) await writeStatusEvents(db, batch);
  return { newIds };
}
