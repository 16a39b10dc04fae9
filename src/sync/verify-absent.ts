import { InvalidRecordError, NotFoundError } from '../api/index.js';
import type { ListedRecord, RecordEntity, RecordType } from '../entities/index.js';
import type { ContentDifference } from '../store/index.js';
import type { SyncContext } from './context.js';
import type { Candidate, RecentChanges } from './verify-flight.js';
import type { Drift } from './verify-drift.js';

/** A record the mirror holds live that the list did not show, with its mirrored version. */
export interface Absent {
  entityId: string;
  updatedAt: string;
}

/**
 * Reads by id per list, at most, to confirm records the list did not show. Under paging by
 * position a list skips one record per record that leaves a page already read, so a handful;
 * beyond this bound the rest are reported `extra` unread, as before.
 */
export const MAX_ABSENT_READS = 100;

/** What one listing left to judge once the change log since the as-of is read. */
export interface Unlisted {
  /** Records the mirror holds live that the list did not show. */
  absent: Absent[];
  /** Records the list showed at the mirrored version, matching it then. */
  matched: Absent[];
}

/**
 * Judges what `entity`'s listing left open (docs/sync.md, "Verify"). A list paged by position
 * skips a record that stayed whenever one already served left it during the listing, so absence
 * alone is not drift. An absent record the change log names since the as-of is in flight by the
 * usual rules and is not read. When the log shows no record of this type leaving since then (and
 * the mirror has an as-of and the log was read whole), no list could have skipped one: each is
 * `extra`, unread. Otherwise each is read by id: 404 is `extra`; another version is `outdated`
 * (judged as any listed version is); at the mirrored version the list skipped it, and its content
 * is compared as a listed item's. A record that matched when listed and that the log shows leaving
 * the list since is `extra`, in flight. Returns the reads made.
 */
export async function judgeUnlisted(
  ctx: SyncContext,
  entity: RecordEntity,
  listing: Unlisted,
  recent: RecentChanges,
  asOf: string | null,
  out: Candidate[],
): Promise<number> {
  const entityType = entity.type;
  const key = (a: Absent) => `${entityType}:${a.entityId}`;
  const extra = (a: Absent): void =>
    void out.push({ drift: { entityType, entityId: a.entityId, kind: 'extra', upstream: null, mirror: a.updatedAt }, before: beforeOf(a) });
  for (const a of listing.matched) if (recent.leaving.has(key(a))) extra(a);
  const noSkip = asOf !== null && !recent.truncated && ![...recent.leaving].some((k) => k.startsWith(`${entityType}:`));
  let reads = 0;
  for (const a of listing.absent) {
    if (noSkip || recent.byRecord.has(key(a)) || reads >= MAX_ABSENT_READS) {
      extra(a);
      continue;
    }
    reads++;
    const copy = await readOrNull(ctx, entity, a.entityId);
    if (copy === 'invalid') continue;
    if (copy === null) extra(a);
    else if (Date.parse(copy.updatedAt) !== Date.parse(a.updatedAt))
      out.push({ drift: outdated(entityType, a, copy.updatedAt), before: beforeOf(a) });
    else await compareSkipped(ctx, entityType, a, copy, out);
  }
  return reads;
}

/** The copy read by id; null on 404; `invalid` when it fails validation (there, as an invalid list item would be: not drift). */
async function readOrNull(ctx: SyncContext, entity: RecordEntity, id: string): Promise<ListedRecord | null | 'invalid'> {
  try {
    // A copy read by id carries every field its list item does (and a ticket's messages besides).
    return await ctx.client.readRecord(entity.single, id);
  } catch (err) {
    if (err instanceof NotFoundError) return null;
    if (err instanceof InvalidRecordError) return 'invalid';
    throw err;
  }
}

/** The list skipped a record at the mirrored version: only its content can still differ. */
async function compareSkipped(ctx: SyncContext, entityType: RecordType, a: Absent, copy: ListedRecord, out: Candidate[]): Promise<void> {
  const differences = await ctx.store.recordDifferences(entityType, [copy]);
  const diffs = differences.get(a.entityId);
  if (!diffs || diffs.length === 0) return;
  out.push({ drift: contentDrift(entityType, a.entityId, diffs), before: beforeOf(a), listed: copy });
}

/** A content difference (same version, different rows): the first column or child table that differs, and all of them. */
export function contentDrift(entityType: Drift['entityType'], entityId: string, diffs: readonly ContentDifference[]): Drift {
  const first = diffs[0]!;
  return {
    entityType,
    entityId,
    kind: 'content',
    field: first.what,
    fields: diffs.map((d) => d.what),
    upstream: first.expected,
    mirror: first.found,
  };
}

function outdated(entityType: RecordType, a: Absent, upstream: string): Drift {
  return { entityType, entityId: a.entityId, kind: 'outdated', upstream, mirror: a.updatedAt };
}

function beforeOf(a: Absent): Candidate['before'] {
  return { updatedAt: a.updatedAt, deletedAt: null };
}
