import {
  AuthRejectedError,
  CursorRejectedError,
  InvalidResponseError,
  PagingError,
  PagingGuard,
  ResponseTooLargeError,
  UpstreamRejectedError,
  UpstreamUnavailableError,
  type InvalidItem,
  type Page,
} from '../api/index.js';
import { entityOf, type ListedRecord, type MirroredRecord, type RecordEntity } from '../entities/index.js';
import type { DirtyEntry } from '../store/index.js';
import { WsmirrorError } from '../util/errors.js';
import type { SyncContext } from './context.js';
import type { TypePlan } from './plan.js';
import { timed } from './steps.js';

/** Where the list scan hands what it found. */
export interface ListSink {
  /** A dirty record found in the list: the read that may clear its mark. */
  found(entry: DirtyEntry, record: MirroredRecord): Promise<void>;
  /** A dirty record whose list item failed validation. */
  invalid(entry: DirtyEntry, item: InvalidItem): Promise<void>;
  /** A record the mirror holds as deleted that the list leaves out down to its mark: the deletion is confirmed. */
  gone(entry: DirtyEntry): Promise<void>;
}

export interface ListScanResult {
  /** Dirty records the scan did not settle: not found down to their mark, or an item the list cannot stand in for (a ticket whose messages moved). Read by id. */
  readById: DirtyEntry[];
  pages: number;
}

/**
 * Pages the upstream's newest-updated-first list of one record type (docs/design.md §4.3) until
 * every record of `plan.viaList` is found, or the page ends below the oldest of their marks (a
 * record not above its mark was not bumped, is stale or left the list: read by id, where a 404
 * means deleted), or the pages cost as much as the reads they replace. The entity decides which
 * items found stand for a whole copy (RecordEntity.fromList); the others are read by id.
 */
export async function scanList(ctx: SyncContext, plan: TypePlan, sink: ListSink): Promise<ListScanResult> {
  const byId = new Map(plan.viaList.map((e) => [e.entityId, e]));
  const targets = new Map(byId);
  const readById: DirtyEntry[] = [];
  const downToMs = Date.parse(plan.listDownTo ?? '');
  const budget = plan.viaList.length;
  const entity = entityOf(plan.entityType);
  const path = entity.list.path;
  const guard = new PagingGuard(path);
  let cursor: string | null = null;
  let pages = 0;
  // True once the pages went below every mark (or to the list's end): what is missing is not listed.
  let passedMarks = false;
  while (targets.size > 0 && pages < budget && !ctx.stopSignal.aborted) {
    let page: Page<ListedRecord>;
    try {
      page = await listPage(ctx, entity, cursor);
      guard.check([...page.items.map((i) => i.id), ...page.invalid.map((i) => `invalid:${i.id ?? i.reason}`)], page.nextCursor);
    } catch (err) {
      if (!listUnusable(err)) throw err;
      // The records stay reachable by id: a list the upstream will not page is no reason to stop.
      ctx.logger.warn(
        { path, code: (err as WsmirrorError).code, error: (err as Error).message },
        'the list could not be paged; reading the rest of the dirty records by id',
      );
      break;
    }
    pages++;
    ctx.hooks?.onPage?.(entity.plural, { items: page.items.length, invalid: page.invalid.length });
    ctx.progress?.();
    for (const bad of page.invalid) {
      const entry = bad.id === null ? undefined : targets.get(bad.id);
      if (!entry) continue;
      targets.delete(bad.id!);
      await sink.invalid(entry, bad);
    }
    const hits = page.items.filter((item) => targets.has(item.id));
    for (const item of hits) targets.delete(item.id);
    const taken = await timed(ctx, 'records', () => entity.fromList(ctx.store, hits));
    for (const { id, record } of taken.copies) await sink.found(byId.get(id)!, record);
    readById.push(...taken.readById.map((id) => byId.get(id)!));
    const last = page.items[page.items.length - 1];
    if (page.nextCursor === null || (last !== undefined && Date.parse(last.updatedAt) < downToMs)) {
      passedMarks = true;
      break;
    }
    cursor = page.nextCursor;
  }
  return { readById: [...readById, ...(await confirmGone(ctx, plan, [...targets.values()], passedMarks, sink))], pages };
}

/**
 * A record the list leaves out down to its mark is not listed at any version as new as the mark.
 * If the mirror already holds it as deleted (its `*.deleted` event set deleted_at), the list
 * confirms that, and reading it by id (a 404) would tell nothing more. The others are read by id.
 */
async function confirmGone(
  ctx: SyncContext,
  plan: TypePlan,
  missing: readonly DirtyEntry[],
  passedMarks: boolean,
  sink: ListSink,
): Promise<DirtyEntry[]> {
  if (!passedMarks || missing.length === 0) return [...missing];
  const deleted = await timed(ctx, 'records', () =>
    ctx.store.deletedIds(
      plan.entityType,
      missing.map((e) => e.entityId),
    ),
  );
  const readById: DirtyEntry[] = [];
  for (const entry of missing) {
    if (deleted.has(entry.entityId)) await sink.gone(entry);
    else readById.push(entry);
  }
  return readById;
}

function listPage(ctx: SyncContext, entity: RecordEntity, cursor: string | null): Promise<Page<ListedRecord>> {
  return ctx.client.listPage(entity.list, { cursor, limit: ctx.config.pageSize }, { signal: ctx.cycleSignal });
}

/**
 * Failures of the list itself that reading by id does not share, or may not: a list page that
 * found no complete answer (a trickled body, a 5xx after retries) leaves the records to their
 * reads by id, which tell one record's failure from an upstream that is down (read-failures.ts).
 * A 401 is the cycle's.
 */
function listUnusable(err: unknown): boolean {
  // A 403 on the list may be this key's permissions on listing; the records' own reads decide.
  if (err instanceof AuthRejectedError && err.status !== 403) {
    throw new WsmirrorError('AUTH_REJECTED_ON_RECORD', err.message, { cause: err });
  }
  return (
    err instanceof AuthRejectedError ||
    err instanceof CursorRejectedError ||
    err instanceof PagingError ||
    err instanceof UpstreamRejectedError ||
    err instanceof InvalidResponseError ||
    err instanceof ResponseTooLargeError ||
    err instanceof UpstreamUnavailableError
  );
}
