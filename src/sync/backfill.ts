import { BACKFILL_ORDER, type RecordEntity, type RecordTable } from '../entities/index.js';
import { countedTables } from '../store/index.js';
import { toIsoTimestamp } from '../util/time.js';
import { copiesRecords, phaseNamed, type PageCount, type Phase } from './backfill-phases.js';
import { afterListPass, nextPass, passLogPhase } from './list-passes.js';
import type { SyncContext } from './context.js';
import { copyList } from './copy-list.js';
import { pageGroupLimits } from './page-group.js';
import { plausibleHead, UpstreamClockAheadError } from './plausible.js';
import { refreshPipelines } from './pipelines.js';
import { refreshReports } from './reporting.js';
import { handOverBackfill, phaseAfter, readBackfill, saveBackfill, type BackfillState } from './state.js';
import { tidyAfterBulkLoad } from './tidy.js';
import type { RunStats } from './stats.js';
import { boundHeapGrowth } from '../util/heap-growth.js';

export type { BackfillState };

export interface BackfillOptions {
  /** Copy the change log too: 'none' (default), 'all', or an ISO date. */
  history?: string;
  /** The newest event's occurredAt if the caller already read it (null: the log is empty). */
  head?: string | null;
  onProgress?: (p: { phase: BackfillState['phase']; copied: BackfillState['copied'] }) => void;
}

export async function runBackfill(ctx: SyncContext, stats: RunStats, options: BackfillOptions = {}): Promise<BackfillState> {
  let state = (await readBackfill(ctx.store)) ?? null;
  if (!state || state.phase === 'done') state = await beginBackfill(ctx, options);
  const progress = (s: BackfillState) => options.onProgress?.({ phase: s.phase, copied: s.copied });
  const deferred = await ctx.store.deferIndexes();
  if (deferred > 0) ctx.logger.debug({ indexes: deferred }, 'backfill: secondary indexes deferred to the end of the copy');
  // After deferIndexes, which reads the same emptiness; ended below however the copy ends.
  const appending = await ctx.store.startAppend();
  if (appending) ctx.logger.debug('backfill: record tables empty, writing without reading stored copies');

  let stopped = false;
  try {
    await refreshPipelines(ctx);
    while (state.phase !== 'done') {
      const phase = phaseNamed(state.phase);
      const commit = (s: BackfillState): void => {
        state = s;
        progress(s);
      };
      const entity = BACKFILL_ORDER.find((e) => e.plural === phase.name);
      const copied = entity
        ? await copyInPasses(ctx, stats, state, phase, entity, commit)
        : await copyPhase(ctx, stats, state, phase, commit);
      if (!copied) {
        stopped = true;
        break;
      }
      const { pass: _pass, step: _step, left: _left, logNewest: _newest, ...settled } = state;
      const read: BackfillState = { ...settled, finished: [...state.finished, phase.name], cursor: null };
      const next: BackfillState = { ...read, phase: phaseAfter(read) };
      if (next.phase !== 'done') await ctx.store.transaction((tx) => saveBackfill(tx, next));
      state = next;
    }
  } catch (err) {
    if (deferred > 0) await rebuildIndexesAfterFailure(ctx);
    throw err;
  } finally {
    ctx.store.endAppend();
  }
  // On a stop too, so wsmirror never leaves a mirror without its indexes while it is not running.
  if (deferred > 0) await rebuildIndexes(ctx);
  if (stopped) return state;

  const final: BackfillState = { ...state, phase: 'done', cursor: null };
  await ctx.store.transaction((tx) => handOverBackfill(tx, final));
  await tidyAfterBulkLoad(ctx, countedTables(), 'the mirrored tables');
  // A full rebuild, which tidies the rpt_ tables in turn (reporting.ts).
  await refreshReports(ctx, stats, { tickets: 'all', deals: 'all' });
  progress(final);
  return final;
}

/** Builds the indexes a first backfill deferred; a failure fails the backfill (running it again builds them). */
async function rebuildIndexes(ctx: SyncContext): Promise<void> {
  const started = performance.now();
  const built = await ctx.store.restoreIndexes();
  ctx.logger.info({ indexes: built, ms: Math.round(performance.now() - started) }, 'backfill: secondary indexes built');
}

/**
 * After the copy failed: the copy's error is the one reported, so a failure here (the database
 * went away) is only logged, and the next writer to start builds them before it migrates.
 */
async function rebuildIndexesAfterFailure(ctx: SyncContext): Promise<void> {
  try {
    await rebuildIndexes(ctx);
  } catch (err) {
    ctx.logger.warn({ err }, 'backfill: could not build the deferred indexes; the next start of wsmirror builds them');
  }
}

/**
 * Step 1: the newest event is read before anything is copied, so whatever changes during the
 * copy is replayed by the first sync through the lookback window. Only a plausible head may
 * become the watermark (docs/sync.md, "Hostile upstream").
 */
