import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { type Store } from '../../src/store/index.js';
import { dialects, type Dialect } from '../helpers/dialects.js';
import { SYNCED, deal, ticket, useDialectStore, upsertOne } from './fixtures.js';
import { databaseOf } from '../../src/store/internal.js';

/**
 * Runs statements as a person with a SQL client would, foreign keys off: the sqlite3 shell's
 * default, PostgreSQL's replica role (which skips the foreign-key triggers).
 */
export async function byHand(store: Store, dialect: Dialect, statements: readonly string[]): Promise<void> {
  if (dialect.name === 'sqlite') {
    await sql.raw('PRAGMA foreign_keys = OFF').execute(databaseOf(store));
    for (const s of statements) await sql.raw(s).execute(databaseOf(store));
    await sql.raw('PRAGMA foreign_keys = ON').execute(databaseOf(store));
    return;
  }
  await databaseOf(store)
    .transaction()
    .execute(async (trx) => {
      await sql.raw('SET LOCAL session_replication_role = replica').execute(trx);
      for (const s of statements) await sql.raw(s).execute(trx);
    });
}

/** Issue 26: one odd row never stops a write; a record's child rows are what its copy lists, whatever was there. */
for (const dialect of dialects) {
  describe(`one bad row (${dialect.name})`, () => {
    const store = useDialectStore(dialect);

    const rows = async (table: string, parent: string, id: string) =>
      (await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(table)} WHERE ${sql.ref(parent)} = ${id}`.execute(databaseOf(store)))
        .rows.length;

    it('a parent row deleted by hand leaves children behind; the next copy replaces them instead of failing', async () => {
      await store.transaction((tx) => upsertOne(tx, 'ticket', ticket(), SYNCED));
      await store.transaction((tx) => upsertOne(tx, 'deal', deal(), SYNCED));
      await byHand(store, dialect, ["DELETE FROM tickets WHERE id = 't1'", "DELETE FROM deals WHERE id = 'd1'"]);
      expect(await rows('ticket_tags', 'ticket_id', 't1')).toBe(2);
      expect(await rows('deal_contacts', 'deal_id', 'd1')).toBe(2);

      const t = ticket({ tags: ['urgent', 'other'], fields: { plan: 'basic' }, messages: [ticket().messages[0]!], messageCount: 1 });
      const d = deal({ contacts: [deal().contacts[1]!], fields: {} });
      const [rt] = await store.transaction((tx) => tx.upsertRecords('ticket', [t], SYNCED));
      const [rd] = await store.transaction((tx) => tx.upsertRecords('deal', [d], SYNCED));
      expect([rt!.quarantined, rd!.quarantined]).toEqual([false, false]);
      const tags = await databaseOf(store).selectFrom('ticket_tags').select('tag').where('ticket_id', '=', 't1').orderBy('tag').execute();
      expect(tags.map((r) => r.tag)).toEqual(['other', 'urgent']);
      const fields = await databaseOf(store)
        .selectFrom('ticket_fields')
        .select(['key', 'value_text'])
        .where('ticket_id', '=', 't1')
        .execute();
      expect(fields).toEqual([{ key: 'plan', value_text: 'basic' }]);
      const messages = await databaseOf(store).selectFrom('ticket_messages').select('id').where('ticket_id', '=', 't1').execute();
      expect(messages.map((m) => m.id)).toEqual(['m1']);
      const contacts = await databaseOf(store).selectFrom('deal_contacts').select('contact_id').where('deal_id', '=', 'd1').execute();
      expect(contacts.map((c) => c.contact_id)).toEqual(['c2']);
      expect(await rows('deal_fields', 'deal_id', 'd1')).toBe(0);
    });

    it('a constraint one record breaks quarantines that record with the database reason; the rest of the batch commits', async () => {
      // A constraint the mirror does not declare, as a DBA might add: no tag "boom".
      if (dialect.name === 'sqlite')
        await sql
          .raw(`CREATE TRIGGER no_boom BEFORE INSERT ON ticket_tags WHEN NEW.tag = 'boom' BEGIN SELECT RAISE(ABORT, 'no boom tags'); END`)
          .execute(databaseOf(store));
      else await sql.raw(`ALTER TABLE ticket_tags ADD CONSTRAINT no_boom CHECK (tag <> 'boom')`).execute(databaseOf(store));
      const batch = [
        ticket({ id: 'a', messages: [] }),
        ticket({ id: 'b', tags: ['boom'], messages: [] }),
        ticket({ id: 'c', messages: [] }),
      ];
      const results = await store.transaction((tx) => tx.upsertRecords('ticket', batch, SYNCED));
      expect(results.map((r) => r.quarantined)).toEqual([false, true, false]);
      const ids = await databaseOf(store).selectFrom('tickets').select('id').orderBy('id').execute();
      expect(ids.map((r) => r.id)).toEqual(['a', 'c']);
      const q = await databaseOf(store).selectFrom('quarantine').selectAll().execute();
      expect(q.map((r) => [r.entity_type, r.entity_id])).toEqual([['ticket', 'b']]);
      expect(q[0]!.reason).toMatch(dialect.name === 'sqlite' ? /SQLITE_CONSTRAINT_TRIGGER.*no boom tags/ : /23514.*no_boom/);
      // Its children went with the rolled-back record: nothing half-written.
      expect(await rows('ticket_tags', 'ticket_id', 'b')).toBe(0);
      expect(await rows('ticket_tags', 'ticket_id', 'a')).toBe(2);
    });
  });
}
