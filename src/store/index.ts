/** The store's public surface: everything outside src/store imports from here. */
export { openSharedPostgres, openStore } from './open.js';
export type { CheckpointResult, OpenStoreOptions, SharedPostgres, Store } from './store.js';
export type { StoreTx, RunOutcome, RunResult } from './tx.js';
export type { UpsertResult } from './record-upsert.js';
export type { UpsertPipelinesOptions } from './deals.js';
export type { AcquireLockOptions, WriterLock } from './lock.js';
export type { DirtyClear, DirtyEntry, DirtyMark, QuarantineItem } from './sync-tables.js';
export type { ListedCopy } from './drain-reads.js';
export type { RecordState } from './record-state.js';
export type { ContentDifference, PipelineDifference } from './content-check.js';
export { countedTables, type MirrorDatabase } from './schema.js';
// How a table is declared (docs/design.md §7): src/report declares its rpt_ tables with it.
export { key, type ColumnDecl, type IndexDecl, type LogicalType, type RowOf, type TableDecl } from '../entities/table-decl.js';
export { StoreError } from './errors.js';
export { DEFERRED_INDEXES_KEY, type DeferredIndex } from './deferred-indexes.js';
export type { QuarantinedRow, StatusReads, SyncRunRow } from './status-reads.js';
export { cleanText, parseAmount } from './values.js';
export { stageKey } from './reads.js';
export { recordSnapshot, snapshotDifferences, type RecordSnapshot } from './record-snapshot.js';
export {
  finishWriterRequest,
  startWriterRequest,
  writerRequests,
  type WriterRequestEnd,
  type WriterRequestRow,
  type WriterRequests,
} from './writer-requests.js';
