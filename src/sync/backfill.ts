import {
  CursorRejectedError,
  NotFoundError,
  PagingGuard,
  type Deal,
  type Page,
  type Ticket,
  type TicketWithMessages,
  type WorkspaceEvent,
} from '../api/index.js';
import type { StoreTx } from '../store/index.js';
import { mapConcurrent } from '../util/concurrency.js';
import { shiftIso, toIsoTimestamp } from '../util/time.js';
import type { SyncContext } from './context.js';
import { recordFailure } from './drain.js';
import { dirtyMarks } from './marks.js';
import { plausibleHead } from './plausible.js';
import { refreshPipelines } from './pipelines.js';
import { splitImplausible } from './cycle.js';
import { quarantineEvents, quarantineInvalid } from './quarantine.js';
import { refreshReports } from './reporting.js';
import { handOverBackfill, readBackfill, saveBackfill, type BackfillState } from './state.js';
import type { RunStats } from './stats.js';

export type { BackfillState };

export interface BackfillOptions {
  /** Copy the change log too: 'none' (default), 'all', or an ISO date. */
  history?: string;
  /** The newest event's occurredAt if the caller already read it (null: the log is empty). */
  head?: string | null;
  onProgress?: (p: { phase: BackfillState['phase']; copied: BackfillState['copied'] }) => void;
}

type ListName = 'recent' | 'deals' | 'tickets' | 'history';

/** What one committed page added: rows the mirror now holds, and records or events quarantined. */
interface PageCount {
  copied: number;
  quarantined: number;
}

/**
 * One list of the backfill, copied page by page (docs/design.md §4.6). `load` runs outside the
 * page's transaction (and overlaps the previous page's commit); `apply` writes the page and says
 * what it added, from the store's own verdicts, so a record the store quarantines is never
 * counted as copied.
 */
interface Phase<T, L> {
  name: ListName;
  fetch(ctx: SyncContext, state: BackfillState): (cursor: string | undefined) => Promise<Page<T>>;
  load(ctx: SyncContext, page: Page<T>, stats: RunStats, state: BackfillState): Promise<L>;
  /** `pending`: the dirty marks when the phase began (settleMarks). */
  apply(tx: StoreTx, page: Page<T>, loaded: L, now: string, pending: ReadonlySet<string>): Promise<PageCount>;
  /** The phase after this list's last page. */
  next(state: BackfillState): BackfillState['phase'];
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
  load: () => Promise.resolve(null),
  async apply(tx, page, _, now) {
    const { events, rejected } = splitImplausible(page, now);
    const { newIds } = await tx.insertEvents(events, now);
    await quarantineInvalid(
      tx,
      page.invalid.filter((i) => i.entityType !== 'event'),
      now,
    );
    // A quarantined event's record is read once (docs/sync.md, "Hostile upstream"): marked here.
    const marks = await quarantineEvents(tx, [...rejected, ...page.invalid.filter((i) => i.entityType === 'event')], new Set(), now);
    const fresh = events.filter((e) => newIds.has(e.id));
    for (const e of fresh) {
      if (e.type === 'ticket.deleted' || e.type === 'deal.deleted')
        await tx.markDeleted(e.entityType as 'ticket' | 'deal', e.entityId, e.occurredAt);
    }
    await tx.markDirty([...dirtyMarks(fresh), ...marks]);
    return { copied: newIds.size, quarantined: page.invalid.length + rejected.length };
  },
  next: () => 'deals',
};

/**
 * Clears the dirty marks a copy settles: it was read after the events that marked it were
 * visible (they were read before the copy began), so at least as new means it holds them, as
 * for any read of the drain (docs/design.md §4.3). An older copy stays dirty for the first sync.
 */
async function settleMarks(
  tx: StoreTx,
  entityType: 'ticket' | 'deal',
  records: readonly { id: string; updatedAt: string }[],
  pending: ReadonlySet<string>,
): Promise<void> {
  for (const r of records) if (pending.has(`${entityType}:${r.id}`)) await tx.clearDirty(entityType, r.id, r.updatedAt);
}

const dealsPhase: Phase<Deal, null> = {
  name: 'deals',
  fetch: (ctx) => (cursor) => ctx.client.dealsPage({ cursor, limit: ctx.config.pageSize }),
  async load(ctx, page, stats) {
    stats.recordsFetched += page.items.length;
    const known = await ctx.store.knownStageIds();
    if (page.items.some((d) => !known.has(d.stage.id))) await refreshPipelines(ctx);
    return null;
  },
  async apply(tx, page, _, now, pending) {
    const verdicts = await tx.upsertDeals(page.items, now);
    await quarantineInvalid(tx, page.invalid, now);
    const stored = verdicts.filter((v) => !v.quarantined).length;
    await settleMarks(
      tx,
      'deal',
      page.items.filter((_d, i) => !verdicts[i]?.quarantined),
      pending,
    );
    return { copied: stored, quarantined: page.invalid.length + verdicts.length - stored };
  },
  next: () => 'tickets',
};

