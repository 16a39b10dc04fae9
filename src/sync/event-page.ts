import type { Page, WorkspaceEvent } from '../api/index.js';
import type { StoreTx } from '../store/index.js';
import type { SyncContext } from './context.js';
import { plausibleAgainstLocal } from '../util/clock-bounds.js';
import { dirtyMarks, type DirtyMark } from './marks.js';
import { quarantinedEventIds, quarantineEvents, quarantineInvalid, quarantineKey, type RejectedEvent } from './quarantine.js';
import { closeWindow, recordLateEvent, saveWindow, type WindowState } from './state.js';
import { emptyRecordSets, RECORD_TYPES, type RecordSets } from '../entities/index.js';
import { timed } from './steps.js';

/**
 * One change-log page committed (docs/design.md §4.2): its events, deletions, dirty marks, late
 * events and the window's position, in one transaction.
 */
export interface CommittedPage {
  /** How many of the page's events were new. */
  newCount: number;
  /** True when this page closed the window (moved the watermark). */
  ended: boolean;
  /** The window's position as committed: its cursor is null once ended, its reach gone after a late event. */
  window: WindowState;
  /** The oldest new event older than the window's `lateBefore`, recorded as a late event; null when none. */
  late: WorkspaceEvent | null;
  /** How many new events are older than `lateBefore`. */
  lateCount: number;
  /** Events whose id the mirror already held for another event: quarantined, their records marked. */
  reused: WorkspaceEvent[];
  /**
   * Records whose history new events changed: their reporting rows are refreshed too. The group's
   * events are stored together, so its last page carries them all; the others carry none.
   */
  historyOf: RecordSets;
}

/** A change-log page read and checked, waiting for its group's transaction. */
export interface ReadPage {
  page: Page<WorkspaceEvent>;
  /** Its plausible events, normalised. */
  events: WorkspaceEvent[];
  rejected: RejectedEvent[];
  /** The window's position after this page. */
  next: WindowState;
  /** True when a tick may end at this page (it reached the guaranteed overlap); only a group's last page. */
  mayEnd: boolean;
}

/**
 * One transaction for a group of pages (docs/sync.md, "Change-log pages commit in groups"), with
 * the outcome of committing each page alone: its events, deletions, dirty marks, late events and
 * the window's position. The group's events go to the store together (a few statements for the
 * group, not for each page); an event's id is new on the first page that holds it, as it would be
 * page by page, and the window's position is written once, as its last page leaves it. The last
 * page (next.cursor null, or `mayEnd`: a tick reached its guaranteed overlap, only ever a group's
 * last page) moves the watermark instead, and a full window's last page records the lookback
 * state. A new event older than `lateBefore` is recorded as late, and then the tick reads on to
 * `since` after all: more such events may lie there, so the pages after it in the group lose their
 * reach too. Counters are updated by the caller after the commit: a transaction may be run again
 * (PostgreSQL deadlock).
 */
export async function commitPages(ctx: SyncContext, pages: readonly ReadPage[]): Promise<CommittedPage[]> {
  const now = ctx.now();
  // Nothing follows a page without a cursor: the group ends there.
  const last = pages.findIndex((p) => p.next.cursor === null);
  const group = last < 0 ? pages : pages.slice(0, last + 1);
  const requarantined = await timed(ctx, 'quarantine', () => alreadyQuarantined(ctx, group));
  return timed(ctx, 'commit', () =>
    ctx.store.transaction(async (tx) => {
      const stored = await timed(ctx, 'events', () =>
        tx.insertEvents(
          group.flatMap((p) => p.events),
          now,
        ),
      );
      const marks = await timed(ctx, 'quarantine', () => quarantinePages(tx, group, requarantined, now));
      const news = newOnFirstPage(group, stored.newIds);
      const unseen = news.flat();
      // Deletions are the records' own rows (deleted_at), not marks.
      await timed(ctx, 'records', () => markDeletions(tx, unseen));
      await timed(ctx, 'quarantine', () => quarantineReused(tx, stored.reused, now));
      await timed(ctx, 'dirty-marks', async () => {
        // Only new events (and reused ids) mark: an overlap page of events already held looks nothing up.
        const named = dirtyMarks([...unseen, ...stored.reused]);
        const mirrored = named.length === 0 ? new Map<string, string>() : await tx.mirroredUpdatedAt(named);
        await tx.markDirty([...named.filter((m) => !alreadyCurrent(mirrored, m, now)), ...marks]);
      });
      const results = positions(group, news, stored.reused);
      const final = results[results.length - 1]!;
      await timed(ctx, 'window-state', async () => {
        const late = results.findLast((r) => r.late !== null)?.late;
        if (late) await recordLateEvent(tx, { seenAt: now, eventId: late.id, occurredAt: late.occurredAt });
        if (final.ended) await closeWindow(tx, final.window);
        else await saveWindow(tx, final.window);
      });
      final.historyOf = stored.historyOf;
      return results;
    }),
  );
}

/**
 * Each page's events whose id is new to the mirror, on the first page that holds the id (all of
 * that page's events under it, as a page committed alone would find them): a later page's copy
 * found the id stored.
 */
function newOnFirstPage(pages: readonly ReadPage[], newIds: ReadonlySet<string>): WorkspaceEvent[][] {
  const claimed = new Set<string>();
  return pages.map(({ events }) => {
    const mine = new Set<string>();
    for (const e of events) if (newIds.has(e.id) && !claimed.has(e.id)) mine.add(e.id);
    for (const id of mine) claimed.add(id);
    return events.filter((e) => mine.has(e.id));
  });
}

