import { createHash } from 'node:crypto';
import type { SyncContext } from './context.js';
import { quarantineInvalid } from './quarantine.js';
import { pipelinesSeen } from './state.js';

/**
 * One request: pipelines carry their stages, so this refreshes both (docs/design.md §4.1). Returns
 * the answer's `Date` header (null when none): a cycle's window starts after it (src/sync/window.ts).
 *
 * An answer the tables already hold writes nothing (docs/sync.md, "An idle cycle's cost"): its
 * digest is kept with the sync state, so an idle poll spends no transaction on it. Nothing else
 * overwrites these rows (a deal's stub never does), so the same answer means the same rows; an
 * answer with an invalid pipeline is always written, so its quarantine row is seen again.
 */
export async function refreshPipelines(ctx: SyncContext): Promise<string | null> {
  const { items, invalid, serverDate } = await ctx.client.listPipelines();
  const digest = invalid.length === 0 ? createHash('sha256').update(JSON.stringify(items)).digest('base64') : null;
  if (digest !== null && (await pipelinesSeen.read(ctx.store)) === digest) return serverDate;
  const now = ctx.now();
  await ctx.store.transaction(async (tx) => {
    await tx.upsertPipelines(items);
    await quarantineInvalid(tx, invalid, now);
    for (const pipeline of items) await tx.clearQuarantine('pipeline', pipeline.id);
    await pipelinesSeen.record(tx, digest);
  });
  if (invalid.length > 0) ctx.logger.warn({ invalid: invalid.length }, 'pipelines quarantined: they failed validation');
  return serverDate;
}
