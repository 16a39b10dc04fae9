import { sql, type Kysely } from 'kysely';
import type { MirrorDatabase } from './schema.js';
import { fromDbTimestamp, toDbTimestamp } from '../util/time.js';
import { chunks, json, noNul, unknownId } from './values.js';
import { runTuples, tupleStatement } from './key-sets.js';
import { capabilitiesOf } from './dialect.js';
import { run } from './sql.js';
import type { RecordEntity, RecordType } from '../entities/index.js';
import { noteQuarantine } from './record-upsert.js';

/** A reason is for a person to read: a few KiB at most, whatever the upstream sent. */
const MAX_REASON = 2048;

type Db = Kysely<MirrorDatabase>;

export interface DirtyEntry {
  entityType: RecordType;
  entityId: string;
  occurredAt: string;
  staleReads: number;
  /** A ticket's messages may have changed: only `GET /tickets/:id` shows them. Deals: ignored. */
  readUnlisted: boolean;
}

/** A record to read again, as the sync marks it and the store keeps it (dirty_entities). */
export interface DirtyMark {
  entityType: RecordType;
  entityId: string;
  occurredAt: string;
  /**
   * A ticket's messages may have changed, so the drain must read `GET /tickets/:id` rather than
   * take the ticket from its list (docs/sync.md, "Drain"). Absent counts as true: a caller that
   * does not know is safe.
   */
  readUnlisted?: boolean;
}

export async function getState<T>(db: Db, key: string): Promise<T | undefined> {
  const row = await db.selectFrom('sync_state').select('value_json').where('key', '=', key).executeTakeFirst();
  if (!row || row.value_json === null) return undefined;
  return JSON.parse(row.value_json) as T;
}

export async function setState(db: Db, key: string, value: unknown): Promise<void> {
  if (value === undefined || value === null) {
    await db.deleteFrom('sync_state').where('key', '=', key).execute();
    return;
  }
  const row = { key, value_json: json(value), updated_at: toDbTimestamp(new Date()) };
  await db
    .insertInto('sync_state')
    .values(row)
    .onConflict((oc) => oc.column('key').doUpdateSet({ value_json: row.value_json, updated_at: row.updated_at }))
    .execute();
}

/**
 * Upserts keeping the newest occurred_at; a newer event resets stale_reads because the record is
 * expected to change again. marked_at keeps the time the entry was first marked (its age).
 * read_messages only ever turns on until the entry is cleared: one event that may have touched
 * the messages is enough, whichever event is the newest.
 */
export async function markDirty(db: Db, entries: readonly DirtyMark[], normalise: (iso: string) => string): Promise<void> {
  // Collapse first: PostgreSQL refuses to update one row twice in a single ON CONFLICT statement.
  const newest = new Map<string, { entity_type: string; entity_id: string; occurred_at: string; read_messages: number }>();
  for (const e of entries) {
    const at = normalise(e.occurredAt);
    const k = `${e.entityType}\u0000${e.entityId}`;
    const cur = newest.get(k);
    const read = e.readUnlisted === false ? 0 : 1;
    if (!cur) newest.set(k, { entity_type: e.entityType, entity_id: e.entityId, occurred_at: at, read_messages: read });
    else
      newest.set(k, { ...cur, occurred_at: at > cur.occurred_at ? at : cur.occurred_at, read_messages: Math.max(cur.read_messages, read) });
  }
  const markedAt = toDbTimestamp(new Date());
  for (const batch of chunks([...newest.values()], 200)) {
    await db
      .insertInto('dirty')
      .values(batch.map((r) => ({ ...r, stale_reads: 0, marked_at: markedAt })))
      .onConflict((oc) =>
        oc.columns(['entity_type', 'entity_id']).doUpdateSet({
          stale_reads: sql`case when excluded.occurred_at > dirty.occurred_at then 0 else dirty.stale_reads end`,
          occurred_at: sql`case when excluded.occurred_at > dirty.occurred_at then excluded.occurred_at else dirty.occurred_at end`,
          read_messages: sql`case when excluded.read_messages = 1 or dirty.read_messages = 1 then 1 else 0 end`,
        }),
      )
      .execute();
  }
}

