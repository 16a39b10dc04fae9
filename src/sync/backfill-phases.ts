/**
 * The backfill's lists as data (docs/design.md §4.6): what each phase fetches, loads outside its
 * page's transaction, and writes; `runBackfill` (backfill.ts) walks them in order.
 */
import { NotFoundError, type Page, type WorkspaceEvent } from '../api/index.js';
import type { StoreTx } from '../store/index.js';
import { mapConcurrent } from '../util/concurrency.js';
import { shiftIso, toIsoTimestamp } from '../util/time.js';
import type { SyncContext } from './context.js';
import { splitImplausible } from './window-read.js';
import { ClockWarning, UpstreamClockAheadError } from './plausible.js';
import { recordFailure } from './drain.js';
import { failureReason, ReadFailures, unavailableRead } from './read-failures.js';
import { markDeletions, quarantineReused } from './event-page.js';
import { dirtyMarks } from './marks.js';
import { refreshPipelines } from './pipelines.js';
import { quarantineEvents, quarantineInvalid } from './quarantine.js';
import type { BackfillState } from './state.js';
import type { RunStats } from './stats.js';
import {
  BACKFILL_ORDER,
  type HeldCopies,
  type ListedRecord,
  type MirroredRecord,
  type RecordEntity,
  type RecordTable,
  type RecordType,
} from '../entities/index.js';

export type ListName = 'recent' | RecordTable | 'history';

/**
 * What one committed page added: rows the mirror now holds, and records or events quarantined.
 * A page of the log read after a list pass also tells how many records it shows leaving that
 * list and its newest event (list-passes.ts).
 */
export interface PageCount {
  copied: number;
  quarantined: number;
  left?: number;
  newest?: string | null;
}

/**
 * One list of the backfill, copied page by page (docs/design.md §4.6). `load` runs outside the
 * page's transaction (and overlaps the previous page's commit); `apply` writes the page and says
 * what it added, from the store's own verdicts, so a record the store quarantines is never
 * counted as copied.
 */
export interface Phase<T, L> {
  name: ListName;
  fetch(ctx: SyncContext, state: BackfillState): (cursor: string | undefined) => Promise<Page<T>>;
  load(ctx: SyncContext, page: Page<T>, stats: RunStats, state: BackfillState): Promise<L>;
  /** `pending`: the dirty marks when the phase began (settleMarks). */
  apply(tx: StoreTx, page: Page<T>, loaded: L, now: string, pending: ReadonlySet<string>): Promise<PageCount>;
}

/** The start of the log the backfill reads before copying: the hand-over's lookback (docs/sync.md, "Backfill"). */
function recentSince(ctx: SyncContext, state: BackfillState): string | undefined {
  return state.handover === null ? undefined : shiftIso(state.handover, -ctx.config.lookbackSeconds * 1000);
}

/**
 * Step 2: the log from `handover − lookbackSeconds` to now, read before anything is copied and
 * stored with its dirty marks, as a sync window would. Every copy below is read after these
 * events were visible, so a copy at least as new as a mark settles it (the drain's own rule);
 * the first sync's full window, which re-reads this stretch, then marks only the events that
 * became visible after this read (they are new to the mirror), instead of every record changed
 * in the lookback before the hand-over.
 */
const recentPhase: Phase<WorkspaceEvent, null> = {
  name: 'recent',
  fetch: (ctx, state) => (cursor) => ctx.client.eventsPage({ since: recentSince(ctx, state), cursor, limit: ctx.config.pageSize }),
  load: (ctx, page) => {
    checkClock(ctx, page);
    return Promise.resolve(null);
  },
  apply: (tx, page, _, now) => storeLogPage(tx, page, now),
};

/**
 * Stores a page of the log read during the backfill as a sync window would: its events, their
 * dirty marks and deletions, its quarantines. `newIds`: the events new to the mirror.
 */
export async function storeLogPage(
  tx: StoreTx,
  page: Page<WorkspaceEvent>,
  now: string,
): Promise<PageCount & { newIds: ReadonlySet<string>; stored: readonly WorkspaceEvent[] }> {
  const { events, rejected } = splitImplausible(page, now);
  const { newIds, reused } = await tx.insertEvents(events, now);
  await quarantineReused(tx, reused, now);
  await quarantineInvalid(
    tx,
    page.invalid.filter((i) => i.entityType !== 'event'),
    now,
  );
  // A quarantined event's record is read once (docs/sync.md, "Hostile upstream"): marked here.
  const marks = await quarantineEvents(tx, [...rejected, ...page.invalid.filter((i) => i.entityType === 'event')], new Set(), now);
  const unseen = events.filter((e) => newIds.has(e.id));
  await markDeletions(tx, unseen);
  await tx.markDirty([...dirtyMarks([...unseen, ...reused]), ...marks]);
  return { copied: newIds.size, quarantined: page.invalid.length + rejected.length + reused.length, newIds, stored: events };
}

