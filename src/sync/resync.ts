import { clipText } from '../api/index.js';
import { entityOf, type RecordType } from '../entities/index.js';
import { recordSnapshot, snapshotDifferences, type RecordSnapshot } from '../store/index.js';
import type { SyncContext } from './context.js';
import { ANY_VERSION, requireBackfilled, rereadMarked } from './reread.js';
import type { RunStats } from './stats.js';

/** A record named by `wsmirror resync`. */
export interface RecordRef {
  entityType: RecordType;
  entityId: string;
}

/**
 * What became of one record `resync` read again: `updated` (the mirror's copy changed; `changed`
 * names the columns and child tables), `unchanged`, `deleted` (the workspace answered 404 and the
 * mirror held it live), `quarantined` (its copy failed validation or the store refused it:
 * `reason`), `not-found` (neither the workspace nor the mirror knows the id), `pending` (its read
 * failed while the workspace answered others: it stays dirty and the next cycle reads it again).
 */
export interface ResyncedRecord extends RecordRef {
  outcome: 'updated' | 'unchanged' | 'deleted' | 'quarantined' | 'not-found' | 'pending';
  changed: string[];
  /** The mirror holds the record as deleted (after the read). */
  deleted: boolean;
  reason?: string;
}

export interface ResyncResult {
  records: ResyncedRecord[];
}

/**
 * `wsmirror resync` (docs/operations.md, "Repairing one record or a period"): reads these records
 * again now, through the drain (src/sync/reread.ts), and says per record what the read changed in
 * the mirror, comparing its rows before and after. Tickets are read by id with their messages.
 */
export async function runResync(ctx: SyncContext, stats: RunStats, refs: readonly RecordRef[]): Promise<ResyncResult> {
  await requireBackfilled(ctx, 'resync');
  const before = new Map<string, RecordSnapshot | null>();
  for (const r of refs) before.set(keyOf(r), await recordSnapshot(ctx.store, r.entityType, r.entityId));
  await rereadMarked(
    ctx,
    stats,
    refs.map((r) => ({ ...r, occurredAt: ANY_VERSION })),
  );
  const stillDirty = new Set((await ctx.store.listDirty(refs.length + 1000)).map(keyOf));
  const records: ResyncedRecord[] = [];
  for (const r of refs) {
    const after = await recordSnapshot(ctx.store, r.entityType, r.entityId);
    records.push(await judge(ctx, r, before.get(keyOf(r)) ?? null, after, stillDirty.has(keyOf(r))));
  }
  for (const r of records) ctx.logger.info({ ...r }, `resync: ${r.entityType} ${r.entityId} ${r.outcome}`);
  return { records };
}

async function judge(
  ctx: SyncContext,
  ref: RecordRef,
  before: RecordSnapshot | null,
  after: RecordSnapshot | null,
  dirty: boolean,
): Promise<ResyncedRecord> {
  const deleted = after?.row.deleted_at != null;
  const base = { ...ref, changed: snapshotDifferences(before, after), deleted };
  const quarantined = await ctx.store.quarantinedIds(ref.entityType, [ref.entityId]);
  if (quarantined.has(ref.entityId)) {
    const row = (await ctx.store.newestQuarantined(1000)).find((q) => q.entity_type === ref.entityType && q.entity_id === ref.entityId);
    return { ...base, outcome: 'quarantined', reason: clipText(row?.reason ?? 'see `wsmirror status`', 300) };
  }
  if (dirty)
    return { ...base, outcome: 'pending', reason: 'its read failed while the workspace answered others; the next cycle reads it again' };
  if (!before && !after) return { ...base, outcome: 'not-found' };
  if (deleted && before?.row.deleted_at == null) return { ...base, outcome: 'deleted' };
  return { ...base, outcome: base.changed.length === 0 ? 'unchanged' : 'updated' };
}

function keyOf(r: RecordRef): string {
  return `${r.entityType}:${r.entityId}`;
}

/** One line per record, as the CLI prints it. */
export function resyncLine(r: ResyncedRecord): string {
  const what = `${entityOf(r.entityType).type} ${r.entityId}`;
  switch (r.outcome) {
    case 'updated':
      return `${what}: updated (${r.changed.join(', ')})${r.deleted ? ', held as deleted' : ''}`;
    case 'unchanged':
      return `${what}: unchanged${r.deleted ? ' (held as deleted: the workspace no longer has it)' : ''}`;
    case 'deleted':
      return `${what}: deleted (the workspace no longer has it; the row stays with deleted_at set)`;
    case 'quarantined':
      return `${what}: quarantined (${r.reason ?? ''})`;
    case 'not-found':
      return `${what}: not found (neither the workspace nor the mirror knows this id)`;
    case 'pending':
      return `${what}: not read (${r.reason ?? ''})`;
  }
}
