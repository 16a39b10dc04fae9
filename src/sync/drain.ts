import {
  ApiError, AuthRejectedError, clipText, InvalidRecordError, InvalidResponseError, NotFoundError, ResponseTooLargeError, UpstreamRejectedError,
  type Deal, type TicketWithMessages,
} from '../api/index.js';
import type { DirtyEntry, StoreTx } from '../store/index.js';
import { mapConcurrent } from '../util/concurrency.js';
import { WsmirrorError } from '../util/errors.js';
import type { RecordOutcome, SyncContext } from './context.js';
import { refreshPipelines } from './pipelines.js';
import type { RunStats } from './stats.js';

/** A record read back older than the event that marked it this many times in a row is accepted. */
export const STALE_READS_ACCEPTED_AFTER = 3;
const BATCH = 500;

/**
 * Re-reads every record in the persisted dirty set (docs/design.md §4.3), `concurrency` at a time under the
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
        ctx.progress?.();
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
  const call = { signal: ctx.cycleSignal };
  try {
    record = entry.entityType === 'ticket' ? await client.getTicket(entry.entityId, call) : await client.getDeal(entry.entityId, call);
  } catch (err) {
    if (err instanceof NotFoundError) {
      await store.transaction(async (tx) => {
        await tx.markDeleted(entry.entityType, entry.entityId, ctx.now());
        await tx.clearDirty(entry.entityType, entry.entityId, entry.occurredAt);
      });
      return 'deleted';
    }
    // Whether the workspace rejects the key is the change log's call: a 401 here fails this
    // cycle (exit 3 for a one-shot command) but does not stop `run`; its next cycle asks the log.
    if (err instanceof AuthRejectedError) {
      throw new WsmirrorError('AUTH_REJECTED_ON_RECORD', err.message, { cause: err });
    }
    const own = recordFailure(err);
    if (own === null) throw err;
    return quarantineRecord(ctx, entry, own.reason, own.raw);
  }
  if (entry.entityType === 'deal') await ensureStage(record as Deal);

  try {
    return await store.transaction((tx) => applyRecord(tx, ctx, entry, record));
  } catch (err) {
    // The database refused a value the upstream sent (PostgreSQL data exceptions, class 22, or a
    // value too deep for its stack, 54001): that record's problem, not the cycle's.
    const sqlState = (err as { code?: unknown }).code;
    if (typeof sqlState !== 'string' || !/^(22|54)/.test(sqlState)) throw err;
    return quarantineRecord(ctx, entry, `the database refused a value of this record (${sqlState}): ${(err as Error).message}`, record);
  }
}

/**
 * Failures that belong to one record (docs/sync.md, "Hostile upstream"): any 4xx but 401 (403
 * included), a body that is not JSON, not the record asked for, invalid, or too large. Anything
 * else (the workspace down, the key rejected, a stall) is the cycle's, and null here.
 */
export function recordFailure(err: unknown): { reason: string; raw: unknown } | null {
  if (err instanceof InvalidRecordError) return { reason: err.reason, raw: err.raw };
  if (err instanceof UpstreamRejectedError) return { reason: `the workspace answered ${err.status ?? '?'} for this record`, raw: errorRaw(err) };
  if (err instanceof InvalidResponseError) return { reason: clipText(err.message, 500), raw: errorRaw(err) };
  if (err instanceof ResponseTooLargeError) return { reason: `the response was larger than maxResponseBytes (${err.limit} bytes)`, raw: errorRaw(err) };
  return null;
}

function errorRaw(err: ApiError): unknown {
  return { status: err.status, path: err.path, body: err.body ?? null };
}

/** Quarantined and out of the dirty set: its next event, or verify --repair, retries it. */
async function quarantineRecord(ctx: SyncContext, entry: DirtyEntry, reason: string, raw: unknown): Promise<RecordOutcome> {
  const short = clipText(reason);
  const put = (value: unknown) =>
    ctx.store.transaction(async (tx) => {
      await tx.quarantine({ entityType: entry.entityType, entityId: entry.entityId, reason: short, raw: value }, ctx.now());
      await tx.clearDirty(entry.entityType, entry.entityId, entry.occurredAt);
    });
  try {
    await put(raw);
  } catch (err) {
    // The raw copy itself holds what the database refused: keep the reason, not the copy.
    const sqlState = (err as { code?: unknown }).code;
    if (typeof sqlState !== 'string' || !/^(22|54)/.test(sqlState)) throw err;
    await put({ unstorable: `the database refused the raw record too (${sqlState})` });
  }
  ctx.logger.warn({ entityType: entry.entityType, entityId: entry.entityId, reason: clipText(short, 500) }, 'record quarantined');
  return 'quarantined';
}

async function applyRecord(tx: StoreTx, ctx: SyncContext, entry: DirtyEntry, record: TicketWithMessages | Deal): Promise<RecordOutcome> {
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
