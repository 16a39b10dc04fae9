import {
  ApiError,
  clipText,
  InvalidRecordError,
  InvalidResponseError,
  ResponseTooLargeError,
  UpstreamRejectedError,
} from '../api/index.js';
import { RECORD_ENTITIES, type MirroredRecord, type RecordType } from '../entities/index.js';
import type { DirtyEntry, StoreTx } from '../store/index.js';
import type { RecordOutcome, SyncContext } from './context.js';
import { refusedValueState } from './write-batch.js';
import { timed } from './steps.js';

/** A record read back older than the event that marked it this many times in a row is accepted. */
export const STALE_READS_ACCEPTED_AFTER = 3;

/**
 * One record's writes in the drain, as data: the write batch applies many at once (applyWrites),
 * and a record stays dirty until its batch commits (docs/design.md §4.3).
 */
export type RecordWrite =
  /** A copy read by id or from a list page. */
  | { kind: 'read'; entry: DirtyEntry; record: MirroredRecord; reason?: undefined }
  /** A 404: deleted_at is set and the row stays for history. */
  | { kind: 'deleted'; entry: DirtyEntry; record: null; reason?: undefined }
  /** Quarantined and out of the dirty set: its next event, or verify --repair, retries it. */
  | { kind: 'quarantine'; entry: DirtyEntry; record: unknown; reason: string };

export const readWrite = (entry: DirtyEntry, record: MirroredRecord): RecordWrite => ({ kind: 'read', entry, record });

export const deletedWrite = (entry: DirtyEntry): RecordWrite => ({ kind: 'deleted', entry, record: null });

/** `raw` is the record as read, kept with the quarantine row; `reason` is clipped for a person to read. */
export const quarantineWrite = (entry: DirtyEntry, reason: string, raw: unknown): RecordWrite => ({
  kind: 'quarantine',
  entry,
  record: raw,
  reason: clipText(reason),
});

const keyOf = (e: DirtyEntry) => `${e.entityType}:${e.entityId}`;

/**
 * Applies `writes` in one transaction with the outcome of applying them one after another, in a
 * few statements per type and table instead of several per record. Runs of distinct records go
 * together; a record met again starts a new run, so its second write sees its first.
 */
export async function applyWrites(ctx: SyncContext, tx: StoreTx, writes: readonly RecordWrite[]): Promise<RecordOutcome[]> {
  const out: RecordOutcome[] = [];
  let run: RecordWrite[] = [];
  const keys = new Set<string>();
  for (const w of writes) {
    if (keys.has(keyOf(w.entry))) {
      out.push(...(await applyDistinct(ctx, tx, run)));
      run = [];
      keys.clear();
    }
    keys.add(keyOf(w.entry));
    run.push(w);
  }
  if (run.length > 0) out.push(...(await applyDistinct(ctx, tx, run)));
  return out;
}

/**
 * The writes of distinct records. A read: the mirror takes the copy, and the mark leaves the
 * dirty set only when the copy is at least as new as the newest event that marked it (docs/design.md
 * §4.3). Older is a stale read (replica lag, cache): tried again next cycle, and accepted after a
 * few tries, since some servers do not bump updatedAt for every event. A copy the store could
 * not hold is quarantined by the upsert: out of the dirty set like any quarantined record (its
 * next event, or verify --repair, retries it), never counted "fresh". Each type's copies go in one bulk
 * upsert, so the references two types share (users, contacts) fold per type, not across types.
 */
async function applyDistinct(ctx: SyncContext, tx: StoreTx, writes: readonly RecordWrite[]): Promise<RecordOutcome[]> {
  const now = ctx.now();
  const outcomes: RecordOutcome[] = Array<RecordOutcome>(writes.length);
  const cleared: number[] = [];
  const stale: number[] = [];
  const ofKind = (kind: RecordWrite['kind'], type: RecordType) =>
    writes.flatMap((w, i) => (w.kind === kind && w.entry.entityType === type ? [i] : []));
  for (const entity of RECORD_ENTITIES) {
    const type = entity.type;
    const reads = ofKind('read', type);
    if (reads.length > 0) {
      const records = reads.map((i) => writes[i]!.record as MirroredRecord);
      const verdicts = await timed(ctx, 'records', () => tx.upsertRecords(entity.type, records, now));
      reads.forEach((i, n) => {
        const { entry } = writes[i]!;
        const current = Date.parse(records[n]!.updatedAt) >= Date.parse(entry.occurredAt);
        if (verdicts[n]!.quarantined || current) {
          outcomes[i] = verdicts[n]!.quarantined ? 'quarantined' : 'fresh';
          cleared.push(i);
        } else stale.push(i);
      });
    }
    const deleted = ofKind('deleted', type);
    if (deleted.length > 0) {
      await timed(ctx, 'records', () =>
        tx.markDeletedMany(
          type,
          deleted.map((i) => writes[i]!.entry.entityId),
          now,
        ),
      );
      for (const i of deleted) outcomes[i] = 'deleted';
      cleared.push(...deleted);
    }
  }
  for (const [i, w] of writes.entries()) {
    if (w.kind !== 'quarantine') continue;
    await timed(ctx, 'quarantine', () =>
      tx.quarantine({ entityType: w.entry.entityType, entityId: w.entry.entityId, reason: w.reason, raw: w.record }, now),
    );
    outcomes[i] = 'quarantined';
    cleared.push(i);
  }
  const staleReads = await timed(ctx, 'dirty-clear', () => tx.bumpStaleReads(stale.map((i) => writes[i]!.entry)));
  for (const i of stale) {
    const accepted = (staleReads.get(keyOf(writes[i]!.entry)) ?? 0) >= STALE_READS_ACCEPTED_AFTER;
    outcomes[i] = accepted ? 'stale-accepted' : 'stale';
    if (accepted) cleared.push(i);
  }
  await timed(ctx, 'dirty-clear', () =>
    tx.clearDirtyMany(
      cleared.map((i) => {
        const { entityType, entityId, occurredAt } = writes[i]!.entry;
        return { entityType, entityId, upTo: occurredAt };
      }),
    ),
  );
  return outcomes;
}

/**
 * Quarantines in a transaction of its own, for a record whose values the database refused in a
 * batch. If the raw copy itself holds what the database refused, the reason is kept, not the copy.
 */
export async function quarantineAlone(ctx: SyncContext, entry: DirtyEntry, reason: string, raw: unknown): Promise<RecordOutcome> {
  const put = (value: unknown) => ctx.store.transaction((tx) => applyWrites(ctx, tx, [quarantineWrite(entry, reason, value)]));
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
