import type { Kysely } from 'kysely';
import { clipText } from '../api/index.js';
import { capabilitiesOf } from './dialect.js';
import { StoreError } from './errors.js';
import type { MirrorDatabase } from './schema.js';
import { run } from './sql.js';
import * as t from './sync-tables.js';
import { writeRecords, type PreparedRecord, type RecordKind, type UpsertResult } from './record-upsert.js';

type Db = Kysely<MirrorDatabase>;

/** A record type's kind, whatever the stored columns it compares. */
type Writer<R, P extends PreparedRecord> = RecordKind<R, P, { id: string; updated_at: string | null }>;

const QUARANTINED: UpsertResult = { history: 0, superseded: false, quarantined: true };

/**
 * Upserts `records` in order with as few statements as the batch allows, with the outcome of
 * upserting them one by one: a batch is cut before a record whose id (or a unique child key) it
 * already holds, and before a record that cannot be converted, which is quarantined in its turn
 * (docs/design.md §4.5). Results are in the order of `records`.
 */
export async function upsertMany<R extends { id: string }, P extends PreparedRecord>(
  db: Db,
  kind: Writer<R, P>,
  records: readonly R[],
  syncedAt: string,
): Promise<UpsertResult[]> {
  const results: UpsertResult[] = [];
  let batch: { record: R; prepared: P }[] = [];
  const ids = new Set<string>();
  const keys = new Set<string>();
  const flush = async () => {
    if (batch.length === 0) return;
    results.push(...(await writeBatch(db, kind, batch, syncedAt)));
    batch = [];
    ids.clear();
    keys.clear();
  };
  for (const record of records) {
    let prepared: P;
    try {
      prepared = kind.prepare(record, syncedAt);
    } catch (err) {
      if (!(err instanceof StoreError) || err.code !== 'INVALID_VALUE') throw err;
      await flush();
      await t.quarantine(db, { entityType: kind.entityType, entityId: record.id, reason: err.message, raw: record }, syncedAt);
      results.push({ ...QUARANTINED });
      continue;
    }
    const id = prepared.row.id;
    const childKeys = kind.childKeysOf?.(prepared) ?? [];
    if (ids.has(id) || childKeys.some((k) => keys.has(k))) await flush();
    ids.add(id);
    for (const k of childKeys) keys.add(k);
    batch.push({ record, prepared });
  }
  await flush();
  return results;
}

/**
 * A batch runs in a savepoint. When the database refuses it for a reason of one record's rows (a
 * value PostgreSQL cannot hold, a string over SQLite's limit, a constraint the rows break, the
 * dialect's `refusedRecord`), the batch rolls back to the savepoint and the records are written
 * again one by one, each in its own savepoint, so only the record that holds the refusal is
 * quarantined and the rest of the transaction commits. In SQLite a failed statement leaves the
 * transaction open but keeps what the batch's earlier statements wrote; the savepoint undoes it.
 */
async function writeBatch<R, P extends PreparedRecord>(
  db: Db,
  kind: Writer<R, P>,
  batch: readonly { record: R; prepared: P }[],
  syncedAt: string,
): Promise<UpsertResult[]> {
  const whole = await inSavepoint(db, () =>
    writeRecords(
      db,
      kind,
      batch.map((b) => b.prepared),
    ),
  );
  if (whole.ok) return whole.value;
  const out: UpsertResult[] = [];
  for (const { record, prepared } of batch) {
    const one = await inSavepoint(db, () => writeRecords(db, kind, [prepared]));
    if (one.ok) {
      out.push(one.value[0]!);
      continue;
    }
    const item = (raw: unknown) => ({
      entityType: kind.entityType,
      entityId: prepared.row.id,
      reason: clipText(`the database refused this record (${one.code}): ${one.message}`),
      raw,
    });
    const kept = await inSavepoint(db, () => t.quarantine(db, item(record), syncedAt));
    // The raw copy itself holds what the database refused: keep the reason, not the copy.
    if (!kept.ok) await t.quarantine(db, item({ unstorable: `the database refused the raw record too (${kept.code})` }), syncedAt);
    out.push({ ...QUARANTINED });
  }
  return out;
}

type Attempt<T> = { ok: true; value: T } | { ok: false; code: string; message: string };

/** Runs `fn` in a savepoint; a refused record rolls back to it, any other error is rethrown. */
async function inSavepoint<T>(db: Db, fn: () => Promise<T>): Promise<Attempt<T>> {
  await run(db, 'savepoint wsmirror_bulk', []);
  try {
    const value = await fn();
    await run(db, 'release savepoint wsmirror_bulk', []);
    return { ok: true, value };
  } catch (err) {
    const code = capabilitiesOf(db).refusedRecord(err);
    if (code === null) throw err;
    await run(db, 'rollback to savepoint wsmirror_bulk', []);
    await run(db, 'release savepoint wsmirror_bulk', []);
    return { ok: false, code, message: (err as Error).message };
  }
}