/**
 * Clears the dirty marks a copy settles: it was read after the events that marked it were
 * visible (they were read before the copy began), so at least as new means it holds them, as
 * for any read of the drain (docs/design.md §4.3). An older copy stays dirty for the first sync.
 * One statement per page, not one per record.
 */
async function settleMarks(
  tx: StoreTx,
  entityType: RecordType,
  records: readonly { id: string; updatedAt: string }[],
  pending: ReadonlySet<string>,
): Promise<void> {
  const settled = records.filter((r) => pending.has(`${entityType}:${r.id}`));
  await tx.clearDirtyMany(settled.map((r) => ({ entityType, entityId: r.id, upTo: r.updatedAt })));
}

/** What a list page needs before its transaction: the copies it gives, and the records read one by one. */
interface LoadedRecords {
  copies: MirroredRecord[];
  read: ReadById;
}

/** The mirror holds nothing a listed record could be combined with here: a backfill copies each record once. */
const NOTHING_HELD: HeldCopies = { heldUnlisted: () => Promise.resolve(new Map()) };

/**
 * One record type's list, copied page by page through its entity (src/entities): the items the
 * list carries whole are written as they are (deals), the others read by id first (a ticket, for
 * its messages), `concurrency` at a time; a copy naming reference data the mirror lacks (a deal's
 * stage) reads the pipelines again first.
 */
function recordPhase(entity: RecordEntity): Phase<ListedRecord, LoadedRecords> {
  return {
    name: entity.plural,
    fetch: (ctx) => (cursor) => ctx.client.listPage(entity.list, { cursor, limit: ctx.config.pageSize }),
    async load(ctx, page, stats, state) {
      // A pass after the first (list-passes.ts) copies only what the mirror lacks at the listed version.
      const items = (state.pass ?? 1) > 1 ? await notHeld(ctx, entity, page.items) : page.items;
      const taken = await entity.fromList(NOTHING_HELD, items);
      const copies = taken.copies.map((c) => c.record);
      stats.recordsFetched += copies.length;
      if (entity.requires && copies.length > 0) {
        const known = await ctx.store.knownStages();
        if (copies.some((c) => !known.has(entity.requires!(c)))) await refreshPipelines(ctx);
      }
      const byId = new Set(taken.readById);
      const read = await readById(
        ctx,
        entity,
        items.filter((item) => byId.has(item.id)),
        stats,
      );
      return { copies, read };
    },
    async apply(tx, page, { copies, read }, now, pending) {
      const written = [...copies, ...read.ok];
      const verdicts = await tx.upsertRecords(entity.type, written, now);
      await settleMarks(
        tx,
        entity.type,
        written.filter((_r, i) => !verdicts[i]?.quarantined),
        pending,
      );
      await quarantineInvalid(tx, page.invalid, now);
      for (const bad of read.invalid) {
        await tx.quarantine({ entityType: entity.type, entityId: bad.entityId, reason: bad.reason, raw: bad.raw }, now);
      }
      // Marked at the listed version, to be read by id: a read at least as new clears it (docs/design.md §4.3).
      await tx.markDirty(
        read.failed.map((r) => ({ entityType: entity.type, entityId: r.id, occurredAt: r.updatedAt, readUnlisted: true })),
      );
      const stored = verdicts.filter((v) => !v.quarantined).length;
      return { copied: stored, quarantined: page.invalid.length + read.invalid.length + verdicts.length - stored };
    },
  };
}

/** The items the mirror holds no copy of at least as new as listed. */
async function notHeld(ctx: SyncContext, entity: RecordEntity, items: readonly ListedRecord[]): Promise<ListedRecord[]> {
  const held = await ctx.store.mirroredUpdatedAt(items.map((i) => ({ entityType: entity.type, entityId: i.id })));
  return items.filter((i) => {
    const at = held.get(`${entity.type}:${i.id}`);
    return at === undefined || !(Date.parse(at) >= Date.parse(i.updatedAt));
  });
}

