import type { RecordType } from '../entities/index.js';
import type { SyncContext } from './context.js';
import { drainDirty } from './drain.js';
import { refreshReports } from './reporting.js';
import { isBackfilled } from './state.js';
import type { RunStats } from './stats.js';
import { WsmirrorError } from '../util/errors.js';

/** A record to read again, and the version it must be read at least as new as (the epoch: any). */
export interface RereadMark {
  entityType: RecordType;
  entityId: string;
  occurredAt: string;
}

/** A mark no read can be older than: the first read of the record clears it. */
export const ANY_VERSION = new Date(0).toISOString();

/**
 * Reads these records again by the drain's own rules (docs/design.md §4.3): each is taken out of
 * the quarantine and marked dirty in one transaction, then the drain re-reads every dirty record
 * (history observed against the stored copy, quarantine on a bad record, deletion on a 404) and
 * the rpt_ tables are refreshed for what it wrote. A crash after the marks commit loses nothing:
 * the next drain reads them. The watermark, the window and the cursors are not touched.
 */
export async function rereadMarked(ctx: SyncContext, stats: RunStats, marks: readonly RereadMark[]): Promise<void> {
  // One mark per record: PostgreSQL refuses an upsert that touches the same row twice.
  const unique = new Map(marks.map((m) => [`${m.entityType}:${m.entityId}`, m]));
  if (unique.size > 0) {
    await ctx.store.transaction(async (tx) => {
      await tx.markDirty([...unique.values()]);
      for (const m of unique.values()) await tx.clearQuarantine(m.entityType, m.entityId);
    });
  }
  await drainDirty(ctx, stats);
  await refreshReports(ctx, stats, stats.changed);
}

/** A repair needs a mirror to repair: NOT_BACKFILLED (exit 2) before any request otherwise. */
export async function requireBackfilled(ctx: SyncContext, command: string): Promise<void> {
  if (await isBackfilled(ctx.store)) return;
  throw new WsmirrorError(
    'NOT_BACKFILLED',
    `The mirror has not been backfilled yet, so there is nothing for \`${command}\` to repair: run \`wsmirror backfill\` (or \`wsmirror run\`) first.`,
  );
}
