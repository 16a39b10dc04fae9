import type { Kysely } from 'kysely';
import { clipText } from '../api/index.js';
import { capabilitiesOf } from './dialect.js';
import { StoreError } from './errors.js';
import type { MirrorDatabase } from './schema.js';
import { run } from './sql.js';
import * as t from './sync-tables.js';
import type { UpsertResult } from './record-upsert.js';

type Db = Kysely<MirrorDatabase>;

/** How one entity type is converted and written in batches (tickets.ts, deals.ts). */
export interface BulkWriter<R, P> {
  entityType: 'ticket' | 'deal';
  /** Throws StoreError('INVALID_VALUE') for a value the store cannot hold. */
  prepare(record: R, syncedAt: string): P;
  idOf(prepared: P): string;
  /** Keys of child rows that are unique across parents (message ids): a batch holds each once. */
  childKeysOf?(prepared: P): readonly string[];
  write(db: Db, batch: readonly P[]): Promise<UpsertResult[]>;
}

const QUARANTINED: UpsertResult = { history: 0, superseded: false, quarantined: true };

/** PostgreSQL data exceptions (class 22) and a value too deep for its stack (54001). */
export function refusedValue(err: unknown): string | null {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /^(22|54)/.test(code) ? code : null;
}

/**
 * Upserts `records` in order with as few statements as the batch allows, with the outcome of
 * upserting them one by one: a batch is cut before a record whose id (or a unique child key) it
 * already holds, and before a record that cannot be converted, which is quarantined in its turn
 * (docs/design.md §4.5). Results are in the order of `records`.
 */
export async function upsertMany<R extends { id: string }, P>(
  db: Db,
  writer: BulkWriter<R, P>,
  records: readonly R[],
  syncedAt: string,
): Promise<UpsertResult[]> {
  const results: UpsertResult[] = [];
  let batch: { record: R; prepared: P }[] = [];
  const ids = new Set<string>();
  const keys = new Set<string>();
  const flush = async () => {
    if (batch.length === 0) return;
    results.push(...(await writeBatch(db, writer, batch, syncedAt)));
    batch = [];
    ids.clear();
    keys.clear();
  };
  for (const record of records) {
    let prepared: P;
    try {
      prepared = writer.prepare(record, syncedAt);
    } catch (err) {
      if (!(err instanceof StoreError) || err.code !== 'INVALID_VALUE') throw err;
      await flush();
      await t.quarantine(db, { entityType: writer.entityType, entityId: record.id, reason: err.message, raw: record }, syncedAt);
      results.push({ ...QUARANTINED });
      continue;
    }
    const id = writer.idOf(prepared);
    const childKeys = writer.childKeysOf?.(prepared) ?? [];
    if (ids.has(id) || childKeys.some((k) => keys.has(k))) await flush();
    ids.add(id);
    for (const k of childKeys) keys.add(k);
    batch.push({ record, prepared });
  }
  await flush();
  return results;
}

/**
 * SQLite stores whatever it is given. PostgreSQL may refuse a value (an integer beyond its column, a
 * value nested too deep), which aborts the statement: the batch runs in a savepoint, and when it
 * is refused the records are written again one by one, each in its own savepoint, so the refusal
 * quarantines only the record that holds the value.
 */
async function writeBatch<R, P>(
  db: Db,
  writer: BulkWriter<R, P>,
  batch: readonly { record: R; prepared: P }[],
  syncedAt: string,
): Promise<UpsertResult[]> {
  if (!capabilitiesOf(db).failedStatementAbortsTransaction)
    return writer.write(
      db,
      batch.map((b) => b.prepared),
    );
  const whole = await inSavepoint(db, () =>
    writer.write(
      db,
      batch.map((b) => b.prepared),
    ),
  );
  if (whole.ok) return whole.value;
  const out: UpsertResult[] = [];
  for (const { record, prepared } of batch) {
    const one = await inSavepoint(db, () => writer.write(db, [prepared]));
    if (one.ok) {
      out.push(one.value[0]!);
      continue;
    }
    const item = (raw: unknown) => ({
      entityType: writer.entityType,
      entityId: writer.idOf(prepared),
      reason: clipText(`the database refused a value of this record (${one.code}): ${one.message}`),
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

/** Runs `fn` in a savepoint; a refused value rolls back to it, any other error is rethrown. */
async function inSavepoint<T>(db: Db, fn: () => Promise<T>): Promise<Attempt<T>> {
  await run(db, 'savepoint wsmirror_bulk', []);
  try {
    const value = await fn();
    await run(db, 'release savepoint wsmirror_bulk', []);
    return { ok: true, value };
  } catch (err) {
    const code = refusedValue(err);
    if (code === null) throw err;
    await run(db, 'rollback to savepoint wsmirror_bulk', []);
    await run(db, 'release savepoint wsmirror_bulk', []);
    return { ok: false, code, message: (err as Error).message };
  }
}
