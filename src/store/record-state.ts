import type { Kysely } from 'kysely';
import { entityOf, type RecordType } from '../entities/index.js';
import { fromDbTimestamp } from '../util/time.js';
import { recordTables, type MirrorDatabase } from './schema.js';

/** What the mirror holds of one record now (committed rows only): what `GET /wait` for a record answers with. */
export interface RecordState {
  /** The mirror has a row for it. */
  held: boolean;
  /** `updated_at` of that row (ISO), null when not held. */
  updatedAt: string | null;
  /** When the mirror marked it deleted (ISO), null when live or not held. */
  deletedAt: string | null;
  /** Its quarantine row, when the last copy read could not be stored. */
  quarantined: {
    reason: string;
    /** The quarantined copy's own `updatedAt`, when it carries a readable one. */
    updatedAt: string | null;
    lastSeenAt: string;
  } | null;
  /** A change to it is in the change log and waits to be read (its `dirty` row): the oldest such change's `occurredAt`. */
  pendingSince: string | null;
}

/** Three point reads by primary key; the table comes from the entity registry, never from input. */
export async function recordState(db: Kysely<MirrorDatabase>, entityType: RecordType, id: string): Promise<RecordState> {
  const row = await recordTables(db)
    .selectFrom(entityOf(entityType).table)
    .select(['updated_at', 'deleted_at'])
    .where('id', '=', id)
    .executeTakeFirst();
  const q = await db
    .selectFrom('quarantine')
    .select(['reason', 'raw_json', 'last_seen_at'])
    .where('entity_type', '=', entityType)
    .where('entity_id', '=', id)
    .executeTakeFirst();
  const dirty = await db
    .selectFrom('dirty')
    .select('occurred_at')
    .where('entity_type', '=', entityType)
    .where('entity_id', '=', id)
    .executeTakeFirst();
  return {
    held: row !== undefined,
    updatedAt: row ? fromDbTimestamp(row.updated_at) : null,
    deletedAt: row ? fromDbTimestamp(row.deleted_at) : null,
    quarantined: q
      ? { reason: q.reason, updatedAt: copyUpdatedAt(q.raw_json), lastSeenAt: fromDbTimestamp(q.last_seen_at) as string }
      : null,
    pendingSince: dirty ? fromDbTimestamp(dirty.occurred_at) : null,
  };
}

/** The `updatedAt` a quarantined copy carries, if it is a readable instant (the copy may be anything). */
function copyUpdatedAt(raw: unknown): string | null {
  let copy = raw;
  if (typeof raw === 'string') {
    try {
      copy = JSON.parse(raw) as unknown;
    } catch {
      return null;
    }
  }
  const at = copy !== null && typeof copy === 'object' ? (copy as { updatedAt?: unknown }).updatedAt : undefined;
  return typeof at === 'string' && Number.isFinite(Date.parse(at)) ? new Date(Date.parse(at)).toISOString() : null;
}
