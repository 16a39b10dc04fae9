import type { SyncContext } from './context.js';

/**
 * After a bulk load (a backfill's copy, a full rebuild of the rpt_ tables): PostgreSQL vacuums and
 * analyzes the tables at once instead of whenever autovacuum comes round (src/store/tidy-tables.ts,
 * docs/sync.md "Backfill"). Only an optimisation: a failure is logged, and what was written stays.
 */
export async function tidyAfterBulkLoad(
  ctx: Pick<SyncContext, 'store' | 'logger'>,
  tables: readonly string[],
  what: string,
): Promise<void> {
  const started = performance.now();
  try {
    const outcome = await ctx.store.afterBulkLoad(tables);
    if (outcome === null) return;
    const { vacuumedAgain, notAllVisible, analyzedOnly } = outcome;
    ctx.logger.info(
      {
        tables: tables.length,
        // Small tables are analyzed, not vacuumed (src/store/tidy-tables.ts, TIDY_VACUUM_MIN_PAGES).
        analyzedOnly: analyzedOnly.length,
        ms: Math.round(performance.now() - started),
        ...(vacuumedAgain.length > 0 ? { vacuumedAgain } : {}),
        ...(notAllVisible.length > 0 ? { notAllVisible } : {}),
      },
      notAllVisible.length > 0
        ? `${what} vacuumed and analyzed; a transaction held some back from being marked all-visible, autovacuum will`
        : `${what} vacuumed and analyzed`,
    );
  } catch (err) {
    ctx.logger.warn({ err }, `could not vacuum and analyze ${what}; autovacuum will`);
  }
}
