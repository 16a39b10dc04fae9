import { afterAll, describe, expect, it } from 'vitest';
import type { Deal, TicketWithMessages } from '../../src/api/types.js';
import { openStore, type Store } from '../../src/store/index.js';
import { dialects } from '../helpers/dialects.js';
import { tableSnapshot } from '../helpers/snapshot.js';
import { deal, SYNCED, ticket, upsertOne } from './fixtures.js';
import { databaseOf } from '../../src/store/internal.js';

/**
 * upsertRecords writes a page with a few multi-row statements; its outcome must be
 * that of upserting the same records one per call, whatever the batch holds: repeated ids, a message
 * that moves between two tickets of the batch, references repeated with different nulls, a stale
 * copy, a value the store cannot hold, a record the mirror already has.
 */

const at = (minute: number) => `2024-05-01T10:${String(minute).padStart(2, '0')}:00.000Z`;

function ticketBatch(): TicketWithMessages[] {
  const msg = (id: string, author: TicketWithMessages['messages'][number]['author']) => ({
    id,
    body: `body ${id}`,
    authorType: 'agent',
    author,
    isInternal: false,
    attachments: [],
    createdAt: at(1),
  });
  return [
    ticket({
      id: 'a',
      updatedAt: at(5),
      assignee: { id: 'u1', name: null, email: 'one@x.test' },
      messages: [msg('ma', null), msg('shared', { id: 'u2', name: 'Two', email: null })],
    }),
    ticket({
      id: 'b',
      updatedAt: at(5),
      assignee: { id: 'u1', name: 'One', email: null },
      messages: [msg('mb', { id: 'u2', name: null, email: 'two@x.test' })],
    }),
    // c lists a message with a's message id: another message (messages are keyed by ticket and id).
    ticket({
      id: 'c',
      updatedAt: at(5),
      contact: { id: 'c1', firstName: null, lastName: 'L', email: null },
      messages: [msg('shared', null)],
    }),
    // A repeat of b, newer: replaces it and writes observed history.
    ticket({ id: 'b', updatedAt: at(9), status: 'solved', assignee: null, tags: ['x'], messages: [] }),
    // A repeat of a, older: stale.
    ticket({ id: 'a', updatedAt: at(1), status: 'pending' }),
    // A junk timestamp: quarantined, the rest goes on.
    ticket({ id: 'bad', updatedAt: 'not a time' }),
    ticket({ id: 'existing', updatedAt: at(7), priority: 'urgent', tags: ['new'] }),
  ];
}

function dealBatch(): Deal[] {
  return [
    deal({ id: 'd1', updatedAt: at(5), owner: { id: 'u9', name: null, email: 'o@x.test' } }),
    deal({
      id: 'd2',
      updatedAt: at(5),
      owner: { id: 'u9', name: 'Owner', email: null },
      company: { id: 'co1', name: null, domain: 'new.test' },
    }),
    deal({ id: 'd1', updatedAt: at(8), amount: '99.00', stage: { id: 's2', name: 'Won', position: 3, isWon: true, isLost: false } }),
    deal({ id: 'd3', updatedAt: at(5), amount: 'twelve' }),
    deal({ id: 'existing', updatedAt: at(7), contacts: [], fields: { source: 'phone' } }),
  ];
}

const TABLES = [
  'tickets',
  'ticket_messages',
  'ticket_tags',
  'ticket_fields',
  'ticket_history',
  'users',
  'contacts',
  'companies',
  'deals',
  'deal_contacts',
  'deal_fields',
  'deal_history',
  'pipelines',
  'stages',
  'quarantine',
] as const;

const snapshot = (store: Store) => tableSnapshot(store, TABLES);

for (const dialect of dialects) {
  describe(`bulk upserts on ${dialect.name}`, () => {
    const dbs: { drop(): Promise<void> }[] = [];
    const stores: Store[] = [];
    const setUp = async () => {
      const db = await dialect.newDatabase();
      dbs.push(db);
      const store = await openStore({ database: db.database });
      await store.migrate();
      stores.push(store);
      // One record the mirror already holds, so the batch mixes new and known records.
      await store.transaction(async (tx) => {
        await upsertOne(tx, 'ticket', ticket({ id: 'existing', updatedAt: at(0) }), SYNCED);
        await upsertOne(tx, 'deal', deal({ id: 'existing', updatedAt: at(0) }), SYNCED);
      });
      return store;
    };
    afterAll(async () => {
      for (const s of stores) await s.close();
      for (const d of dbs) await d.drop();
    });

    it('leaves the mirror as upserting the records one by one does, with the same results', async () => {
      const one = await setUp();
      const many = await setUp();
      const seq = await one.transaction(async (tx) => {
        const r = [];
        for (const t of ticketBatch()) r.push(await upsertOne(tx, 'ticket', t, SYNCED));
        for (const d of dealBatch()) r.push(await upsertOne(tx, 'deal', d, SYNCED));
        return r;
      });
      const bulk = await many.transaction(async (tx) => [
        ...(await tx.upsertRecords('ticket', ticketBatch(), SYNCED)),
        ...(await tx.upsertRecords('deal', dealBatch(), SYNCED)),
      ]);
      expect(bulk).toEqual(seq);
      expect(seq.filter((r) => r.quarantined)).toHaveLength(2);
      expect(seq.filter((r) => r.superseded)).toHaveLength(1);
      expect(seq.some((r) => r.history > 0)).toBe(true);
      expect(await snapshot(many)).toEqual(await snapshot(one));
      const shared = await databaseOf(many)
        .selectFrom('ticket_messages')
        .select('ticket_id')
        .where('id', '=', 'shared')
        .orderBy('ticket_id')
        .execute();
      expect(shared.map((r) => r.ticket_id)).toEqual(['a', 'c']);
    });

    if (dialect.name === 'postgres') {
      it('quarantines only the record holding a value PostgreSQL refuses, and writes the rest of the batch', async () => {
        const store = await setUp();
        const batch = [
          ticket({ id: 'ok1', updatedAt: at(3) }),
          // PostgreSQL's integer column refuses 2^31 (class 22); SQLite stores it.
          ticket({ id: 'refused', updatedAt: at(3), messageCount: 2 ** 31 }),
          ticket({ id: 'ok2', updatedAt: at(3), messages: [] }),
        ];
        const results = await store.transaction((tx) => tx.upsertRecords('ticket', batch, SYNCED));
        expect(results.map((r) => r.quarantined)).toEqual([false, true, false]);
        const ids = (await databaseOf(store).selectFrom('tickets').select('id').orderBy('id').execute()).map((r) => r.id);
        expect(ids).toEqual(['existing', 'ok1', 'ok2']);
        const q = await databaseOf(store).selectFrom('quarantine').selectAll().where('entity_id', '=', 'refused').executeTakeFirstOrThrow();
        expect(q.reason).toMatch(/the database refused this record \(22/);
      });
    }
  });
}
