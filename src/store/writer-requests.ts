import type { Selectable } from 'kysely';
import { StoreError } from './errors.js';
import { databaseHandle } from './handles.js';
import type { MirrorDatabase } from './schema.js';
import type { Store } from './store.js';
import type { StoreTx } from './tx.js';
import { requiredTs } from './values.js';

/** A row of the writer's inbox (migration 1600), timestamps in the stored form (docs/schema.md). */
export type WriterRequestRow = Selectable<MirrorDatabase['writer_requests']>;

/** How a served request ended: `done` with its result, or `failed` with an error's code and sentence. */
export type WriterRequestEnd =
  { outcome: 'done'; result: unknown } | { outcome: 'failed'; errorCode: string | null; error: string; result?: unknown };

/**
 * The writer's inbox (docs/operations.md, "Repairing one record or a period"): the one table a
 * process without the writer lock may write, so a command can ask the process that holds the lock
 * to do a write for it. Rows hold a kind and its parameters (ids, a date), never mirror content.
 */
export interface WriterRequests {
  /** Adds a request; returns its id. NO_REQUEST_QUEUE when the mirror predates the inbox. */
  queue(kind: string, params: unknown, at: string): Promise<number>;
  /** The row as it stands now; null when there is none. */
  read(id: number): Promise<WriterRequestRow | null>;
  /** Requests not finished yet (a started one too: its writer stopped before it ended), oldest first. */
  pending(limit: number): Promise<WriterRequestRow[]>;
}

/** The inbox of a store; `queue` is the write allowed without the writer lock. */
export function writerRequests(store: Store): WriterRequests {
  const db = databaseHandle(store);
  return {
    async queue(kind, params, at) {
      try {
        const row = await db
          .insertInto('writer_requests')
          .values({ kind, params_json: JSON.stringify(params), requested_at: requiredTs(at, 'requestedAt') })
          .returning('id')
          .executeTakeFirstOrThrow();
        return Number(row.id);
      } catch (err) {
        if (!/writer_requests/.test((err as Error).message ?? '')) throw err;
        throw new StoreError(
          'NO_REQUEST_QUEUE',
          `The mirror at ${store.label} has no queue for requests: the process writing it runs an older wsmirror. Stop it (or upgrade it) and run this command again.`,
          { cause: err },
        );
      }
    },
    read: async (id) => (await db.selectFrom('writer_requests').selectAll().where('id', '=', id).executeTakeFirst()) ?? null,
    pending: (limit) => db.selectFrom('writer_requests').selectAll().where('finished_at', 'is', null).orderBy('id').limit(limit).execute(),
  };
}

/** The writer takes a request: started now (again, when a stopped writer had started it). */
export async function startWriterRequest(tx: StoreTx, id: number, at: string): Promise<void> {
  await databaseHandle(tx)
    .updateTable('writer_requests')
    .set({ started_at: requiredTs(at, 'startedAt') })
    .where('id', '=', id)
    .execute();
}

/** The writer ends a request; the waiting command reads the row. */
export async function finishWriterRequest(tx: StoreTx, id: number, end: WriterRequestEnd, at: string): Promise<void> {
  await databaseHandle(tx)
    .updateTable('writer_requests')
    .set({
      finished_at: requiredTs(at, 'finishedAt'),
      outcome: end.outcome,
      result_json: end.result === undefined ? null : JSON.stringify(end.result),
      error_code: end.outcome === 'failed' ? end.errorCode : null,
      error: end.outcome === 'failed' ? end.error : null,
    })
    .where('id', '=', id)
    .execute();
}
