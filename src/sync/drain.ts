import { AuthRejectedError, clipText, NotFoundError, type UpstreamUnavailableError } from '../api/index.js';
import { entityOf, RECORD_ENTITIES, recordSet, type MirroredRecord, type RecordEntity } from '../entities/index.js';
import type { DirtyEntry, Store } from '../store/index.js';
import { mapConcurrent } from '../util/concurrency.js';
import { boundHeapGrowth } from '../util/heap-growth.js';
import { WsmirrorError } from '../util/errors.js';
import type { RecordOutcome, SyncContext } from './context.js';
import { scanList, type ListSink } from './list-scan.js';
import { planType, rankingDepth, type TypePlan } from './plan.js';
import { refreshPipelines } from './pipelines.js';
import { applyWrites, deletedWrite, quarantineAlone, quarantineWrite, readWrite, recordFailure, type RecordWrite } from './drain-writes.js';
import { failureReason, FAILED_READS_QUARANTINE_AFTER, ReadFailures, unavailableRead } from './read-failures.js';
import type { RunStats } from './stats.js';
import { timed } from './steps.js';
import { WriteBatch } from './write-batch.js';

export { recordFailure, STALE_READS_ACCEPTED_AFTER } from './drain-writes.js';

/** Dirty records planned together; the rest wait for the next round of the same drain. */
const ROUND = 5000;

/**
 * Re-reads every record in the persisted dirty set (docs/design.md §4.3, docs/sync.md "Drain"),
 * by the plan the cost model finds cheapest for each round: newest-first list pages, reads by
 * id, or both. Reads run `concurrency` at a time under the client's rate ceiling; their writes
 * commit in batches of many records, and a record stays dirty until its batch commits, so a crash
 * or a stop loses at most reads. A record is read at most once per drain: a stale read stays
 * dirty for the next cycle instead of being hammered now.
 */
export function drainDirty(ctx: SyncContext, stats: RunStats): Promise<DrainEnd> {
  return timed(ctx, 'drain-read', () => drain(ctx, stats));
}

/**
 * How a drain ended. `oldestLeft`: the oldest mark still in the dirty set after its last commit
 * (what `listDirty(1)` would answer), so the as-of that follows need not ask again; undefined
 * when the drain stopped before it could know.
 */
export interface DrainEnd {
  oldestLeft?: DirtyEntry | null;
}

async function drain(ctx: SyncContext, stats: RunStats): Promise<DrainEnd> {
  const attempted = new Set<string>();
  boundHeapGrowth();
  // Each batch's transaction is the commit step; the writes inside it are their own steps.
  const store: Pick<Store, 'transaction' | 'isRefusedValue'> = {
    transaction: (fn) => timed(ctx, 'commit', () => ctx.store.transaction(fn)),
    isRefusedValue: (err) => ctx.store.isRefusedValue(err),
  };
  const writes = new WriteBatch<RecordWrite>(store, {
    apply: (tx, batch) => applyWrites(ctx, tx, batch),
    committed: (w, outcome) => committed(ctx, stats, w, outcome),
    refused: (w, sqlState, err) =>
      quarantineAlone(ctx, w.entry, `the database refused a value of this record (${sqlState}): ${err.message}`, w.record),
  });
  const reader = new RecordReader(ctx, writes, stats);
  try {
    for (;;) {
      if (ctx.stopSignal.aborted) break;
      const candidates = await timed(ctx, 'drain-plan', () => ctx.store.listDirty(attempted.size + ROUND));
      const round = candidates.filter((e) => !attempted.has(key(e)));
      // Read after the last round's commit, oldest first: the first candidate is the oldest left.
      if (round.length === 0) return { oldestLeft: candidates[0] ?? null };
      for (const entry of round) attempted.add(key(entry));
      await drainRound(ctx, round, reader);
      await writes.flush();
    }
    await writes.flush();
    return {};
  } catch (err) {
    // What was read before the failure still commits (best effort): less to read next cycle.
    await writes.flush().catch(() => writes.discard());
    throw err;
  }
}

async function drainRound(ctx: SyncContext, round: readonly DirtyEntry[], reader: RecordReader): Promise<void> {
  const plans: TypePlan[] = [];
  for (const entity of RECORD_ENTITIES) plans.push(await plan(ctx, entity, round));
  for (const p of plans) {
    if (p.viaList.length + p.viaRecord.length === 0) continue;
    ctx.logger.debug(
      {
        entityType: p.entityType,
        viaList: p.viaList.length,
        viaRecord: p.viaRecord.length,
        estimatedPages: p.estimatedPages,
        estimatedRequests: p.estimatedRequests,
        recordRequests: p.recordRequests,
      },
      'drain plan',
    );
  }
  const sink: ListSink = {
    found: (entry, record) => reader.took(entry, record),
    invalid: (entry, item) => reader.write(quarantineWrite(entry, item.reason, item.raw)),
    gone: (entry) => reader.write(deletedWrite(entry)),
  };
  // Reads by id and list pages go at once; the client's limits pace them together.
  const settled = await Promise.allSettled([
    reader.readAll(plans.flatMap((p) => p.viaRecord)),
    ...plans.filter((p) => p.viaList.length > 0).map((p) => scanList(ctx, p, sink)),
  ]);
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
  const leftover = settled.slice(1).flatMap((s) => (s.status === 'fulfilled' && s.value ? s.value.readById : []));
  await reader.readAll(leftover);
}

