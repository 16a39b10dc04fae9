import type { Kysely } from 'kysely';
import type { MirrorDatabase } from './schema.js';
import type { Store } from './store.js';
import * as r from './reads.js';
import * as t from './sync-tables.js';
import { deletedIds, listedSince } from './drain-reads.js';
import { recordStoreOf } from './record-stores.js';
import { recordState } from './record-state.js';
import { pipelineDifferences, recordDifferences } from './content-check.js';

/** The synced_at a compared copy would get; never compared, never stored. */
const COMPARED_AT = '1970-01-01 00:00:00.000';

export type NamedReads = Pick<
  Store,
  | 'counts'
  | 'listDirty'
  | 'dirtyCount'
  | 'mirroredVersions'
  | 'mirroredUpdatedAt'
  | 'listedSince'
  | 'heldUnlisted'
  | 'deletedIds'
  | 'recordState'
  | 'knownStages'
  | 'pipelineDealCounts'
  | 'recordDifferences'
  | 'pipelineDifferences'
>;

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
