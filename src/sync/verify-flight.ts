import { setTimeout as delay } from 'node:timers/promises';
import { entityOf, isRecordType, type ListedRecord, type RecordType } from '../entities/index.js';
import { mayLeaveList } from './list-passes.js';
import type { SyncContext } from './context.js';
import { readAsOf } from './state.js';
import type { Drift } from './verify-drift.js';

/** A difference the first look found, with what a second look needs to judge it. */
export interface Candidate {
  drift: Drift;
  /** The mirror's copy at the first look (null: not mirrored); a record difference only. */
  before: { updatedAt: string; deletedAt: string | null } | null;
  /** The list item compared, for a content difference. */
  listed?: ListedRecord;
}

/** A difference made upstream after the mirror's as-of: the mirror is not yet expected to hold it. */
export interface InFlight extends Drift {
  /** When the change was made upstream (the listed `updatedAt`, or the record's newest event); null for a deal count. */
  changedAt: string | null;
}

/** Records the change log names at or after the as-of: the changes in flight. */
export interface RecentChanges {
  /** `<entityType>:<entityId>` → its newest event's `occurredAt`. */
  byRecord: Map<string, string>;
  /** A deal changed: a pipeline's dealCount may move before the mirror's. */
  deals: boolean;
  /** `<entityType>:<entityId>` of the records the log shows leaving their list (deleted, merged, spam, an unknown verb). */
  leaving: Set<string>;
  /** More events than the bound: records changed earlier than those read are not known to be in flight. */
  truncated: boolean;
}

/** Change-log pages read for the changes in flight; a daemon's mirror trails by one page at most. */
const MAX_EVENT_PAGES = 20;

/**
 * The change log from the as-of on (newest first): the records changed since, so in flight. Read
 * after the lists, so it also names a record that changed between its page and its comparison.
 */
export async function changesSince(ctx: SyncContext, asOf: string): Promise<RecentChanges> {
  const out: RecentChanges = { byRecord: new Map(), deals: false, leaving: new Set(), truncated: false };
  let pages = 0;
  const floor = Date.parse(asOf);
  for await (const page of ctx.client.iterateEvents({ since: asOf, limit: 100 })) {
    // Newest first: a server that ignores `since` serves older events too; they are not in flight.
    let older = false;
    for (const e of page.items) {
      if (Date.parse(e.occurredAt) < floor) older = true;
      if (older || !isRecordType(e.entityType)) continue;
      if (e.entityType === 'deal') out.deals = true;
      const key = `${e.entityType}:${e.entityId}`;
      if (mayLeaveList(e, entityOf(e.entityType))) out.leaving.add(key);
      const seen = out.byRecord.get(key);
      if (seen === undefined || Date.parse(e.occurredAt) > Date.parse(seen)) out.byRecord.set(key, e.occurredAt);
    }
    if (older) break;
    if (++pages >= MAX_EVENT_PAGES) {
      out.truncated = page.nextCursor !== null;
      break;
    }
  }
  return out;
}

/**
 * Splits the first look's differences (docs/sync.md, "Verify"): one made upstream after the
 * mirror's as-of is in flight, the rest the mirror should already hold. Without an as-of the
 * mirror claims nothing, and every difference is drift (never hidden).
 */
export function classify(
  candidates: readonly Candidate[],
  asOf: string | null,
  recent: RecentChanges,
): { drift: Candidate[]; inFlight: Array<Candidate & { changedAt: string | null }> } {
  const drift: Candidate[] = [];
  const inFlight: Array<Candidate & { changedAt: string | null }> = [];
  if (asOf === null) return { drift: [...candidates], inFlight };
  const floor = Date.parse(asOf);
  const dealsMoving = recent.deals || candidates.some((c) => c.drift.entityType === 'deal' && changedAfter(c, floor, recent));
  for (const c of candidates) {
    const { drift: d } = c;
    if (isDealCount(d) && dealsMoving) inFlight.push({ ...c, changedAt: null });
    else if (isRecordType(d.entityType) && changedAfter(c, floor, recent)) inFlight.push({ ...c, changedAt: changeTime(c, recent) });
    else drift.push(c);
  }
  return { drift, inFlight };
}

