import type { Pipeline } from '../api/index.js';
import { isRecordType } from '../entities/index.js';
import type { SyncContext } from './context.js';
import { ANY_VERSION, rereadMarked } from './reread.js';
import type { RecordRef } from './resync.js';
import type { RunStats } from './stats.js';
import type { Drift } from './verify-drift.js';

/** What `verify --repair` asks the writer to mend: the records it found differing, and whether pipelines or stages differ. */
export interface RepairTarget {
  records: RecordRef[];
  /** A pipeline or a stage differs (a deal count alone does not: the deals' re-read mends it). */
  pipelines: boolean;
}

/** What a repair did: records re-read, and those it could not mend (their read failed, or their copy is quarantined). */
export interface RepairResult {
  /** Records marked and drained (the differing ones and every quarantined one). */
  marked: number;
  /** Records read again (requests for records, the drain's count). */
  reread: number;
  /** Pipelines and stages written again from their list. */
  pipelines: number;
  /** Still not the workspace's copy: `pending` (its read failed; the next cycle reads it again) or `quarantined`. */
  unrepaired: Array<RecordRef & { why: 'pending' | 'quarantined' }>;
}

/** The records and pipelines a list of differences (drift and changes in flight) asks to re-read. */
export function repairTarget(differences: readonly Drift[]): RepairTarget {
  const records = new Map<string, RecordRef>();
  for (const d of differences)
    if (isRecordType(d.entityType)) records.set(`${d.entityType}:${d.entityId}`, { entityType: d.entityType, entityId: d.entityId });
  const pipelines = differences.some((d) => (d.entityType === 'pipeline' && d.kind !== 'deal_count') || d.entityType === 'stage');
  return { records: [...records.values()], pipelines };
}

/**
 * The writer's half of `verify --repair` (docs/sync.md, "Verify"), run in the writer's exclusive
 * section whoever found the differences: the records are marked dirty with every quarantined one
 * (a repair retries them, docs/design.md §4.5) and the drain re-reads them by the rules of a sync;
 * differing pipelines and stages are written again from their list (`listed`, or read now).
 */
export async function runVerifyRepair(
  ctx: SyncContext,
  stats: RunStats,
  target: RepairTarget,
  listed?: readonly Pipeline[],
): Promise<RepairResult> {
  let pipelines = 0;
  if (target.pipelines) {
    const items = listed ?? (await ctx.client.listPipelines()).items;
    await ctx.store.transaction((tx) => tx.upsertPipelines([...items]));
    pipelines = items.length;
    ctx.logger.info({ pipelines }, 'verify --repair wrote the pipelines and stages again from their list');
  }
  const quarantined = await ctx.store.quarantinedRecords();
  const marks = [...target.records, ...quarantined].map((r) => ({
    entityType: r.entityType,
    entityId: r.entityId,
    occurredAt: ANY_VERSION,
  }));
  if (marks.length === 0) return { marked: 0, reread: 0, pipelines, unrepaired: [] };
  const before = stats.recordsFetched;
  await rereadMarked(ctx, stats, marks);
  const keyOf = (r: RecordRef) => `${r.entityType}:${r.entityId}`;
  const dirty = new Set((await ctx.store.listDirty(marks.length + 1000)).map(keyOf));
  const held = new Set((await ctx.store.quarantinedRecords()).map(keyOf));
  const unique = new Map(marks.map((m) => [keyOf(m), { entityType: m.entityType, entityId: m.entityId }]));
  const unrepaired: RepairResult['unrepaired'] = [];
  for (const [key, r] of unique) {
    if (dirty.has(key)) unrepaired.push({ ...r, why: 'pending' });
    else if (held.has(key)) unrepaired.push({ ...r, why: 'quarantined' });
  }
  return { marked: unique.size, reread: stats.recordsFetched - before, pipelines, unrepaired };
}
