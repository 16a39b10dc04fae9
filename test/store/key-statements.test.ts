import { describe, expect, it } from 'vitest';
import { dialects } from '../helpers/dialects.js';
import { databaseOf } from '../../src/store/internal.js';
import { SYNCED, deal, ticket, useDialectStore, upsertOne } from './fixtures.js';

// Statements over many keys at once (src/store/key-sets.ts: an OR of terms on SQLite, a join
// with one array per parameter on PostgreSQL; markDeletedEach in src/store/sync-tables.ts): the
// outcome must be that of the same writes one record after another, whatever statement does it.
for (const dialect of dialects) {
  describe(`statements over many keys (${dialect.name})`, () => {
    const store = useDialectStore(dialect);

    const deletedAt = async (table: 'tickets' | 'deals') =>
      Object.fromEntries(
        (await databaseOf(store).selectFrom(table).select(['id', 'deleted_at']).orderBy('id').execute()).map((r) => [
          r.id,
          r.deleted_at === null ? null : new Date(`${String(r.deleted_at).replace(' ', 'T')}Z`).toISOString(),
        ]),
      );

    it('markDeletedEach gives each record its own time, keeps its first, and leaves other records and types alone', async () => {
      await store.transaction(async (tx) => {
        for (const id of ['t1', 't2', 't3', 't4']) await upsertOne(tx, 'ticket', ticket({ id, number: Number(id.slice(1)) }), SYNCED);
        await upsertOne(tx, 'deal', deal({ id: 'd1' }), SYNCED);
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

    it('markDeletedEach refuses a junk time before any write', async () => {
      await store.transaction((tx) => upsertOne(tx, 'ticket', ticket(), SYNCED));
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

    const dirty = async () =>
      (await store.listDirty(100)).map((d) => [d.entityType, d.entityId, d.occurredAt, d.staleReads].join(' ')).sort();

    it('clears only the dirty marks no newer event re-marked, and bumps each record once however often it is named', async () => {
      await store.transaction((tx) =>
        tx.markDirty([
          { entityType: 'ticket', entityId: 't1', occurredAt: '2024-05-01T10:00:00Z' },
          { entityType: 'ticket', entityId: 't2', occurredAt: '2024-05-01T10:00:00.500Z' },
          { entityType: 'deal', entityId: 't1', occurredAt: '2024-05-01T09:00:00Z' },
          { entityType: 'deal', entityId: 'd2', occurredAt: '2024-05-01T09:00:00Z' },
        ]),
      );
      const stale = await store.transaction((tx) =>
        tx.bumpStaleReads([
          { entityType: 'ticket', entityId: 't2' },
          { entityType: 'deal', entityId: 't1' },
          { entityType: 'ticket', entityId: 't2' },
          { entityType: 'ticket', entityId: 'none' },
        ]),
      );
      expect(Object.fromEntries(stale)).toEqual({ 'ticket:t2': 1, 'deal:t1': 1 });
      const failed = await store.transaction((tx) => tx.bumpFailedReads([{ entityType: 'deal', entityId: 'd2' }]));
      expect(Object.fromEntries(failed)).toEqual({ 'deal:d2': 1 });
      await store.transaction((tx) =>
        tx.clearDirtyMany([
          // Read at the mark's own time: it leaves. Read older than the mark: it stays.
          { entityType: 'ticket', entityId: 't1', upTo: '2024-05-01T10:00:00Z' },
          { entityType: 'ticket', entityId: 't2', upTo: '2024-05-01T10:00:00.499Z' },
          // The same id under another type is another record.
          { entityType: 'ticket', entityId: 'd2', upTo: '2024-05-02T00:00:00Z' },
          { entityType: 'deal', entityId: 't1', upTo: '2024-05-02T00:00:00Z' },
        ]),
      );
      expect(await dirty()).toEqual(['deal d2 2024-05-01T09:00:00.000Z 0', 'ticket t2 2024-05-01T10:00:00.500Z 1']);
    });

    it('removes exactly the child rows a new copy no longer holds', async () => {
      await store.transaction((tx) => upsertOne(tx, 'ticket', ticket({ tags: ['a', 'b', 'c'] }), SYNCED));
      await store.transaction((tx) => upsertOne(tx, 'ticket', ticket({ tags: ['b'], updatedAt: '2024-05-02T00:00:00.000Z' }), SYNCED));
      const tags = await databaseOf(store).selectFrom('ticket_tags').select(['ticket_id', 'tag']).orderBy('tag').execute();
      expect(tags).toEqual([{ ticket_id: 't1', tag: 'b' }]);
    });
  });
}
