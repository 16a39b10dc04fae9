import type { Kysely } from 'kysely';
import { recordTables, type MirrorDatabase } from './schema.js';
import { chunks } from './values.js';
import { fromDbTimestamp, toDbTimestamp } from '../util/time.js';
import { entityOf, type HeldUnlisted, type RecordType } from '../entities/index.js';

type Db = Kysely<MirrorDatabase>;

/** A live mirrored record's place in the upstream's newest-updated-first list, as the mirror last saw it. */
export interface ListedCopy {
  id: string;
  /** ISO. */
  updatedAt: string;
}

/**
 * Live records updated at or after `since`, newest first, at most `limit`: the drain's estimate
 * of how deep into the upstream's list a dirty mark lies (docs/sync.md, "Drain").
 */
export async function listedSince(db: Db, entityType: RecordType, since: string, limit: number): Promise<ListedCopy[]> {
  if (limit <= 0) return [];
  const rows = await recordTables(db)
    .selectFrom(entityOf(entityType).table)
    .select(['id', 'updated_at'])
    .where('deleted_at', 'is', null)
    .where('updated_at', '>=', toDbTimestamp(since)!)
    .orderBy('updated_at', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: r.id, updatedAt: fromDbTimestamp(String(r.updated_at)) as string }));
}

/** The messages of these tickets' stored copies, what a list item lacks (absent when not mirrored). */
export async function ticketMessagesHeld(db: Db, ids: readonly string[]): Promise<Map<string, HeldUnlisted>> {
  const out = new Map<string, HeldUnlisted>();
  for (const batch of chunks([...new Set(ids)], 200)) {
    const rows = await db.selectFrom('tickets').select(['id', 'message_count', 'raw_json']).where('id', 'in', batch).execute();
    for (const r of rows) {
      let messages: unknown[] | null = null;
      try {
        const raw = JSON.parse(String(r.raw_json)) as { messages?: unknown } | null;
        if (Array.isArray(raw?.messages)) messages = raw.messages;
      } catch {
        // An unreadable copy simply needs the full read.
      }
      out.set(r.id, { count: r.message_count === null ? null : Number(r.message_count), parts: messages });
    }
  }
  return out;
}

/** Which of these records the mirror holds as deleted (a `*.deleted` event or an earlier 404 set deleted_at). */
export async function deletedIds(db: Db, entityType: RecordType, ids: readonly string[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (const batch of chunks([...new Set(ids)], 500)) {
    const rows = await recordTables(db)
      .selectFrom(entityOf(entityType).table)
      .select('id')
      .where('id', 'in', batch)
      .where('deleted_at', 'is not', null)
      .execute();
    for (const r of rows) out.add(r.id);
  }
  return out;
}
