import type { Kysely, Selectable } from 'kysely';
import { RECORD_TYPES, type RecordType } from '../entities/index.js';
import { DEFERRED_INDEXES_KEY, type DeferredIndex } from './deferred-indexes.js';
import type { MirrorDatabase } from './schema.js';
import { getState } from './sync-tables.js';

/** A sync_runs row as stored (timestamps in the stored form, docs/schema.md). */
export type SyncRunRow = Selectable<MirrorDatabase['sync_runs']>;

/** A quarantined record, as `status` lists it. */
export interface QuarantinedRow {
  entity_type: string;
  entity_id: string;
  reason: string;
  /** Stored form (docs/schema.md). */
  last_seen_at: string;
}

/**
 * The named questions readers outside the store ask of its bookkeeping tables (status, the
 * daemon, verify, the quarantine, the demo's closing lines): each bounded by an index or by the
 * small tables it reads, none handing out the query builder (docs/design.md §5.1).
 */
export interface StatusReads {
  /** The newest `limit` sync_runs rows, newest (highest id) first. */
  recentRuns(limit: number): Promise<SyncRunRow[]>;
  /** The run of this kind that started last (index sync_runs (kind, started_at)); null when none ran. */
  lastRunOf(kind: string): Promise<SyncRunRow | null>;
  /** The `limit` records quarantined most recently (by last_seen_at), newest first. */
  newestQuarantined(limit: number): Promise<QuarantinedRow[]>;
  /** How many entries the quarantine holds per entity type (types with none absent). */
  quarantinedByType(): Promise<Record<string, number>>;
  /** Every quarantined ticket and deal (not events or pipelines): what `verify --repair` retries. */
  quarantinedRecords(): Promise<{ entityType: RecordType; entityId: string }[]>;
  /** Which of these ids (as the quarantine stores them) the quarantine holds for `entityType`. */
  quarantinedIds(entityType: string, ids: readonly string[]): Promise<Set<string>>;
  /** The sum of the pipelines' upstream dealCount: the deals a backfill will copy (the upstream gives no list totals). */
  listedDealCount(): Promise<number>;
  /** Live (not deleted) tickets per status, in status order. */
  ticketsByStatus(): Promise<{ status: string | null; count: number }[]>;
  /** The occurred_at (stored form) of the oldest event kept; null when the events table is empty. */
  oldestEventAt(): Promise<string | null>;
  /** The indexes a first backfill dropped and has not rebuilt yet (src/store/deferred-indexes.ts); [] when none. */
  deferredIndexes(): Promise<DeferredIndex[]>;
}

export function statusReads(db: Kysely<MirrorDatabase>): StatusReads {
  return {
    recentRuns: (limit) => db.selectFrom('sync_runs').selectAll().orderBy('id', 'desc').limit(limit).execute(),
    async lastRunOf(kind) {
      const row = await db
        .selectFrom('sync_runs')
        .selectAll()
        .where('kind', '=', kind)
        .orderBy('started_at', 'desc')
        .limit(1)
        .executeTakeFirst();
      return row ?? null;
    },
    newestQuarantined: (limit) =>
      db
        .selectFrom('quarantine')
        .select(['entity_type', 'entity_id', 'reason', 'last_seen_at'])
        .orderBy('last_seen_at', 'desc')
        .limit(limit)
        .execute(),
    async quarantinedByType() {
      const rows = await db
        .selectFrom('quarantine')
        .select(['entity_type', (eb) => eb.fn.countAll<string>().as('n')])
        .groupBy('entity_type')
        .execute();
      return Object.fromEntries(rows.map((r) => [r.entity_type, Number(r.n)]));
    },
    async quarantinedRecords() {
      const rows = await db
        .selectFrom('quarantine')
        .select(['entity_type', 'entity_id'])
        .where('entity_type', 'in', [...RECORD_TYPES])
        .execute();
      return rows.map((r) => ({ entityType: r.entity_type as RecordType, entityId: r.entity_id }));
    },
    async quarantinedIds(entityType, ids) {
      if (ids.length === 0) return new Set();
      const rows = await db
        .selectFrom('quarantine')
        .select('entity_id')
        .where('entity_type', '=', entityType)
        .where('entity_id', 'in', [...ids])
        .execute();
      return new Set(rows.map((r) => r.entity_id));
    },
    async listedDealCount() {
      const row = await db
        .selectFrom('pipelines')
        .select((eb) => eb.fn.sum<number>('deal_count').as('n'))
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },
    async ticketsByStatus() {
      const rows = await db
        .selectFrom('tickets')
        .select(['status', (eb) => eb.fn.countAll<string>().as('n')])
        .where('deleted_at', 'is', null)
        .groupBy('status')
        .orderBy('status')
        .execute();
      return rows.map((r) => ({ status: r.status, count: Number(r.n) }));
    },
    async oldestEventAt() {
      const row = await db
        .selectFrom('events')
        .select((eb) => eb.fn.min('occurred_at').as('oldest'))
        .executeTakeFirst();
      return row?.oldest ?? null;
    },
    deferredIndexes: async () => (await getState<DeferredIndex[]>(db, DEFERRED_INDEXES_KEY)) ?? [],
  };
}