const ticketsPhase: Phase<Ticket, ReadTickets> = {
  name: 'tickets',
  fetch: (ctx) => (cursor) => ctx.client.ticketsPage({ cursor, limit: ctx.config.pageSize }),
  load: (ctx, page, stats) => readTickets(ctx, page.items, stats),
  async apply(tx, page, full, now, pending) {
    const verdicts = await tx.upsertTickets(full.ok, now);
    await settleMarks(
      tx,
      'ticket',
      full.ok.filter((_t, i) => !verdicts[i]?.quarantined),
      pending,
    );
    await quarantineInvalid(tx, page.invalid, now);
    for (const bad of full.invalid) {
      await tx.quarantine({ entityType: 'ticket', entityId: bad.entityId, reason: bad.reason, raw: bad.raw }, now);
    }
    const stored = verdicts.filter((v) => !v.quarantined).length;
    return { copied: stored, quarantined: page.invalid.length + full.invalid.length + verdicts.length - stored };
  },
  next: (state) => (state.history === 'none' ? 'done' : 'history'),
};

const historyPhase: Phase<WorkspaceEvent, string | undefined> = {
  name: 'history',
  fetch(ctx, state) {
    const since = state.history === 'all' ? undefined : (toIsoTimestamp(state.history) ?? undefined);
    return (cursor) => ctx.client.eventsPage({ since, cursor, limit: ctx.config.pageSize });
  },
  load: (ctx, _page, _stats, state) => Promise.resolve(recentSince(ctx, state)),
  async apply(tx, page, markFrom, now) {
    // Events beyond the upstream's clock stay out of the log and of history (docs/sync.md);
    // their records were just copied, so they need no re-read.
    const { events, rejected } = splitImplausible(page, now);
    const { newIds } = await tx.insertEvents(events, now);
    // An event this late in the log that the recent phase did not store may have become visible
    // after its record was copied: the first sync, which will find it already stored, must still
    // re-read that record, so it is marked here as that sync's window would have marked it.
    const late = events.filter((e) => newIds.has(e.id) && (markFrom === undefined || Date.parse(e.occurredAt) >= Date.parse(markFrom)));
    await tx.markDirty(dirtyMarks(late));
    await quarantineInvalid(tx, page.invalid, now);
    await quarantineEvents(tx, rejected, new Set(rejected.map((r) => r.id ?? '')), now);
    return { copied: newIds.size, quarantined: page.invalid.length + rejected.length };
  },
  next: () => 'done',
};

const PHASES = [recentPhase, dealsPhase, ticketsPhase, historyPhase] as const;

export async function runBackfill(ctx: SyncContext, stats: RunStats, options: BackfillOptions = {}): Promise<BackfillState> {
  let state = (await readBackfill(ctx.store)) ?? null;
  if (!state || state.phase === 'done') state = await beginBackfill(ctx, options);
  const progress = (s: BackfillState) => options.onProgress?.({ phase: s.phase, copied: s.copied });

  await refreshPipelines(ctx);
  for (const phase of PHASES) {
    if (state.phase !== phase.name) continue;
    const copied = await copyPhase(ctx, stats, state, phase, (s) => {
      state = s;
      progress(s);
    });
    if (!copied) return state;
    const next: BackfillState = { ...state, phase: phase.next(state), cursor: null };
    if (next.phase !== 'done') await ctx.store.transaction((tx) => saveBackfill(tx, next));
    state = next;
  }

  const final: BackfillState = { ...state, phase: 'done', cursor: null };
  await ctx.store.transaction((tx) => handOverBackfill(tx, final));
  await refreshReports(ctx, stats, { tickets: 'all', deals: 'all' });
  progress(final);
  return final;
}

/**
 * Step 1: the newest event is read before anything is copied, so whatever changes during the
 * copy is replayed by the first sync through the lookback window. Only a plausible head may
 * become the watermark (docs/sync.md, "Hostile upstream").
 */
