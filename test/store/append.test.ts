import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { MirrorDatabase } from '../../src/store/schema.js';
import { openStore, type Store } from '../../src/store/index.js';
import { databaseOf } from '../../src/store/internal.js';
import { dialects } from '../helpers/dialects.js';
import { tableSnapshot } from '../helpers/snapshot.js';
import { SYNCED, deal, ticket, useDialectStore, upsertOne } from './fixtures.js';

const RECORD_TABLES: (keyof MirrorDatabase)[] = [
  'tickets',
  'ticket_messages',
  'ticket_tags',
  'ticket_fields',
  'deals',
  'deal_contacts',
  'deal_fields',
  'users',
  'contacts',
  'companies',
  'quarantine',
];

/** Tickets enough that each child table takes more rows than one 999-parameter statement holds. */
const manyTickets = () =>
  Array.from({ length: 120 }, (_, i) =>
    ticket({
      id: `t${i}`,
      tags: ['a', `tag${i % 7}`],
      fields: { plan: i % 2 ? 'pro' : null, seats: i, nested: { i } },
      messages: ticket().messages.map((m) => ({ ...m, id: `${m.id}-${i % 3}`, body: `body\t${i}\n\\ "q"` })),
    }),
  );
const manyDeals = () => Array.from({ length: 40 }, (_, i) => deal({ id: `d${i}`, fields: { n: i, s: `x${i}` } }));

/**
 * Issue 30: a first backfill into empty tables skips reading stored copies that cannot exist
 * (Store.startAppend). An id it wrote before (a list that shifted under the copy) is still read,
 * so the outcome is the upsert path's, and a mirror that holds records never appends.
 */
