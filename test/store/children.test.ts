import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { dialects } from '../helpers/dialects.js';
import { SYNCED, deal, ticket, useDialectStore, upsertOne } from './fixtures.js';
import { databaseOf } from '../../src/store/internal.js';

// Re-reads write only the children that differ from what is stored; the mirror must end exactly
// as a full rewrite would leave it, on both dialects.
for (const dialect of dialects) {
  describe(`child rows on re-read (${dialect.name})`, () => {
    const store = useDialectStore(dialect);

    const ticketChildren = async () => ({
      tags: await databaseOf(store).selectFrom('ticket_tags').select(['ticket_id', 'tag']).orderBy('ticket_id').orderBy('tag').execute(),
      fields: await databaseOf(store).selectFrom('ticket_fields').selectAll().orderBy('ticket_id').orderBy('key').execute(),
      messages: (await databaseOf(store).selectFrom('ticket_messages').selectAll().orderBy('id').execute()).map((m) => ({
        ...m,
        is_internal: m.is_internal === null ? null : Number(m.is_internal),
        attachments_json: JSON.parse(m.attachments_json!),
        raw_json: JSON.parse(m.raw_json!),
      })),
    });

    it('tickets: tags, fields and messages end as the latest read says, unchanged or not', async () => {
      await store.transaction((tx) => upsertOne(tx, 'ticket', ticket(), SYNCED));
      await store.transaction((tx) => upsertOne(tx, 'ticket', ticket({ id: 't2', messages: [] }), SYNCED));
      // Same read again: nothing differs.
      await store.transaction((tx) => upsertOne(tx, 'ticket', ticket(), SYNCED));
      const once = await ticketChildren();
      expect(once.tags).toEqual([
        { ticket_id: 't1', tag: 'hardware' },
        { ticket_id: 't1', tag: 'urgent' },
        { ticket_id: 't2', tag: 'hardware' },
        { ticket_id: 't2', tag: 'urgent' },
      ]);
      expect(once.messages.map((m) => [m.id, m.ticket_id])).toEqual([
        ['m1', 't1'],
        ['m2', 't1'],
      ]);

      const next = ticket({
        updatedAt: '2024-05-01T12:00:00.000Z',
        tags: ['urgent', 'new'],
        fields: { plan: 'pro', seats: 13, extra: null },
        messages: [
          {
            id: 'm1',
            body: 'hello',
            authorType: 'customer',
            author: null,
            isInternal: false,
            attachments: [],
            createdAt: '2024-05-01T09:00:00.000Z',
          },
          {
            id: 'm2',
            body: 'note, edited',
            authorType: 'agent',
            author: { id: 'u2', name: 'Agent Two', email: null },
            isInternal: false,
            attachments: [],
            createdAt: '2024-05-01T09:05:00.000Z',
          },
          {
            id: 'm3',
            body: 'more',
            authorType: 'customer',
            author: null,
            isInternal: null as unknown as boolean,
            attachments: [],
            createdAt: '2024-05-01T11:00:00.000Z',
          },
        ],
      });
      await store.transaction((tx) => upsertOne(tx, 'ticket', next, SYNCED));
      const after = await ticketChildren();
      expect(after.tags).toEqual([
        { ticket_id: 't1', tag: 'new' },
        { ticket_id: 't1', tag: 'urgent' },
        { ticket_id: 't2', tag: 'hardware' },
        { ticket_id: 't2', tag: 'urgent' },
      ]);
      expect(after.fields.filter((f) => f.ticket_id === 't1')).toEqual([
        { ticket_id: 't1', key: 'extra', value_text: null, value_json: 'null' },
        { ticket_id: 't1', key: 'plan', value_text: 'pro', value_json: '"pro"' },
        { ticket_id: 't1', key: 'seats', value_text: '13', value_json: '13' },
      ]);
      expect(after.messages.map((m) => [m.id, m.ticket_id, m.body, m.is_internal, m.attachments_json])).toEqual([
        ['m1', 't1', 'hello', 0, []],
        ['m2', 't1', 'note, edited', 0, []],
        ['m3', 't1', 'more', null, []],
      ]);
      expect(after.messages[1]!.raw_json).toMatchObject({ body: 'note, edited', isInternal: false });

      // A message that moved to another ticket follows it; the one left behind is removed.
      await store.transaction((tx) =>
        upsertOne(tx, 'ticket', ticket({ id: 't2', updatedAt: '2024-05-01T13:00:00.000Z', messages: next.messages.slice(2) }), SYNCED),
      );
      await store.transaction((tx) =>
        upsertOne(tx, 'ticket', { ...next, updatedAt: '2024-05-01T13:00:00.000Z', messages: next.messages.slice(0, 1) }, SYNCED),
      );
      const moved = await ticketChildren();
      expect(moved.messages.map((m) => [m.id, m.ticket_id])).toEqual([
        ['m1', 't1'],
        ['m3', 't2'],
      ]);
    });

    it('deals: contacts (primary flag, position) and fields end as the latest read says', async () => {
      await store.transaction((tx) => upsertOne(tx, 'deal', deal(), SYNCED));
      await store.transaction((tx) => upsertOne(tx, 'deal', deal(), SYNCED));
      await store.transaction((tx) =>
        upsertOne(
          tx,
          'deal',
          deal({
            updatedAt: '2024-05-01T12:00:00.000Z',
            contacts: [
              { id: 'c2', firstName: 'Bob', lastName: null, email: null, isPrimary: false },
              { id: 'c3', firstName: 'Cy', lastName: null, email: null, isPrimary: true },
            ],
            fields: { source: 'web', score: 3 },
          }),
          SYNCED,
        ),
      );
      const contacts = await databaseOf(store).selectFrom('deal_contacts').selectAll().orderBy('position').execute();
      expect(contacts.map((c) => [c.contact_id, Number(c.is_primary), c.position])).toEqual([
        ['c2', 0, 0],
        ['c3', 1, 1],
      ]);
      expect(await databaseOf(store).selectFrom('deal_fields').select(['key', 'value_text']).orderBy('key').execute()).toEqual([
        { key: 'score', value_text: '3' },
        { key: 'source', value_text: 'web' },
      ]);
    });

    if (dialect.name === 'sqlite') {
      it('a re-read writes no unchanged child or reference rows', async () => {
        await store.transaction((tx) => upsertOne(tx, 'ticket', ticket(), SYNCED));
        // total_changes counts every row inserted, updated or deleted on the one connection.
        const changes = async () => (await sql<{ n: number }>`select total_changes() as n`.execute(databaseOf(store))).rows[0]!.n;
        const before = await changes();
        await store.transaction((tx) =>
          upsertOne(tx, 'ticket', ticket({ updatedAt: '2024-05-01T12:00:00.000Z', status: 'pending' }), SYNCED),
        );
        // The ticket row and one history row; no tag, field or message, and the users and contact
        // it names are unchanged, so they are not rewritten either.
        expect((await changes()) - before).toBe(2);
        const users = await databaseOf(store).selectFrom('users').selectAll().orderBy('id').execute();
        expect(users).toEqual([
          { id: 'u1', name: 'Agent One', email: 'one@example.com' },
          { id: 'u2', name: 'Agent Two', email: null },
        ]);
      });
    }

    if (dialect.name === 'postgres') {
      it('a re-read writes no unchanged child row, though jsonb gives JSON back in its own spelling', async () => {
        const fields = { plan: 'pro', meta: { zeta: [1, 'x'], a: { nested: true } } };
        await store.transaction((tx) => upsertOne(tx, 'ticket', ticket({ fields }), SYNCED));
        // xmin is the transaction that wrote a row version: a row written again gets a new one.
        const versions = async () =>
          (
            await sql<{ row: string }>`
              select 'message ' || id || ' ' || xmin::text as row from ticket_messages
              union all select 'field ' || key || ' ' || xmin::text from ticket_fields
              union all select 'tag ' || tag || ' ' || xmin::text from ticket_tags
              order by 1`.execute(databaseOf(store))
          ).rows.map((r) => r.row);
        const before = await versions();
        expect(before).toHaveLength(2 + 2 + 2);
        await store.transaction((tx) =>
          upsertOne(tx, 'ticket', ticket({ fields, updatedAt: '2024-05-01T12:00:00.000Z', status: 'pending' }), SYNCED),
        );
        expect(await versions()).toEqual(before);
        // A message that did change is written, and only it.
        const edited = ticket({ fields, updatedAt: '2024-05-01T13:00:00.000Z' });
        edited.messages = [edited.messages[0]!, { ...edited.messages[1]!, body: 'note, edited' }];
        await store.transaction((tx) => upsertOne(tx, 'ticket', edited, SYNCED));
        const after = await versions();
        expect(after.filter((v) => !before.includes(v)).map((v) => v.split(' ').slice(0, 2).join(' '))).toEqual(['message m2']);
      });
    }
  });
}
