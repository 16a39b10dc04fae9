import { CursorRejectedError, NotFoundError, PagingGuard, type Page, type Ticket, type TicketWithMessages } from '../api/index.js';
import { mapConcurrent } from '../util/concurrency.js';
import { toIsoTimestamp } from '../util/time.js';
import { STATE, type SyncContext } from './context.js';
import { recordFailure } from './drain.js';
import { plausibleHead } from './plausible.js';
import { refreshPipelines } from './pipelines.js';
import { splitImplausible } from './cycle.js';
import { quarantineEvents, quarantineInvalid } from './quarantine.js';
import { refreshReports } from './reporting.js';
import type { RunStats } from './stats.js';

/** Persisted after every page so a crashed backfill resumes where it stopped (docs/design.md §4.6). */
export interface BackfillState {
  phase: 'deals' | 'tickets' | 'history' | 'done';
  /** The newest event's occurredAt when the backfill began: the watermark it hands to `sync`. */
  handover: string | null;
  /** Cursor of the list being copied; null starts it from the beginning. */
  cursor: string | null;
  startedAt: string;
  copied: { deals: number; tickets: number; events: number };
  /** `history` setting: 'none', 'all' or an ISO date to start the change log from. */
  history: string;
}

export interface BackfillOptions {
  /** Copy the change log too: 'none' (default), 'all', or an ISO date. */
  history?: string;
  /** The newest event's occurredAt if the caller already read it (null: the log is empty). */
  head?: string | null;
  onProgress?: (p: { phase: BackfillState['phase']; copied: BackfillState['copied'] }) => void;
}

export async function runBackfill(ctx: SyncContext, stats: RunStats, options: BackfillOptions = {}): Promise<BackfillState> {
  const { store, client } = ctx;
  let state = await store.getState<BackfillState>(STATE.backfill);
  if (!state || state.phase === 'done') {
    // Step 1: the newest event is read before anything is copied, so whatever changes during the
    // copy is replayed by the first sync through the lookback window.
    // Only a plausible head may become the watermark (docs/sync.md, "Hostile upstream").
    const head = options.head !== undefined ? options.head : plausibleHead(await client.eventsPage({ limit: 1 }), ctx.now()).head;
    state = {
      phase: 'deals',
      handover: toIsoTimestamp(head),
      cursor: null,
      startedAt: ctx.now(),
      copied: { deals: 0, tickets: 0, events: 0 },
      history: options.history ?? 'none',
    };
    await store.transaction((tx) => tx.setState(STATE.backfill, state));
  }
  const save = async (next: BackfillState) => {
    state = next;
    await store.transaction((tx) => tx.setState(STATE.backfill, next));
  };
  const progress = () => options.onProgress?.({ phase: state!.phase, copied: state!.copied });

  await refreshPipelines(ctx);
  if (state.phase === 'deals') {
    const done = await copyList(ctx, state.cursor, (cursor) => client.dealsPage({ cursor, limit: ctx.config.pageSize }), noLoad, async (page, _, cursor) => {
      const known = await store.knownStageIds();
      if (page.items.some((d) => !known.has(d.stage.id))) await refreshPipelines(ctx);
      const now = ctx.now();
      state = await store.transaction(async (tx) => {
        await tx.upsertDeals(page.items, now);
        await quarantineInvalid(tx, page.invalid, now);
        const next = { ...state!, cursor, copied: { ...state!.copied, deals: state!.copied.deals + page.items.length } };
        await tx.setState(STATE.backfill, next);
        return next;
      });
      stats.recordsFetched += page.items.length;
      stats.quarantined += page.invalid.length;
      ctx.hooks?.onPage?.('deals', { items: page.items.length, invalid: page.invalid.length });
      progress();
    });
    if (!done) return state;
    await save({ ...state, phase: 'tickets', cursor: null });
  }

  if (state.phase === 'tickets') {
    const done = await copyList(ctx, state.cursor, (cursor) => client.ticketsPage({ cursor, limit: ctx.config.pageSize }), (page) => readTickets(ctx, page.items, stats), async (page, full, cursor) => {
      const now = ctx.now();
      state = await store.transaction(async (tx) => {
        await tx.upsertTickets(full.ok, now);
        await quarantineInvalid(tx, page.invalid, now);
        for (const bad of full.invalid) {
          await tx.quarantine({ entityType: 'ticket', entityId: bad.entityId, reason: bad.reason, raw: bad.raw }, now);
        }
        const next = { ...state!, cursor, copied: { ...state!.copied, tickets: state!.copied.tickets + full.ok.length } };
        await tx.setState(STATE.backfill, next);
        return next;
      });
      stats.quarantined += page.invalid.length + full.invalid.length;
      ctx.hooks?.onPage?.('tickets', { items: page.items.length, invalid: page.invalid.length });
      progress();
    });
    if (!done) return state;
    await save({ ...state, phase: state.history === 'none' ? 'done' : 'history', cursor: null });
  }

  if (state.phase === 'history') {
    const since = state.history === 'all' ? undefined : toIsoTimestamp(state.history) ?? undefined;
    const done = await copyList(ctx, state.cursor, (cursor) => client.eventsPage({ since, cursor, limit: ctx.config.pageSize }), noLoad, async (page, _, cursor) => {
      const now = ctx.now();
      const committed = await store.transaction(async (tx) => {
        // Events beyond the upstream's clock stay out of the log and of history (docs/sync.md);
        // their records were just copied, so they need no re-read.
        const { events, rejected } = splitImplausible(page, now);
        const { newIds } = await tx.insertEvents(events, now);
        await quarantineInvalid(tx, page.invalid, now);
        await quarantineEvents(tx, rejected, new Set(rejected.map((r) => r.id ?? '')), now);
        const next = { ...state!, cursor, copied: { ...state!.copied, events: state!.copied.events + newIds.size } };
        await tx.setState(STATE.backfill, next);
        return next;
      });
      stats.eventsRead += page.items.length;
      stats.eventsNew += committed.copied.events - state!.copied.events;
      state = committed;
      ctx.hooks?.onPage?.('history', { items: page.items.length, invalid: page.invalid.length });
      progress();
    });
    if (!done) return state;
  }

  // Hand over: keep an older watermark if the mirror already had one, so re-running a backfill
  // never opens a gap in the events table.
  const existing = (await store.getState<string>(STATE.watermark)) ?? null;
  const final: BackfillState = { ...state, phase: 'done', cursor: null };
  await store.transaction(async (tx) => {
    if (existing === null) await tx.setState(STATE.watermark, state!.handover);
    await tx.setState(STATE.window, null);
    await tx.setState(STATE.backfill, final);
  });
  await refreshReports(ctx, stats, { tickets: 'all', deals: 'all' });
  progress();
  return final;
}

const noLoad = async (): Promise<null> => null;

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };
const settle = <T>(p: Promise<T>): Promise<Settled<T>> => p.then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error }));

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
    guard.check(page.items.map((item) => String((item as { id?: unknown }).id)), page.nextCursor);
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
          ctx.logger.warn({ status: got.error.status }, 'the workspace rejected the saved list cursor; copying this list again from its start');
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