async function beginBackfill(ctx: SyncContext, options: BackfillOptions): Promise<BackfillState> {
  let head = options.head;
  // No head may also mean no plausible one: a log stamped by a clock far ahead is no empty log.
  if (head === undefined || head === null) {
    const probe = plausibleHead(await ctx.client.eventsPage({ limit: 1 }), ctx.now());
    if (probe.clockAhead !== null) throw new UpstreamClockAheadError(probe.clock, probe.clockAhead);
    head = probe.head;
  }
  const begun: BackfillState = {
    phase: 'recent',
    // An empty log has no lookback before its hand-over to read.
    finished: head === null ? ['recent'] : [],
    handover: toIsoTimestamp(head),
    cursor: null,
    startedAt: ctx.now(),
    copied: { ...(Object.fromEntries(BACKFILL_ORDER.map((e) => [e.plural, 0])) as Record<RecordTable, number>), events: 0 },
    history: options.history ?? 'none',
  };
  const state: BackfillState = head === null ? { ...begun, phase: phaseAfter(begun) } : begun;
  await ctx.store.transaction((tx) => saveBackfill(tx, state));
  return state;
}

/**
 * Copies a record list in passes until the log read after a pass shows nothing leaving it
 * (list-passes.ts); false when a graceful stop ended it early. Each pass and each log read
 * resumes from the cursor saved with its pages.
 */
async function copyInPasses(
  ctx: SyncContext,
  stats: RunStats,
  start: BackfillState,
  phase: Phase<unknown, unknown>,
  entity: RecordEntity,
  committed: (state: BackfillState) => void,
): Promise<boolean> {
  let state = start;
  const commit = (s: BackfillState): void => {
    state = s;
    committed(s);
  };
  const save = async (s: BackfillState): Promise<void> => {
    await ctx.store.transaction((tx) => saveBackfill(tx, s));
    commit(s);
  };
  const log = passLogPhase(entity) as Phase<unknown, unknown>;
  for (let passes = 1; ; passes++) {
    if (state.step !== 'log') {
      if (!(await copyPhase(ctx, stats, state, phase, commit))) return false;
      await save(afterListPass(state));
    }
    if (!(await copyPhase(ctx, stats, state, log, commit))) return false;
    const next = await nextPass(ctx, entity, state, passes, save);
    if (next.step !== 'list') {
      commit(next);
      return true;
    }
  }
}

/** Copies one phase's list from the saved cursor; false when a graceful stop ended it early. */
async function copyPhase(
  ctx: SyncContext,
  stats: RunStats,
  start: BackfillState,
  phase: Phase<unknown, unknown>,
  committed: (state: BackfillState) => void,
): Promise<boolean> {
  let state = start;
  boundHeapGrowth();
  const pending = copiesRecords(phase.name) ? await pendingMarks(ctx) : new Set<string>();
  return copyList(
    ctx,
    state.cursor,
    phase.fetch(ctx, state),
    (page) => phase.load(ctx, page, stats, state),
    async (group, cursor) => {
      const now = ctx.now();
      const key = phase.name === 'history' || phase.name === 'recent' ? 'events' : phase.name;
      const { next, counts } = await ctx.store.transaction(async (tx) => {
        const counts = [];
        for (const { page, loaded } of group) counts.push(await phase.apply(tx, page, loaded, now, pending));
        const copied = counts.reduce((sum, c) => sum + c.copied, 0);
        const next: BackfillState = { ...state, cursor, copied: { ...state.copied, [key]: (state.copied[key] ?? 0) + copied } };
        // A log read after a list pass carries what it has seen leaving the list (list-passes.ts).
        if (state.step === 'log') Object.assign(next, passCounts(state, counts));
        await saveBackfill(tx, next);
        return { next, counts };
      });
      // Counted after the commit: a transaction may run again (PostgreSQL deadlock).
      state = next;
      group.forEach(({ page }, i) => {
        const count = counts[i]!;
        stats.quarantined += count.quarantined;
        if (key === 'events') {
          stats.eventsRead += page.items.length;
          stats.eventsNew += count.copied;
        }
        ctx.hooks?.onPage?.(phase.name === 'recent' ? 'history' : phase.name, { items: page.items.length, invalid: page.invalid.length });
      });
      committed(next);
    },
    pageGroupLimits(ctx.store),
  );
}

/** The log read's running counts after `counts`' pages: records seen leaving the list, and its newest event. */
function passCounts(state: BackfillState, counts: readonly PageCount[]): Pick<BackfillState, 'left' | 'logNewest'> {
  let newest = state.logNewest ?? null;
  for (const c of counts) if (c.newest != null && (newest === null || Date.parse(c.newest) > Date.parse(newest))) newest = c.newest;
  return { left: (state.left ?? 0) + counts.reduce((sum, c) => sum + (c.left ?? 0), 0), logNewest: newest };
}

/** Dirty marks a copy may settle; beyond this many the rest stay dirty for the first sync (safe, only dearer). */
const MAX_PENDING_MARKS = 100_000;

/** Read outside the page transactions: SQLite has one connection, which a transaction holds. */
async function pendingMarks(ctx: SyncContext): Promise<Set<string>> {
  const entries = await ctx.store.listDirty(MAX_PENDING_MARKS);
  return new Set(entries.map((e) => `${e.entityType}:${e.entityId}`));
}
