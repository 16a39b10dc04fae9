import { RECORD_ENTITIES, type ListedRecord, type RecordEntity } from '../entities/index.js';
import type { SyncContext } from './context.js';
import { ANY_VERSION, requireBackfilled, rereadMarked, type RereadMark } from './reread.js';
import type { RunStats } from './stats.js';

/** What one list showed `backfill --since`. */
export interface SinceListFigures {
  /** Items updated at or after the date (invalid items with an id included). */
  listed: number;
  /** List pages read. */
  pages: number;
  /** Listed records the mirror holds otherwise (missing, deleted, another updatedAt, other content), or invalid. */
  differed: number;
  /** Live mirrored records updated at or after the date that the list no longer shows (read again: a 404 deletes them). */
  gone: number;
}

export interface BackfillSinceResult {
  since: string;
  lists: Record<string, SinceListFigures>;
  listed: number;
  differed: number;
  unchanged: number;
  /** Records the drain read (by id or from a list page), every dirty record included. */
  reread: number;
  deleted: number;
  quarantined: number;
}

/** How many live mirrored records one list may hold as "gone" candidates: a bound on the look-up, not on the repair. */
const GONE_LOOKUP_LIMIT = 100_000;

/**
 * `wsmirror backfill --since <date>` (docs/operations.md, "Repairing one record or a period"):
 * pages each record list (newest updated first) down to the first item older than `since`,
 * compares every item with the mirror as `verify` does (version, then content), and reads again,
 * through the drain, what differs and what the mirror holds live for the period but the list no
 * longer shows. The watermark, the window and the history stay: nothing is reset, and the re-reads
 * add observed history like any drain. Cheap to rerun: a second run reads the same pages and
 * re-reads only what still differs.
 */
export async function runBackfillSince(ctx: SyncContext, stats: RunStats, since: string): Promise<BackfillSinceResult> {
  await requireBackfilled(ctx, 'backfill --since');
  const marks: RereadMark[] = [];
  const lists: Record<string, SinceListFigures> = {};
  for (const entity of RECORD_ENTITIES) lists[entity.plural] = await scanSince(ctx, entity, since, marks);
  const before = { fetched: stats.recordsFetched };
  await rereadMarked(ctx, stats, marks);
  const figures = Object.values(lists);
  const listed = figures.reduce((n, f) => n + f.listed, 0);
  const differed = figures.reduce((n, f) => n + f.differed, 0);
  const result: BackfillSinceResult = {
    since,
    lists,
    listed,
    differed,
    unchanged: listed - differed,
    reread: stats.recordsFetched - before.fetched,
    deleted: stats.deleted,
    quarantined: stats.quarantined,
  };
  ctx.logger.info({ ...result }, 'backfill --since done');
  return result;
}

/** One list down to `since`: adds a mark per record to read again, returns the list's figures. */
async function scanSince(ctx: SyncContext, entity: RecordEntity, since: string, marks: RereadMark[]): Promise<SinceListFigures> {
  const { client, store } = ctx;
  const sinceMs = Date.parse(since);
  const mirrored = await store.mirroredVersions(entity.type);
  const seen = new Set<string>();
  const figures: SinceListFigures = { listed: 0, pages: 0, differed: 0, gone: 0 };
  const mark = (entityId: string, occurredAt: string) => {
    marks.push({ entityType: entity.type, entityId, occurredAt });
    figures.differed++;
  };
  for await (const page of client.iterateList(entity.list, { limit: ctx.config.pageSize })) {
    figures.pages++;
    let past = false;
    const same: ListedRecord[] = [];
    for (const item of page.items) {
      // Newest updated first: every item after this one is older too (docs/upstream.md).
      if (Date.parse(item.updatedAt) < sinceMs) {
        past = true;
        continue;
      }
      figures.listed++;
      seen.add(item.id);
      const mine = mirrored.get(item.id);
      if (!mine || mine.deletedAt !== null || Date.parse(mine.updatedAt) !== Date.parse(item.updatedAt)) mark(item.id, item.updatedAt);
      else same.push(item);
    }
    for (const id of (await store.recordDifferences(entity.type, same)).keys()) mark(id, ANY_VERSION);
    for (const bad of page.invalid) {
      if (!bad.id || seen.has(bad.id)) continue;
      seen.add(bad.id);
      figures.listed++;
      mark(bad.id, ANY_VERSION);
    }
    if (past || ctx.stopSignal.aborted) break;
  }
  for (const copy of await store.listedSince(entity.type, since, GONE_LOOKUP_LIMIT)) {
    if (seen.has(copy.id)) continue;
    marks.push({ entityType: entity.type, entityId: copy.id, occurredAt: ANY_VERSION });
    figures.gone++;
  }
  return figures;
}

/** The summary line the CLI prints. */
export function backfillSinceLine(r: BackfillSinceResult): string {
  const gone = Object.values(r.lists).reduce((n, f) => n + f.gone, 0);
  const pages = Object.values(r.lists).reduce((n, f) => n + f.pages, 0);
  return (
    `Backfill since ${r.since}: ${r.listed} listed (${pages} pages), ${r.differed} differed, ${r.reread} re-read, ${r.unchanged} unchanged` +
    `${gone ? `, ${gone} no longer listed` : ''}, ${r.deleted} deleted, ${r.quarantined} quarantined; watermark and history kept.`
  );
}