const historyPhase: Phase<WorkspaceEvent, string | undefined> = {
  name: 'history',
  fetch(ctx, state) {
    const since = state.history === 'all' ? undefined : (toIsoTimestamp(state.history) ?? undefined);
    return (cursor) => ctx.client.eventsPage({ since, cursor, limit: ctx.config.pageSize });
  },
  load: (ctx, page, _stats, state) => {
    checkClock(ctx, page);
    return Promise.resolve(recentSince(ctx, state));
  },
  async apply(tx, page, markFrom, now) {
    // Events beyond the upstream's clock stay out of the log and of history (docs/sync.md);
    // their records were just copied, so they need no re-read.
    const { events, rejected } = splitImplausible(page, now);
    const { newIds, reused } = await tx.insertEvents(events, now);
    await quarantineReused(tx, reused, now);
    // An event this late in the log that the recent phase did not store may have become visible
    // after its record was copied: the first sync, which will find it already stored, must still
    // re-read that record, so it is marked here as that sync's window would have marked it.
    const late = events.filter((e) => newIds.has(e.id) && (markFrom === undefined || Date.parse(e.occurredAt) >= Date.parse(markFrom)));
    // A reused id's event names a record that changed after the copy began or before: read it again.
    await tx.markDirty(dirtyMarks([...late, ...reused]));
    await quarantineInvalid(tx, page.invalid, now);
    await quarantineEvents(tx, rejected, new Set(rejected.map((r) => r.id ?? '')), now);
    return { copied: newIds.size, quarantined: page.invalid.length + rejected.length + reused.length };
  },
};

const clockWarnings = new WeakMap<SyncContext, ClockWarning>();

/**
 * A change-log page's clock, before its transaction: a warning once per backfill when the
 * upstream's Date is too far from the local clock to bound events, and a stop when its events are
 * stamped by a clock running ahead (docs/sync.md, "Hostile upstream").
 */
export function checkClock(ctx: SyncContext, page: Page<WorkspaceEvent>): void {
  const { clock, clockAhead } = splitImplausible(page, ctx.now());
  let warning = clockWarnings.get(ctx);
  if (!warning) clockWarnings.set(ctx, (warning = new ClockWarning(ctx.logger)));
  warning.observe(clock);
  if (clockAhead !== null) throw new UpstreamClockAheadError(clock, clockAhead);
}

/** The lists in the order the backfill copies them: the log's recent stretch, each record type's list (BACKFILL_ORDER), then the history. */
export const phases = (): readonly Phase<unknown, unknown>[] =>
  [recentPhase, ...BACKFILL_ORDER.map(recordPhase), historyPhase] as Phase<unknown, unknown>[];

/** The first record list a backfill copies: what the status shows before a backfill saved its state. */
export const FIRST_LIST: RecordTable = BACKFILL_ORDER[0]!.plural;

/** The phase that reads a list (the state's phase names one of phases(): src/sync/state.ts checks it when read). */
export function phaseNamed(name: BackfillState['phase']): Phase<unknown, unknown> {
  const phase = phases().find((p) => p.name === name);
  if (!phase) throw new Error(`no backfill phase reads ${name}`);
  return phase;
}

/** True for a phase that copies records (not the change log). */
export const copiesRecords = (name: BackfillState['phase']): boolean => BACKFILL_ORDER.some((e) => e.plural === name);

interface ReadById {
  ok: MirroredRecord[];
  invalid: { entityId: string; reason: string; raw: unknown }[];
  /** Records whose read failed after its retries while the workspace answered others: left to the first sync. */
  failed: ListedRecord[];
}

/** Reads each listed record by id, `concurrency` at a time (a ticket: the list has no messages). */
async function readById(ctx: SyncContext, entity: RecordEntity, items: readonly ListedRecord[], stats: RunStats): Promise<ReadById> {
  const out: ReadById = { ok: [], invalid: [], failed: [] };
  if (items.length === 0) return out;
  const failures = failuresOf(ctx);
  await mapConcurrent(items, ctx.config.concurrency, async (item) => {
    const startedAt = performance.now();
    try {
      out.ok.push(await ctx.client.readRecord(entity.single, item.id));
      failures.served(entity.type);
      stats.recordsFetched++;
    } catch (err) {
      if (err instanceof NotFoundError) return; // gone since the list was read: its delete event follows
      // A failure of this record's own (403, other 4xx, not JSON, too large, invalid) quarantines it.
      const own = recordFailure(err);
      if (own !== null) return void out.invalid.push({ entityId: item.id, reason: own.reason, raw: own.raw });
      if (!unavailableRead(err)) throw err;
      // A read that stalls while others answer is this record's: the first sync reads it again
      // (and quarantines it after repeated failures), instead of failing the whole backfill.
      await failures.blame(entity.type, startedAt, err);
      stats.readFailures++;
      ctx.logger.warn(
        { entityType: entity.type, entityId: item.id, reason: failureReason(err) },
        `backfill: a ${entity.type} read failed while the workspace answered others; it is left dirty for the first sync`,
      );
      out.failed.push(item);
    }
  });
  return out;
}

const readFailures = new WeakMap<SyncContext, ReadFailures>();

/** One ReadFailures per backfill run: what the workspace answered is evidence across pages. */
function failuresOf(ctx: SyncContext): ReadFailures {
  let f = readFailures.get(ctx);
  if (!f) readFailures.set(ctx, (f = new ReadFailures(ctx)));
  return f;
}