export async function clearDirty(db: Db, entityType: RecordType, entityId: string, upTo: string): Promise<boolean> {
  const r = await db
    .deleteFrom('dirty')
    .where('entity_type', '=', entityType)
    .where('entity_id', '=', entityId)
    .where('occurred_at', '<=', upTo)
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** A dirty mark to clear: it leaves only while its occurred_at is at most `upTo` (stored form). */
export interface DirtyClear {
  entityType: RecordType;
  entityId: string;
  upTo: string;
}

const CLEAR_DIRTY = tupleStatement('delete from "dirty" where', '("entity_type" = ? and "entity_id" = ? and "occurred_at" <= ?)', '', [
  'text',
  'text',
  'timestamp',
]);
const BUMP_FAILED = tupleStatement(
  'update "dirty" set "failed_reads" = "failed_reads" + 1 where',
  '("entity_type" = ? and "entity_id" = ?)',
  'returning "entity_type", "entity_id", "failed_reads"',
  ['text', 'text'],
);
const BUMP_STALE = tupleStatement(
  'update "dirty" set "stale_reads" = "stale_reads" + 1 where',
  '("entity_type" = ? and "entity_id" = ?)',
  'returning "entity_type", "entity_id", "stale_reads"',
  ['text', 'text'],
);

/**
 * clearDirty for many marks of distinct records, with one statement per few hundred: a mark
 * that a newer event re-marked since it was read stays, as with clearDirty.
 */
export async function clearDirtyMany(db: Db, marks: readonly DirtyClear[]): Promise<void> {
  if (marks.length > 0)
    await runTuples(
      db,
      CLEAR_DIRTY,
      marks.map((m) => [m.entityType, m.entityId, m.upTo]),
    );
}

/** bumpStaleRead for many distinct records: stale_reads after the bump, keyed `<entityType>:<entityId>` (absent: no entry). */
export async function bumpStaleReads(db: Db, refs: readonly { entityType: RecordType; entityId: string }[]): Promise<Map<string, number>> {
  if (refs.length === 0) return new Map();
  const rows = await runTuples<{ entity_type: string; entity_id: string; stale_reads: unknown }>(
    db,
    BUMP_STALE,
    refs.map((r) => [r.entityType, r.entityId]),
  );
  return new Map(rows.map((r) => [`${r.entity_type}:${r.entity_id}`, Number(r.stale_reads)]));
}

/**
 * Counts a failed read (docs/sync.md, "Hostile upstream") of each of these distinct records:
 * failed_reads after the bump, keyed `<entityType>:<entityId>` (absent: no entry). The count
 * survives a newer event's mark and leaves with the entry.
 */
export async function bumpFailedReads(db: Db, refs: readonly { entityType: RecordType; entityId: string }[]): Promise<Map<string, number>> {
  if (refs.length === 0) return new Map();
  const rows = await runTuples<{ entity_type: string; entity_id: string; failed_reads: unknown }>(
    db,
    BUMP_FAILED,
    refs.map((r) => [r.entityType, r.entityId]),
  );
  return new Map(rows.map((r) => [`${r.entity_type}:${r.entity_id}`, Number(r.failed_reads)]));
}

export async function bumpStaleRead(db: Db, entityType: RecordType, entityId: string): Promise<number> {
  const row = await db
    .updateTable('dirty')
    .set((eb) => ({ stale_reads: eb('stale_reads', '+', 1) }))
    .where('entity_type', '=', entityType)
    .where('entity_id', '=', entityId)
    .returning('stale_reads')
    .executeTakeFirst();
  return row ? Number(row.stale_reads) : 0;
}

export async function listDirty(db: Db, limit: number): Promise<DirtyEntry[]> {
  const rows = await db
    .selectFrom('dirty')
    .select(['entity_type', 'entity_id', 'occurred_at', 'stale_reads', 'read_messages'])
    .orderBy('occurred_at')
    .orderBy('entity_type')
    .orderBy('entity_id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    entityType: r.entity_type as RecordType,
    entityId: r.entity_id,
    // Callers compare it with upstream times, which are ISO text.
    occurredAt: fromDbTimestamp(String(r.occurred_at)) as string,
    staleReads: Number(r.stale_reads),
    readUnlisted: Number(r.read_messages) !== 0,
  }));
}