async function plan(ctx: SyncContext, entity: RecordEntity, round: readonly DirtyEntry[]): Promise<TypePlan> {
  const entityType = entity.type;
  const entries = round.filter((e) => e.entityType === entityType);
  const setting = ctx.config.drainPlan ?? 'auto';
  const listable = entries.filter((e) => entity.listable(e));
  if (setting === 'record' || listable.length === 0) return planType(entityType, entries, [], true, ctx.config.pageSize, 'record');
  const oldest = listable.reduce((min, e) => (Date.parse(e.occurredAt) < Date.parse(min) ? e.occurredAt : min), listable[0]!.occurredAt);
  const depth = rankingDepth(listable.length, ctx.config.pageSize);
  const newest = await timed(ctx, 'drain-plan', () => ctx.store.listedSince(entityType, oldest, depth));
  return planType(entityType, entries, newest, newest.length < depth, ctx.config.pageSize, setting);
}

function committed(ctx: SyncContext, stats: RunStats, w: RecordWrite, outcome: RecordOutcome): void {
  const { entry } = w;
  stats.recordsFetched++;
  if (outcome === 'stale') stats.staleReads++;
  else if (outcome === 'stale-accepted') stats.staleAccepted++;
  else if (outcome === 'deleted') stats.deleted++;
  else if (outcome === 'quarantined') stats.quarantined++;
  recordSet(stats.changed, entityOf(entry.entityType).plural).add(entry.entityId);
  if (outcome === 'quarantined') {
    // No reason on the write: the store refused one of its values; the quarantine row says which.
    const reason = clipText(w.reason ?? 'a value the mirror cannot store (see its quarantine row)', 500);
    ctx.logger.warn({ entityType: entry.entityType, entityId: entry.entityId, reason }, 'record quarantined');
  }
  ctx.hooks?.onRecord?.(entry.entityType, outcome, entry.occurredAt, entry.entityId);
  ctx.progress?.();
}

/** Reads by id, and hands every read (by id or from a list) to the write batch. */
class RecordReader {
  private knownStages: Promise<Set<string>> | null = null;
  private stageRefresh: Promise<void> | null = null;

  private readonly failures: ReadFailures;

  constructor(
    private readonly ctx: SyncContext,
    private readonly writes: WriteBatch<RecordWrite>,
    private readonly stats: RunStats,
  ) {
    this.failures = new ReadFailures(ctx);
  }

  readAll(entries: readonly DirtyEntry[]): Promise<void> {
    return mapConcurrent(
      entries,
      this.ctx.config.concurrency,
      (entry) => this.read(entry),
      () => this.ctx.stopSignal.aborted,
    );
  }

  write(w: RecordWrite): Promise<void> {
    return this.writes.add(w);
  }

  /** A copy read by id or from a list page. */
  async took(entry: DirtyEntry, record: MirroredRecord): Promise<void> {
    this.failures.served(entry.entityType);
    const stage = entityOf(entry.entityType).requires?.(record);
    if (stage !== undefined) await this.ensureStage(stage);
    await this.write(readWrite(entry, record));
  }

  private async read(entry: DirtyEntry): Promise<void> {
    const { client } = this.ctx;
    const call = { signal: this.ctx.cycleSignal };
    const startedAt = performance.now();
    let record;
    try {
      record = await client.readRecord(entityOf(entry.entityType).single, entry.entityId, call);
    } catch (err) {
      if (err instanceof NotFoundError) return this.write(deletedWrite(entry));
      // Whether the workspace rejects the key is the change log's call: a 401 here fails this
      // cycle (exit 3 for a one-shot command) but does not stop `run`; its next cycle asks the log.
      if (err instanceof AuthRejectedError) throw new WsmirrorError('AUTH_REJECTED_ON_RECORD', err.message, { cause: err });
      const own = recordFailure(err);
      if (own !== null) return this.write(quarantineWrite(entry, own.reason, own.raw));
      if (!unavailableRead(err)) throw err;
      await this.failures.blame(entry.entityType, startedAt, err);
      return this.failed(entry, err);
    }
    this.failures.served(entry.entityType);
    await this.took(entry, record);
  }

  /**
   * A read that failed after its retries while the workspace answered others (ReadFailures): the
   * record stays dirty and the rest of the drain goes on; after FAILED_READS_QUARANTINE_AFTER such
   * reads in a row it is quarantined (docs/sync.md, "Hostile upstream").
   */
  private async failed(entry: DirtyEntry, err: UpstreamUnavailableError): Promise<void> {
    const reason = failureReason(err);
    const counts = await timed(this.ctx, 'dirty-clear', () => this.ctx.store.transaction((tx) => tx.bumpFailedReads([entry])));
    const count = counts.get(key(entry)) ?? 0;
    this.stats.readFailures++;
    this.ctx.logger.warn(
      {
        entityType: entry.entityType,
        entityId: entry.entityId,
        failedReads: count,
        quarantineAfter: FAILED_READS_QUARANTINE_AFTER,
        reason,
      },
      count >= FAILED_READS_QUARANTINE_AFTER
        ? 'record read failed again while the workspace answered others; quarantined'
        : 'record read failed while the workspace answered others; it stays dirty and is read again next cycle',
    );
    if (count >= FAILED_READS_QUARANTINE_AFTER)
      await this.write(quarantineWrite(entry, `${reason} (${count} failed reads in a row)`, { status: err.status, path: err.path }));
  }

  /** A record naming a stage (stageKey) the mirror does not know refreshes pipelines, once per drain (docs/design.md §4.1). */
  private async ensureStage(stage: string): Promise<void> {
    this.knownStages ??= this.ctx.store.knownStages();
    if ((await this.knownStages).has(stage)) return;
    this.stageRefresh ??= refreshPipelines(this.ctx).then(() => {
      this.knownStages = this.ctx.store.knownStages();
    });
    await this.stageRefresh;
  }
}

function key(entry: DirtyEntry): string {
  return `${entry.entityType}:${entry.entityId}`;
}
