import type { Kysely } from 'kysely';
import type { Pipeline, WorkspaceEvent } from '../api/index.js';
import type { MirrorDatabase } from './schema.js';
import { appendThrough, type AppendLedger, type UpsertResult } from './record-upsert.js';
import { upsertPipelines, type UpsertPipelinesOptions } from './deals.js';
import { upsertMany } from './bulk.js';
import { recordStoreOf } from './record-stores.js';
import { insertEvents, type InsertedEvents } from './events.js';
import * as t from './sync-tables.js';
import { requiredTs } from './values.js';
import { foldIdleRun, insertRun } from './run-fold.js';
import { mirroredUpdatedAt } from './reads.js';
import { attachDatabase, attachState } from './handles.js';
import type { StateView } from './state-cache.js';
import { entityOf, type MirroredRecord, type RecordType } from '../entities/index.js';

export type RunOutcome = 'success' | 'failed' | 'aborted';

export interface RunResult {
  finishedAt: string;
  outcome: RunOutcome;
  eventsRead: number;
  eventsNew: number;
  recordsFetched: number;
  requests: number;
  retries: number;
  error?: string | null;
}

/** Writes available inside `Store.transaction`. Every timestamp argument is normalised to the stored 23-char UTC form (docs/schema.md). */
export interface StoreTx {
  /**
   * Also writes the history rows and gaps the new events tell (docs/sync.md, "History"). `reused`:
   * events whose id the mirror (or this page) already holds for another event; not stored.
   */
  insertEvents(events: WorkspaceEvent[], receivedAt: string): Promise<InsertedEvents>;
  /** `readUnlisted` absent counts as true (a ticket is then read with its messages). */
  markDirty(entries: t.DirtyMark[]): Promise<void>;
  /** Store.mirroredUpdatedAt inside the transaction: what it has written so far included. */
  mirroredUpdatedAt(refs: readonly { entityType: RecordType; entityId: string }[]): Promise<Map<string, string>>;
  /** Deletes the entry only if its occurred_at <= upTo; false when a newer event re-marked it (or none). */
  clearDirty(entityType: RecordType, entityId: string, upTo: string): Promise<boolean>;
  /** Increments and returns stale_reads (0 when the entry is gone). */
  bumpStaleRead(entityType: RecordType, entityId: string): Promise<number>;
  /** clearDirty on many records (distinct), with a statement per few hundred; `upTo` as in clearDirty. */
  clearDirtyMany(marks: readonly t.DirtyClear[]): Promise<void>;
  /** bumpStaleRead on many records (distinct): stale_reads after it, keyed `<entityType>:<entityId>`; absent means no entry (0). */
  bumpStaleReads(refs: readonly { entityType: RecordType; entityId: string }[]): Promise<Map<string, number>>;
  /** Counts a read that failed after its retries: failed_reads after it, keyed as bumpStaleReads. */
  bumpFailedReads(refs: readonly { entityType: RecordType; entityId: string }[]): Promise<Map<string, number>>;
  /**
   * Replaces the mirror's copies of these records of `type` (through the entity registry), in
   * order, with a few statements per batch; a stale copy is ignored. A value the store cannot hold,
   * or the database refuses (PostgreSQL class 22/54), quarantines only its record
   * (result.quarantined) instead of throwing.
   */
  upsertRecords(type: RecordType, records: readonly MirroredRecord[], syncedAt: string): Promise<UpsertResult[]>;
  upsertPipelines(pipelines: Pipeline[], options?: UpsertPipelinesOptions): Promise<void>;
  /** Sets deleted_at unless already set; the row stays. */
  markDeleted(entityType: RecordType, entityId: string, at: string): Promise<void>;
  /** markDeleted on many records of one type, each with its own time; a record's first time wins. */
  markDeletedEach(entityType: RecordType, deletions: readonly { entityId: string; at: string }[]): Promise<void>;
  /** markDeleted on many records of one type. */
  markDeletedMany(entityType: RecordType, entityIds: readonly string[], at: string): Promise<void>;
  quarantine(item: t.QuarantineItem, at: string): Promise<void>;
  clearQuarantine(entityType: string, entityId: string): Promise<void>;
  /** Inserts a sync_runs row with outcome 'running'; returns its id. */
  startRun(kind: string, at: string): Promise<number>;
  /**
   * Finishes a sync_runs row. With `foldIdle`, an idle run folds into the idle row before it
   * (src/store/run-fold.ts); returns true when it did.
   */
  finishRun(id: number, r: RunResult, options?: { foldIdle?: boolean }): Promise<boolean>;
}

const iso = (v: string, what: string) => requiredTs(v, what);

/**
 * The sync state is read and written through sync-state.ts (src/sync/state.ts alone), which finds `db` by attachDatabase.
 * `ledger`: a first backfill's (Store.startAppend); every record write of this transaction claims its ids there.
 */
export function createTx(db: Kysely<MirrorDatabase>, state: StateView, ledger: AppendLedger | null = null): StoreTx {
  if (ledger) appendThrough(db, ledger);
  const tx: StoreTx = {
    insertEvents: (events, receivedAt) => insertEvents(db, events, iso(receivedAt, 'receivedAt')),
    markDirty: (entries) => t.markDirty(db, entries, (v) => iso(v, 'occurredAt')),
    mirroredUpdatedAt: (refs) => mirroredUpdatedAt(db, refs),
    clearDirty: (type, id, upTo) => t.clearDirty(db, type, id, iso(upTo, 'upTo')),
    bumpStaleRead: (type, id) => t.bumpStaleRead(db, type, id),
    clearDirtyMany: (marks) =>
      t.clearDirtyMany(
        db,
        marks.map((m) => ({ ...m, upTo: iso(m.upTo, 'upTo') })),
      ),
    bumpStaleReads: (refs) => t.bumpStaleReads(db, refs),
    bumpFailedReads: (refs) => t.bumpFailedReads(db, refs),
    upsertRecords: (type, records, syncedAt) => upsertMany(db, recordStoreOf(type).kind, records, iso(syncedAt, 'syncedAt')),
    upsertPipelines: (pipelines, options) => upsertPipelines(db, pipelines, options),
    markDeleted: (type, id, at) => t.markDeleted(db, entityOf(type).table, id, iso(at, 'at')),
    markDeletedEach: (type, deletions) =>
      t.markDeletedEach(
        db,
        entityOf(type).table,
        deletions.map((d) => ({ id: d.entityId, at: iso(d.at, 'at') })),
      ),
    markDeletedMany: (type, ids, at) => t.markDeletedMany(db, entityOf(type).table, ids, iso(at, 'at')),
    quarantine: (item, at) => t.quarantine(db, item, iso(at, 'at')),
    clearQuarantine: (type, id) => t.clearQuarantine(db, type, id),
    startRun: (kind, at) => insertRun(db, kind, iso(at, 'at')),
    async finishRun(id, r, options) {
      // An idle run that folds into the row before it is deleted: it needs no update of its own.
      if (options?.foldIdle === true && (await foldIdleRun(db, id, r))) return true;
      await db
        .updateTable('sync_runs')
        .set({
          finished_at: iso(r.finishedAt, 'finishedAt'),
          outcome: r.outcome,
          events_read: r.eventsRead,
          events_new: r.eventsNew,
          records_fetched: r.recordsFetched,
          requests: r.requests,
          retries: r.retries,
          error: r.error ?? null,
        })
        .where('id', '=', id)
        .execute();
      return false;
    },
  };
  return attachState(attachDatabase(tx, db), () => state);
}
