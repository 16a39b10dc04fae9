import { InvalidRecordError, NotFoundError, type Deal, type TicketWithMessages } from '../api/index.js';
import type { DirtyEntry } from '../store/index.js';
import { mapConcurrent } from '../util/concurrency.js';
import type { RecordOutcome, SyncContext } from './context.js';
import { refreshPipelines } from './pipelines.js';
import type { RunStats } from './stats.js';

/** A record read back older than the event that marked it this many times in a row is accepted. */
export const STALE_READS_ACCEPTED_AFTER = 3;
const BATCH = 500;

/**
 * Re-reads every record in the persisted dirty set (SPEC 4.3), `concurrency` at a time under the
 * client's rate ceiling. Each record commits in its own transaction, so a crash or a stop loses
 * at most the fetches in flight, and those stay dirty. A record is fetched at most once per drain:
 * a stale read stays dirty for the next cycle instead of being hammered now.
 */
export async function drainDirty(ctx: SyncContext, stats: RunStats): Promise<void> {
  const attempted = new Set<string>();
  let knownStages = await ctx.store.knownStageIds();
  let refreshedForUnknownStage = false;

  const ensureStage = async (deal: Deal): Promise<void> => {
    if (knownStages.has(deal.stage.id) || refreshedForUnknownStage) return;
    refreshedForUnknownStage = true;
    await refreshPipelines(ctx);
    knownStages = await ctx.store.knownStageIds();
  };

  for (;;) {
    if (ctx.stopSignal.aborted) return;
    const candidates = await ctx.store.listDirty(attempted.size + BATCH);
    const batch = candidates.filter((e) => !attempted.has(key(e)));
    if (batch.length === 0) return;
    for (const entry of batch) attempted.add(key(entry));
    await mapConcurrent(
      batch,
      ctx.config.concurrency,
      async (entry) => {
        const outcome = await rehydrate(ctx, entry, ensureStage);
        count(stats, outcome);
        (entry.entityType === 'ticket' ? stats.changed.tickets : stats.changed.deals).add(entry.entityId);
        ctx.hooks?.onRecord?.(entry.entityType, outcome);
      },
      () => ctx.stopSignal.aborted,
    );
  }
}

async function rehydrate(
  ctx: SyncContext,
  entry: DirtyEntry,
  ensureStage: (deal: Deal) => Promise<void>,
): Promise<RecordOutcome> {
  const { store, client } = ctx;
  let record: TicketWithMessages | Deal;
  try {
    record = entry.entityType === 'ticket' ? await client.getTicket(entry.entityId) : await client.getDeal(entry.entityId);
  } catch (err) {
    if (err instanceof NotFoundError) {
      await store.transaction(async (tx) => {
        await tx.markDeleted(entry.entityType, entry.entityId, ctx.now());
        await tx.clearDirty(entry.entityType, entry.entityId, entry.occurredAt);
      });
      return 'deleted';
    }
    if (err instanceof InvalidRecordError) {
      // Quarantined and out of the dirty set: its next event, or verify --repair, retries it.
      await store.transaction(async (tx) => {
        await tx.quarantine({ entityType: entry.entityType, entityId: entry.entityId, reason: err.reason, raw: err.raw }, ctx.now());
        await tx.clearDirty(entry.entityType, entry.entityId, entry.occurredAt);
      });
      ctx.logger.warn({ entityType: entry.entityType, entityId: entry.entityId, reason: err.reason }, 'record quarantined');
      return 'quarantined';
    }
    throw err;
  }
  if (entry.entityType === 'deal') await ensureStage(record as Deal);

  return store.transaction(async (tx) => {
    if (entry.entityType === 'ticket') await tx.upsertTicket(record as TicketWithMessages, ctx.now());
    else await tx.upsertDeal(record as Deal, ctx.now());
    if (Date.parse(record.updatedAt) >= Date.parse(entry.occurredAt)) {
      await tx.clearDirty(entry.entityType, entry.entityId, entry.occurredAt);
      return 'fresh';
    }
    // Older than the event that marked it: a stale read (replica lag, cache). Try again next cycle,
    // but accept it after a few tries, since some servers do not bump updatedAt for every event.
    const staleReads = await tx.bumpStaleRead(entry.entityType, entry.entityId);
    if (staleReads >= STALE_READS_ACCEPTED_AFTER) {
      await tx.clearDirty(entry.entityType, entry.entityId, entry.occurredAt);
      return 'stale-accepted';
    }
    return 'stale';
  });
}

function count(stats: RunStats, outcome: RecordOutcome): void {
  stats.recordsFetched++;
  if (outcome === 'stale') stats.staleReads++;
  else if (outcome === 'stale-accepted') stats.staleAccepted++;
  else if (outcome === 'deleted') stats.deleted++;
  else if (outcome === 'quarantined') stats.quarantined++;
}

function key(entry: DirtyEntry): string {
  return `${entry.entityType}:${entry.entityId}`;
}
