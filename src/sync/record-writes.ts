import {
  ApiError,
  clipText,
  InvalidRecordError,
  InvalidResponseError,
  ResponseTooLargeError,
  UpstreamRejectedError,
  type Deal,
  type TicketWithMessages,
} from '../api/index.js';
import type { DirtyEntry, StoreTx } from '../store/index.js';
import type { RecordOutcome, SyncContext } from './context.js';
import { refusedValueState, type RecordWrite } from './write-batch.js';

/** A record read back older than the event that marked it this many times in a row is accepted. */
export const STALE_READS_ACCEPTED_AFTER = 3;

/**
 * The writes of one read (by id or from a list page): the mirror takes the copy, and the mark
 * leaves the dirty set only when the copy is at least as new as the newest event that marked it
 * (docs/design.md §4.3). Older is a stale read (replica lag, cache): tried again next cycle, and
 * accepted after a few tries, since some servers do not bump updatedAt for every event.
 */
export function readWrite(ctx: SyncContext, entry: DirtyEntry, record: TicketWithMessages | Deal): RecordWrite {
  return {
    entry,
    record,
    async apply(tx: StoreTx): Promise<RecordOutcome> {
      const verdict =
        entry.entityType === 'ticket'
          ? await tx.upsertTicket(record as TicketWithMessages, ctx.now())
          : await tx.upsertDeal(record as Deal, ctx.now());
      if (verdict.quarantined) {
        // The store could not hold one of its values and quarantined it: out of the dirty set like
        // any quarantined record (its next event, or verify --repair, retries it), never "fresh".
        await tx.clearDirty(entry.entityType, entry.entityId, entry.occurredAt);
        return 'quarantined';
      }
      if (Date.parse(record.updatedAt) >= Date.parse(entry.occurredAt)) {
        await tx.clearDirty(entry.entityType, entry.entityId, entry.occurredAt);
        return 'fresh';
      }
      const staleReads = await tx.bumpStaleRead(entry.entityType, entry.entityId);
      if (staleReads >= STALE_READS_ACCEPTED_AFTER) {
        await tx.clearDirty(entry.entityType, entry.entityId, entry.occurredAt);
        return 'stale-accepted';
      }
      return 'stale';
    },
  };
}

/** A 404: deleted_at is set and the row stays for history. */
export function deletedWrite(ctx: SyncContext, entry: DirtyEntry): RecordWrite {
  return {
    entry,
    record: null,
    async apply(tx) {
      await tx.markDeleted(entry.entityType, entry.entityId, ctx.now());
      await tx.clearDirty(entry.entityType, entry.entityId, entry.occurredAt);
      return 'deleted';
    },
  };
}

/** Quarantined and out of the dirty set: its next event, or verify --repair, retries it. */
export function quarantineWrite(ctx: SyncContext, entry: DirtyEntry, reason: string, raw: unknown): RecordWrite {
  const short = clipText(reason);
  return {
    entry,
    record: raw,
    reason: short,
    async apply(tx) {
      await tx.quarantine({ entityType: entry.entityType, entityId: entry.entityId, reason: short, raw }, ctx.now());
      await tx.clearDirty(entry.entityType, entry.entityId, entry.occurredAt);
      return 'quarantined';
    },
  };
}

/**
 * Quarantines in a transaction of its own, for a record whose values the database refused in a
 * batch. If the raw copy itself holds what the database refused, the reason is kept, not the copy.
 */
export async function quarantineAlone(ctx: SyncContext, entry: DirtyEntry, reason: string, raw: unknown): Promise<RecordOutcome> {
  const put = (value: unknown) => ctx.store.transaction((tx) => quarantineWrite(ctx, entry, reason, value).apply(tx));
  try {
    await put(raw);
  } catch (err) {
    const sqlState = refusedValueState(ctx.store, err);
    if (sqlState === null) throw err;
    await put({ unstorable: `the database refused the raw record too (${sqlState})` });
  }
  return 'quarantined';
}

/**
 * Failures that belong to one record (docs/sync.md, "Hostile upstream"): any 4xx but 401 (403
 * included), a body that is not JSON, not the record asked for, invalid, or too large. Anything
 * else (the workspace down, the key rejected, a stall) is the cycle's, and null here.
 */
export function recordFailure(err: unknown): { reason: string; raw: unknown } | null {
  if (err instanceof InvalidRecordError) return { reason: err.reason, raw: err.raw };
  if (err instanceof UpstreamRejectedError)
    return { reason: `the workspace answered ${err.status ?? '?'} for this record`, raw: errorRaw(err) };
  if (err instanceof InvalidResponseError) return { reason: clipText(err.message, 500), raw: errorRaw(err) };
  if (err instanceof ResponseTooLargeError)
    return { reason: `the response was larger than maxResponseBytes (${err.limit} bytes)`, raw: errorRaw(err) };
  return null;
}

function errorRaw(err: ApiError): unknown {
  return { status: err.status, path: err.path, body: err.body ?? null };
}
