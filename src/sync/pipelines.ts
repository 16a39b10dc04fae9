import type { SyncContext } from './context.js';

/** One request: pipelines carry their stages, so this refreshes both (SPEC 4.1). */
export async function refreshPipelines(ctx: SyncContext): Promise<void> {
  const { items, invalid } = await ctx.client.listPipelines();
  const now = ctx.now();
  await ctx.store.transaction(async (tx) => {
    await tx.upsertPipelines(items);
    for (const item of invalid) {
      await tx.quarantine({ entityType: 'pipeline', entityId: item.id ?? 'unknown', reason: item.reason, raw: item.raw }, now);
    }
    for (const pipeline of items) await tx.clearQuarantine('pipeline', pipeline.id);
  });
  if (invalid.length > 0) ctx.logger.warn({ invalid: invalid.length }, 'pipelines quarantined: they failed validation');
}
