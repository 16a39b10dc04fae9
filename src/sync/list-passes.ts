/**
 * A record list copied in passes (docs/sync.md, "Lists that page by position"): an upstream that
 * pages by position loses the record at a page boundary whenever a record already served leaves
 * the list, and that record changed before the copy began, so no later event names it. After
 * each pass the change log since the pass began is read and stored as phase `recent` stores it;
 * if it shows a record the mirror holds leaving the list, the list is paged again (the records
 * still held at their listed version cost a list item, not a read). At most MAX_LIST_PASSES
 * passes in one run; then the backfill stops with LIST_UNSETTLED rather than hand over a mirror
 * that may lack records, saved so that running it again goes on with the next pass.
 */
import type { WorkspaceEvent } from '../api/index.js';
import type { RecordEntity } from '../entities/index.js';
import { shiftIso } from '../util/time.js';
import { WsmirrorError } from '../util/errors.js';
import { checkClock, storeLogPage, type Phase } from './backfill-phases.js';
import type { SyncContext } from './context.js';
import { quarantineKey } from './quarantine.js';
import type { BackfillState } from './state.js';
import { DEFAULT_TICK_OVERLAP_SECONDS } from './window.js';

/** Passes over one list in one run, the first included: the bound on what a busy list can cost. */
export const MAX_LIST_PASSES = 4;

/**
 * Event verbs after which a record is still in its list: creates, field changes, replies, notes
 * and removed messages. Any other verb (`deleted`, `spam`, `merged`, one wsmirror does not know)
 * may have taken the record out of it (docs/upstream.md, "Paging").
 */
const STAYS_LISTED =
  /^(created|updated|assigned|reassigned|unassigned|replied|note_added|customer_replied|message_removed|[a-z_]+_changed)$/;

/** Whether `e` may have taken a record of `entity`'s list out of it. */
export function mayLeaveList(e: Pick<WorkspaceEvent, 'type' | 'entityType'>, entity: RecordEntity): boolean {
  if (e.entityType !== entity.type) return false;
  const dot = e.type.indexOf('.');
  return !STAYS_LISTED.test(dot < 0 ? e.type : e.type.slice(dot + 1));
}

/** The pass's state after its list ended: the log since the pass began is read next. */
export function afterListPass(state: BackfillState): BackfillState {
  return { ...state, step: 'log', cursor: null, left: 0, logNewest: null };
}

/** Where the log read after a pass starts: where the last one ended, less the guaranteed overlap for late events. */
function logSince(ctx: SyncContext, state: BackfillState): string | undefined {
  const since = state.logSince === undefined ? state.handover : state.logSince;
  return since === null ? undefined : shiftIso(since, -(ctx.config.tickOverlapSeconds ?? DEFAULT_TICK_OVERLAP_SECONDS) * 1000);
}

/**
 * The log read after a pass over `entity`'s list, as a phase: stored like phase `recent`; each
 * page counts the events new to the mirror that may take a record the mirror holds (a row or a
 * quarantined item) out of the list. Held is read before the page's transaction (`load`).
 */
export function passLogPhase(entity: RecordEntity): Phase<WorkspaceEvent, ReadonlySet<string>> {
  return {
    name: 'recent',
    fetch: (ctx, state) => (cursor) => ctx.client.eventsPage({ since: logSince(ctx, state), cursor, limit: ctx.config.pageSize }),
    async load(ctx, page) {
      checkClock(ctx, page);
      const leaving = page.items.filter((e) => mayLeaveList(e, entity));
      if (leaving.length === 0) return new Set<string>();
      const ids = [...new Set(leaving.map((e) => e.entityId))];
      const rows = await ctx.store.mirroredUpdatedAt(ids.map((entityId) => ({ entityType: entity.type, entityId })));
      const quarantined = await ctx.store.quarantinedIds(entity.type, ids.map(quarantineKey));
      return new Set(ids.filter((id) => rows.has(`${entity.type}:${id}`) || quarantined.has(quarantineKey(id))));
    },
    async apply(tx, page, held, now) {
      const got = await storeLogPage(tx, page, now);
      const left = got.stored.filter((e) => got.newIds.has(e.id) && held.has(e.entityId) && mayLeaveList(e, entity)).length;
      const newest = got.stored.reduce<string | null>(
        (a, e) => (a === null || Date.parse(e.occurredAt) > Date.parse(a) ? e.occurredAt : a),
        null,
      );
      return { copied: got.copied, quarantined: got.quarantined, left, newest };
    },
  };
}

/**
 * What follows the log read after a pass: the state with the next read's start when nothing left
 * the list (it is settled), else the next pass (`step: 'list'`), saved. Throws LIST_UNSETTLED once this run has made MAX_LIST_PASSES passes; the
 * state it returns in `save` first makes the next run start the next pass.
 */
export async function nextPass(
  ctx: SyncContext,
  entity: RecordEntity,
  state: BackfillState,
  passesThisRun: number,
  save: (state: BackfillState) => Promise<void>,
): Promise<BackfillState> {
  const logSinceNext = state.logNewest ?? (state.logSince === undefined ? state.handover : state.logSince);
  const left = state.left ?? 0;
  const settled = { ...state, logSince: logSinceNext };
  if (left === 0) return settled;
  const pass = (state.pass ?? 1) + 1;
  const next: BackfillState = { ...settled, step: 'list', pass, cursor: null, left: 0, logNewest: null };
  await save(next);
  if (passesThisRun >= MAX_LIST_PASSES)
    throw new WsmirrorError(
      'LIST_UNSETTLED',
      `The ${entity.plural} list kept losing records while it was paged: in each of ${MAX_LIST_PASSES} passes the change log showed records already copied leaving it (deleted, merged, marked spam), and a list paged by position then skips others. Run the backfill again: it resumes with pass ${pass}.`,
    );
  ctx.logger.info(
    { list: entity.plural, left, pass },
    `backfill: ${left} ${entity.plural} left the list while it was paged; paging it again in case the upstream pages by position`,
  );
  return next;
}
