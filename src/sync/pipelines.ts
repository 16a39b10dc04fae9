import type { SyncContext } from './context.js';
import { quarantineInvalid } from './quarantine.js';

/**
 * One request: pipelines carry their stages, so this refreshes both (docs/design.md §4.1). Returns
 * the answer's `Date` header (null when none): a cycle's window starts after it (src/sync/window.ts).
 */
export async function refreshPipelines(ctx: SyncContext): Promise<string | null> {
  const { items, invalid, serverDate } = await ctx.client.listPipelines();
  const now = ctx.now();
  await ctx.store.transaction(async (tx) => {
    await tx.upsertPipelines(items);
    await quarantineInvalid(tx, invalid, now);
    for (const pipeline of items) await tx.clearQuarantine('pipeline', pipeline.id);
  });
  if (invalid.length > 0) ctx.logger.warn({ invalid: invalid.length }, 'pipelines quarantined: they failed validation');
  return serverDate;
}
