import { CursorRejectedError, PagingGuard, type Page } from '../api/index.js';
import type { SyncContext } from './context.js';
import { groupBounds, settledBefore, type PageGroupLimits } from './page-group.js';
import { PageReader } from './page-reader.js';

/** One page of a list and what `load` read for it. */
export interface LoadedPage<T, L> {
  page: Page<T>;
  loaded: L;
}

/**
 * Pages a list from `cursor` until its end, handing groups of pages (with what `load` read for
 * each) and the cursor that follows the group's last page to `apply`, which commits them in one
 * transaction. Returns false when a graceful stop ended it early (the cursor is persisted). A
 * cursor the upstream no longer accepts restarts the list: upserts make the re-copy harmless.
 *
 * Why groups: an SQLite commit writes every page of every index the transaction touched, and a
 * page of 100 tickets touches hundreds of index pages scattered by random ids; ten pages in one
 * transaction share most of them (docs/design.md §4.6). A group closes at `maxPages`, at the
 * list's end, on a stop, before a failure is thrown (what was read commits first), and when its
 * first page has waited `maxDelayMs`, so under a rate limit each page still commits about as soon
 * as it is read and a crash loses at most that much work.
 *
 * The next pages (up to `aheadPages`, PageReader) are fetched and loaded while `apply` commits a
 * group, so the network and the store work at the same time; pages apply only after the group
 * before them committed, so each saved cursor still commits with exactly the rows it covers.
 * Pages read ahead that a stop or a failure leaves unused are awaited (never left running) and
 * their answers dropped.
 */
export async function copyList<T, L>(
  ctx: Pick<SyncContext, 'stopSignal' | 'logger'>,
  start: string | null,
  fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
  load: (page: Page<T>) => Promise<L>,
  apply: (group: readonly LoadedPage<T, L>[], nextCursor: string | null) => Promise<void>,
  limits: PageGroupLimits = {},
): Promise<boolean> {
  const { maxPages, maxDelayMs, aheadPages } = groupBounds(limits);
  let restarted = false;
  let guard = new PagingGuard('a backfill list');
  if (start !== null) guard.start(start);
  const read = async (cursor: string | null): Promise<LoadedPage<T, L>> => {
    const page = await fetchPage(cursor ?? undefined);
    guard.check(
      page.items.map((item) => String((item as { id?: unknown }).id)),
      page.nextCursor,
    );
    return { page, loaded: await load(page) };
  };
  let cursor = start;
  const reader = new PageReader(start, read, (got) => got.page.nextCursor, aheadPages, ctx.stopSignal);
  let group: LoadedPage<T, L>[] = [];
  let groupStarted = 0;
  const flush = async (): Promise<void> => {
    if (group.length === 0) return;
    const pages = group;
    group = [];
    await apply(pages, cursor);
  };
  try {
    for (;;) {
      const waiting = reader.peek();
      if (ctx.stopSignal.aborted || !waiting) {
        await flush();
        return false;
      }
      if (group.length > 0) {
        // The group commits once its first page has waited long enough, whether or not the next
        // page has come: a slow upstream must not hold read pages uncommitted.
        if (!(await settledBefore(waiting, groupStarted + maxDelayMs))) await flush();
      }
      const got = await reader.take()!;
      if (!got.ok) {
        await flush();
        if (got.error instanceof CursorRejectedError && cursor !== null && !restarted) {
          ctx.logger.warn(
            { status: got.error.status },
            'the workspace rejected the saved list cursor; copying this list again from its start',
          );
          restarted = true;
          cursor = null;
          guard = new PagingGuard('a backfill list');
          reader.restart(null);
          continue;
        }
        throw got.error;
      }
      const next: string | null = got.value.page.nextCursor;
      if (group.length === 0) groupStarted = performance.now();
      group.push(got.value);
      cursor = next;
      if (next === null || group.length >= maxPages || performance.now() - groupStarted >= maxDelayMs) await flush();
      if (next === null) return true;
    }
  } finally {
    await reader.drain();
  }
}