/** A pipeline's deal count, listed (`deal_count`) or stored (the `deal_count` column): it moves with any deal. */
function isDealCount(d: Drift): boolean {
  return d.kind === 'deal_count' || (d.entityType === 'pipeline' && (d.fields ?? []).every((f) => f === 'deal_count'));
}

function changedAfter(c: Candidate, floor: number, recent: RecentChanges): boolean {
  const at = changeTime(c, recent);
  return at !== null && Date.parse(at) > floor;
}

/** The newest of the listed version and the record's newest event since the as-of. */
function changeTime(c: Candidate, recent: RecentChanges): string | null {
  const listed = typeof c.drift.upstream === 'string' && !Number.isNaN(Date.parse(c.drift.upstream)) ? c.drift.upstream : null;
  const logged = recent.byRecord.get(`${c.drift.entityType}:${c.drift.entityId}`) ?? null;
  if (listed === null) return logged;
  if (logged === null) return listed;
  return Date.parse(logged) > Date.parse(listed) ? logged : listed;
}

/** Options of the second look. */
export interface SettleOptions {
  /** Longest wait for the as-of to pass the changes in flight. Default 10 000 ms; 0: no second look. */
  settleMs: number;
  /** Stop waiting when the as-of has not moved for this long (no writer is advancing it). Default 3 000 ms. */
  stallMs?: number;
}

/**
 * Waits (bounded) for the mirror's as-of to pass the newest change in flight, polling the
 * mirror's own state. Returns the as-of then, or null when none was ever recorded.
 */
export async function awaitAsOf(ctx: SyncContext, target: number, options: SettleOptions): Promise<string | null> {
  const start = Date.now();
  let last = (await readAsOf(ctx.store))?.asOf ?? null;
  let movedAt = start;
  while (Date.now() - start < options.settleMs && !ctx.stopSignal.aborted) {
    if (last !== null && Date.parse(last) >= target) break;
    if (Date.now() - movedAt >= (options.stallMs ?? 3000)) break;
    await delay(200, undefined, { signal: ctx.stopSignal }).catch(() => undefined);
    const now = (await readAsOf(ctx.store))?.asOf ?? null;
    if (now !== last) movedAt = Date.now();
    last = now;
  }
  return last;
}

/**
 * The second look at the changes in flight once the as-of passed them: a record whose copy moved
 * since the first look took its change (what still differs belongs to a newer one); a copy that did
 * not move still differs from a change the mirror should now hold, so it is drift. A content
 * difference on the same version is compared again.
 */
export async function secondLook(
  ctx: SyncContext,
  inFlight: ReadonlyArray<Candidate & { changedAt: string | null }>,
  asOf: string | null,
): Promise<{ drift: Drift[]; still: InFlight[] }> {
  const drift: Drift[] = [];
  const still: InFlight[] = [];
  const copies = new Map<RecordType, Map<string, { updatedAt: string; deletedAt: string | null }>>();
  for (const c of inFlight) {
    const type = c.drift.entityType;
    if (asOf === null || c.changedAt === null || !isRecordType(type) || Date.parse(c.changedAt) > Date.parse(asOf)) {
      still.push({ ...c.drift, changedAt: c.changedAt });
      continue;
    }
    if (!copies.has(type)) copies.set(type, await ctx.store.mirroredVersions(type));
    const now = copies.get(type)!.get(c.drift.entityId) ?? null;
    if (await stillDiffers(ctx, c, now)) drift.push(c.drift);
  }
  return { drift, still };
}

async function stillDiffers(ctx: SyncContext, c: Candidate, now: Candidate['before']): Promise<boolean> {
  const { before, listed } = c;
  if (c.drift.kind === 'content' && listed && now && now.deletedAt === null && Date.parse(now.updatedAt) === Date.parse(listed.updatedAt)) {
    const type = c.drift.entityType as RecordType;
    return (await ctx.store.recordDifferences(type, [listed])).size > 0;
  }
  const moved =
    (before === null) !== (now === null) ||
    (before !== null && now !== null && (before.updatedAt !== now.updatedAt || before.deletedAt !== now.deletedAt));
  return !moved;
}