/** The quarantine rows of each page in turn (invalid items, rejected events); returns the marks rejected events ask for. */
async function quarantinePages(
  tx: StoreTx,
  pages: readonly ReadPage[],
  requarantined: ReadonlySet<string>,
  now: string,
): Promise<DirtyMark[]> {
  const seen = new Set(requarantined);
  const marks: DirtyMark[] = [];
  for (const { page, rejected } of pages) {
    await quarantineInvalid(
      tx,
      page.invalid.filter((i) => i.entityType !== 'event'),
      now,
    );
    marks.push(...(await quarantineEvents(tx, [...rejected, ...page.invalid.filter((i) => i.entityType === 'event')], seen, now)));
    for (const id of eventQuarantineIds(page, rejected)) seen.add(quarantineKey(id));
  }
  return marks;
}

/**
 * Where each page leaves the window, page after page: its late events, whether it ended the
 * window, its position. The first late event takes the reach of the pages after it.
 */
function positions(pages: readonly ReadPage[], news: readonly WorkspaceEvent[][], reused: readonly WorkspaceEvent[]): CommittedPage[] {
  const results: CommittedPage[] = [];
  const reusedSet = new Set(reused);
  let lateSeen = false;
  for (const [i, { events, next: read, mayEnd }] of pages.entries()) {
    const next = lateSeen ? withoutReach(read) : read;
    const lateOnes = lateEvents(news[i]!, next.lateBefore);
    const late = oldest(lateOnes);
    const ended = next.cursor === null || (mayEnd && !lateSeen && late === null);
    lateSeen ||= late !== null;
    const window = ended ? { ...next, cursor: null } : late !== null ? withoutReach(next) : next;
    const newCount = new Set(news[i]!.map((e) => e.id)).size;
    const pageReused = events.filter((e) => reusedSet.has(e));
    results.push({ newCount, ended, late, lateCount: lateOnes.length, window, reused: pageReused, historyOf: emptyRecordSets() });
    if (ended) break;
  }
  return results;
}

/**
 * Events whose id the mirror already holds for another event (docs/sync.md, "Hostile upstream"):
 * the first keeps the id, so this one is not stored, but its record did change; the caller marks
 * it, and the event goes to quarantine (entity type `event`) so the reuse is visible.
 */
export async function quarantineReused(tx: StoreTx, reused: readonly WorkspaceEvent[], now: string): Promise<void> {
  for (const e of reused) {
    const reason = `its id is already the id of another event in the mirror (another type, record or time): the upstream reused it. This ${e.type} of ${e.entityType} ${e.entityId} at ${e.occurredAt} is not stored; the record it names is re-read`;
    await tx.quarantine({ entityType: 'event', entityId: e.id, reason, raw: e }, now);
  }
}

/** Sets deleted_at on the records whose `*.deleted` events are among `unseen` (events new to the mirror), a statement per type. */
export async function markDeletions(tx: StoreTx, unseen: readonly WorkspaceEvent[]): Promise<void> {
  for (const type of RECORD_TYPES) {
    const deletions = unseen
      .filter((e) => e.entityType === type && e.type === `${type}.deleted`)
      .map((e) => ({ entityId: e.entityId, at: e.occurredAt }));
    if (deletions.length > 0) await tx.markDeletedEach(type, deletions);
  }
}

/** The window with no reach: after a late event it reads to `since`, also when resumed from its cursor. */
function withoutReach(window: WindowState): WindowState {
  const { reach: _reach, ...rest } = window;
  return rest;
}

/** The events of `unseen` (new to the mirror) that lie before `lateBefore`. */
function lateEvents(unseen: readonly WorkspaceEvent[], lateBefore: string | undefined): WorkspaceEvent[] {
  if (lateBefore === undefined) return [];
  const limit = Date.parse(lateBefore);
  return unseen.filter((e) => Date.parse(e.occurredAt) < limit);
}

function oldest(events: readonly WorkspaceEvent[]): WorkspaceEvent | null {
  let found: WorkspaceEvent | null = null;
  for (const e of events) if (found === null || Date.parse(e.occurredAt) < Date.parse(found.occurredAt)) found = e;
  return found;
}

/** Event ids of these pages already in quarantine: their records were re-read when first seen. */
async function alreadyQuarantined(ctx: SyncContext, pages: readonly ReadPage[]): Promise<Set<string>> {
  const ids = pages.flatMap((p) => eventQuarantineIds(p.page, p.rejected));
  if (ids.length === 0) return new Set();
  return quarantinedEventIds(ctx.store, ids);
}

/** The ids of a page's events that go to quarantine: rejected, or invalid with an id. */
function eventQuarantineIds(page: Page<WorkspaceEvent>, rejected: readonly RejectedEvent[]): string[] {
  return [
    ...rejected.flatMap((r) => (r.id === null ? [] : [r.id])),
    ...page.invalid.filter((i) => i.entityType === 'event' && i.id !== null).map((i) => i.id!),
  ];
}

/**
 * A record the mirror already holds at a newer version than an event needs no re-read: a
 * mid-window drain already read it, or an older event turned up on a later page of the
 * newest-first log. Equal times are re-read, since two writes can share a millisecond. A mirrored
 * updatedAt beyond what the local clock makes plausible (a copy once served with 2100) decides
 * nothing: the record is re-read, so one bad value can never freeze it (docs/sync.md, "Hostile upstream").
 */
function alreadyCurrent(mirrored: Map<string, string>, mark: DirtyMark, now: string): boolean {
  const updatedAt = mirrored.get(`${mark.entityType}:${mark.entityId}`);
  if (updatedAt === undefined) return false;
  const at = Date.parse(updatedAt);
  return at > Date.parse(mark.occurredAt) && plausibleAgainstLocal(at, Date.parse(now));
}
