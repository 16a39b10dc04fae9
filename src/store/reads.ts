import { sql, type Kysely } from 'kysely';
import { fromDbTimestamp } from '../util/time.js';
import { countedTables, recordTables, type MirrorDatabase } from './schema.js';
import { chunks } from './values.js';
import { entityOf, RECORD_TYPES, type RecordType } from '../entities/index.js';

/** The Store's read queries of the mirror's own rows (docs/schema.md); both dialects run them as written. */
type Db = Kysely<MirrorDatabase>;

/** Row count per mirror table, plus `dirty` and `quarantine`. */
export async function counts(db: Db): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of countedTables()) {
    const row = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    out[table] = Number(row.n);
  }
  return out;
}

export async function dirtyCount(db: Db): Promise<number> {
  const row = await db
    .selectFrom('dirty')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function mirroredVersions(
  db: Db,
  entityType: RecordType,
): Promise<Map<string, { updatedAt: string; deletedAt: string | null }>> {
  const rows = await recordTables(db).selectFrom(entityOf(entityType).table).select(['id', 'updated_at', 'deleted_at']).execute();
  return new Map(
    rows.map((r) => [r.id, { updatedAt: fromDbTimestamp(String(r.updated_at)) as string, deletedAt: fromDbTimestamp(r.deleted_at) }]),
  );
}

/**
 * updated_at of the given records the mirror holds, keyed `<entityType>:<entityId>`. Every type's
 * ids go in one statement (a UNION ALL per 500 ids of each): a change-log page asks this of
 * tickets and deals at once, and on PostgreSQL each statement is a round trip.
 */
export async function mirroredUpdatedAt(
  db: Db,
  refs: readonly { entityType: RecordType; entityId: string }[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const wanted = RECORD_TYPES.map((type) => ({
    type,
    batches: chunks([...new Set(refs.filter((r) => r.entityType === type).map((r) => r.entityId))], 500),
  }));
  for (let i = 0; wanted.some((w) => i < w.batches.length); i++) {
    const parts = wanted.flatMap(({ type, batches }) =>
      i < batches.length
        ? [
            recordTables(db)
              .selectFrom(entityOf(type).table)
              // A type comes from the entity registry, never from input.
              .select([sql.lit(type).as('type'), 'id', 'updated_at'])
              .where('id', 'in', batches[i]!),
          ]
        : [],
    );
    const rows = await parts
      .slice(1)
      .reduce((all, part) => all.unionAll(part), parts[0]!)
      .execute();
    for (const r of rows) if (r.updated_at !== null) out.set(`${r.type}:${r.id}`, fromDbTimestamp(String(r.updated_at)) as string);
  }
  return out;
}

/** The key of a stage in knownStages: a stage id names a stage only within its pipeline (migration 0700_owner_keyed_children). */
import { stageKey } from '../entities/pipeline.js';
export { stageKey };

export async function knownStages(db: Db): Promise<Set<string>> {
  const rows = await db.selectFrom('stages').select(['pipeline_id', 'id']).execute();
  return new Set(rows.map((r) => stageKey(String(r.pipeline_id), r.id)));
}

/** Deals in the mirror (not deleted) per pipeline, every known pipeline included (0 when empty). */
export async function pipelineDealCounts(db: Db): Promise<Map<string, number>> {
  const pipelines = await db.selectFrom('pipelines').select('id').execute();
  const rows = await db
    .selectFrom('deals')
    .select((eb) => ['pipeline_id', eb.fn.countAll().as('n')])
    .where('deleted_at', 'is', null)
    .where('pipeline_id', 'is not', null)
    .groupBy('pipeline_id')
    .execute();
  const out = new Map<string, number>(pipelines.map((p) => [p.id, 0]));
  for (const c of rows) out.set(String(c.pipeline_id), Number(c.n));
  return out;
}
