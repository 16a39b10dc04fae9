import type { Kysely } from 'kysely';
import type { MirrorDatabase } from './schema.js';
import * as r from './reads.js';
import * as t from './sync-tables.js';
import { deletedIds, listedSince, type ListedCopy } from './drain-reads.js';
import { recordStoreOf } from './record-stores.js';
import { recordState, type RecordState } from './record-state.js';
import { pipelineDifferences, recordDifferences, type ContentDifference, type PipelineDifference } from './content-check.js';
import type { HeldUnlisted, ListedRecord, RecordType } from '../entities/index.js';
import type { Pipeline } from '../api/index.js';

/** The synced_at a compared copy would get; never compared, never stored. */
const COMPARED_AT = '1970-01-01 00:00:00.000';

/** The store's named questions of the sync and verify (status's are StatusReads); the Store has them all. */
export interface NamedReads {
  /** Row count per mirror table, plus `dirty` and `quarantine`. */
  counts(): Promise<Record<string, number>>;
  /** Oldest occurred_at first. */
  listDirty(limit: number): Promise<t.DirtyEntry[]>;
  dirtyCount(): Promise<number>;
  mirroredVersions(entityType: RecordType): Promise<Map<string, { updatedAt: string; deletedAt: string | null }>>;
  /**
   * updated_at of the given records that the mirror holds, keyed `<entityType>:<entityId>`
   * (absent when not mirrored). Lets the sync skip marking records already newer than an event.
   */
  mirroredUpdatedAt(refs: readonly { entityType: RecordType; entityId: string }[]): Promise<Map<string, string>>;
  /** Live records updated at or after `since` (ISO), newest first, at most `limit` (the drain's cost model). */
  listedSince(entityType: RecordType, since: string, limit: number): Promise<ListedCopy[]>;
  /** What the stored copies of these records hold beyond a list item (a ticket's messages; absent when not mirrored). */
  heldUnlisted(type: RecordType, ids: readonly string[]): Promise<Map<string, HeldUnlisted>>;
  /** One record's committed state: its copy's updatedAt, deletion, quarantine, pending change (GET /wait for a record). */
  recordState(entityType: RecordType, id: string): Promise<RecordState>;
  /** Which of these records the mirror holds as deleted. */
  deletedIds(entityType: RecordType, ids: readonly string[]): Promise<Set<string>>;
  /** The stages the mirror holds, as stageKey(pipelineId, stageId): a stage id is only unique within its pipeline. */
  knownStages(): Promise<Set<string>>;
  /** Deals in the mirror (not deleted) per pipeline, every known pipeline included (0 when empty). */
  pipelineDealCounts(): Promise<Map<string, number>>;
  /**
   * What differs between the mirror's rows of these records of `type` and their list items (every
   * column stored from the item, tags, custom fields, contacts; a ticket's message rows against its
   * stored copy), keyed by id; records the mirror does not hold are left out. No request. What verify
   * compares through the entity registry.
   */
  recordDifferences(type: RecordType, items: readonly ListedRecord[]): Promise<Map<string, ContentDifference[]>>;
  /** The listed pipelines and stages the mirror holds differently, or not at all. */
  pipelineDifferences(pipelines: readonly Pipeline[]): Promise<PipelineDifference[]>;
}

/** The sync's named questions (status's are statusReads). */
export function namedReads(db: Kysely<MirrorDatabase>): NamedReads {
  return {
    counts: () => r.counts(db),
    listDirty: (limit) => t.listDirty(db, limit),
    dirtyCount: () => r.dirtyCount(db),
    mirroredVersions: (entityType) => r.mirroredVersions(db, entityType),
    mirroredUpdatedAt: (refs) => r.mirroredUpdatedAt(db, refs),
    listedSince: (entityType, since, limit) => listedSince(db, entityType, since, limit),
    heldUnlisted: (type, ids) => recordStoreOf(type).heldUnlisted(db, ids),
    deletedIds: (entityType, ids) => deletedIds(db, entityType, ids),
    recordState: (entityType, id) => recordState(db, entityType, id),
    knownStages: () => r.knownStages(db),
    pipelineDealCounts: () => r.pipelineDealCounts(db),
    recordDifferences: (type, items) => recordDifferences(db, recordStoreOf(type).compared, items, COMPARED_AT),
    pipelineDifferences: (pipelines) => pipelineDifferences(db, pipelines),
  };
}
