import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/dialects.js';
import { openStore, type Store } from '../../src/store/index.js';
import { databaseOf } from '../../src/store/internal.js';
import { SYNCED, deal, ticket } from './fixtures.js';

// Deletions the change log tells, a page's at a time (src/store/sync-tables.ts, markDeletedEach):
// the outcome must be that of marking them one after another, whatever statement does it.
for (const dialect of dialects) {
  describe(`markDeletedEach (${dialect.name})`, () => {
    let store: Store;
    let drop: () => Promise<void>;
    beforeEach(async () => {
      const db = await dialect.newDatabase();
      drop = db.drop;
      store = await openStore({ database: db.database });
      await store.migrate();
    });
    afterEach(async () => {
      await store.close();
      await drop();
    });

    const deletedAt = async (table: 'tickets' | 'deals') =>
      Object.fromEntries(
        (await databaseOf(store).selectFrom(table).select(['id', 'deleted_at']).orderBy('id').execute()).map((r) => [
          r.id,
          r.deleted_at === null ? null : new Date(`${String(r.deleted_at).replace(' ', 'T')}Z`).toISOString(),
        ]),
      );

    it('gives each record its own time, keeps its first, and leaves other records and types alone', async () => {
      await store.transaction(async (tx) => {
        for (const id of ['t1', 't2', 't3', 't4']) await tx.upsertTicket(ticket({ id, number: Number(id.slice(1)) }), SYNCED);
        await tx.upsertDeal(deal({ id: 'd1' }), SYNCED);
        await tx.markDeleted('ticket', 't3', '2024-05-02T00:00:00Z');
      });
      await store.transaction((tx) =>
        tx.markDeletedEach('ticket', [
          { entityId: 't1', at: '2024-05-03T00:00:00Z' },
          { entityId: 't2', at: '2024-05-03T00:00:01.500Z' },
          // A second deletion of the same record on the page, and one of a record already deleted: the first time stays.
          { entityId: 't1', at: '2024-05-04T00:00:00Z' },
          { entityId: 't3', at: '2024-05-05T00:00:00Z' },
          // Not in the mirror: nothing to mark, nothing created.
          { entityId: 'gone', at: '2024-05-03T00:00:00Z' },
        ]),
      );
      expect(await deletedAt('tickets')).toEqual({
        t1: '2024-05-03T00:00:00.000Z',
        t2: '2024-05-03T00:00:01.500Z',
        t3: '2024-05-02T00:00:00.000Z',
        t4: null,
      });
      expect(await deletedAt('deals')).toEqual({ d1: null });
      await store.transaction((tx) => tx.markDeletedEach('deal', []));
      expect(await deletedAt('deals')).toEqual({ d1: null });
    });

    it('refuses a junk time before any write', async () => {
      await store.transaction((tx) => tx.upsertTicket(ticket(), SYNCED));
      await expect(
        store.transaction((tx) =>
          tx.markDeletedEach('ticket', [
            { entityId: 't1', at: '2024-05-03T00:00:00Z' },
            { entityId: 't1', at: 'yesterday' },
          ]),
        ),
      ).rejects.toThrow(/at/);
      expect(await deletedAt('tickets')).toEqual({ t1: null });
    });
  });
}
