import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import { databaseOf } from '../../src/store/internal.js';
import { dialects } from '../helpers/dialects.js';
import { SYNCED, deal, ticket } from './fixtures.js';

/**
 * Issue 30: a first backfill into empty tables skips reading stored copies that cannot exist
 * (Store.startAppend). An id it wrote before (a list that shifted under the copy) is still read,
 * so the outcome is the upsert path's, and a mirror that holds records never appends.
 */
for (const dialect of dialects) {
  describe(`append path of a first backfill (${dialect.name})`, () => {
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

    const messageIds = async (ticketId: string) =>
      (await databaseOf(store).selectFrom('ticket_messages').select('id').where('ticket_id', '=', ticketId).orderBy('id').execute()).map(
        (m) => m.id,
      );

    it('starts only while every record table is empty', async () => {
      expect(await store.startAppend()).toBe(true);
      store.endAppend();
      await store.transaction((tx) => tx.upsertDeal(deal(), SYNCED));
      expect(await store.startAppend()).toBe(false);
    });

    it('a record written twice while appending takes the upsert path the second time: children replaced, history observed', async () => {
      expect(await store.startAppend()).toBe(true);
      const first = ticket({ id: 't1' });
      await store.transaction((tx) => tx.upsertTickets([first, ticket({ id: 't2' })], SYNCED));
      const second = {
        ...first,
        status: 'solved',
        updatedAt: '2024-05-01T10:00:00.000Z',
        tags: ['x'],
        messages: first.messages.slice(0, 1),
      };
      const [result] = await store.transaction((tx) => tx.upsertTickets([second], SYNCED));
      store.endAppend();
      expect(result!.history).toBe(1);
      expect(await messageIds('t1')).toEqual(['m1']);
      expect(await messageIds('t2')).toEqual(['m1', 'm2']);
      const tags = await databaseOf(store).selectFrom('ticket_tags').select('tag').where('ticket_id', '=', 't1').execute();
      expect(tags.map((t) => t.tag)).toEqual(['x']);
      const row = await databaseOf(store).selectFrom('tickets').select('status').where('id', '=', 't1').executeTakeFirstOrThrow();
      expect(row.status).toBe('solved');
    });

    it('an older copy of a record written earlier in the backfill still loses to it', async () => {
      expect(await store.startAppend()).toBe(true);
      const newer = ticket({ id: 't1', updatedAt: '2024-05-01T10:00:00.000Z' });
      await store.transaction((tx) => tx.upsertTickets([newer], SYNCED));
      const [older] = await store.transaction((tx) => tx.upsertTickets([ticket({ id: 't1', status: 'pending' })], SYNCED));
      store.endAppend();
      expect(older!.superseded).toBe(true);
      const row = await databaseOf(store).selectFrom('tickets').select('status').where('id', '=', 't1').executeTakeFirstOrThrow();
      expect(row.status).toBe('open');
    });

    it('an id whose write rolled back is read again and written whole (a page retried after a failure)', async () => {
      expect(await store.startAppend()).toBe(true);
      await expect(
        store.transaction(async (tx) => {
          await tx.upsertTickets([ticket({ id: 't1' })], SYNCED);
          throw new Error('killed mid-page');
        }),
      ).rejects.toThrow('killed mid-page');
      await store.transaction((tx) => tx.upsertTickets([ticket({ id: 't1' })], SYNCED));
      store.endAppend();
      expect(await messageIds('t1')).toEqual(['m1', 'm2']);
    });
  });
}
