import type { Kysely } from 'kysely';
import type { WorkspaceEvent } from '../api/index.js';
import type { MirrorDatabase } from './schema.js';
import { upsertUsers } from './refs.js';
import { writeEventHistory } from './history.js';
import { historyFromEvents, reusedIdGaps } from './event-history.js';
import { writeHistoryGaps } from './history-gaps.js';
import { chunks, json, requiredTs, str, uniqueBy } from './values.js';
import { rowMapping, TABLES } from './tables.js';
import { parseTimestamp } from '../util/time.js';
import { emptyRecordSets, entityOf, recordSet, type RecordSets } from '../entities/index.js';

type Db = Kysely<MirrorDatabase>;

/** An event's row: the mapping from the declaration of `events` (src/store/tables.ts). */
const eventRow = rowMapping<{ event: WorkspaceEvent; receivedAt: string }>()('events', TABLES.events, {
  id: ({ event: e }) => String(e.id),
  type: ({ event: e }) => str(e.type),
  entity_type: ({ event: e }) => str(e.entityType),
  entity_id: ({ event: e }) => str(e.entityId),
  payload_json: ({ event: e }) => json(e.payload ?? null),
  actor_id: ({ event: e }) => (e.actor?.id != null ? String(e.actor.id) : null),
  occurred_at: ({ event: e }) => requiredTs(e.occurredAt, `event ${String(e.id)} occurredAt`),
  received_at: ({ receivedAt }) => receivedAt,
  raw_json: ({ event: e }) => json(e),
});

/** What storing a page of events found. */
export interface InsertedEvents {
  /** Ids new to the mirror: only these tell history and mark their records. */
  newIds: Set<string>;
  /**
   * Events whose id the mirror already holds for another event (another type, record or time):
   * the upstream reused an id. They are not stored (the first keeps the id), but their record
   * still changed: the caller marks it and quarantines the event so the reuse is visible.
   */
  reused: WorkspaceEvent[];
  /**
   * Tickets and deals whose history the new events changed (a history row or a gap): their
   * reporting rows must be refreshed even when the record itself is not re-read.
   */
  historyOf: RecordSets;
}

/**
 * Stores change-log events, deduplicated by id. Only events new to the mirror feed ticket_history,
 * deal_history and history_gaps, so a lookback re-read never writes history twice; an event that
 * reuses a held id for another event writes a gap when it tells a tracked change.
 */
export async function insertEvents(db: Db, events: readonly WorkspaceEvent[], receivedAt: string): Promise<InsertedEvents> {
  // Convert everything first: a junk occurredAt must fail before any write.
  const all = events.map((event) => eventRow({ event, receivedAt }));
  const rows = uniqueBy(all, (r) => r.id);
  const newIds = new Set<string>();
  const historyOf = emptyRecordSets();
  if (rows.length === 0) return { newIds, reused: [], historyOf };
  // The event stored under a new id is the first on the page with it.
  const firstOf = new Map<string, WorkspaceEvent>();
  for (const e of events) if (!firstOf.has(String(e.id))) firstOf.set(String(e.id), e);

  for (const batch of chunks(rows, 100)) {
    const inserted = await db
      .insertInto('events')
      .values(batch)
      .onConflict((oc) => oc.column('id').doNothing())
      .returning('id')
      .execute();
    for (const r of inserted) newIds.add(r.id);
  }
  // The actors of new events: an overlap re-read of events already held writes no user again
  // (its actors were written when the events were first stored).
  await upsertUsers(
    db,
    events.filter((e) => newIds.has(String(e.id))).map((e) => e.actor),
  );

  // Only events new to the mirror tell history, so a lookback re-read never writes it twice.
  const unseen = rows
    .filter((r) => newIds.has(r.id))
    .map((r) => ({
      id: r.id,
      type: r.type,
      entityType: r.entity_type,
      entityId: r.entity_id,
      payload: firstOf.get(r.id)!.payload,
      at: r.occurred_at,
    }));
  const { changes, gaps } = await historyFromEvents(db, unseen);
  for (const batch of chunks(changes, 100)) await writeEventHistory(db, batch);
  const reused = await reusedIds(db, events, all, rows, newIds);
  // A reused id's own change cannot be kept under the id another event holds: its record's
  // history says so instead of silently missing the change.
  gaps.push(
    ...reusedIdGaps(
      reused.map((e) => {
        const r = all[events.indexOf(e)]!;
        return { id: r.id, type: r.type, entityType: r.entity_type, entityId: r.entity_id, payload: e.payload, at: r.occurred_at };
      }),
    ),
  );
  await writeHistoryGaps(db, gaps);
  for (const x of [...changes, ...gaps]) recordSet(historyOf, entityOf(x.kind).plural).add(x.entityId);
  return { newIds, reused, historyOf };
}

type EventRow = { id: string; type: string | null; entity_type: string | null; entity_id: string | null; occurred_at: string };
type Held = Omit<EventRow, 'occurred_at'> & { occurred_at: unknown };

function sameEvent(a: Held, b: EventRow): boolean {
  return a.type === b.type && a.entity_type === b.entity_type && a.entity_id === b.entity_id && sameTime(a.occurred_at, b.occurred_at);
}

/**
 * The events of the page (`all` converted, in page order) that tell another event than the one
 * the mirror holds under their id: the one it held before (one indexed read of the ids that were
 * not new, which a window's overlap re-reads on most ticks), or the first on the page under a new id.
 */
async function reusedIds(
  db: Db,
  events: readonly WorkspaceEvent[],
  all: readonly EventRow[],
  rows: readonly EventRow[],
  newIds: ReadonlySet<string>,
): Promise<WorkspaceEvent[]> {
  const held = new Map<string, Held>(rows.filter((r) => newIds.has(r.id)).map((r) => [r.id, r]));
  const known = rows.filter((r) => !newIds.has(r.id)).map((r) => r.id);
  for (const batch of chunks(known, 500)) {
    const found = await db
      .selectFrom('events')
      .select(['id', 'type', 'entity_type', 'entity_id', 'occurred_at'])
      .where('id', 'in', batch)
      .execute();
    for (const f of found) held.set(f.id, f);
  }
  return all.flatMap((r, i) => {
    const h = held.get(r.id);
    return h !== undefined && !sameEvent(h, r) ? [events[i]!] : [];
  });
}

function sameTime(stored: unknown, written: string): boolean {
  return parseTimestamp(String(stored)) === parseTimestamp(written);
}