for (const dialect of dialects) {
  describe(`append path of a first backfill (${dialect.name})`, () => {
    const store = useDialectStore(dialect);

    const messageIds = async (ticketId: string) =>
      (await databaseOf(store).selectFrom('ticket_messages').select('id').where('ticket_id', '=', ticketId).orderBy('id').execute()).map(
        (m) => m.id,
      );

    const write = (s: Store) =>
      s.transaction(async (tx) => [
        ...(await tx.upsertRecords('ticket', manyTickets(), SYNCED)),
        ...(await tx.upsertRecords('deal', manyDeals(), SYNCED)),
      ]);

    it('appended records and their children are the rows the upsert path writes', async () => {
      const other = await dialect.newDatabase();
      const upserted = await openStore({ database: other.database });
      try {
        await upserted.migrate();
        const expected = await write(upserted);
        expect(await store.startAppend()).toBe(true);
        const appended = await write(store);
        store.endAppend();
        expect(appended).toEqual(expected);
        expect(await tableSnapshot(store, RECORD_TABLES)).toEqual(await tableSnapshot(upserted, RECORD_TABLES));
        expect((await tableSnapshot(store, ['ticket_messages'])).ticket_messages).toHaveLength(240);
      } finally {
        await upserted.close();
        await other.drop();
      }
    });

    it('a row the database refuses in an appended batch quarantines that record only; the rest commits', async () => {
      // Constraints the mirror does not declare, as a DBA might add: one on a record, one on a child table.
      if (dialect.name === 'sqlite') {
        await sql
          .raw(`CREATE TRIGGER no_boom BEFORE INSERT ON ticket_tags WHEN NEW.tag = 'boom' BEGIN SELECT RAISE(ABORT, 'no boom'); END`)
          .execute(databaseOf(store));
        await sql
          .raw(`CREATE TRIGGER no_bang BEFORE INSERT ON tickets WHEN NEW.subject = 'bang' BEGIN SELECT RAISE(ABORT, 'no bang'); END`)
          .execute(databaseOf(store));
      } else {
        await sql.raw(`ALTER TABLE ticket_tags ADD CONSTRAINT no_boom CHECK (tag <> 'boom')`).execute(databaseOf(store));
        await sql.raw(`ALTER TABLE tickets ADD CONSTRAINT no_bang CHECK (subject <> 'bang')`).execute(databaseOf(store));
      }
      expect(await store.startAppend()).toBe(true);
      const batch = [ticket({ id: 'a' }), ticket({ id: 'b', tags: ['boom'] }), ticket({ id: 'c', subject: 'bang' }), ticket({ id: 'd' })];
      const results = await store.transaction((tx) => tx.upsertRecords('ticket', batch, SYNCED));
      store.endAppend();
      expect(results.map((r) => r.quarantined)).toEqual([false, true, true, false]);
      const ids = await databaseOf(store).selectFrom('tickets').select('id').orderBy('id').execute();
      expect(ids.map((r) => r.id)).toEqual(['a', 'd']);
      const tags = await databaseOf(store)
        .selectFrom('ticket_tags')
        .select(['ticket_id', 'tag'])
        .orderBy('ticket_id')
        .orderBy('tag')
        .execute();
      expect(tags.map((r) => `${r.ticket_id}:${r.tag}`)).toEqual(['a:hardware', 'a:urgent', 'd:hardware', 'd:urgent']);
      expect(await messageIds('a')).toEqual(['m1', 'm2']);
      expect(await messageIds('b')).toEqual([]);
      const q = await databaseOf(store).selectFrom('quarantine').select(['entity_id', 'reason']).orderBy('entity_id').execute();
      expect(q.map((r) => r.entity_id)).toEqual(['b', 'c']);
      for (const r of q) expect(r.reason).toMatch(/the database refused this record/);
    });

    if (dialect.name === 'postgres') {
      it('appended rows go straight into their tables by COPY, through no staging table', async () => {
        expect(await store.startAppend()).toBe(true);
        await write(store);
        store.endAppend();
        const stages = await sql<{ relname: string }>`select relname from pg_class where relname like 'wsmirror_stage_%'`.execute(
          databaseOf(store),
        );
        expect(stages.rows).toEqual([]);
      });
    }

    const quarantinedIds = async () =>
      (await databaseOf(store).selectFrom('quarantine').select('entity_id').orderBy('entity_id').execute()).map((r) => r.entity_id);

    it('a good copy clears a quarantine row written earlier in the append', async () => {
      expect(await store.startAppend()).toBe(true);
      const [junk] = await store.transaction((tx) => tx.upsertRecords('ticket', [ticket({ id: 'junk', createdAt: 'not a time' })], SYNCED));
      expect(junk!.quarantined).toBe(true);
      await store.transaction((tx) => tx.quarantine({ entityType: 'ticket', entityId: 'synced', reason: 'bad', raw: {} }, SYNCED));
      expect(await quarantinedIds()).toEqual(['junk', 'synced']);
      await store.transaction((tx) => tx.upsertRecords('ticket', [ticket({ id: 'junk' }), ticket({ id: 'synced' })], SYNCED));
      store.endAppend();
      expect(await quarantinedIds()).toEqual([]);
    });

    it('a good copy clears a quarantine row there when the append started', async () => {
      await store.transaction((tx) => tx.quarantine({ entityType: 'ticket', entityId: 'before', reason: 'bad', raw: {} }, SYNCED));
      expect(await store.startAppend()).toBe(true);
      await store.transaction((tx) => tx.upsertRecords('ticket', [ticket({ id: 'before' })], SYNCED));
      store.endAppend();
      expect(await quarantinedIds()).toEqual([]);
    });

    it('a quarantine row of another type is not cleared by a good copy of this one', async () => {
      expect(await store.startAppend()).toBe(true);
      await store.transaction((tx) => tx.quarantine({ entityType: 'deal', entityId: 'x', reason: 'bad', raw: {} }, SYNCED));
      await store.transaction(async (tx) => {
        await tx.upsertRecords('ticket', [ticket({ id: 'x' })], SYNCED);
        await tx.upsertRecords('deal', [deal({ id: 'y' })], SYNCED);
      });
      store.endAppend();
      expect(await quarantinedIds()).toEqual(['x']);
    });

    if (dialect.name === 'postgres') {
      it('while no quarantine row of the type can exist, an appended batch does not touch the quarantine', async () => {
        expect(await store.startAppend()).toBe(true);
        const locks = await store.transaction(async (tx) => {
          await tx.upsertRecords('ticket', [ticket({ id: 'a' }), ticket({ id: 'b' })], SYNCED);
          // Another connection: the locks the transaction holds on the quarantine until it ends.
          const held = await sql<{ mode: string }>`
            select l.mode from pg_locks l join pg_class c on c.oid = l.relation
            where c.relname = 'quarantine' and l.pid <> pg_backend_pid()`.execute(databaseOf(store));
          return held.rows;
        });
        store.endAppend();
        expect(locks).toEqual([]);
      });
    }

    it('starts only while every record table is empty', async () => {
      expect(await store.startAppend()).toBe(true);
      store.endAppend();
      await store.transaction((tx) => upsertOne(tx, 'deal', deal(), SYNCED));
      expect(await store.startAppend()).toBe(false);
    });

    it('a record written twice while appending takes the upsert path the second time: children replaced, history observed', async () => {
      expect(await store.startAppend()).toBe(true);
      const first = ticket({ id: 't1' });
      await store.transaction((tx) => tx.upsertRecords('ticket', [first, ticket({ id: 't2' })], SYNCED));
      const second = {
        ...first,
        status: 'solved',
        updatedAt: '2024-05-01T10:00:00.000Z',
        tags: ['x'],
        messages: first.messages.slice(0, 1),
      };
      const [result] = await store.transaction((tx) => tx.upsertRecords('ticket', [second], SYNCED));
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
      await store.transaction((tx) => tx.upsertRecords('ticket', [newer], SYNCED));
      const [older] = await store.transaction((tx) => tx.upsertRecords('ticket', [ticket({ id: 't1', status: 'pending' })], SYNCED));
      store.endAppend();
      expect(older!.superseded).toBe(true);
      const row = await databaseOf(store).selectFrom('tickets').select('status').where('id', '=', 't1').executeTakeFirstOrThrow();
      expect(row.status).toBe('open');
    });

    it('an id whose write rolled back is read again and written whole (a page retried after a failure)', async () => {
      expect(await store.startAppend()).toBe(true);
      await expect(
        store.transaction(async (tx) => {
          await tx.upsertRecords('ticket', [ticket({ id: 't1' })], SYNCED);
          throw new Error('killed mid-page');
        }),
      ).rejects.toThrow('killed mid-page');
      await store.transaction((tx) => tx.upsertRecords('ticket', [ticket({ id: 't1' })], SYNCED));
      store.endAppend();
      expect(await messageIds('t1')).toEqual(['m1', 'm2']);
    });
  });
}
