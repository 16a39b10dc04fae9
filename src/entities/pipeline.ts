/**
 * Pipelines and their stages: reference data, not mirrored records. They have no change-log
 * events of their own, carry no history and are never dirty: the whole list is read again when a
 * deal names a stage the mirror lacks, at a backfill, and by verify (docs/design.md §4.1).
 */
export const pipelines = {
  listPath: '/api/v1/pipelines',
  tables: ['pipelines', 'stages'] as const,
  /** The label of the verify drift series for pipelines and stages. */
  metricLabels: ['pipeline', 'stage'] as const,
};

/** A stage's key: a stage id is only unique within its pipeline (migration 0700_owner_keyed_children). */
export const stageKey = (pipelineId: string, stageId: string): string => `${pipelineId}\u0000${stageId}`;