export interface QuarantineItem {
  entityType: string;
  /**
   * Null (preferred), '' or 'unknown' when the record's id could not be read: `unknown:<sha1 of
   * the raw JSON>` stands in, so distinct bad records do not overwrite each other.
   */
  entityId: string | null;
  reason: string;
  raw: unknown;
}

export async function quarantine(db: Db, item: QuarantineItem, at: string): Promise<void> {
  const row = {
    entity_type: noNul(item.entityType),
    // PostgreSQL text cannot hold U+0000, and a quarantined id is exactly where one turns up.
    entity_id: item.entityId && item.entityId !== 'unknown' ? noNul(item.entityId) : unknownId(item.raw),
    reason: noNul(item.reason.length > MAX_REASON ? `${item.reason.slice(0, MAX_REASON)}…(cut)` : item.reason),
    raw_json: json(item.raw) ?? 'null',
    first_seen_at: at,
    last_seen_at: at,
  };
  // Before the write: a first backfill's ledger then clears this type's quarantine on a good copy.
  noteQuarantine(db, row.entity_type);
  await db
    .insertInto('quarantine')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['entity_type', 'entity_id']).doUpdateSet({ reason: row.reason, raw_json: row.raw_json, last_seen_at: at }),
    )
    .execute();
}

export async function clearQuarantine(db: Db, entityType: string, entityId: string): Promise<void> {
  await db.deleteFrom('quarantine').where('entity_type', '=', entityType).where('entity_id', '=', entityId).execute();
}

/**
 * The first deletion time is kept by coalesce, not by `deleted_at is null` in the WHERE: with that
 * term SQLite (no statistics) walked every live row through the (deleted_at, …) indexes instead
 * of probing the ids, once the OR list was long (16 ms per statement at 10,000 deals).
 */
const MARK_DELETED = new Map<RecordEntity['table'], ReturnType<typeof tupleStatement>>();

/** The statement per record table, built once; a table name comes from an entity's declaration, never from input. */
function markDeletedStatement(table: RecordEntity['table']): ReturnType<typeof tupleStatement> {
  let statement = MARK_DELETED.get(table);
  if (!statement) {
    statement = tupleStatement(`update "${table}" set "deleted_at" = coalesce("deleted_at", ?) where`, '"id" = ?', '', ['text']);
    MARK_DELETED.set(table, statement);
  }
  return statement;
}

/** markDeleted for many records of one table. */
export async function markDeletedMany(db: Db, table: RecordEntity['table'], ids: readonly string[], at: string): Promise<void> {
  if (ids.length > 0)
    await runTuples(
      db,
      markDeletedStatement(table),
      ids.map((id) => [id]),
      [at],
    );
}

/** A record to mark deleted, and the time its deletion was told. */
export interface Deletion {
  id: string;
  at: string;
}

/**
 * markDeleted for records each with its own time (their `*.deleted` events), with the outcome of
 * marking them one after another: a record's first time wins, as coalesce keeps it. Where the
 * dialect binds arrays, one statement for them all (one per deletion was 76 of the ~1,100
 * statements of an S tick on PostgreSQL, each a round trip); elsewhere one statement per distinct
 * time, in the order the times first appear.
 */
export async function markDeletedEach(db: Db, table: RecordEntity['table'], deletions: readonly Deletion[]): Promise<void> {
  const first = new Map<string, string>();
  for (const { id, at } of deletions) if (!first.has(id)) first.set(id, at);
  if (first.size === 0) return;
  const caps = capabilitiesOf(db);
  if (caps.bindsArrays) {
    // Kept first by the WHERE here: with one id per row, PostgreSQL probes the primary key.
    await run(
      db,
      `update "${table}" as t set "deleted_at" = v.at from unnest(?::text[], ?::${caps.timestampType}[]) as v(id, at) where t."id" = v.id and t."deleted_at" is null`,
      [[...first.keys()], [...first.values()]],
    );
    return;
  }
  const byTime = new Map<string, string[]>();
  for (const [id, at] of first) byTime.set(at, [...(byTime.get(at) ?? []), id]);
  for (const [at, ids] of byTime) await markDeletedMany(db, table, ids, at);
}

/** Sets deleted_at unless already set: markDeletedEach for one record, so the rule lives in one place. */
export async function markDeleted(db: Db, table: RecordEntity['table'], id: string, at: string): Promise<void> {
  await markDeletedEach(db, table, [{ id, at }]);
}