async function beginBackfill(ctx: SyncContext, options: BackfillOptions): Promise<BackfillState> {
  const head = options.head !== undefined ? options.head : plausibleHead(await ctx.client.eventsPage({ limit: 1 }), ctx.now()).head;
  const state: BackfillState = {
    // An empty log has no lookback before its hand-over to read.
    phase: head === null ? 'deals' : 'recent',
    handover: toIsoTimestamp(head),
    cursor: null,
    startedAt: ctx.now(),
    copied: { deals: 0, tickets: 0, events: 0 },
    history: options.history ?? 'none',
  };
  await ctx.store.transaction((tx) => saveBackfill(tx, state));
  return state;
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
  const pending = phase.name === 'deals' || phase.name === 'tickets' ? await pendingMarks(ctx) : new Set<string>();
  return copyList(
    ctx,
    state.cursor,
    phase.fetch(ctx, state),
    (page) => phase.load(ctx, page, stats, state),
    async (page, loaded, cursor) => {
      const now = ctx.now();
      const { next, count } = await ctx.store.transaction(async (tx) => {
        const count = await phase.apply(tx, page, loaded, now, pending);
        const key = phase.name === 'history' || phase.name === 'recent' ? 'events' : phase.name;
        const next: BackfillState = { ...state, cursor, copied: { ...state.copied, [key]: state.copied[key] + count.copied } };
        await saveBackfill(tx, next);
        return { next, count };
      });
      // Counted after the commit: a transaction may run again (PostgreSQL deadlock).
      state = next;
      stats.quarantined += count.quarantined;
      if (phase.name === 'history' || phase.name === 'recent') {
        stats.eventsRead += page.items.length;
        stats.eventsNew += count.copied;
      }
      ctx.hooks?.onPage?.(phase.name === 'recent' ? 'history' : phase.name, { items: page.items.length, invalid: page.invalid.length });
      committed(next);
    },
  );
}

/** Dirty marks a copy may settle; beyond this many the rest stay dirty for the first sync (safe, only dearer). */
const MAX_PENDING_MARKS = 100_000;

/** Read outside the page transactions: SQLite has one connection, which a transaction holds. */
async function pendingMarks(ctx: SyncContext): Promise<Set<string>> {
  const entries = await ctx.store.listDirty(MAX_PENDING_MARKS);
  return new Set(entries.map((e) => `${e.entityType}:${e.entityId}`));
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };
const settle = <T>(p: Promise<T>): Promise<Settled<T>> =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

/**
 * Pages a list from `cursor` until its end, handing each page, what `load` read for it, and the
 * cursor that follows it to `apply`. Returns false when a graceful stop ended it early (the cursor
 * is persisted). A cursor the upstream no longer accepts restarts the list: upserts make the
 * re-copy harmless.
 *
 * The next page is fetched and loaded while `apply` commits this one, so the network and the store
 * work at the same time; the next page is applied only after this one committed, so each saved
 * cursor still commits with exactly the rows it covers (docs/design.md §4.6). A prefetch that a
 * stop or a failure leaves unused is awaited (never left running) and its answer dropped.
 */
async function copyList<T, L>(
  ctx: SyncContext,
  start: string | null,
  fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
  load: (page: Page<T>) => Promise<L>,
  apply: (page: Page<T>, loaded: L, nextCursor: string | null) => Promise<void>,
): Promise<boolean> {
  let restarted = false;
  let guard = new PagingGuard('a backfill list');
  if (start !== null) guard.start(start);
  const read = async (cursor: string | null): Promise<{ page: Page<T>; loaded: L }> => {
    const page = await fetchPage(cursor ?? undefined);
    guard.check(
      page.items.map((item) => String((item as { id?: unknown }).id)),
      page.nextCursor,
    );
    return { page, loaded: await load(page) };
  };
  let cursor = start;
  let pending: Promise<Settled<{ page: Page<T>; loaded: L }>> | null = null;
  try {
    for (;;) {
      if (ctx.stopSignal.aborted) return false;
      const got: Settled<{ page: Page<T>; loaded: L }> = await (pending ?? settle(read(cursor)));
      pending = null;
      if (!got.ok) {
        if (got.error instanceof CursorRejectedError && cursor !== null && !restarted) {
          ctx.logger.warn(
            { status: got.error.status },
            'the workspace rejected the saved list cursor; copying this list again from its start',
          );
          restarted = true;
          cursor = null;
          guard = new PagingGuard('a backfill list');
          continue;
        }
        throw got.error;
      }
      const { page, loaded }: { page: Page<T>; loaded: L } = got.value;
      if (page.nextCursor !== null && !ctx.stopSignal.aborted) pending = settle(read(page.nextCursor));
      await apply(page, loaded, page.nextCursor);
      if (page.nextCursor === null) return true;
      cursor = page.nextCursor;
    }
  } finally {
    if (pending) await pending;
  }
}

interface ReadTickets {
  ok: TicketWithMessages[];
  invalid: { entityId: string; reason: string; raw: unknown }[];
}

/** The list has no messages: read each ticket, `concurrency` at a time. */
async function readTickets(ctx: SyncContext, tickets: readonly Ticket[], stats: RunStats): Promise<ReadTickets> {
  const out: ReadTickets = { ok: [], invalid: [] };
  await mapConcurrent(tickets, ctx.config.concurrency, async (ticket) => {
    try {
      out.ok.push(await ctx.client.getTicket(ticket.id));
      stats.recordsFetched++;
    } catch (err) {
      if (err instanceof NotFoundError) return; // gone since the list was read: its delete event follows
      // A failure of this ticket's own (403, other 4xx, not JSON, too large, invalid) quarantines it.
      const own = recordFailure(err);
      if (own === null) throw err;
      out.invalid.push({ entityId: ticket.id, reason: own.reason, raw: own.raw });
    }
  });
  return out;
}
