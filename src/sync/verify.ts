import type { Page } from '../api/index.js';
import type { SyncContext } from './context.js';
import { drainDirty } from './drain.js';
import { refreshReports } from './reporting.js';
import type { RunStats } from './stats.js';

export interface Drift {
  entityType: 'ticket' | 'deal' | 'pipeline';
  entityId: string;
  kind: 'missing' | 'extra' | 'outdated' | 'deal_count';
  upstream: string | number | null;
  mirror: string | number | null;
}

export interface VerifyResult {
  checked: { tickets: number; deals: number; pipelines: number };
  drift: Drift[];
  repaired: number;
}

/**
 * Compares ids and updatedAt of every listed ticket and deal, and every pipeline's dealCount, with
 * the mirror (docs/design.md §2). With `repair`, the differing records are only marked dirty; the same drain
 * as `sync` re-reads them, so a repair follows every rule a sync does.
 */
export async function runVerify(ctx: SyncContext, stats: RunStats, options: { repair: boolean }): Promise<VerifyResult> {
  const { client, store } = ctx;
  const drift: Drift[] = [];
  const checked = { tickets: 0, deals: 0, pipelines: 0 };

  for (const entityType of ['ticket', 'deal'] as const) {
    const mirrored = await store.mirroredVersions(entityType);
    const seen = new Set<string>();
    const pages: AsyncIterable<Page<{ id: string; updatedAt: string }>> =
      entityType === 'ticket' ? client.iterateTickets({ limit: ctx.config.pageSize }) : client.iterateDeals({ limit: ctx.config.pageSize });
    for await (const page of pages) {
      for (const item of page.items) {
        seen.add(item.id);
        const mine = mirrored.get(item.id);
        if (!mine || mine.deletedAt !== null) {
          drift.push({ entityType, entityId: item.id, kind: 'missing', upstream: item.updatedAt, mirror: mine?.updatedAt ?? null });
        } else if (Date.parse(mine.updatedAt) !== Date.parse(item.updatedAt)) {
          drift.push({ entityType, entityId: item.id, kind: 'outdated', upstream: item.updatedAt, mirror: mine.updatedAt });
        }
      }
      for (const bad of page.invalid) {
        if (bad.id) seen.add(bad.id);
        if (bad.id && !mirrored.has(bad.id)) drift.push({ entityType, entityId: bad.id, kind: 'missing', upstream: null, mirror: null });
      }
      if (entityType === 'ticket') checked.tickets += page.items.length + page.invalid.length;
      else checked.deals += page.items.length + page.invalid.length;
    }
    for (const [id, mine] of mirrored) {
      if (mine.deletedAt === null && !seen.has(id)) {
        drift.push({ entityType, entityId: id, kind: 'extra', upstream: null, mirror: mine.updatedAt });
      }
    }
  }

  const { items: pipelines } = await client.listPipelines();
  const counts = await store.pipelineDealCounts();
  for (const p of pipelines) {
    checked.pipelines++;
    const mine = counts.get(p.id) ?? 0;
    if (mine !== p.dealCount)
      drift.push({ entityType: 'pipeline', entityId: p.id, kind: 'deal_count', upstream: p.dealCount, mirror: mine });
  }

  let repaired = 0;
  if (options.repair) {
    // Quarantined records are retried by a repair even when their copy looks current (docs/design.md §4.5).
    const quarantined = await store.db
      .selectFrom('quarantine')
      .select(['entity_type', 'entity_id'])
      .where('entity_type', 'in', ['ticket', 'deal'])
      .execute();
    // One mark per record: PostgreSQL refuses an upsert that touches the same row twice.
    const marks = new Map<string, { entityType: 'ticket' | 'deal'; entityId: string; occurredAt: string }>();
    const add = (entityType: 'ticket' | 'deal', entityId: string) =>
      marks.set(`${entityType}:${entityId}`, { entityType, entityId, occurredAt: new Date(0).toISOString() });
    for (const d of drift) if (d.entityType !== 'pipeline') add(d.entityType, d.entityId);
    for (const q of quarantined) add(q.entity_type as 'ticket' | 'deal', q.entity_id);
    if (marks.size === 0) return { checked, drift, repaired };
    await store.transaction(async (tx) => {
      await tx.markDirty([...marks.values()]);
      for (const m of marks.values()) await tx.clearQuarantine(m.entityType, m.entityId);
    });
    const before = stats.recordsFetched;
    await drainDirty(ctx, stats);
    await refreshReports(ctx, stats, stats.changed);
    repaired = stats.recordsFetched - before;
  }
  return { checked, drift, repaired };
}
