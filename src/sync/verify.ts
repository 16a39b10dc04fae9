import type { Pipeline } from '../api/index.js';
import { isRecordType, RECORD_ENTITIES, type ListedRecord, type RecordEntity, type RecordType } from '../entities/index.js';
import type { ContentDifference } from '../store/index.js';
import type { SyncContext } from './context.js';
import { drainDirty } from './drain.js';
import { refreshReports } from './reporting.js';
import type { RunStats } from './stats.js';

export interface Drift {
  entityType: RecordType | 'pipeline' | 'stage';
  entityId: string;
  /** `content`: same version (`updatedAt`), different rows; `field` names the first column or child table that differs. */
  kind: 'missing' | 'extra' | 'outdated' | 'deal_count' | 'content';
  /** For `content`: the first column (`subject`) or child table (`ticket_tags`) that differs. */
  field?: string;
  /** For `content`: every column or child table that differs. */
  fields?: string[];
  upstream: string | number | null;
  mirror: string | number | null;
}

export interface VerifyResult {
  /** Items checked per list (`tickets`, `deals`, …, `pipelines`). */
  checked: Record<string, number>;
  drift: Drift[];
  repaired: number;
}

/**
 * Compares the mirror with what the list pages show (docs/sync.md, "Verify"), at no request
 * beyond the pages: every listed ticket and deal (missing, extra, another `updatedAt`, and for the
 * same version every stored column, tags, custom fields, contacts, and a ticket's message rows
 * against its stored copy), every pipeline and stage, and each pipeline's dealCount. With
 * `repair`, the differing records are only marked dirty, so the same drain as `sync` re-reads
 * them and a repair follows every rule a sync does; differing pipelines and stages are written
 * again from the list already read.
 */
export async function runVerify(ctx: SyncContext, stats: RunStats, options: { repair: boolean }): Promise<VerifyResult> {
  const drift: Drift[] = [];
  const checked: Record<string, number> = {};
  for (const entity of RECORD_ENTITIES) checked[entity.plural] = await verifyRecords(ctx, entity, drift);
  const pipelines = await verifyPipelines(ctx, drift);
  checked.pipelines = pipelines.length;
  const repaired = options.repair ? await repair(ctx, stats, drift, pipelines) : 0;
  return { checked, drift, repaired };
}

/** One entity type's listing against the mirror; returns how many items it checked. */
async function verifyRecords(ctx: SyncContext, entity: RecordEntity, drift: Drift[]): Promise<number> {
  const { client, store } = ctx;
  const entityType = entity.type;
  const mirrored = await store.mirroredVersions(entityType);
  const seen = new Set<string>();
  let checked = 0;
  for await (const page of client.iterateList(entity.list, { limit: ctx.config.pageSize })) {
    const current: ListedRecord[] = [];
    for (const item of page.items) {
      seen.add(item.id);
      const mine = mirrored.get(item.id);
      if (!mine || mine.deletedAt !== null) {
        drift.push({ entityType, entityId: item.id, kind: 'missing', upstream: item.updatedAt, mirror: mine?.updatedAt ?? null });
      } else if (Date.parse(mine.updatedAt) !== Date.parse(item.updatedAt)) {
        drift.push({ entityType, entityId: item.id, kind: 'outdated', upstream: item.updatedAt, mirror: mine.updatedAt });
      } else current.push(item);
    }
    const differences = await store.recordDifferences(entity.type, current);
    for (const [id, diffs] of differences) drift.push(contentDrift(entityType, id, diffs));
    for (const bad of page.invalid) {
      if (bad.id) seen.add(bad.id);
      if (bad.id && !mirrored.has(bad.id)) drift.push({ entityType, entityId: bad.id, kind: 'missing', upstream: null, mirror: null });
    }
    checked += page.items.length + page.invalid.length;
  }
  for (const [id, mine] of mirrored) {
    if (mine.deletedAt === null && !seen.has(id))
      drift.push({ entityType, entityId: id, kind: 'extra', upstream: null, mirror: mine.updatedAt });
  }
  return checked;
}

function contentDrift(entityType: Drift['entityType'], entityId: string, diffs: readonly ContentDifference[]): Drift {
  const first = diffs[0]!;
  return {
    entityType,
    entityId,
    kind: 'content',
    field: first.what,
    fields: diffs.map((d) => d.what),
    upstream: first.expected,
    mirror: first.found,
  };
}

/** Pipelines and stages as listed, and each pipeline's dealCount against the deals mirrored; returns the listing. */
async function verifyPipelines(ctx: SyncContext, drift: Drift[]): Promise<Pipeline[]> {
  const { items: pipelines } = await ctx.client.listPipelines();
  const counts = await ctx.store.pipelineDealCounts();
  for (const p of pipelines) {
    const mine = counts.get(p.id) ?? 0;
    if (mine !== p.dealCount)
      drift.push({ entityType: 'pipeline', entityId: p.id, kind: 'deal_count', upstream: p.dealCount, mirror: mine });
  }
  for (const d of await ctx.store.pipelineDifferences(pipelines)) {
    if (d.missing) drift.push({ entityType: d.entityType, entityId: d.entityId, kind: 'missing', upstream: d.expected, mirror: null });
    else drift.push(contentDrift(d.entityType, d.entityId, [d]));
  }
  return pipelines;
}

/** Marks the drifted records (and the quarantined ones) dirty and drains them; rewrites drifted pipelines. Returns records re-read. */
async function repair(ctx: SyncContext, stats: RunStats, drift: readonly Drift[], pipelines: readonly Pipeline[]): Promise<number> {
  const { store } = ctx;
  if (drift.some((d) => (d.entityType === 'pipeline' && d.kind !== 'deal_count') || d.entityType === 'stage')) {
    await store.transaction((tx) => tx.upsertPipelines([...pipelines]));
    ctx.logger.info({ pipelines: pipelines.length }, 'verify --repair wrote the pipelines and stages again from their list');
  }
  // Quarantined records are retried by a repair even when their copy looks current (docs/design.md §4.5).
  const quarantined = await store.quarantinedRecords();
  // One mark per record: PostgreSQL refuses an upsert that touches the same row twice.
  const marks = new Map<string, { entityType: RecordType; entityId: string; occurredAt: string }>();
  const add = (entityType: RecordType, entityId: string) =>
    marks.set(`${entityType}:${entityId}`, { entityType, entityId, occurredAt: new Date(0).toISOString() });
  for (const d of drift) if (isRecordType(d.entityType)) add(d.entityType, d.entityId);
  for (const q of quarantined) add(q.entityType, q.entityId);
  if (marks.size === 0) return 0;
  await store.transaction(async (tx) => {
    await tx.markDirty([...marks.values()]);
    for (const m of marks.values()) await tx.clearQuarantine(m.entityType, m.entityId);
  });
  const before = stats.recordsFetched;
  await drainDirty(ctx, stats);
  await refreshReports(ctx, stats, stats.changed);
  return stats.recordsFetched - before;
}
